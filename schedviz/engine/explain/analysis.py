"""The what-if machinery: PreFilter + Filter run again for the pod with changes applied (to a copy of the
pod, or to the cluster and restored afterwards), the tree of fixes (a diagnosis per group of rejected
nodes, its change checked, the next change looked for where one is not enough, ``MAX_CHAIN`` deep),
and the comparison of the winner with other nodes.

Diagnoses are the plugins' own: each rejecting plugin's ``diagnose`` (framework/diagnosis.py) is asked
through the profile's plugin instances, which the framework built from the registry's classes.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from .. import taints as taints_mod
from ..framework import Code, CycleState
from ..framework.diagnosis import Change, Diagnosis, PodPatch
from ..objects import Pod
from ..runtime.framework import CycleError, Framework, ReasonTable
from ..runtime.replay import Replay
from ..taints import NO_SCHEDULE, TAINT_NODE_UNSCHEDULABLE, TaintGroups, taint_groups
from ..trace import NOT_EVALUATED, CycleRecord
from .model import PASS, Comparison, Fix, Plan, ThenFails, Verdict, plan_evictions, plan_patch

_T = TypeVar("_T")

IntArray = npt.NDArray[np.int64]

# How many changes in a row are looked for when a change alone still fails.
MAX_CHAIN = 3

NARROWED_PREFIX = "node(s) didn't satisfy plugin(s) ["
# where taints.taint_groups keeps the nodes grouped by taint list
_TAINT_CACHE = taints_mod.CLUSTER_CACHE_KEY


class _Analysis:
    """Everything explain does for one pod, against the replay stopped just before its cycle."""

    def __init__(self, rp: Replay, fw: Framework, pod: Pod, max_checks: int) -> None:
        self.rp = rp
        self.fw = fw
        self.pod = pod
        self.cluster = rp.cluster
        self.names = self.cluster.names
        self.max_checks = max_checks
        self.checks = 0
        self.capped = False
        self._pods: dict[PodPatch, Pod] = {PodPatch(): pod}
        self._full: dict[PodPatch, list[Verdict]] = {}
        self.singles: dict[PodPatch, Change] = {}
        self.baseline: set[int] = set()
        self.wanted: set[int] = set()  # nodes the caller named: checked first
        self.cache: dict[Hashable, Any] = {}  # what diagnosers keep for this explanation

    # ----- running PreFilter + Filter ------------------------------------------------------------
    def pod_for(self, patch: PodPatch) -> Pod:
        p = self._pods.get(patch)
        if p is None:
            p = patch.apply(self.pod)
            self._pods[patch] = p
        return p

    def can_check(self) -> bool:
        if self.checks >= self.max_checks:
            self.capped = True
            return False
        return True

    def run(self, pod: Pod, nodes: IntArray) -> list[Verdict]:
        """PreFilter then Filter for ``pod`` on ``nodes`` against the cluster as it is now: what
        ``Framework.evaluate_node`` does for one node, for a batch."""
        self.checks += 1
        n = len(nodes)
        state = CycleState(self.cluster)
        try:
            res, s, narrowed = self.fw.run_pre_filter(state, pod, [])
        except CycleError as exc:
            return [(int(Code.Error), exc.plugin, (str(exc),))] * n
        if not s.is_success():
            return [(int(s.code), s.plugin, s.reasons)] * n
        out: list[Verdict] = [PASS] * n
        inside = np.ones(n, dtype=bool)
        if res is not None and res.node_names is not None:
            keep = np.fromiter((self.names[int(i)] in res.node_names for i in nodes), dtype=bool, count=n)
            label = " ".join(sorted(narrowed))
            absent: Verdict = (int(Code.UnschedulableAndUnresolvable), label, (f"{NARROWED_PREFIX}{label}]",))
            for k in np.flatnonzero(~keep).tolist():
                out[k] = absent
            inside = keep
        pos = np.flatnonzero(inside)
        if len(pos) == 0:
            return out
        table = ReasonTable()
        try:
            fo = self.fw.run_filter_with_nominated_pods(state, pod, nodes[pos], table, {})
        except CycleError as exc:
            err: Verdict = (int(Code.Error), exc.plugin, (str(exc),))
            for k in pos.tolist():
                out[k] = err
            return out
        for j in np.flatnonzero(fo.codes).tolist():
            rid = int(fo.reason_ids[j])
            out[int(pos[j])] = (
                int(fo.codes[j]),
                self.fw.filter_names[int(fo.plugin_ids[j])],
                table.items[rid] if rid >= 0 else (),
            )
        return out

    def full(self, patch: PodPatch) -> list[Verdict] | None:
        """Every node's verdict for the pod with ``patch`` (cached); None when out of checks."""
        got = self._full.get(patch)
        if got is None:
            if not self.can_check():
                return None
            got = self.run(self.pod_for(patch), np.arange(self.cluster.n, dtype=np.int64))
            self._full[patch] = got
        return got

    @contextmanager
    def applied(self, parts: Sequence[tuple[Plan, IntArray]]) -> Iterator[Pod]:
        """Apply each plan's node changes to its nodes, the evictions once, and yield the pod with
        the merged pod changes; the cluster is restored on exit."""
        cluster = self.cluster
        patch = PodPatch()
        for plan, _ in parts:
            patch = patch.merge(plan_patch(plan))
        pod = self.pod_for(patch)
        saved: list[tuple[npt.NDArray[Any], IntArray, npt.NDArray[Any]]] = []
        evicted: list[tuple[Pod, int]] = []
        lists: dict[int, list[Pod]] = {}
        uncordoned: list[IntArray] = []
        taint_cache = cluster.caches.get(_TAINT_CACHE)
        # allocatable written in place below: the per-node memo must not answer from before it
        with cluster.node_memo_suspended():
            try:
                for plan, nodes in parts:
                    for ch in plan:
                        for r, amount in ch.extra:
                            arr = cluster.alloc(r)
                            saved.append((arr, nodes, arr[nodes].copy()))
                            arr[nodes] += amount
                        if ch.uncordon:
                            saved.append((cluster.unschedulable, nodes, cluster.unschedulable[nodes].copy()))
                            cluster.unschedulable[nodes] = False
                            uncordoned.append(nodes)
                if uncordoned:
                    self._drop_unschedulable_taint(np.concatenate(uncordoned))
                for uid in sorted({u for plan, _ in parts for u in plan_evictions(plan)}):
                    victim = cluster.pods.get(uid)
                    where = None if victim is None else cluster.node_of(victim)
                    if victim is None or where is None:
                        continue
                    lists.setdefault(where, list(cluster.pods_on[where]))
                    cluster.remove_pod(victim)
                    evicted.append((victim, where))
                yield pod
            finally:
                for victim, node in reversed(evicted):
                    cluster.add_pod(victim, node)
                for node, original in lists.items():
                    cluster.pods_on[node] = original
                for arr, nodes, values in reversed(saved):
                    arr[nodes] = values
                if uncordoned:
                    if taint_cache is None:
                        cluster.caches.pop(_TAINT_CACHE, None)
                    else:
                        cluster.caches[_TAINT_CACHE] = taint_cache

    def _drop_unschedulable_taint(self, nodes: IntArray) -> None:
        """Uncordoning also removes the node.kubernetes.io/unschedulable:NoSchedule taint (the node
        lifecycle controller keeps it in step with spec.unschedulable): the taint groups the plugins
        read are replaced, for the what-if, by groups without it on ``nodes``."""
        cluster = self.cluster
        groups = taint_groups(cluster)
        sets = list(groups.sets)
        index = {ts: k for k, ts in enumerate(sets)}
        ids = groups.ids.copy()
        changed = False
        for i in nodes.tolist():
            current = sets[int(ids[i])]
            kept = tuple(t for t in current if (t.key, t.effect) != (TAINT_NODE_UNSCHEDULABLE, NO_SCHEDULE))
            if kept == current:
                continue
            gid = index.get(kept)
            if gid is None:
                gid = len(sets)
                sets.append(kept)
                index[kept] = gid
            ids[i] = gid
            changed = True
        if changed:
            cluster.caches[_TAINT_CACHE] = (cluster.nodes, len(cluster.nodes), TaintGroups(ids, sets))

    # ----- verification ----------------------------------------------------------------------------
    def _batches(
        self, items: Sequence[_T], key: Callable[[_T], Hashable], nodes: Callable[[_T], IntArray]
    ) -> list[list[_T]]:
        """Items sharing ``key`` grouped into batches whose node sets do not overlap."""
        batches: dict[Hashable, list[tuple[set[int], list[_T]]]] = {}
        for item in items:
            members = set(nodes(item).tolist())
            groups = batches.setdefault(key(item), [])
            for used, group in groups:
                if not used & members:
                    used |= members
                    group.append(item)
                    break
            else:
                groups.append((members, [item]))
        out = [(used, g) for groups in batches.values() for used, g in groups]
        out.sort(key=lambda ug: (not ug[0] & self.wanted, -len(ug[0])))
        return [g for _, g in out]

    def verify(self, items: list[tuple[Fix, Plan, IntArray]]) -> list[tuple[ThenFails, Plan, IntArray]]:
        """Check each fix's plan (its change included) on its nodes; returns the nodes still failing.

        Plans that share their pod changes and evictions are checked in one PreFilter + Filter run
        (their node changes are local to their nodes); pod-only plans are run over every node, which
        also counts the nodes they make feasible."""
        todo = [it for it in items if it[0].change is not None]
        pending: list[tuple[ThenFails, Plan, IntArray]] = []
        for group in self._batches(todo, lambda it: (plan_patch(it[1]), plan_evictions(it[1])), lambda it: it[2]):
            patch, evictions = plan_patch(group[0][1]), plan_evictions(group[0][1])
            pod_only = not evictions and not any(ch.node_local for _, plan, _ in group for ch in plan)
            if pod_only:
                all_verdicts = self.full(patch)
                if all_verdicts is None:
                    self._unchecked(group)
                    continue
                for fix, plan, nodes in group:
                    pending.extend(self._record(fix, plan, nodes, [all_verdicts[int(i)] for i in nodes]))
                    self._count(fix, all_verdicts)
                continue
            if not self.can_check():
                self._unchecked(group)
                continue
            union = np.concatenate([n for _, _, n in group])
            with self.applied([(plan, nodes) for _, plan, nodes in group]) as pod:
                verdicts = self.run(pod, union)
            at = 0
            for fix, plan, nodes in group:
                pending.extend(self._record(fix, plan, nodes, verdicts[at : at + len(nodes)]))
                at += len(nodes)
        return pending

    def _unchecked(self, group: list[tuple[Fix, Plan, IntArray]]) -> None:
        for fix, _, nodes in group:
            fix.unchecked = [self.names[int(i)] for i in nodes]

    def _record(
        self, fix: Fix, plan: Plan, nodes: IntArray, verdicts: list[Verdict]
    ) -> list[tuple[ThenFails, Plan, IntArray]]:
        failing: dict[Verdict, list[int]] = {}
        for i, v in zip(nodes.tolist(), verdicts, strict=True):
            if v[0] == 0:
                fix.passes.append(self.names[i])
            else:
                failing.setdefault(v, []).append(i)
        out = []
        for (code, plugin, reasons), idx in failing.items():
            t = ThenFails(plugin, Code(code).name, reasons, [self.names[i] for i in idx])
            fix.then.append(t)
            out.append((t, plan, np.asarray(idx, dtype=np.int64)))
        return out

    def _count(self, fix: Fix, verdicts: list[Verdict]) -> None:
        feasible = {i for i, v in enumerate(verdicts) if v[0] == 0}
        fix.feasible_after = len(feasible)
        fix.more_feasible = len(feasible - self.baseline)

    # ----- the fix tree ----------------------------------------------------------------------------
    def fixes(self, groups: list[tuple[Verdict, IntArray]]) -> list[Fix]:
        """Diagnose every rejected group, check the changes, and look for the next change where a
        change alone still fails (breadth first, ``MAX_CHAIN`` changes deep)."""
        top: list[Fix] = []
        level: list[tuple[Fix, Plan, IntArray]] = []
        for verdict, nodes in groups:
            for fix, plan, fnodes, _ in self.diagnose_batch(verdict, [((), nodes)]):
                top.append(fix)
                level.append((fix, plan, fnodes))
        depth = 1
        while level:
            pending = self.verify(level)
            level = []
            if depth >= MAX_CHAIN:
                break
            pending = [p for p in pending if Code[p[0].code] != Code.Error]
            for batch in self._batches(
                pending,
                lambda p: ((Code[p[0].code], p[0].plugin, p[0].reasons), plan_patch(p[1]), plan_evictions(p[1])),
                lambda p: p[2],
            ):
                if not self.can_check():
                    break
                t0 = batch[0][0]
                then: Verdict = (int(Code[t0.code]), t0.plugin, t0.reasons)
                for fix, plan, fnodes, parent in self.diagnose_batch(then, [(p[1], p[2]) for p in batch]):
                    batch[parent][0].next.append(fix)
                    if fix.change is not None:
                        level.append((fix, plan, fnodes))
            depth += 1
        return top

    def diagnose_batch(
        self, verdict: Verdict, parts: list[tuple[Plan, IntArray]]
    ) -> list[tuple[Fix, Plan, IntArray, int]]:
        """Diagnose nodes rejected with ``verdict`` under their plans (sharing pod changes and
        evictions): (fix, plan with the fix's change, its nodes, index of the part) per diagnosis
        and part."""
        code, plugin, reasons = verdict
        union = np.concatenate([n for _, n in parts])
        owner = np.concatenate([np.full(len(n), k, dtype=np.int64) for k, (_, n) in enumerate(parts)])
        with self.applied(parts) as pod:
            diags = self.diagnose(pod, union, plugin, reasons, top=not parts[0][0])
        where = {int(i): int(k) for i, k in zip(union.tolist(), owner.tolist(), strict=True)}
        out = []
        for d in diags:
            by_part: dict[int, list[int]] = {}
            for i in d.nodes.tolist():
                by_part.setdefault(where[i], []).append(i)
            for k, idx in sorted(by_part.items()):
                plan = parts[k][0]
                fix = Fix(
                    plugin=plugin,
                    code=Code(code).name,
                    reasons=reasons,
                    nodes=[self.names[i] for i in idx],
                    diagnosis=d.text,
                    details=d.details,
                    change=d.change,
                )
                new_plan = (*plan, d.change) if d.change is not None else plan
                out.append((fix, new_plan, np.asarray(idx, dtype=np.int64), k))
        return out

    # ----- diagnosis by plugin ----------------------------------------------------------------------
    def diagnose(
        self, pod: Pod, nodes: IntArray, plugin: str, reasons: tuple[str, ...], top: bool
    ) -> list[Diagnosis]:
        """The rejecting plugin's own diagnosis (its ``diagnose``, framework/diagnosis.py), or its
        reasons. Nodes several PreFilter results left out (``plugin`` names them all) are diagnosed
        by the first of those plugins that ``explains_prefilter_result``."""
        names = plugin.split()
        ctx = _Context(self, top)
        for name in names:
            instance = self.fw.instances.get(name)
            hook = getattr(instance, "diagnose", None)
            if hook is None or (len(names) > 1 and not getattr(instance, "explains_prefilter_result", False)):
                continue
            got: list[Diagnosis] | None = hook(ctx, pod, nodes, reasons)
            if got is not None:
                return got
        text = "; ".join(reasons) if reasons else f"rejected by {plugin or 'the scheduler'}"
        return [Diagnosis(nodes, text, {}, None)]

