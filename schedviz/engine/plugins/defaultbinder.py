"""DefaultBinder: binds the pod to the chosen node.

Mirrors framework/plugins/defaultbinder/default_binder.go (v1.35), which posts a v1.Binding
(pod namespace/name/uid -> Node target) to the API server. Here there is no API server: the
binding is recorded (in the cycle state and on the plugin) and Bind succeeds; the runtime does
the actual placement (the scheduler cache's assume/finish-binding).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..framework import CycleState, Handle, Status
from ..objects import Pod

NAME = "DefaultBinder"


@dataclass(frozen=True)
class Binding:
    """What upstream posts: the pod's identity and the target node."""

    namespace: str
    name: str
    uid: str
    node: str

    def clone(self) -> Binding:
        return self

    def as_object(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"namespace": self.namespace, "name": self.name, "uid": self.uid},
            "target": {"kind": "Node", "name": self.node},
        }


class DefaultBinder:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.bindings: list[Binding] = []

    def bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        b = Binding(pod.namespace, pod.name, pod.uid, node)
        self.bindings.append(b)
        state.write(NAME, b)
        return Status.success()
