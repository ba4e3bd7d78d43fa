"""CI reports: replay a snapshot under a candidate configuration (and a baseline) and judge the result.

``build_report`` replays the pending pods of a snapshot with the engine under a candidate
``KubeSchedulerConfiguration`` and, when given, a baseline one, and returns a JSON-ready report
(``kind: SchedulingReport``). The report is a pure function of its inputs (no timings, no dates),
so two runs on the same inputs give the same JSON. ``render.py`` turns it into JUnit XML (one test
case per pending pod) and a Markdown pull-request comment; ``exit_status`` applies a ``--fail-on``
policy.

Units in the report: CPU in millicores (``cpuMilli``), memory in bytes (``memoryBytes``), pods as a
count; percentages are of the node's allocatable, rounded to one decimal (``null`` when the node
allocates none).

This module imports no Django: the REST API and the command line both call it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from schedviz.engine import (
    KUBERNETES_VERSION,
    ReplayOptions,
    SchedulerConfig,
    Snapshot,
    load_config,
    load_texts,
)
from schedviz.engine.cluster import ClusterState
from schedviz.engine.config import parse_config_text
from schedviz.engine.quantity import CPU, MEMORY, PODS
from schedviz.engine.runtime.replay import Replay
from schedviz.engine.trace import CycleRecord, ReplayTrace

API_VERSION = "schedviz.io/v1"
KIND = "SchedulingReport"
FORMAT_VERSION = 1

# Results whose pod holds a node at the end of its cycle (Waiting: assumed, held at Permit).
PLACED = frozenset({"Scheduled", "Waiting"})

# Per-pod change kinds, from comparing a pod's outcome under A (baseline) and B (candidate).
UNCHANGED = "unchanged"
MOVED = "moved"
NEWLY_UNSCHEDULABLE = "newlyUnschedulable"
NEWLY_SCHEDULED = "newlyScheduled"
RESULT_CHANGED = "resultChanged"
ONLY_IN_A = "onlyInA"
ONLY_IN_B = "onlyInB"
CHANGE_KINDS = (MOVED, NEWLY_UNSCHEDULABLE, NEWLY_SCHEDULED, RESULT_CHANGED, ONLY_IN_A, ONLY_IN_B)

# --fail-on policies
FAIL_ON_UNSCHEDULABLE = "unschedulable"
FAIL_ON_CHANGES = "changes"
FAIL_ON = (FAIL_ON_UNSCHEDULABLE, FAIL_ON_CHANGES)

# summary key -> trace result
RESULT_COUNTS = (
    ("scheduled", "Scheduled"),
    ("waiting", "Waiting"),
    ("unschedulable", "Unschedulable"),
    ("notHandled", "NotHandled"),
    ("gated", "Gated"),
    ("errors", "Error"),
)

# report resource key -> engine resource name, and the key of its percentage
RESOURCES = (("cpuMilli", CPU), ("memoryBytes", MEMORY), ("pods", PODS))
PERCENT_KEYS = {"cpuMilli": "cpuPercent", "memoryBytes": "memoryPercent", "pods": "podsPercent"}


# ----- comparing two traces -----------------------------------------------------------------------


def _node_index(trace: ReplayTrace) -> dict[str, int]:
    return {name: i for i, name in enumerate(trace.node_names)}


def _total_on(c: CycleRecord, index: Mapping[str, int], node: str | None) -> int | None:
    """The total score ``node`` got in cycle ``c`` (None: not feasible there, or the cycle did not score)."""
    if node is None or not c.scored:
        return None
    i = index.get(node)
    return None if i is None else c.node_total(i)


def outcome(c: CycleRecord, index: Mapping[str, int], final: CycleRecord | None = None) -> dict[str, Any]:
    """A pod's outcome in one replay: result, node, the scheduler's message and the winner's total.

    ``c`` is the pod's scheduling record; ``final`` its last record when that differs (a pod that
    waited at Permit ends with a Binding record, which decides the result but has no scores).
    """
    last = final if final is not None else c
    node = last.selected_node if last.result in PLACED else None
    if node is None and last is not c and c.result in PLACED and last.result in PLACED:
        node = c.selected_node
    return {
        "result": last.result,
        "node": node,
        "message": last.message or last.error or None,
        "profile": c.profile,
        "nominatedNode": last.nominated_node or c.nominated_node,
        "total": _total_on(c, index, node),
    }


def change_kind(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> str:
    """How a pod's outcome changed from A to B (outcome dicts as ``outcome`` returns them)."""
    if a is None:
        return ONLY_IN_B
    if b is None:
        return ONLY_IN_A
    a_placed, b_placed = a["result"] in PLACED, b["result"] in PLACED
    if a_placed and b_placed:
        if a["node"] != b["node"]:
            return MOVED
        return UNCHANGED if a["result"] == b["result"] else RESULT_CHANGED
    if b["result"] == "Unschedulable" and a["result"] != "Unschedulable":
        return NEWLY_UNSCHEDULABLE
    if b_placed:
        return NEWLY_SCHEDULED
    return UNCHANGED if a["result"] == b["result"] else RESULT_CHANGED


