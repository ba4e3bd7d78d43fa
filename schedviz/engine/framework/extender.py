"""What plugins may ask of the scheduler's extenders (pkg/scheduler/framework/extender.go, the Extender
interface); the HTTP extenders themselves are the runtime's (runtime/extenders.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..cluster import ClusterState
    from ..objects import Pod

# node name -> (victims, number of PDB violations), as preemption hands them to extenders
Victims = dict[str, tuple[list["Pod"], int]]


class ExtenderError(Exception):
    """A failed extender call; the message is the error text kube-scheduler would report."""


class Extender(Protocol):
    """The part of an extender that preemption uses (Handle.extenders)."""

    name: str
    ignorable: bool

    def supports_preemption(self) -> bool: ...

    def is_interested(self, pod: Pod) -> bool: ...

    def process_preemption(self, pod: Pod, victims: Victims, cluster: ClusterState) -> Victims:
        """The extender's victims per node; raises ExtenderError when the call fails."""
        ...
