"""Why here? Why not there? What would make it fit?

``explain(snapshot, "ns/name")`` replays the snapshot up to the pod's cycle (every earlier cycle runs
exactly as in a replay), then looks at the pod's cycle with every node filtered and scored:

- the winner: the selected node, its tie set, the runner-up, and per score plugin the weighted
  difference between the winner and the runner-up or any node the caller names;
- the rejected nodes, grouped by (plugin, code, reasons) as the trace records them;
- for every rejected node, the smallest change that would let the pod pass there, by failing plugin
  (a resource deficit, untolerated taints, a cordon, the failing node selector requirement, the host
  port and the pod using it, the failing (anti-)affinity term or existing pods' anti-affinity, the
  violated spread constraint and its skew; volume and device plugins are described, not changed).
  Every change is CHECKED: PreFilter and Filter run again with the change applied (on a modified
  copy of the pod, or on the cluster, restored afterwards). A change that still fails because
  another plugin then rejects the node is reported as such, and the next change is looked for, up
  to ``MAX_CHAIN`` changes in a row;
- for an unschedulable pod, single changes ranked by how many nodes each makes feasible (counted by
  filtering every node again with the change applied).

Nodes with the same diagnosis are checked together (one PreFilter + Filter run over all of them);
the number of runs is capped (``max_checks``) and the explanation says when the cap was reached.
Finally the pod's real cycle runs, with the caller's options, and its outcome is reported too.

The package: ``model.py`` (what an explanation says, and its JSON), ``analysis.py`` (the what-if
machinery: re-running PreFilter + Filter with changes applied, the fix tree, the comparison of
scores), ``render.py`` (the text), and here the entry points, ``explain`` and ``explain_replay``.
What each plugin finds wrong with a node is the plugin's own ``diagnose`` (framework/diagnosis.py),
so a custom plugin explains its rejections as the in-tree ones do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..config import SchedulerConfig
from ..errors import InputError
from ..framework import Code
from ..framework.diagnosis import (
    MAX_NAMED,
    Change,
    Diagnosis,
    PodPatch,
    format_amount,
    format_bytes,
    format_taint,
)
from ..loader import Snapshot
from ..objects import Pod
from ..quantity import CPU, MEMORY, PODS
from ..runtime.replay import Replay, ReplayOptions
from ..trace import NOT_EVALUATED, CycleRecord
from .analysis import (
    MAX_CHAIN,
    NARROWED_PREFIX,
    IntArray,
    _Analysis,
    _plugin_name,
    compare_scores,
    recorded_verdict,
)
from .model import (
    API_VERSION,
    KIND,
    PASS,
    Comparison,
    Explanation,
    Fix,
    Plan,
    Suggestion,
    ThenFails,
    Verdict,
)
from .render import TEXT_NODE_CHANGES, node_story, render_text, stored_node_story

__all__ = [
    "API_VERSION",
    "KIND",
    "MAX_CHAIN",
    "MAX_NAMED",
    "NARROWED_PREFIX",
    "PASS",
    "TEXT_NODE_CHANGES",
    "Change",
    "Comparison",
    "Diagnosis",
    "Explanation",
    "Fix",
    "Plan",
    "PodPatch",
    "Suggestion",
    "ThenFails",
    "Verdict",
    "compare_scores",
    "explain",
    "explain_replay",
    "format_amount",
    "format_bytes",
    "format_taint",
    "node_story",
    "pending_pod_key",
    "recorded_verdict",
    "render_text",
    "stored_node_story",
]


def pending_pod_key(snapshot: Snapshot, key: str) -> str:
    """"namespace/name" of the pending pod ``key`` names (a bare name is in default); InputError for
    a pod the snapshot does not have, or one that is bound or finished (it has no cycle)."""
    if not key or key.count("/") > 1:
        raise InputError(f"invalid pod {key!r}: expected namespace/name", field="pod")
    full = key if "/" in key else f"default/{key}"
    p = snapshot.pod(full)
    if p is None:
        raise InputError("no such pod in the snapshot", obj=f"Pod {full}")
    if p.terminal:
        raise InputError(f"the pod has finished ({p.phase}): it has no scheduling cycle", obj=p.ident)
    if p.node_name:
        raise InputError(
            f"the pod is not pending: it is bound to node {p.node_name} (spec.nodeName); "
            "only pending pods have a scheduling cycle to explain",
            obj=p.ident,
        )
    return full


def explain(
    snapshot: Snapshot,
    pod: str,
    *,
    config: SchedulerConfig | None = None,
    options: ReplayOptions | None = None,
    nodes: list[str] | None = None,
    max_suggestions: int = 50,
    max_checks: int = 200,
    max_fixes: int = 100,
) -> Explanation:
    """Explain the scheduling cycle of the pending pod ``pod`` ("namespace/name") of ``snapshot``.

    ``nodes`` names nodes to compare with the winner (or to explain the rejection of);
    ``max_checks`` caps the PreFilter + Filter re-runs used to check changes, ``max_fixes`` the
    diagnosed groups listed and ``max_suggestions`` the ranked single changes.
    Raises InputError for an unknown or non-pending pod or an unknown node.
    """
    key = pending_pod_key(snapshot, pod)
    names = [n.name for n in snapshot.nodes]
    known = set(names)
    for n in nodes or []:
        if n not in known:
            raise InputError(f"no node {n!r} in the snapshot", field="nodes")
    rp = Replay(snapshot, config, options or ReplayOptions())
    target = rp.run_until(key)
    ex, _ = explain_replay(
        rp,
        target,
        nodes=nodes,
        max_suggestions=max_suggestions,
        max_checks=max_checks,
        max_fixes=max_fixes,
    )
    return ex


def explain_replay(
    rp: Replay,
    target: Pod,
    *,
    nodes: list[str] | None = None,
    max_suggestions: int = 50,
    max_checks: int = 200,
    max_fixes: int = 100,
) -> tuple[Explanation, CycleRecord]:
    """Explain ``target``'s next cycle in ``rp`` as the replay stands (whatever the caller ran before
    it), then run that cycle with the replay's options: the explanation and the cycle's record
    (appended to the replay's trace). ``explain`` is this after replaying the cycles before the pod.

    The what-if checks leave the replay as they found it, so the record is the cycle the replay
    would have run without them. Raises InputError for a node ``rp`` does not have.
    """
    for n in nodes or []:
        if n not in rp.cluster.index:
            raise InputError(f"no node {n!r} in the snapshot", field="nodes")
    options = rp.options
    key = target.key
    fw = rp.frameworks.get(target.scheduler_name)
    if fw is None:
        rec = rp.schedule_one(target)
        rp.trace.cycles.append(rec)
        return (
            Explanation(
                pod=key,
                profile=None,
                result=rec.result,
                seq=rec.seq,
                message=rec.error,
                node_count=rp.cluster.n,
                feasible_count=0,
                error=rec.error,
                scheduler=_decision(rec, options),
                notes=[f"profiles of the configuration: {', '.join(rp.frameworks) or 'none'}"],
            ),
            rec,
        )
    rec = rp.preview(target, all_nodes=True)
    analysis = _Analysis(rp, fw, target, max(0, max_checks))
    ex = Explanation(
        pod=key,
        profile=fw.name,
        result=rec.result,
        seq=rec.seq,
        message=rec.message,
        node_count=rp.cluster.n,
        feasible_count=0 if rec.feasible is None else len(rec.feasible),
        error=rec.error,
        max_checks=max(0, max_checks),
    )
    if rec.result == "Gated":
        gates = ", ".join(target.scheduling_gates)
        ex.notes.append(
            f"the pod waits for its scheduling gates ({gates}); remove them to let it be scheduled"
        )
    if rec.filter_codes is not None:
        # the what-if checks re-run PreFilter and Filter: plugins must not change lasting state
        rp.waiting.dry_run = True
        try:
            _explain_cycle(ex, analysis, rec, nodes or [], max_suggestions, max_fixes)
        finally:
            rp.waiting.dry_run = False
    ex.checks = analysis.checks
    ex.capped = analysis.capped
    if analysis.capped:
        ex.notes.append(
            f"checks capped at {analysis.max_checks} PreFilter+Filter runs: changes listed as unchecked were not verified"
        )
    actual = rp.schedule_one(target)
    rp.trace.cycles.append(actual)
    ex.scheduler = _decision(actual, options)
    if not options.all_nodes and actual.selected_node != rec.selected_node and actual.result == "Scheduled":
        evaluated = 0 if actual.evaluation_order is None else len(actual.evaluation_order)
        ex.notes.append(
            f"with its node sampling the scheduler evaluated {evaluated} of {rp.cluster.n} nodes and selected "
            f"{actual.selected_node}; with every node evaluated, {rec.selected_node} scores best"
        )
    return ex, actual


def _decision(rec: CycleRecord, options: ReplayOptions) -> dict[str, Any]:
    return {
        "allNodes": options.all_nodes,
        "result": rec.result,
        "selectedNode": rec.selected_node,
        "message": rec.message,
        "nominatedNode": rec.nominated_node,
        "evaluatedNodes": 0 if rec.evaluation_order is None else len(rec.evaluation_order),
        "error": rec.error,
    }


def _trace_verdicts(rp: Replay, rec: CycleRecord) -> list[tuple[Verdict, IntArray]]:
    """Rejected nodes of the cycle grouped by (code, plugin, reasons), largest group first."""
    assert rec.filter_codes is not None and rec.filter_plugins is not None and rec.filter_reasons is not None
    codes = rec.filter_codes.astype(np.int64)
    rejected = np.flatnonzero((codes != 0) & (codes != NOT_EVALUATED))
    if len(rejected) == 0:
        return []
    key = (
        (codes[rejected] << 48)
        + ((rec.filter_plugins[rejected].astype(np.int64) + 1) << 32)
        + (rec.filter_reasons[rejected].astype(np.int64) + 1)
    )
    out = []
    for k in np.unique(key).tolist():
        members = rejected[key == k]
        first = int(members[0])
        pid = int(rec.filter_plugins[first])
        rid = int(rec.filter_reasons[first])
        reasons = rp.reasons.items[rid] if rid >= 0 else ()
        plugin = _plugin_name(rec, pid, reasons)
        out.append(((int(codes[first]), plugin, reasons), members.astype(np.int64)))
    out.sort(key=lambda vn: (-len(vn[1]), vn[0][1], vn[0][2]))
    return out


def _explain_cycle(
    ex: Explanation,
    an: _Analysis,
    rec: CycleRecord,
    named: list[str],
    max_suggestions: int,
    max_fixes: int,
) -> None:
    names = an.names
    feasible = [] if rec.feasible is None else rec.feasible.tolist()
    # the nodes feasible as things are, every node filtered (the cycle may stop early without
    # score plugins); "more feasible nodes" counts against these
    everyone = an.full(PodPatch())
    an.baseline = set(feasible) if everyone is None else {i for i, v in enumerate(everyone) if v[0] == 0}
    an.wanted = {an.cluster.index[n] for n in named}
    # why here?
    if rec.selected_node is not None and rec.scored and rec.totals is not None:
        winner = an.cluster.index[rec.selected_node]
        ex.selected_node = rec.selected_node
        ex.tied = rec.tied_names(names)
        ex.winner_total = rec.node_total(winner)
        totals = rec.totals.tolist()
        others = sorted((-t, i) for i, t in zip(feasible, totals, strict=True) if i != winner)
        if others:
            ex.runner_up = an.compare(rec, winner, others[0][1])
    # why not there?
    groups = _trace_verdicts(an.rp, rec)
    for (code, plugin, reasons), members in groups:
        ex.rejected.append(
            {
                "plugin": plugin,
                "code": Code(code).name,
                "reasons": list(reasons),
                "count": len(members),
                "nodes": [names[int(i)] for i in members],
            }
        )
    # what would make it fit? (named nodes are diagnosed first, so that they are checked first)
    fixes = an.fixes(groups)
    wanted = set(named)
    fixes.sort(
        key=lambda f: (
            not (wanted & set(f.nodes)),
            ["fits", "partly", "still-fails", "unchecked", "no-suggestion"].index(f.verdict),
            -len(f.nodes),
            0 if f.change is None else _change_amount(f.change),
        )
    )
    ex.fixes = fixes[:max_fixes]
    ex.fixes_omitted = max(0, len(fixes) - max_fixes)
    # the nodes the caller named
    for n in named:
        i = an.cluster.index[n]
        if ex.selected_node is not None and i in an.baseline:
            if n == ex.selected_node:
                continue
            ex.comparisons.append(an.compare(rec, an.cluster.index[ex.selected_node], i))
            continue
        verdict = None
        for g in ex.rejected:
            if n in g["nodes"]:
                verdict = {"plugin": g["plugin"], "code": g["code"], "reasons": g["reasons"]}
        comp = Comparison(n, feasible=i in an.baseline, rejected=verdict)
        comp.fixes = node_story(fixes, n)
        if comp.feasible:
            comp.rejected = None
        ex.comparisons.append(comp)
    # single changes ranked (unschedulable pods)
    if not feasible:
        ex.suggestions, ex.suggestions_omitted = _rank(an, fixes, max_suggestions)
    ex.summary = _summary(an, ex)


def _resource_label(resource: str) -> str:
    return "CPU" if resource == CPU else resource


def _summary(an: _Analysis, ex: Explanation) -> str:
    """The explanation in one line, what an operator reads first.

    Unschedulable: the resources no node has enough of free (with the most any node has), else the
    largest group of rejections. Placed: the margin over the runner-up, the plugin that made most of
    it, and what the runner-up would need to tie.
    """
    if ex.selected_node is not None:
        r = ex.runner_up
        if r is None or r.total is None or r.margin is None:
            return f"{ex.selected_node} was the only feasible node"
        if r.margin == 0:
            return f"{ex.selected_node} and {r.node} tied at {r.total}: the first in snapshot order wins"
        lead = max(r.plugins.items(), key=lambda kv: (kv[1]["difference"], kv[0]), default=None)
        why = f"; {lead[0]} gave it the largest lead ({lead[1]['difference']})" if lead and lead[1]["difference"] > 0 else ""
        return (
            f"{ex.selected_node} scored {r.total + r.margin}, {r.margin} ahead of the runner-up {r.node} ({r.total}){why}; "
            f"{r.node} would need {r.margin} more weighted point{'' if r.margin == 1 else 's'} to tie"
        )
    if ex.feasible_count or not ex.rejected:
        return ""
    cluster = an.cluster
    parts: list[str] = []
    for resource, request in sorted(an.pod.resources.fit_requests.items()):
        if request <= 0 or resource == PODS:
            continue
        free = cluster.alloc(resource) - cluster.requested(resource)
        best = int(np.argmax(free)) if len(free) else -1
        most = int(free[best]) if best >= 0 else 0
        if most < request:
            label = _resource_label(resource)
            parts.append(
                f"no node has {format_amount(resource, request)} {label} free; the most is "
                f"{format_amount(resource, max(0, most))} on {an.names[best]}"
                if best >= 0
                else f"no node has {format_amount(resource, request)} {label}"
            )
    if parts:
        return "; ".join(parts)
    g = ex.rejected[0]
    reasons = "; ".join(g["reasons"]) or g["code"]
    return f"{g['count']} of {ex.node_count} nodes rejected by {g['plugin'] or 'PreFilter'}: {reasons}"


# A pod's changes that keep what it asks for come first, then node changes a node can take, then
# changes that drop one of the pod's placement rules; a node too small for the pod even empty last.
_INTENT = {
    "lower-request": 0,
    "tolerate": 1,
    "uncordon": 2,
    "free-resources": 2,
    "evict": 2,
    "drop-host-port": 3,
    "relax-spread": 4,
    "relax-node-affinity": 4,
}
_TOO_SMALL = 5


def _node_change_fit(an: _Analysis, change: Change, nodes: list[str]) -> int | None:
    """A node change's rank: None when it adds a resource none of its nodes has at all (a GPU to a
    CPU-only node), _TOO_SMALL when the pod asks for more than the nodes' whole allocatable."""
    rank = _INTENT.get(change.kind, 3)
    if not change.extra:
        return rank
    idx = [an.cluster.index[n] for n in nodes if n in an.cluster.index]
    for resource, _ in change.extra:
        alloc = an.cluster.alloc(resource)
        have = [int(alloc[i]) for i in idx]
        if have and all(v == 0 for v in have) and resource not in (CPU, MEMORY, PODS):
            return None
        if have and an.pod.resources.fit_requests.get(resource, 0) > max(have):
            rank = _TOO_SMALL
    return rank


