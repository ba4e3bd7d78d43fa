"""What the three plans share: derived snapshots, generated names, pod and node files, zones, usage.

A plan never changes the snapshot it is given: it derives a new ``Snapshot`` (the nodes and running
pods it does not touch are shared, every object it adds or changes is new) and replays that. The
objects of a derived snapshot are written back as a ``kind: List`` by ``snapshot_objects``, so any
plan can be replayed, explained or uploaded on its own.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schedviz.engine import InputError, Snapshot, load_paths
from schedviz.engine.cluster import ClusterState
from schedviz.engine.labels import LabelSelector, Requirement
from schedviz.engine.loader import resolve_priorities
from schedviz.engine.objects import Node, Pod
from schedviz.engine.quantity import CPU, MEMORY, PODS
from schedviz.engine.runtime.replay import start_time
from schedviz.engine.trace import NOT_EVALUATED, CycleRecord

# k8s.io/apimachinery/pkg/util/rand: the alphabet of generated names (no vowels, no 0/1/3)
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
SUFFIX_LENGTH = 5
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
HOSTNAME_LABEL = "kubernetes.io/hostname"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
NO_ZONE = "(no zone)"
# Results whose pod holds a node at the end of its cycle (Waiting: reserved, held at Permit).
PLACED = frozenset({"Scheduled", "Waiting"})
# Usage units, as the CI reports count them.
RESOURCES = (("cpuMilli", CPU), ("memoryBytes", MEMORY), ("pods", PODS))


def generated_name(prefix: str, seed: str) -> str:
    """``prefix`` plus five characters as the API server's generateName adds them (same alphabet),
    drawn from ``seed`` so that a plan names its pods the same way every time."""
    digest = hashlib.sha256(seed.encode()).digest()
    return prefix + "".join(SUFFIX_ALPHABET[b % len(SUFFIX_ALPHABET)] for b in digest[:SUFFIX_LENGTH])


def timestamp(seconds: float) -> str:
    """RFC 3339, whole seconds, as the API server writes creationTimestamp."""
    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_pending_pod(raw: Mapping[str, Any], name: str, uid: str, created: float | None) -> dict[str, Any]:
    """A copy of a pod as its controller creates it: unbound, no status, a name and uid of its own,
    created at ``created`` (None: without creationTimestamp)."""
    out = copy.deepcopy(dict(raw))
    md = dict(out.get("metadata") or {})
    for key in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields"):
        md.pop(key, None)
    md["name"] = name
    md["uid"] = uid
    if created is None:
        md.pop("creationTimestamp", None)
    else:
        md["creationTimestamp"] = timestamp(created)
    out["metadata"] = md
    spec = dict(out.get("spec") or {})
    spec.pop("nodeName", None)
    out["spec"] = spec
    out.pop("status", None)
    return out


def derive(
    snapshot: Snapshot,
    *,
    replace_nodes: Mapping[str, Node] | None = None,
    add_nodes: Iterable[Node] = (),
    drop_pods: Iterable[str] = (),
    add_pods: Iterable[dict[str, Any]] = (),
) -> Snapshot:
    """A new snapshot: ``snapshot``'s nodes (some replaced by name, some added at the end) and pods
    (some dropped by uid, the raw ``add_pods`` appended in order, after every pod of the snapshot)."""
    replace_nodes = replace_nodes or {}
    nodes = [replace_nodes.get(n.name, n) for n in snapshot.nodes]
    nodes.extend(add_nodes)
    dropped = set(drop_pods)
    pods = [p for p in snapshot.pods if p.uid not in dropped]
    index = max((p.index for p in snapshot.pods), default=-1) + 1
    for k, raw in enumerate(add_pods):
        pods.append(Pod(raw, index + k))
    out = Snapshot(
        nodes=nodes,
        pods=pods,
        objects=list(snapshot.objects),
        ignored=dict(snapshot.ignored),
        config=snapshot.config,
        name=snapshot.name,
    )
    resolve_priorities(out)  # the new pods' priority from their PriorityClass, as admission sets it
    return out


def snapshot_objects(snapshot: Snapshot) -> list[dict[str, Any]]:
    """Every object of a snapshot as ``kubectl get -o json`` prints it (nodes, pods, the rest)."""
    return [o.raw for o in (*snapshot.nodes, *snapshot.pods, *snapshot.objects)]


def snapshot_document(snapshot: Snapshot) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "List", "items": snapshot_objects(snapshot)}
    return doc


def plan_start(snapshot: Snapshot) -> float | None:
    """When a plan's new pods are created: with the snapshot's latest object (None: the snapshot has
    no timestamps, and neither do the new pods). They queue after every pending pod of their
    priority."""
    t = start_time(snapshot)
    return t if t else None


def load_one(path: str, kind: str) -> dict[str, Any]:
    """The one object of kind ``kind`` a file holds (validated as the API server would)."""
    if not Path(path).is_file():
        raise InputError("no such file", source=path)
    snap = load_paths([path])
    found: list[Any] = [*snap.nodes, *snap.pods, *snap.objects]
    counts = ", ".join(f"{n} {k}" for k, n in sorted(snap.ignored.items()))
    if len(found) != 1 or snap.ignored:
        what = f"{len(found)} objects" + (f" and {counts}" if counts else "")
        raise InputError(f"expected exactly one {kind}, found {what}", source=path)
    obj = found[0]
    if obj.kind != kind:
        raise InputError(f"expected a {kind}, found a {obj.kind}", source=path, obj=obj.ident, field="kind")
    raw: dict[str, Any] = obj.raw
    return raw


def zone_of(node: Node) -> str:
    for key in ZONE_LABELS:
        if key in node.labels:
            return node.labels[key]
    return NO_ZONE


def owner(raw: Mapping[str, Any]) -> dict[str, Any] | None:
    """The controller among an object's ownerReferences (metav1.GetControllerOf)."""
    for ref in (raw.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def is_daemonset_pod(pod: Pod) -> bool:
    ref = owner(pod.raw)
    return ref is not None and ref.get("kind") == "DaemonSet"


def is_mirror_pod(pod: Pod) -> bool:
    return MIRROR_ANNOTATION in pod.meta.annotations


def verdicts(rec: CycleRecord, node_names: list[str], reasons: list[tuple[str, ...]]) -> dict[str, str]:
    """Per evaluated node, its Filter verdict in a cycle: "fits", or "<plugin>: <reasons>"."""
    out: dict[str, str] = {}
    codes, plugins, rids = rec.filter_codes, rec.filter_plugins, rec.filter_reasons
    if codes is None:
        return out
    for i, name in enumerate(node_names):
        code = int(codes[i])
        if code == NOT_EVALUATED:
            continue
        if code == 0:
            out[name] = "fits"
            continue
        pid = int(plugins[i]) if plugins is not None else -1
        rid = int(rids[i]) if rids is not None else -1
        plugin = rec.filter_plugin_names[pid] if pid >= 0 else ""
        text = ", ".join(reasons[rid]) if rid >= 0 else ""
        out[name] = f"{plugin}: {text}" if plugin else text
    return out


def usage(cluster: ClusterState) -> dict[str, Any]:
    """Requests against allocatable, per node and in total (cpuMilli, memoryBytes, pods; percents
    of allocatable, one decimal, null where the node allocates none)."""
    nodes: dict[str, Any] = {}
    totals_alloc = dict.fromkeys((k for k, _ in RESOURCES), 0)
    totals_req = dict.fromkeys((k for k, _ in RESOURCES), 0)
    columns = {key: (cluster.alloc(r), cluster.requested(r)) for key, r in RESOURCES}
    for i, name in enumerate(cluster.names):
        alloc = {key: int(a[i]) for key, (a, _) in columns.items()}
        req = {key: int(q[i]) for key, (_, q) in columns.items()}
        for key in alloc:
            totals_alloc[key] += alloc[key]
            totals_req[key] += req[key]
        nodes[name] = {"allocatable": alloc, "requested": req, "percent": _percents(req, alloc)}
    total = {
        "allocatable": totals_alloc,
        "requested": totals_req,
        "percent": _percents(totals_req, totals_alloc),
    }
    return {"nodes": nodes, "total": total}


def _percents(req: Mapping[str, int], alloc: Mapping[str, int]) -> dict[str, float | None]:
    return {k: (round(100.0 * req[k] / alloc[k], 1) if alloc[k] else None) for k in req}


# ----- label selectors as kubectl takes them (-l) ---------------------------------------------------

_TERM = re.compile(
    r"\s*(?:(!)\s*([^\s,!=()]+)|([^\s,!=()]+)(?:\s*(==|=|!=)\s*([^\s,!=()]*)|\s+(in|notin)\s*\(([^)]*)\))?)\s*"
)


def parse_selector(text: str, field: str = "--selector") -> LabelSelector:
    """``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``, ``k``, ``!k``, comma-separated
    (pkg/labels Parse)."""
    reqs: list[Requirement] = []
    pos = 0
    text = text.strip()
    if not text:
        raise InputError("an empty selector selects every node: name the nodes instead", field=field)
    while pos < len(text):
        m = _TERM.match(text, pos)
        if m is None or m.end() == pos:
            raise InputError(f"cannot parse {text!r} at character {pos + 1}", field=field)
        bang, not_key, key, op, value, set_op, values = m.groups()
        if bang:
            reqs.append(Requirement(not_key, "DoesNotExist", frozenset()))
        elif op in ("=", "=="):
            reqs.append(Requirement(key, "In", frozenset({value})))
        elif op == "!=":
            reqs.append(Requirement(key, "NotIn", frozenset({value})))
        elif set_op:
            vals = frozenset(v.strip() for v in values.split(",") if v.strip())
            reqs.append(Requirement(key, "In" if set_op == "in" else "NotIn", vals))
        else:
            reqs.append(Requirement(key, "Exists", frozenset()))
        pos = m.end()
        if pos < len(text):
            if text[pos] != ",":
                raise InputError(f"cannot parse {text!r} at character {pos + 1}: expected ','", field=field)
            pos += 1
    return LabelSelector(reqs)
