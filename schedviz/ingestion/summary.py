"""What a snapshot holds, for listing: nodes with their capacity and load, pods, namespaces, the rest.

The numbers are the engine's own: nodes and pods go through ``schedviz.engine.loader.load_objects``
and the scheduler cache (``ClusterState``), so a node's ``requested`` is exactly what the replay
starts from (non-terminal pods bound to the node, requests computed as NodeInfo does). Units are
the scheduler's: CPU in millicores, memory, ephemeral-storage and hugepages in bytes, everything else
(pods, extended resources) in whole units.
"""

from __future__ import annotations

import json
import tempfile
import zlib
from typing import IO, Any

import msgspec

from schedviz.engine import quantity
from schedviz.engine.cluster import REGION_LABELS, ZONE_LABELS
from schedviz.engine.explain.inspect import pod_spec_summary
from schedviz.engine.loader import Snapshot, load_objects, resolve_priorities
from schedviz.engine.objects import KubeObject, Node, Pod

UNITS = {
    "cpu": "millicores",
    "memory": "bytes",
    "ephemeral-storage": "bytes",
    "hugepages-*": "bytes",
    "pods": "pods",
    "other": "whole units",
}
_SYSTEM_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
# The summary keeps what the scheduler reads of each pending pod (the cycle page's "the pod") for
# snapshots with up to this many pending pods; beyond, the page reads it from the whole snapshot.
PENDING_SPECS_MAX = 10_000


def pending_specs(pending: list[Pod], priority_classes: list[KubeObject]) -> dict[str, dict[str, Any]] | None:
    """``pod_spec_summary`` of each pending pod by key, priorities resolved as the loader resolves
    them (``priority_classes``: the snapshot's); None past ``PENDING_SPECS_MAX`` pods."""
    if len(pending) > PENDING_SPECS_MAX:
        return None
    if any(p.priority is None for p in pending):
        resolve_priorities(Snapshot(pods=pending, objects=priority_classes))
    return {p.key: pod_spec_summary(p) for p in pending}


class _RowHead(msgspec.Struct):
    """What ``SummaryBuilder.finish`` reads of a pod's row (its other fields are left as written)."""

    key: str
    state: str
    node: str | None
    priority: int | None
    priorityClassName: str


_row_head = msgspec.json.Decoder(_RowHead).decode
_encode = msgspec.json.Encoder().encode
_NO_PRIORITY = b',"priority":null,"priorityClassName":'


def _row_text(row: dict[str, Any]) -> bytes:
    """``_compact(row)``: msgspec's encoding where it is json.dumps's (ASCII text; json.dumps escapes
    DEL and non-ASCII characters, which msgspec writes as they are)."""
    text = _encode(row)
    if text.isascii() and b"\x7f" not in text:
        return text
    return _compact(row)


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
    specs = pending_specs([p for p in snap.pods if pod_state(p) == "pending"], [])  # resolved by load_objects

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
        **({} if specs is None else {"pendingSpecs": specs}),
    }