def _change_amount(change: Change) -> int:
    return sum(amount for _, amount in change.extra)


def _rank(an: _Analysis, fixes: list[Fix], limit: int) -> tuple[list[Suggestion], int]:
    out: list[Suggestion] = []
    candidates: dict[PodPatch, Change] = dict(an.singles)
    for f in fixes:
        if f.change is not None and f.change.scope == "pod":
            candidates.setdefault(f.change.pod, f.change)
    order = sorted(candidates.items(), key=lambda pc: pc[1].description)
    for patch, change in order:
        verdicts = an.full(patch)
        if verdicts is None:
            continue
        newly = [i for i, v in enumerate(verdicts) if v[0] == 0 and i not in an.baseline]
        if newly:
            out.append(Suggestion(change, len(newly), [an.names[i] for i in newly]))
    ranks: dict[int, int] = {}
    for f in fixes:
        if f.change is not None and f.change.scope == "node" and f.passes:
            # a node change makes one node feasible: any one of these
            rank = _node_change_fit(an, f.change, list(f.passes))
            if rank is None:
                continue
            s = Suggestion(f.change, 1, list(f.passes))
            ranks[id(s)] = rank
            out.append(s)
    # the most nodes first; among equals, what keeps the pod's intent, then the smallest change (as a number)
    out.sort(
        key=lambda s: (
            -s.feasible_nodes,
            ranks.get(id(s), _INTENT.get(s.change.kind, 3)),
            _change_amount(s.change),
            s.change.description,
        )
    )
    return out[:limit], max(0, len(out) - limit)
