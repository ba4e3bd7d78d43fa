"""What a snapshot holds, for listing: nodes with their capacity and load, pods, namespaces, the rest.

The numbers are the engine's own: nodes and pods go through ``schedviz.engine.loader.load_objects``
and the scheduler cache (``ClusterState``), so a node's ``requested`` is exactly what the replay
starts from (non-terminal pods bound to the node, requests computed as NodeInfo does). Units are
the scheduler's: CPU in millicores, memory, ephemeral-storage and hugepages in bytes, everything else
(pods, extended resources) in whole units.
"""

from __future__ import annotations

from typing import Any

from schedviz.engine import quantity
from schedviz.engine.cluster import REGION_LABELS, ZONE_LABELS
from schedviz.engine.loader import load_objects
from schedviz.engine.objects import Pod

UNITS = {
    "cpu": "millicores",
    "memory": "bytes",
    "ephemeral-storage": "bytes",
    "hugepages-*": "bytes",
    "pods": "pods",
    "other": "whole units",
}
_SYSTEM_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")


def _label(labels: dict[str, str], keys: tuple[str, str]) -> str:
    """The GA topology label's value, else the deprecated beta one's ("" when neither is set)."""
    beta, ga = keys
    return labels.get(ga) or labels.get(beta) or ""


def pod_state(pod: Pod) -> str:
    """running (bound, not finished), pending (not bound, not finished) or finished (Succeeded/Failed)."""
    if pod.terminal:
        return "finished"
    return "running" if pod.node_name else "pending"


def summarize(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, nodes, pods, namespaces and other objects of a snapshot (JSON-serialisable).

    ``objects`` are what ``parse_upload`` returned (already validated); invalid objects raise the
    engine's ``InputError``.
    """
    snap = load_objects(objects)
    cluster = snap.cluster()
    resources = cluster.resource_names()
    warnings: list[str] = []

    nodes = []
    for i, n in enumerate(snap.nodes):
        requested: dict[str, int] = {}
        for r in resources:
            if r == quantity.PODS:
                continue
            v = int(cluster.requested(r)[i])
            if v or r in n.allocatable:
                requested[r] = v
        requested[quantity.PODS] = int(cluster.pod_count[i])
        nodes.append(
            {
                "name": n.name,
                "zone": _label(n.labels, ZONE_LABELS),
                "region": _label(n.labels, REGION_LABELS),
                "allocatable": dict(n.allocatable),
                "requested": requested,
                "nonZeroRequested": {
                    quantity.CPU: int(cluster.nonzero_cpu[i]),
                    quantity.MEMORY: int(cluster.nonzero_memory[i]),
                },
                "podCount": int(cluster.pod_count[i]),
                "taints": [dict(t) for t in n.taints],
                "unschedulable": n.unschedulable,
                "labels": dict(n.labels),
            }
        )

    pods = []
    states = {"running": 0, "pending": 0, "finished": 0}
    per_namespace: dict[str, int] = {}
    for p in snap.pods:
        state = pod_state(p)
        states[state] += 1
        per_namespace[p.namespace] = per_namespace.get(p.namespace, 0) + 1
        if state == "running" and p.node_name not in cluster.index:
            warnings.append(
                f"Pod {p.key} is bound to node {p.node_name}, which is not in the snapshot: "
                "its requests are not counted anywhere"
            )
        if (
            p.priority is None
            and p.priority_class_name
            and p.priority_class_name not in _SYSTEM_PRIORITY_CLASSES
        ):
            warnings.append(
                f"Pod {p.key} names PriorityClass {p.priority_class_name}, which is not in the snapshot, "
                "and has no spec.priority: its priority counts as 0"
            )
        pods.append(
            {
                "key": p.key,
                "namespace": p.namespace,
                "name": p.name,
                "state": state,
                "phase": p.phase,
                "node": p.node_name or None,
                "nominatedNode": p.nominated_node_name or None,
                "requests": {r: v for r, v in p.requests.items() if r != quantity.PODS},
                "priority": p.prio,
                "priorityClassName": p.priority_class_name,
                "schedulerName": p.scheduler_name,
                "schedulingGates": list(p.scheduling_gates),
                "labels": dict(p.labels),
            }
        )

    namespaces = []
    declared = set()
    others = []
    kinds: dict[str, int] = {}
    for raw in objects:
        kind = str(raw.get("kind"))
        kinds[kind] = kinds.get(kind, 0) + 1
    for o in snap.objects:
        if o.kind == "Namespace":
            declared.add(o.name)
            namespaces.append(
                {
                    "name": o.name,
                    "labels": dict(o.meta.labels),
                    "declared": True,
                    "podCount": per_namespace.get(o.name, 0),
                }
            )
        else:
            others.append({"kind": o.kind, "key": o.key, "name": o.name, "namespace": o.namespace})
    for ns in sorted(set(per_namespace) - declared):
        namespaces.append({"name": ns, "labels": {}, "declared": False, "podCount": per_namespace[ns]})

    return {
        "counts": {
            "nodes": len(snap.nodes),
            "pods": len(snap.pods),
            **states,
            "namespaces": len(namespaces),
            "objects": len(others),
        },
        "kinds": kinds,
        "units": UNITS,
        "nodes": nodes,
        "pods": pods,
        "namespaces": namespaces,
        "objects": others,
        "warnings": warnings,
    }