class SummaryBuilder:
    """``summarize`` one object at a time, for uploads read as a stream (``streaming.py``): the same
    summary, packed as ``models.pack`` packs it, holding only the summary's rows (the pods' rows go to
    a temporary file until the end, since priorities and warnings need every object read).

    ``add`` takes each kept object with the view ``parsing`` built for it (a ``Node``, a ``Pod`` or a
    ``KubeObject``), in input order.
    """

    def __init__(self) -> None:
        self.kinds: dict[str, int] = {}
        self.nodes: list[dict[str, Any]] = []
        self.node_names: set[str] = set()
        # per node name: the requests of the non-terminal pods bound to it (ClusterState.add_pod)
        self.requested: dict[str, dict[str, int]] = {}
        self.nonzero: dict[str, list[int]] = {}
        self.bound_uids: set[str] = set()
        self.pod_rows: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed by finish
        self.pods = 0
        self.states = {"running": 0, "pending": 0, "finished": 0}
        self.per_namespace: dict[str, int] = {}
        self.namespaces: list[dict[str, Any]] = []
        self.declared: set[str] = set()
        self.others: list[dict[str, Any]] = []
        self.classes: dict[str, dict[str, Any]] = {}
        self.class_views: list[KubeObject] = []
        self.pending: list[Pod] = []  # up to PENDING_SPECS_MAX + 1, for pending_specs

    def add(self, raw: dict[str, Any], view: Any) -> None:
        kind = str(raw.get("kind"))
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if isinstance(view, Node):
            self.node_names.add(view.name)
            self.nodes.append(
                {
                    "name": view.name,
                    "zone": _label(view.labels, ZONE_LABELS),
                    "region": _label(view.labels, REGION_LABELS),
                    "allocatable": dict(view.allocatable),
                    "taints": [dict(t) for t in view.taints],
                    "unschedulable": view.unschedulable,
                    "labels": dict(view.labels),
                }
            )
        elif isinstance(view, Pod):
            self._pod(view)
        elif view.kind == "Namespace":
            self.declared.add(view.name)
            self.namespaces.append(
                {"name": view.name, "labels": dict(view.meta.labels), "declared": True, "podCount": 0}
            )
        else:
            if view.kind == "PriorityClass" and view.name not in self.classes:
                self.classes[view.name] = view.raw
                self.class_views.append(view)
            self.others.append({"kind": view.kind, "key": view.key, "name": view.name, "namespace": view.namespace})

    def _pod(self, p: Pod) -> None:
        self.pods += 1
        state = pod_state(p)
        self.states[state] += 1
        self.per_namespace[p.namespace] = self.per_namespace.get(p.namespace, 0) + 1
        if state == "pending" and len(self.pending) <= PENDING_SPECS_MAX:
            self.pending.append(p)
        if state == "running" and p.uid not in self.bound_uids:
            self.bound_uids.add(p.uid)
            req = self.requested.setdefault(p.node_name, {})
            for r, v in p.resources.requests.items():
                if r != quantity.PODS:
                    req[r] = req.get(r, 0) + v
            nz = self.nonzero.setdefault(p.node_name, [0, 0, 0])
            nz[0] += p.resources.nonzero_cpu
            nz[1] += p.resources.nonzero_memory
            nz[2] += 1
        row = {
            "key": p.key,
            "namespace": p.namespace,
            "name": p.name,
            "state": state,
            "phase": p.phase,
            "node": p.node_name or None,
            "nominatedNode": p.nominated_node_name or None,
            "requests": {r: v for r, v in p.requests.items() if r != quantity.PODS},
            "priority": p.priority,
            "priorityClassName": p.priority_class_name,
            "schedulerName": p.scheduler_name,
            "schedulingGates": list(p.scheduling_gates),
            "labels": dict(p.labels),
        }
        self.pod_rows.write(_row_text(row) + b"\n")  # one line: the text is ASCII, escaped

    def _priority(self, pcn: str, default: dict[str, Any] | None) -> int | None:
        """What ``loader.resolve_priorities`` gives a pod without spec.priority."""
        pc: dict[str, Any] | None = None
        if pcn:
            pc = self.classes.get(pcn)
            if pc is None and pcn == "system-node-critical":
                return 2000001000
            if pc is None and pcn == "system-cluster-critical":
                return 2000000000
        elif default is not None:
            pc = default
        if pc is None:
            return None
        v = pc.get("value", 0)
        return int(v) if isinstance(v, int) and not isinstance(v, bool) else 0

    def finish(self) -> tuple[bytes, dict[str, int], dict[str, int]]:
        """The packed summary, its counts and kinds."""
        nodes = []
        seen: set[str] = set()
        for n in self.nodes:
            name = n["name"]
            first = name not in seen  # ClusterState indexes a name at its last node
            seen.add(name)
            req = self.requested.get(name, {}) if first else {}
            nz = self.nonzero.get(name, [0, 0, 0]) if first else [0, 0, 0]
            requested: dict[str, int] = {}
            for r in sorted(set(n["allocatable"]) | set(req)):
                if r == quantity.PODS:
                    continue
                v = req.get(r, 0)
                if v or r in n["allocatable"]:
                    requested[r] = v
            requested[quantity.PODS] = nz[2]
            nodes.append(
                {
                    "name": name,
                    "zone": n["zone"],
                    "region": n["region"],
                    "allocatable": n["allocatable"],
                    "requested": requested,
                    "nonZeroRequested": {quantity.CPU: nz[0], quantity.MEMORY: nz[1]},
                    "podCount": nz[2],
                    "taints": n["taints"],
                    "unschedulable": n["unschedulable"],
                    "labels": n["labels"],
                }
            )
        namespaces = [{**ns, "podCount": self.per_namespace.get(ns["name"], 0)} for ns in self.namespaces]
        for ns in sorted(set(self.per_namespace) - self.declared):
            namespaces.append({"name": ns, "labels": {}, "declared": False, "podCount": self.per_namespace[ns]})
        counts = {
            "nodes": len(self.nodes),
            "pods": self.pods,
            **self.states,
            "namespaces": len(namespaces),
            "objects": len(self.others),
        }
        default = next((c for c in self.classes.values() if c.get("globalDefault")), None)
        warnings: list[str] = []
        z = zlib.compressobj(6)
        out = [z.compress(b'{"counts":' + _compact(counts) + b',"kinds":' + _compact(self.kinds))]
        out.append(z.compress(b',"units":' + _compact(UNITS) + b',"nodes":' + _compact(nodes) + b',"pods":['))
        self.pod_rows.seek(0)
        for i, line in enumerate(self.pod_rows):
            text = line[:-1]
            row = _row_head(text)
            priority = row.priority
            if priority is None:
                priority = self._priority(row.priorityClassName, default)
            if row.state == "running" and row.node not in self.node_names:
                warnings.append(
                    f"Pod {row.key} is bound to node {row.node}, which is not in the snapshot: "
                    "its requests are not counted anywhere"
                )
            pcn = row.priorityClassName
            if priority is None and pcn and pcn not in _SYSTEM_PRIORITY_CLASSES:
                warnings.append(
                    f"Pod {row.key} names PriorityClass {pcn}, which is not in the snapshot, "
                    "and has no spec.priority: its priority counts as 0"
                )
            if row.priority is None:
                # the row with its priority resolved: the first such text is the row's own field
                # (inside a JSON string a quote is escaped), the requests before it are numbers
                resolved = b',"priority":%d,"priorityClassName":' % (priority or 0)
                text = text.replace(_NO_PRIORITY, resolved, 1)
            out.append(z.compress((b"," if i else b"") + text))
        self.pod_rows.close()
        out.append(z.compress(b'],"namespaces":' + _compact(namespaces) + b',"objects":' + _compact(self.others)))
        out.append(z.compress(b',"warnings":' + _compact(warnings)))
        specs = pending_specs(self.pending, self.class_views)
        self.pending = []
        if specs is not None:
            out.append(z.compress(b',"pendingSpecs":' + _compact(specs)))
        out.append(z.compress(b"}"))
        out.append(z.flush())
        return b"".join(out), counts, dict(self.kinds)


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()
