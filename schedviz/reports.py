"""CI reports: replay a snapshot under a candidate configuration (and a baseline) and judge the result.

``build_report`` replays the pending pods of a snapshot with the engine under a candidate
``KubeSchedulerConfiguration`` and, when given, a baseline one, and returns a JSON-ready report
(``kind: SchedulingReport``). The report is a pure function of its inputs (no timings, no dates),
so two runs on the same inputs give the same JSON. Renderers turn it into JUnit XML (one test case
per pending pod) and a Markdown pull-request comment; ``exit_status`` applies a ``--fail-on`` policy.

Units in the report: CPU in millicores (``cpuMilli``), memory in bytes (``memoryBytes``), pods as a
count; percentages are of the node's allocatable, rounded to one decimal (``null`` when the node
allocates none).

This module imports no Django: the REST API and the command line both call it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .engine import KUBERNETES_VERSION, ReplayOptions, SchedulerConfig, Snapshot, load_config, load_texts
from .engine.cluster import ClusterState
from .engine.config import parse_config_text
from .engine.quantity import CPU, MEMORY, PODS, format_milli_cpu
from .engine.runtime import registry
from .engine.runtime.replay import Replay
from .engine.trace import CycleRecord, ReplayTrace

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


def _split(pod: str) -> tuple[str, str]:
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
        ns, name = _split(pod)
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
    impl = registry.implements_table()
    cand = load_config(parse_config_text(config[1], config[0]), implements=impl, name=config[0])
    base = None
    if baseline is not None:
        base = load_config(parse_config_text(baseline[1], baseline[0]), implements=impl, name=baseline[0])
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
    return reasons


def exit_status(report: Mapping[str, Any], fail_on: set[str]) -> int:
    """0 when the report passes every ``fail_on`` policy, 1 when one fails (see ``policy_failures``)."""
    return 1 if policy_failures(report, fail_on) else 0


# ----- JUnit XML ----------------------------------------------------------------------------------------

# Characters XML 1.0 does not allow, even escaped.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(value: object) -> str:
    return _XML_INVALID.sub("\ufffd", "" if value is None else str(value))


def _placement(entry: Mapping[str, Any] | None) -> str:
    if entry is None or entry.get("result") is None:
        return "not replayed"
    if entry.get("node"):
        return f"{entry['result']} on {entry['node']}"
    return str(entry["result"])


def _pod_details(p: Mapping[str, Any]) -> str:
    lines = [f"pod {p['pod']}: {_placement(p)}"]
    if p.get("profile"):
        lines.append(f"profile: {p['profile']}")
    if p.get("total") is not None:
        lines.append(f"winning node total score: {p['total']}")
    if p.get("nominatedNode"):
        lines.append(f"nominated node (preemption): {p['nominatedNode']}")
    if p.get("message"):
        lines.append(f"message: {p['message']}")
    base = p.get("baseline")
    if base is not None:
        lines.append(
            f"baseline: {_placement(base)} ({_CHANGE_LABEL.get(p.get('change') or '', 'unchanged')})"
        )
        if base.get("message") and base.get("message") != p.get("message"):
            lines.append(f"baseline message: {base['message']}")
    return "\n".join(lines)


def to_junit_xml(report: Mapping[str, Any]) -> str:
    """JUnit XML: ``<testsuites>`` with one ``<testsuite>``, one ``<testcase>`` per pending pod.

    ``classname`` is the namespace and ``name`` the pod's name. Unschedulable pods fail
    (``<failure message=...>`` with the scheduler's message), pods whose cycle failed with an error get
    ``<error>``, pods not handled by any profile or gated are ``<skipped>``; scheduled pods pass. The
    summary is in ``<properties>``; a case's details (node, baseline, message) are the text of its
    ``<failure>``/``<error>``, or its ``<system-out>``.
    """
    pods = list(report["pods"])
    failures = sum(1 for p in pods if p.get("result") == "Unschedulable")
    errors = sum(1 for p in pods if p.get("result") == "Error")
    skipped = sum(1 for p in pods if p.get("result") in ("NotHandled", "Gated") or p.get("result") is None)
    counts = {
        "tests": str(len(pods)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": str(skipped),
        "time": "0",
    }
    root = ET.Element("testsuites", {"name": "schedviz", **counts})
    snap = report.get("snapshot") or {}
    suite_name = "schedviz report" + (f": {snap['name']}" if snap.get("name") else "")
    suite = ET.SubElement(root, "testsuite", {"name": _xml_text(suite_name), **counts})
    props = ET.SubElement(suite, "properties")
    prop_values: list[tuple[str, object]] = [
        ("kubernetesVersion", report.get("kubernetesVersion")),
        ("hasBaseline", "true" if report.get("hasBaseline") else "false"),
        ("nodes", snap.get("nodes")),
        ("runningPods", snap.get("runningPods")),
    ]
    prop_values += list(report["summary"].items())
    for key, value in prop_values:
        if value is not None:
            ET.SubElement(props, "property", {"name": key, "value": _xml_text(value)})
    for p in pods:
        ns, name = p.get("namespace"), p.get("name")
        if ns is None or name is None:
            ns, name = _split(str(p["pod"]))
        case = ET.SubElement(
            suite, "testcase", {"classname": _xml_text(ns), "name": _xml_text(name), "time": "0"}
        )
        result = p.get("result")
        message = _xml_text(p.get("message") or result or "")
        if result == "Unschedulable":
            el = ET.SubElement(case, "failure", {"message": message, "type": "Unschedulable"})
            el.text = _xml_text(_pod_details(p))
        elif result == "Error":
            el = ET.SubElement(case, "error", {"message": message, "type": "Error"})
            el.text = _xml_text(_pod_details(p))
        elif result in ("NotHandled", "Gated") or result is None:
            ET.SubElement(case, "skipped", {"message": _xml_text(f"{result or 'not replayed'}: {message}")})
        if result not in ("Unschedulable", "Error"):  # a failure or error carries the details itself
            out = ET.SubElement(case, "system-out")
            out.text = _xml_text(_pod_details(p))
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ----- Markdown -----------------------------------------------------------------------------------------

MARKER = "<!-- schedviz-report -->"
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#])")
_NEWLINES = re.compile(r"\r\n|\r|\n")

_CHANGE_LABEL = {
    UNCHANGED: "unchanged",
    MOVED: "moved",
    NEWLY_UNSCHEDULABLE: "newly unschedulable",
    NEWLY_SCHEDULED: "newly scheduled",
    RESULT_CHANGED: "result changed",
    ONLY_IN_A: "only in the baseline",
    ONLY_IN_B: "only in the candidate",
}


def md_escape(value: object) -> str:
    """Text safe in a Markdown table cell: punctuation Markdown would act on is backslash-escaped,
    ``|`` cannot end the cell, newlines become ``<br>``."""
    text = "" if value is None else str(value)
    return "<br>".join(_MD_SPECIAL.sub(r"\\\1", line) for line in _NEWLINES.split(text))


def _row(cells: Iterable[object]) -> str:
    return "| " + " | ".join(md_escape(c) for c in cells) + " |"


def _table(header: Sequence[str], align: str, rows: list[list[object]], max_rows: int) -> list[str]:
    out = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(("---:" if a == "r" else "---") for a in align) + "|",
    ]
    out += [_row(r) for r in rows[:max_rows]]
    if len(rows) > max_rows:
        out.append("")
        out.append(f"… and {len(rows) - max_rows} more (see the JSON report).")
    return out


def _section(title: str, body: list[str], rows: int, collapse_after: int) -> list[str]:
    if rows > collapse_after:
        return [
            f"### {title}",
            "",
            "<details>",
            f"<summary>Show {rows} row{'s' if rows != 1 else ''}</summary>",
            "",
            *body,
            "",
            "</details>",
            "",
        ]
    return [f"### {title}", "", *body, ""]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _mem(n: int) -> str:
    value = float(n)
    for unit in ("", "Ki", "Mi", "Gi", "Ti", "Pi"):
        if abs(value) < 1024 or unit == "Pi":
            return f"{n}" if unit == "" else f"{value:.1f}{unit}"
        value /= 1024
    return str(n)  # pragma: no cover


def _pct(v: object) -> str:
    return "-" if v is None else f"{v}%"


def _cores(milli: int) -> str:
    """Millicores as cores, kubectl-style but decimal: 7900 -> "7.9", 250 -> "0.25", 4000 -> "4"."""
    return format_milli_cpu(milli) if milli % 1000 == 0 else f"{milli / 1000:.3f}".rstrip("0")


def _usage_cell(usage: Mapping[str, Any], alloc: Mapping[str, Any], key: str) -> str:
    if key == "cpuMilli":
        text = f"{_cores(int(usage[key]))} / {_cores(int(alloc[key]))}"
    elif key == "memoryBytes":
        text = f"{_mem(int(usage[key]))} / {_mem(int(alloc[key]))}"
    else:
        text = f"{usage[key]} / {alloc[key]}"
    return f"{text} ({_pct(usage.get(PERCENT_KEYS[key]))})"


def headline(report: Mapping[str, Any]) -> tuple[str, str]:
    """(icon, sentence) summing up the report: ❌ pods cannot be scheduled, ⚠️ placements changed, ✅."""
    s = report["summary"]
    pending = int(s.get("pendingPods") or 0)
    bad = int(s.get("unschedulable") or 0) + int(s.get("errors") or 0)
    changed = int(s.get("changed") or 0)
    if bad:
        text = f"{bad} of {_plural(pending, 'pending pod')} cannot be scheduled"
        base = report.get("baselineSummary")
        if report.get("hasBaseline") and isinstance(base, Mapping):
            text += f" (baseline: {int(base.get('unschedulable') or 0) + int(base.get('errors') or 0)})"
        if changed:
            text += f"; {_plural(changed, 'pod')} placed differently than the baseline"
        return "❌", text
    scheduled = int(s.get("scheduled") or 0) + int(s.get("waiting") or 0)
    text = f"{scheduled} of {_plural(pending, 'pending pod')} scheduled"
    if pending and scheduled == pending:
        text = f"all {_plural(pending, 'pending pod')} scheduled"
    if not pending:
        text = "no pending pods"
    if changed:
        return "⚠️", f"{text}; {_plural(changed, 'pod')} placed differently than the baseline"
    if report.get("hasBaseline"):
        return "✅", f"{text}; no placement changes against the baseline"
    return "✅", text


def to_markdown(
    report: Mapping[str, Any],
    *,
    fail_on: Iterable[str] | None = None,
    collapse_after: int = 10,
    max_rows: int = 100,
) -> str:
    """A pull-request comment: verdict, summary table, changed placements, unschedulable pods, utilisation.

    Tables longer than ``collapse_after`` rows are collapsed in ``<details>``; at most ``max_rows``
    rows are shown per table. With ``fail_on`` the comment states the policy's verdict.
    """
    icon, sentence = headline(report)
    s = report["summary"]
    base = report.get("baselineSummary")
    has_base = bool(report.get("hasBaseline"))
    lines = [MARKER, f"## {icon} SchedViz: {md_escape(sentence)}", ""]
    snap = report.get("snapshot") or {}
    lines.append(
        f"Replayed {_plural(int(snap.get('pendingPods') or s.get('pendingPods') or 0), 'pending pod')} of "
        f"snapshot {md_escape(snap.get('name') or '(unnamed)')} ({_plural(int(snap.get('nodes') or 0), 'node')}, "
        f"{_plural(int(snap.get('runningPods') or 0), 'running pod')}) through kube-scheduler "
        f"{md_escape(report.get('kubernetesVersion', KUBERNETES_VERSION))} with the candidate configuration"
        + (" and the baseline." if has_base else ".")
    )
    lines.append("")
    if fail_on is not None:
        policies = sorted(set(fail_on))
        if policies:
            reasons = policy_failures(report, policies)
            verdict = "**failed**: " + md_escape("; ".join(reasons)) if reasons else "**passed**"
            lines += [f"Policy (fail on {md_escape(', '.join(policies))}): {verdict}", ""]

    # summary table
    labels = [
        ("pendingPods", "pending pods"),
        ("scheduled", "scheduled"),
        ("waiting", "waiting at Permit"),
        ("unschedulable", "unschedulable"),
        ("errors", "errors"),
        ("notHandled", "not handled (no profile)"),
        ("gated", "gated"),
    ]
    header = ["", "candidate", "baseline"] if has_base and base else ["", "candidate"]
    rows: list[list[object]] = []
    for key, label in labels:
        if key == "waiting" and not s.get("waiting") and not (base or {}).get("waiting"):
            continue
        row: list[object] = [label, s.get(key, 0)]
        if has_base and base:
            row.append(base.get(key, 0))
        rows.append(row)
    lines += ["### Summary", "", *_table(header, "l" + "r" * (len(header) - 1), rows, len(rows)), ""]
    if has_base:
        lines.append(
            "Against the baseline: "
            + ", ".join(
                f"{_plural(int(s.get(k) or 0), 'pod')} {label}"
                for k, label in (
                    (MOVED, "moved"),
                    (NEWLY_UNSCHEDULABLE, "newly unschedulable"),
                    (NEWLY_SCHEDULED, "newly scheduled"),
                    (RESULT_CHANGED, "with another result"),
                )
            )
            + "."
        )
        lines.append("")

    pods = list(report["pods"])
    # changed placements
    if has_base:
        changed = [p for p in pods if p.get("changed")]
        if changed:
            rows = []
            for p in changed:
                b = p.get("baseline") or {}
                rows.append(
                    [
                        p["pod"],
                        _CHANGE_LABEL.get(p.get("change") or "", p.get("change")),
                        _placement(b if b else None),
                        _placement(p),
                        "-" if b.get("total") is None else b["total"],
                        "-" if p.get("total") is None else p["total"],
                    ]
                )
            body = _table(
                ["pod", "change", "baseline", "candidate", "baseline score", "candidate score"],
                "llllrr",
                rows,
                max_rows,
            )
            lines += _section(f"Changed placements ({len(changed)})", body, len(rows), collapse_after)

    # unschedulable pods
    bad = [p for p in pods if p.get("result") in ("Unschedulable", "Error")]
    if bad:
        rows = [[p["pod"], p["result"], p.get("message") or ""] for p in bad]
        body = _table(["pod", "result", "message"], "lll", rows, max_rows)
        lines += _section(f"Pods that cannot be scheduled ({len(bad)})", body, len(rows), collapse_after)

    # not handled / gated
    other = [p for p in pods if p.get("result") in ("NotHandled", "Gated")]
    if other:
        rows = [[p["pod"], p["result"], p.get("message") or ""] for p in other]
        body = _table(["pod", "result", "reason"], "lll", rows, max_rows)
        lines += _section(f"Pods left out of scheduling ({len(other)})", body, len(rows), collapse_after)

    # utilisation
    util = [n for n in report.get("utilization") or [] if n.get("changed")]
    totals = report.get("utilizationTotals")
    if util or totals:
        rows = []
        for n in util:
            rows.append(
                [n["node"]]
                + [
                    _usage_cell(n[when], n["allocatable"], key)
                    for key in ("cpuMilli", "memoryBytes", "pods")
                    for when in ("before", "after")
                ]
            )
        header = [
            "node",
            "CPU before",
            "CPU after",
            "memory before",
            "memory after",
            "pods before",
            "pods after",
        ]
        body = _table(header, "lllllll", rows, max_rows)
        if totals:
            total_row = [f"all {_plural(int(totals.get('nodes') or 0), 'node')}"] + [
                _usage_cell(totals[when], totals["allocatable"], key)
                for key in ("cpuMilli", "memoryBytes", "pods")
                for when in ("before", "after")
            ]
            # the total row goes right after the table rows, before any "… more" note
            insert_at = 2 + min(len(rows), max_rows)
            body.insert(insert_at, _row(total_row))
        title = f"Requested resources on nodes that receive pods ({len(util)})"
        lines += _section(title, body, len(rows) + 1, collapse_after)

    lines.append(
        f"<sub>SchedViz replay of kube-scheduler {md_escape(report.get('kubernetesVersion', ''))}; "
        "requests against allocatable.</sub>"
    )
    return "\n".join(lines) + "\n"