# ----- the winner ------------------------------------------------------------------------------
    def compare(self, rec: CycleRecord, winner: int, other: int) -> Comparison:
        return compare_scores(rec, self.names, winner, other)


def compare_scores(rec: CycleRecord, names: Sequence[str], winner: int, other: int) -> Comparison:
    """Node ``other`` against the feasible node ``winner`` (node indices) in the cycle ``rec``: per
    score plugin, both weighted scores and their difference; not feasible when ``rec`` did not
    find ``other`` feasible."""
    name = names[other]
    assert rec.feasible is not None
    pos = {int(n): k for k, n in enumerate(rec.feasible.tolist())}
    kw, ko = pos[winner], pos.get(other)
    if ko is None:
        return Comparison(name, feasible=False)
    totals = rec.totals
    tw = int(totals[kw]) if totals is not None else 0
    to = int(totals[ko]) if totals is not None else 0
    plugins: dict[str, dict[str, int]] = {}
    if rec.normalized_scores is not None and rec.raw_scores is not None:
        for p, plugin in enumerate(rec.score_plugins):
            weight = rec.score_weights[p]
            w = int(rec.normalized_scores[p, kw]) * weight
            o = int(rec.normalized_scores[p, ko]) * weight
            plugins[plugin] = {
                "weight": weight,
                "winner": w,
                "other": o,
                "difference": w - o,
                "winnerRaw": int(rec.raw_scores[p, kw]),
                "otherRaw": int(rec.raw_scores[p, ko]),
            }
    return Comparison(name, True, total=to, margin=tw - to, tied=tw == to, plugins=plugins)