def compare_traces(a: ReplayTrace, b: ReplayTrace) -> dict[str, Any]:
    """Compare two replays pod by pod: A is the reference (the baseline), B the new one (the candidate).

    Pods are matched by ``namespace/name`` and nodes by name, so the traces may come from different
    snapshots. Returns::

        {"counts": {"compared", "unchanged", "moved", "newlyUnschedulable", "newlyScheduled",
                    "resultChanged", "onlyInA", "onlyInB", "changed"},
         "pods": [{"pod", "change", "a": outcome | None, "b": outcome | None}, ...],  # B's order, then A-only
         "moved": [{"pod", "from", "to", "fromTotal", "toTotal"}],
         "newlyUnschedulable": [{"pod", "previousResult", "previousNode", "message"}],
         "newlyScheduled": [{"pod", "node", "previousResult", "previousMessage"}],
         "resultChanged": [{"pod", "from", "to", "previousNode", "node", "message"}],
         "onlyInA": [pod, ...], "onlyInB": [pod, ...],
         "scoreShifts": [{"pod", "aNode", "aTotal", "bNode", "bTotal", "delta",
                          "aNodeTotalInB", "bNodeTotalInA"}]}

    An outcome is ``{"result", "node", "message", "profile", "nominatedNode", "total"}``; ``node`` is
    set when the pod holds a node (Scheduled, Waiting), ``total`` is that node's total score (None
    when the cycle did not score, e.g. a single feasible node). Change kinds, in order of precedence:
    ``moved`` (placed in both, on different nodes), ``newlyUnschedulable`` (Unschedulable in B only),
    ``newlyScheduled`` (placed in B only), ``resultChanged`` (any other result change, e.g. Scheduled
    to Error or NotHandled), else ``unchanged``. ``scoreShifts`` lists the pods placed and scored in
    both whose winner or winner's total differs: ``aTotal``/``bTotal`` are each winner's total under
    its own configuration, ``aNodeTotalInB`` is what A's winner scored in B's cycle (None when it was
    not feasible or not scored there) and ``bNodeTotalInA`` the reverse.
    """
    a_index, b_index = _node_index(a), _node_index(b)
    a_cycles = a.pod_records()
    b_cycles = b.pod_records()
    order = list(b_cycles) + [p for p in a_cycles if p not in b_cycles]
    pods: list[dict[str, Any]] = []
    lists: dict[str, list[Any]] = {k: [] for k in CHANGE_KINDS}
    shifts: list[dict[str, Any]] = []
    counts = dict.fromkeys(("compared", UNCHANGED, *CHANGE_KINDS, "changed"), 0)
    for pod in order:
        ca, cb = a_cycles.get(pod), b_cycles.get(pod)
        oa = outcome(ca[0], a_index, ca[1]) if ca is not None else None
        ob = outcome(cb[0], b_index, cb[1]) if cb is not None else None
        kind = change_kind(oa, ob)
        pods.append({"pod": pod, "change": kind, "a": oa, "b": ob})
        counts[kind] += 1
        if kind != UNCHANGED:
            counts["changed"] += 1
        if oa is None or ob is None:
            lists[kind].append(pod)
            continue
        counts["compared"] += 1
        if kind == MOVED:
            lists[MOVED].append(
                {
                    "pod": pod,
                    "from": oa["node"],
                    "to": ob["node"],
                    "fromTotal": oa["total"],
                    "toTotal": ob["total"],
                }
            )
        elif kind == NEWLY_UNSCHEDULABLE:
            lists[kind].append(
                {
                    "pod": pod,
                    "previousResult": oa["result"],
                    "previousNode": oa["node"],
                    "message": ob["message"],
                }
            )
        elif kind == NEWLY_SCHEDULED:
            lists[kind].append(
                {
                    "pod": pod,
                    "node": ob["node"],
                    "previousResult": oa["result"],
                    "previousMessage": oa["message"],
                }
            )
        elif kind == RESULT_CHANGED:
            lists[kind].append(
                {
                    "pod": pod,
                    "from": oa["result"],
                    "to": ob["result"],
                    "previousNode": oa["node"],
                    "node": ob["node"],
                    "message": ob["message"],
                }
            )
        if (
            oa["total"] is not None
            and ob["total"] is not None
            and (oa["node"] != ob["node"] or oa["total"] != ob["total"])
        ):
            assert ca is not None and cb is not None
            shifts.append(
                {
                    "pod": pod,
                    "aNode": oa["node"],
                    "aTotal": oa["total"],
                    "bNode": ob["node"],
                    "bTotal": ob["total"],
                    "delta": ob["total"] - oa["total"],
                    "aNodeTotalInB": _total_on(cb[0], b_index, oa["node"]),
                    "bNodeTotalInA": _total_on(ca[0], a_index, ob["node"]),
                }
            )
    return {"counts": counts, "pods": pods, **lists, "scoreShifts": shifts}


