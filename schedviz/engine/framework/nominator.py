"""Pods nominated to nodes: the scheduling queue's nominator (backend/queue/nominator.go).

A pod is nominated to a node when preemption made room for it there (its ``status.nominatedNodeName``).
Until the pod is scheduled, later cycles treat it as if it ran on that node whenever the pod they
schedule has a priority lower than or equal to it (``RunFilterPluginsWithNominatedPods``, see
runtime/framework.py), so that the room preemption made is not taken by someone less important.

The nominator also holds what the replay knows of each pod's ``status.nominatedNodeName``: the
snapshot's value until the replay changes it (a preemption nominates the preemptor, a failed cycle
clears it). The snapshot's ``Pod`` objects are never modified, so a snapshot can be replayed again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..objects import Pod


class Nominator:
    """Nominated pods by node name, in the order they were nominated (nominator.go nominatedPods)."""

    def __init__(self) -> None:
        self._pods: dict[str, list[Pod]] = {}
        self._node_of: dict[str, str] = {}
        self._status: dict[str, str] = {}

    # ----- status.nominatedNodeName ------------------------------------------------------
    def status_of(self, pod: Pod) -> str:
        """The pod's ``status.nominatedNodeName`` as the replay knows it now ("" when none)."""
        return self._status.get(pod.uid, pod.nominated_node_name)

    def set_status(self, pod: Pod, node: str) -> None:
        """Record an update of the pod's ``status.nominatedNodeName`` (an API patch)."""
        self._status[pod.uid] = node

    # ----- the nominator's map -----------------------------------------------------------
    def add(self, pod: Pod, node: str | None) -> None:
        """nominator.go addNominatedPod: ``node`` None is ModeNoop (keep the pod's status value),
        a string is ModeOverride (nominate there; "" nominates nowhere). The pod is taken out of
        any earlier nomination first."""
        self.delete(pod)
        name = self.status_of(pod) if node is None else node
        if not name:
            return
        self._node_of[pod.uid] = name
        self._pods.setdefault(name, []).append(pod)

    def delete(self, pod: Pod) -> None:
        """nominator.go deleteUnlocked (DeleteNominatedPodIfExists)."""
        name = self._node_of.pop(pod.uid, None)
        if name is None:
            return
        pods = [p for p in self._pods.get(name, []) if p.uid != pod.uid]
        if pods:
            self._pods[name] = pods
        else:
            self._pods.pop(name, None)

    def node_of(self, pod: Pod) -> str | None:
        """The node ``pod`` is nominated to in the nominator, or None."""
        return self._node_of.get(pod.uid)

    def pods_for_node(self, node: str) -> list[Pod]:
        """NominatedPodsForNode: the pods nominated to ``node``, in nomination order."""
        return list(self._pods.get(node, ()))

    def nodes(self) -> list[str]:
        """Names of the nodes that have nominated pods."""
        return list(self._pods)

    def __len__(self) -> int:
        return len(self._node_of)

    def __bool__(self) -> bool:
        return bool(self._node_of)