def recorded_verdict(
    rec: CycleRecord, reasons: Sequence[tuple[str, ...]], node: int
) -> dict[str, Any] | None:
    """How the cycle ``rec`` rejected ``node`` ({plugin, code, reasons}, as ``rejected`` groups
    them), or None when it passed or was not evaluated."""
    if rec.filter_codes is None or rec.filter_plugins is None or rec.filter_reasons is None:
        return None
    code = int(rec.filter_codes[node])
    if code in (0, NOT_EVALUATED):
        return None
    pid, rid = int(rec.filter_plugins[node]), int(rec.filter_reasons[node])
    said = tuple(reasons[rid]) if 0 <= rid < len(reasons) else ()
    return {"plugin": _plugin_name(rec, pid, said), "code": Code(code).name, "reasons": list(said)}


def _plugin_name(rec: CycleRecord, pid: int, reasons: Sequence[str]) -> str:
    """The rejecting filter plugin; nodes a PreFilter result left out name the PreFilter plugins."""
    plugin = rec.filter_plugin_names[pid] if 0 <= pid < len(rec.filter_plugin_names) else ""
    if not plugin and reasons and reasons[0].startswith(NARROWED_PREFIX):
        plugin = reasons[0][len(NARROWED_PREFIX) :].rstrip("]")
    return plugin


class _Context:
    """The DiagnosisContext (framework/diagnosis.py) explain gives a plugin's ``diagnose``."""

    def __init__(self, analysis: _Analysis, top: bool) -> None:
        self._analysis = analysis
        self.cluster = analysis.cluster
        self.target = analysis.pod
        self.top = top
        self.cache = analysis.cache

    def plugin(self, name: str) -> Any:
        return self._analysis.fw.instances.get(name)

    def suggest(self, change: Change) -> None:
        self._analysis.singles.setdefault(change.pod, change)