# ----- utilisation ----------------------------------------------------------------------------------


def _percent(requested: int, allocatable: int) -> float | None:
    return round(100.0 * requested / allocatable, 1) if allocatable > 0 else None


def _usage(requested: Mapping[str, int], allocatable: Mapping[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, _ in RESOURCES:
        out[key] = requested[key]
    for key, _ in RESOURCES:
        out[PERCENT_KEYS[key]] = _percent(requested[key], allocatable[key])
    return out


def _requested(cluster: ClusterState, i: int) -> dict[str, int]:
    return {key: int(cluster.requested(r)[i]) for key, r in RESOURCES}


def utilization(
    before: ClusterState, after: ClusterState, after_baseline: ClusterState | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per node (snapshot order) and in total: allocatable, and requests before and after a replay.

    Each entry: ``{"node", "allocatable": {cpuMilli, memoryBytes, pods}, "before": usage, "after": usage,
    "afterBaseline": usage | None, "changed": bool}`` with usage ``{cpuMilli, memoryBytes, pods,
    cpuPercent, memoryPercent, podsPercent}``; ``changed`` is true when the candidate replay changed
    the node's requests.
    """
    nodes: list[dict[str, Any]] = []
    keys = [k for k, _ in RESOURCES]
    tot_alloc = dict.fromkeys(keys, 0)
    tot_before = dict.fromkeys(keys, 0)
    tot_after = dict.fromkeys(keys, 0)
    tot_base = dict.fromkeys(keys, 0)
    for i, name in enumerate(before.names):
        alloc = {key: int(before.alloc(r)[i]) for key, r in RESOURCES}
        req_before = _requested(before, i)
        req_after = _requested(after, i)
        req_base = _requested(after_baseline, i) if after_baseline is not None else None
        for k in keys:
            tot_alloc[k] += alloc[k]
            tot_before[k] += req_before[k]
            tot_after[k] += req_after[k]
            if req_base is not None:
                tot_base[k] += req_base[k]
        nodes.append(
            {
                "node": name,
                "allocatable": alloc,
                "before": _usage(req_before, alloc),
                "after": _usage(req_after, alloc),
                "afterBaseline": _usage(req_base, alloc) if req_base is not None else None,
                "changed": req_before != req_after,
            }
        )
    totals = {
        "nodes": len(nodes),
        "allocatable": tot_alloc,
        "before": _usage(tot_before, tot_alloc),
        "after": _usage(tot_after, tot_alloc),
        "afterBaseline": _usage(tot_base, tot_alloc) if after_baseline is not None else None,
    }
    return nodes, totals


# ----- the report -----------------------------------------------------------------------------------


def summarize(trace: ReplayTrace) -> dict[str, int]:
    """Counts of a replay's results: pendingPods and one count per result (see RESULT_COUNTS)."""
    finals = [f for _, f in trace.pod_records().values()]
    out = {"pendingPods": len(finals)}
    for key, result in RESULT_COUNTS:
        out[key] = sum(1 for c in finals if c.result == result)
    return out


def split_pod(pod: str) -> tuple[str, str]:
    ns, sep, name = pod.partition("/")
    return (ns, name) if sep else ("", pod)


def build_report(
    snapshot: Snapshot,
    candidate: SchedulerConfig,
    baseline: SchedulerConfig | None,
    options: ReplayOptions | None = None,
) -> dict[str, Any]:
    """Replay ``snapshot`` under ``candidate`` (and ``baseline``) and return the report (JSON-ready).

    Top-level keys: ``apiVersion``, ``kind``, ``formatVersion``, ``kubernetesVersion``, ``snapshot``
    (name and sizes), ``options``, ``hasBaseline``, ``summary`` (candidate counts: pendingPods,
    scheduled, waiting, unschedulable, notHandled, gated, errors; with a baseline also changed, moved,
    newlyUnschedulable, newlyScheduled, resultChanged, else those are null), ``baselineSummary``,
    ``pods`` (per pending pod in the candidate's queue order), ``changes`` (``compare_traces`` without
    its ``pods``; null without a baseline), ``utilization`` (per node) and ``utilizationTotals``.
    """
    options = options or ReplayOptions()
    cand = Replay(snapshot, candidate, options)
    cand_trace = cand.run()
    base_trace: ReplayTrace | None = None
    base_cluster: ClusterState | None = None
    if baseline is not None:
        base = Replay(snapshot, baseline, options)
        base_trace = base.run()
        base_cluster = base.cluster
    cmp = compare_traces(base_trace, cand_trace) if base_trace is not None else None

    summary: dict[str, Any] = summarize(cand_trace)
    for key in ("changed", MOVED, NEWLY_UNSCHEDULABLE, NEWLY_SCHEDULED, RESULT_CHANGED):
        summary[key] = cmp["counts"][key] if cmp is not None else None

    pods: list[dict[str, Any]] = []
    if cmp is not None:
        entries = [(e["pod"], e["b"], e["a"], e["change"]) for e in cmp["pods"]]
    else:
        index = _node_index(cand_trace)
        entries = [(pod, outcome(s, index, f), None, None) for pod, (s, f) in cand_trace.pod_records().items()]
    for pod, ob, oa, kind in entries:
        ns, name = split_pod(pod)
        entry: dict[str, Any] = {"pod": pod, "namespace": ns, "name": name}
        if ob is not None:
            entry.update(ob)
        else:  # in the baseline only (cannot happen on one snapshot; kept for completeness)
            entry.update({"result": None, "node": None, "message": None, "profile": None})
            entry.update({"nominatedNode": None, "total": None})
        entry["baseline"] = (
            {k: oa[k] for k in ("result", "node", "message", "total")} if oa is not None else None
        )
        entry["changed"] = None if kind is None else kind != UNCHANGED
        entry["change"] = kind
        pods.append(entry)

    nodes, totals = utilization(snapshot.cluster(), cand.cluster, base_cluster)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "formatVersion": FORMAT_VERSION,
        "kubernetesVersion": KUBERNETES_VERSION,
        "snapshot": {
            "name": snapshot.name,
            "nodes": len(snapshot.nodes),
            "runningPods": len(snapshot.running),
            "pendingPods": len(snapshot.pending),
        },
        "options": {"allNodes": options.all_nodes},
        "hasBaseline": baseline is not None,
        "summary": summary,
        "baselineSummary": summarize(base_trace) if base_trace is not None else None,
        "pods": pods,
        "changes": {k: v for k, v in cmp.items() if k != "pods"} if cmp is not None else None,
        "utilization": nodes,
        "utilizationTotals": totals,
    }


def load_inputs(
    snapshot: Iterable[tuple[str, str]],
    config: tuple[str, str],
    baseline: tuple[str, str] | None = None,
) -> tuple[Snapshot, SchedulerConfig, SchedulerConfig | None]:
    """Parse uploaded texts: snapshot documents and configurations as (name, text) pairs.

    Raises ``InputError`` (snapshot) or ``ConfigError`` (configurations), both naming the input.
    """
    texts = list(snapshot)
    snap = load_texts(texts)
    if not snap.name:
        snap.name = ", ".join(n for n, _ in texts)
    cand = load_config(parse_config_text(config[1], config[0]), name=config[0])
    base = None
    if baseline is not None:
        base = load_config(parse_config_text(baseline[1], baseline[0]), name=baseline[0])
    return snap, cand, base


def check_report(obj: object) -> dict[str, Any]:
    """``obj`` if it has the shape of a report (as a server returns it), else ValueError naming the problem."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    if obj.get("kind") != KIND:
        raise ValueError(f"expected kind {KIND!r}, got {obj.get('kind')!r}")
    for key, typ in (("summary", dict), ("pods", list), ("utilization", list), ("utilizationTotals", dict)):
        if not isinstance(obj.get(key), typ):
            raise ValueError(f"field {key!r} is missing or not a {'list' if typ is list else 'object'}")
    for i, p in enumerate(obj["pods"]):
        if not isinstance(p, dict) or not isinstance(p.get("pod"), str) or "result" not in p:
            raise ValueError(f"field pods[{i}] is not a pod entry")
    if obj.get("hasBaseline") and not isinstance(obj.get("changes"), dict):
        raise ValueError("field 'changes' is missing although the report has a baseline")
    return obj


# ----- policy -----------------------------------------------------------------------------------------


def policy_failures(report: Mapping[str, Any], fail_on: Iterable[str]) -> list[str]:
    """Why ``report`` fails the ``fail_on`` policies (empty: it passes).

    ``unschedulable``: a pending pod the candidate cannot place (result Unschedulable or Error).
    ``changes``: a pod whose outcome differs from the baseline (needs a report with a baseline).
    Every headroom check of the report (``headroom.py``) that failed fails too, whatever ``fail_on``.
    Raises ValueError for an unknown policy or ``changes`` without a baseline.
    """
    reasons: list[str] = []
    summary = report["summary"]
    for policy in sorted(set(fail_on)):
        if policy == FAIL_ON_UNSCHEDULABLE:
            n = int(summary.get("unschedulable") or 0) + int(summary.get("errors") or 0)
            if n:
                reasons.append(f"unschedulable: {n} pending pod{'s' if n != 1 else ''} cannot be scheduled")
        elif policy == FAIL_ON_CHANGES:
            if not report.get("hasBaseline"):
                raise ValueError("--fail-on changes needs a baseline configuration")
            n = int(summary.get("changed") or 0)
            if n:
                reasons.append(
                    f"changes: {n} pod{'s' if n != 1 else ''} placed differently than the baseline"
                )
        else:
            raise ValueError(f"unknown --fail-on policy {policy!r}: use {' or '.join(FAIL_ON)}")
    from .headroom import headroom_failures  # every --min-headroom check is a policy of its own

    reasons.extend(headroom_failures(report))
    return reasons


def exit_status(report: Mapping[str, Any], fail_on: set[str]) -> int:
    """0 when the report passes every ``fail_on`` policy, 1 when one fails (see ``policy_failures``)."""
    return 1 if policy_failures(report, fail_on) else 0
