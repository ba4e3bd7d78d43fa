"""DefaultPreemption: the PostFilter plugin that looks for pods to evict so that a pod fits.

Mirrors framework/plugins/defaultpreemption/default_preemption.go and framework/preemption/preemption.go
(v1.35). The chosen node is nominated and its victims are recorded in the PostFilterResult details.
When the replay evicts (``handle.api`` set, ``ReplayOptions.preemption == "evict"``), the victims are
then deleted through it as prepareCandidate does (a victim waiting at Permit is rejected instead)
and lower-priority pods nominated to the node lose their nomination; otherwise nothing changes.

Where kube-scheduler is not deterministic, this port picks one of its possible behaviours:
- the candidate search starts at offset 0 of the potential nodes (upstream draws a random offset,
  ``getOffsetRand``), potential nodes are listed in snapshot order (upstream iterates a Go map), and
  nodes are dry-run one after another, as with ``parallelism: 1``;
- among candidates still tied after every criterion of pickOneNodeForPreemption, the first one in
  search order wins (upstream takes the first key of a Go map);
- a pod without ``status.startTime`` starts "now" (util.GetPodStartTime): every such look-up returns
  a fresh instant later than any recorded start time and than every earlier look-up, as successive
  ``time.Now()`` calls do; victims are sorted with Go's ``sort.Slice`` algorithm (pdqsort, not
  stable), reproduced exactly, so ties among equally important pods resolve as upstream's do.
- the dry runs count nominated pods as RunFilterPluginsWithNominatedPods does
  (``Framework.evaluate_node``); extenders with a preemptVerb are consulted (callExtenders,
  ``extenders_preemption``);
- preemption is asynchronous in v1.35 (SchedulerAsyncPreemption): the replay performs it at once,
  at the preemptor's cycle time, so it is never still under way when the preemptor comes back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..apimachinery import ErrorList
from ..budget import interruptible, restoring
from ..errors import InputError
from ..framework import Code, CycleError, CycleState, Handle, NodeToStatus, PostFilterResult, Status
from ..framework.extender import Extender, ExtenderError, Victims
from ..labels import LabelSelector
from ..objects import Pod, parse_time
from ..plugin_args import obj

NAME = "DefaultPreemption"

# Messages (default_preemption.go, preemption.go).
MSG_PREFIX = "preemption: "
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE = "no candidate node for preemption"
NO_NODES = "no nodes available"
NO_NODE_AVAILABLE = "0/{} nodes are available"
PREEMPTED = "preempted"  # what a victim waiting at Permit is rejected with (preemption.go PreemptPod)

PREEMPT_NEVER = "Never"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"

# apis/config/v1/defaults.go SetDefaults_DefaultPreemptionArgs
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100

_INT32_MAX = 2**31 - 1

# Why a candidate lost in pickOneNodeForPreemption, criterion by criterion.
LOST_REASONS = (
    "more PDB violations",
    "higher highest-priority victim",
    "larger sum of victim priorities",
    "more victims",
    "earlier start time of its highest-priority victims",
)
LOST_TIE = "tied on every criterion; the first candidate was picked"

T = TypeVar("T")


# --------------------------------------------------------------------------------------------------
# Go's sort.Slice (sort/zsortfunc.go, Go 1.22+: pattern-defeating quicksort). Reproduced because it
# is not stable: equally important victims end up in the order this algorithm leaves them in.

_UNKNOWN_HINT, _INCREASING_HINT, _DECREASING_HINT = 0, 1, 2
_U64 = (1 << 64) - 1


class _GoSorter:
    def __init__(self, data: list[Any], less: Callable[[Any, Any], bool]) -> None:
        self.data = data
        self.less = less

    def lt(self, i: int, j: int) -> bool:
        return self.less(self.data[i], self.data[j])

    def swap(self, i: int, j: int) -> None:
        d = self.data
        d[i], d[j] = d[j], d[i]

    def insertion(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.lt(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.lt(first + child, first + child + 1):
                child += 1
            if not self.lt(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap(self, a: int, b: int) -> None:
        first, hi = a, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(0, i, first)

    def pdq(self, a: int, b: int, limit: int) -> None:
        balanced = True
        partitioned = True
        while True:
            length = b - a
            if length <= 12:
                self.insertion(a, b)
                return
            if limit == 0:
                self.heap(a, b)
                return
            if not balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING_HINT:
                self.reverse(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING_HINT
            if balanced and partitioned and hint == _INCREASING_HINT and self.partial_insertion(a, b):
                return
            if a > 0 and not self.lt(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                balanced = left >= threshold
                self.pdq(a, mid, limit)
                a = mid + 1
            else:
                balanced = right >= threshold
                self.pdq(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.lt(i, a):
            i += 1
        while i <= j and not self.lt(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i, j = i + 1, j - 1
        while True:
            while i <= j and self.lt(i, a):
                i += 1
            while i <= j and not self.lt(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i, j = i + 1, j - 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.lt(a, i):
                i += 1
            while i <= j and self.lt(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i, j = i + 1, j - 1

    def partial_insertion(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(5):  # maxSteps
            while i < b and not self.lt(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < 50:  # shortestShifting
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                # Go's loop runs down to index 1, whatever ``a`` is.
                for j in range(i - 1, 0, -1):
                    if not self.lt(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:
                for j in range(i + 1, b):
                    if not self.lt(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        # xorshift seeded with the length; shifts 13/7/17 as in Go >= 1.24 (golang/go#70144), the
        # toolchain kube-scheduler v1.35 is built with (Go 1.21-1.23 used 13/17/5).
        state = length
        modulus = 1 << length.bit_length()
        middle = a + (length // 4) * 2
        for idx in range(middle - 1, middle + 2):
            state ^= (state << 13) & _U64
            state ^= state >> 7
            state ^= (state << 17) & _U64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        span = b - a
        swaps = [0]
        i, j, k = a + span // 4, a + span // 4 * 2, a + span // 4 * 3
        if span >= 8:
            if span >= 50:  # shortestNinther: Tukey's ninther
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING_HINT
        if swaps[0] == 12:  # maxSwaps
            return j, _DECREASING_HINT
        return j, _UNKNOWN_HINT

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.lt(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def reverse(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i, j = i + 1, j - 1


def go_sort_slice(data: list[T], less: Callable[[T, T], bool]) -> None:
    """Sort ``data`` in place exactly as Go's ``sort.Slice`` would with the same ``less``."""
    _GoSorter(data, less).pdq(0, len(data), len(data).bit_length())


# --------------------------------------------------------------------------------------------------
# Pod helpers


class _Clock:
    """util.GetPodStartTime: status.startTime, or time.Now() for pods that have not started.

    Instants are ``(0, seconds)`` for recorded start times and ``(1, n)`` for "now", n growing with
    every look-up, so each "now" is later than every start time and than the previous "now".
    """

    def __init__(self) -> None:
        self._now = 0

    def start(self, pod: Pod) -> tuple[int, float]:
        t = _recorded_start(pod)
        if t is not None:
            return (0, t)
        self._now += 1
        return (1, float(self._now))

    def more_important(self, p1: Pod, p2: Pod) -> bool:
        """util.MoreImportantPod: higher priority, then the one that started earlier."""
        if p1.prio != p2.prio:
            return p1.prio > p2.prio
        t1 = self.start(p1)
        t2 = self.start(p2)
        return t1 < t2

    def earliest_start_of_top_victims(self, victims: list[Pod]) -> tuple[int, float]:
        """util.GetEarliestPodStartTime: earliest start among the highest-priority victims."""
        earliest = self.start(victims[0])
        top = victims[0].prio
        for p in victims:
            if p.prio == top:
                t = self.start(p)
                if t < earliest:
                    earliest = t
            elif p.prio > top:
                top = p.prio
                earliest = self.start(p)
        return earliest


def _recorded_start(pod: Pod) -> float | None:
    cached = pod.cache.get(NAME)
    if cached is None:
        status = pod.raw.get("status")
        raw = status.get("startTime") if isinstance(status, dict) else None
        cached = {"start": parse_time(raw, pod.ident, "status.startTime")}
        pod.cache[NAME] = cached
    start: float | None = cached["start"]
    return start


def _terminating_by_preemption(pod: Pod) -> bool:
    """default_preemption.go podTerminatingByPreemption."""
    if pod.meta.deletion is None:
        return False
    status = pod.raw.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for cond in conditions if isinstance(conditions, list) else []:
        if isinstance(cond, dict) and cond.get("type") == DISRUPTION_TARGET:
            return cond.get("status") == "True" and cond.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
    return False


@dataclass
class PDB:
    namespace: str
    selector: LabelSelector
    allowed: int
    disrupted: frozenset[str]


def _parse_pdbs(objs: list[Any]) -> list[PDB]:
    out: list[PDB] = []
    for o in objs:
        spec = o.raw.get("spec") if isinstance(o.raw.get("spec"), dict) else {}
        status = o.raw.get("status") if isinstance(o.raw.get("status"), dict) else {}
        try:
            sel = LabelSelector.parse(spec.get("selector"), obj=o.ident, field="spec.selector")
        except InputError:
            # LabelSelectorAsSelector failed: the PDB matches no pod.
            continue
        if sel.nothing or sel.is_empty():
            continue  # a nil or empty selector matches nothing here
        allowed = status.get("disruptionsAllowed", 0)
        if isinstance(allowed, bool) or not isinstance(allowed, int):
            raise InputError(
                f"must be an integer, got {allowed!r}", obj=o.ident, field="status.disruptionsAllowed"
            )
        disrupted = status.get("disruptedPods")
        names = frozenset(disrupted) if isinstance(disrupted, dict) else frozenset()
        out.append(PDB(o.namespace, sel, allowed, names))
    return out


def split_by_pdb_violation(pods: list[Pod], pdbs: list[PDB]) -> tuple[list[Pod], list[Pod]]:
    """default_preemption.go filterPodsWithPDBViolation: (violating, non-violating), order kept.

    Each matching PDB's budget is spent pod by pod; a pod is violating once a budget it draws on
    goes negative. Pods listed in a PDB's disruptedPods are not charged to it.
    """
    allowed = [p.allowed for p in pdbs]
    violating: list[Pod] = []
    fine: list[Pod] = []
    for pod in pods:
        hit = False
        if pod.labels:
            for k, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace or not pdb.selector.matches(pod.labels):
                    continue
                if pod.name in pdb.disrupted:
                    continue
                allowed[k] -= 1
                if allowed[k] < 0:
                    hit = True
        (violating if hit else fine).append(pod)
    return violating, fine


def _aggregate(messages: list[str]) -> str:
    """apimachinery utilerrors.NewAggregate(...).Error(): one message, or the distinct ones in brackets."""
    if len(messages) == 1:
        return messages[0]
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def fit_error(num_all: int, statuses: dict[int, Status], absent: Status) -> str:
    """framework/types.go FitError.Error for the dry run's node statuses (no PreFilter message)."""
    counts: dict[str, int] = {}
    for s in statuses.values():
        for r in s.reasons:
            counts[r] = counts.get(r, 0) + 1
    if len(statuses) < num_all:
        for r in absent.reasons:
            counts[r] = counts.get(r, 0) + num_all - len(statuses)
    msg = NO_NODE_AVAILABLE.format(num_all) + ":"
    parts = sorted(f"{v} {k}" for k, v in counts.items())
    if parts:
        msg += " " + ", ".join(parts) + "."
    return msg


# --------------------------------------------------------------------------------------------------
# The plugin


@dataclass
class Candidate:
    """A node where the pod fits once ``victims`` (most important first) are evicted."""

    node: int
    name: str
    victims: list[Pod]
    pdb_violations: int
    outcome: str = ""

    def describe(self) -> dict[str, Any]:
        return {
            "node": self.name,
            "victims": [p.key for p in self.victims],
            "pdbViolations": self.pdb_violations,
            "result": self.outcome,
        }


@dataclass
class DryRun:
    """What DryRunPreemption found: candidates in search order and the statuses of the other nodes."""

    candidates: list[Candidate] = field(default_factory=list)
    statuses: dict[int, Status] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    potential: int = 0
    wanted: int = 0


def extenders_preemption(
    extenders: Sequence[Extender],
    pod: Pod,
    victims: Victims,
    cluster: Any,
    record: Callable[[dict[str, Any]], None],
) -> tuple[Victims | None, Status]:
    """preemption.go callExtenders: each interested preempting extender narrows (or rewrites) the
    candidates' victims; ``record`` receives one entry per call for the trace."""
    if not extenders or not victims:
        return victims, Status.success()
    for ext in extenders:
        if not ext.supports_preemption() or not ext.is_interested(pod):
            continue
        t0 = time.perf_counter()
        entry: dict[str, Any] = {"extender": ext.name, "sent": list(victims)}
        try:
            answer = ext.process_preemption(pod, victims, cluster)
        except ExtenderError as exc:
            entry.update(
                code="Skip" if ext.ignorable else "Error", reason=str(exc), durationMicros=int((time.perf_counter() - t0) * 1_000_000)
            )
            record(entry)
            if ext.ignorable:
                continue
            return None, Status(Code.Error, str(exc))
        for node in list(answer):
            if answer[node][0]:
                continue
            if ext.ignorable:
                del answer[node]
                continue
            msg = f"expected at least one victim pod on node {json.dumps(node)}"
            entry.update(code="Error", reason=msg, durationMicros=int((time.perf_counter() - t0) * 1_000_000))
            record(entry)
            return None, Status(Code.Error, msg)
        entry.update(
            code="Success",
            reason="",
            durationMicros=int((time.perf_counter() - t0) * 1_000_000),
            nodes={
                n: {"victims": [p.key for p in pods], "pdbViolations": pdb}
                for n, (pods, pdb) in answer.items()
            },
        )
        record(entry)
        victims = answer
        if not victims:
            break
    return victims, Status.success()


# ----- args (kube-scheduler/config/v1 types_pluginargs.go DefaultPreemptionArgs, v1/defaults.go,
# apis/config/validation/validation_pluginargs.go ValidateDefaultPreemptionArgs)

ARGS_TYPE = obj(
    "v1.DefaultPreemptionArgs", minCandidateNodesPercentage="int32", minCandidateNodesAbsolute="int32"
)


def default_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> dict[str, Any]:
    return {
        "minCandidateNodesPercentage": a.get("minCandidateNodesPercentage", 10),
        "minCandidateNodesAbsolute": a.get("minCandidateNodesAbsolute", 100),
    }


def validate_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> list[str]:
    errs = ErrorList()
    pct_path, abs_path = "minCandidateNodesPercentage", "minCandidateNodesAbsolute"
    pct, absolute = a["minCandidateNodesPercentage"], a["minCandidateNodesAbsolute"]
    if pct < 0 or pct > 100:
        errs.invalid(pct_path, pct, "not in valid range [0, 100]")
    if absolute < 0:
        errs.invalid(abs_path, absolute, "not in valid range [0, inf)")
    if pct == 0 and absolute == 0:
        errs.invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute")
        errs.invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage")
    return errs.items


class DefaultPreemption:
    name = NAME
    # args: declared here, decoded, defaulted and validated by the configuration (config/)
    args_type = ARGS_TYPE
    default_args = staticmethod(default_args)
    validate_args = staticmethod(validate_args)

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.min_pct = int(args.get("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE))
        self.min_abs = int(args.get("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE))

    # ----- PreEnqueue --------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status:
        """Rejects pods whose asynchronous preemption is still under way. The replay completes a
        preemption within the preemptor's cycle, so none is ever under way: every pod passes."""
        return Status.success()

    # ----- PostFilter --------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        result, status = self.preempt(pod, statuses, state)
        msg = status.message()
        if msg:
            return result, Status(status.code, MSG_PREFIX + msg)
        return result, status

    def preempt(
        self, pod: Pod, statuses: NodeToStatus, state: CycleState | None = None
    ) -> tuple[PostFilterResult | None, Status]:
        """preemption.go Evaluator.Preempt; victims are deleted only when the replay evicts."""
        cluster = self.handle.cluster
        nominated = self.handle.nominator.status_of(pod)
        idx = cluster.index.get(nominated) if nominated else None
        nominated_status = statuses.statuses.get(idx, statuses.absent) if idx is not None else statuses.absent
        ok, why = self.eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            return None, Status(Code.Unschedulable, why)

        if cluster.n == 0:
            return None, Status(Code.Error, NO_NODES)
        clock = _Clock()
        # The search (dry runs on the live cluster, put back as they end) may be stopped by the
        # replay's budget; what follows it (extenders, evictions) never is (engine/budget.py).
        with interruptible("PostFilter", NAME):
            run = self.find_candidates(pod, statuses, clock)
        details: dict[str, Any] = {
            "potentialNodes": run.potential,
            "numCandidates": run.wanted,
            "offset": 0,
        }
        if run.errors and not run.candidates:
            return None, Status(Code.Error, _aggregate(run.errors))
        if not run.candidates:
            details["victims"] = []
            details["candidates"] = []
            details["rejected"] = {
                cluster.names[i]: ", ".join(s.reasons)
                for i, s in run.statuses.items()
                if s.reasons != (NO_VICTIMS,)
            }
            msg = fit_error(cluster.n, run.statuses, Status(Code.UnschedulableAndUnresolvable, NOT_HELPFUL))
            return PostFilterResult("", details), Status(Code.Unschedulable, msg)

        candidates = run.candidates
        dropped: list[Candidate] = []
        if self.handle.extenders:
            log: list[dict[str, Any]] = []
            details["extenders"] = log
            kept, status = self.call_extenders(pod, candidates, log)
            if kept is None or not kept:
                if state is not None:
                    state.record_details("PostFilter", NAME, {"extenders": log})
                if kept is None:
                    return None, status
                return None, Status(Code.Unschedulable, NO_CANDIDATE)
            names = {c.name for c in kept}
            dropped = [c for c in candidates if c.name not in names]
            for c in dropped:
                c.outcome = "removed by an extender"
            candidates = kept

        with interruptible("PostFilter", NAME):
            best = self.select_candidate(candidates, clock)
        details["victims"] = [p.key for p in best.victims]
        details["candidates"] = [c.describe() for c in [*candidates, *dropped]]
        if self.handle.api is not None and not self.handle.dry_run:
            self.prepare_candidate(best, pod)
        return PostFilterResult(best.name, details), Status.success()

    def prepare_candidate(self, best: Candidate, pod: Pod) -> None:
        """preemption.go prepareCandidateAsync, completed at once: clear the nominations of
        lower-priority pods nominated to the node (getLowerPriorityNominatedPods), then delete
        every victim not already being deleted; a victim waiting at Permit is rejected instead."""
        handle = self.handle
        lower = [p for p in handle.nominated_pods_for_node(best.name) if p.prio < pod.prio]
        if lower:
            handle.api.clear_nominated_node_name(lower, best.name)
        for victim in best.victims:
            if victim.meta.deletion is not None:
                continue  # graceful deletion already started: no API call
            waiting = handle.get_waiting_pod(victim.uid)
            if waiting is not None:
                waiting.reject(NAME, PREEMPTED)
            else:
                handle.api.preempt_pod(victim, pod, best.name)

    def call_extenders(
        self, pod: Pod, candidates: list[Candidate], log: list[dict[str, Any]]
    ) -> tuple[list[Candidate] | None, Status]:
        """preemption.go callExtenders: the extenders that preempt narrow or rewrite the candidates'
        victims (``extenders_preemption``); None and the Error status when one fails.

        Upstream rebuilds the candidates from a Go map, in random order; here they keep the search
        order, nodes an extender adds coming after, in snapshot order."""
        cluster = self.handle.cluster
        victims = {c.name: (list(c.victims), c.pdb_violations) for c in candidates}
        out, status = extenders_preemption(self.handle.extenders, pod, victims, cluster, log.append)
        if out is None:
            return None, status
        order = {c.name: k for k, c in enumerate(candidates)}
        names = sorted(out, key=lambda n: (order.get(n, len(order)), cluster.index[n]))
        return [Candidate(cluster.index[n], n, out[n][0], out[n][1]) for n in names], status

    def eligible_to_preempt_others(self, pod: Pod, nominated_status: Status) -> tuple[bool, str]:
        """default_preemption.go PodEligibleToPreemptOthers."""
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        name = self.handle.nominator.status_of(pod)
        if name:
            # Filters reject the nominated node outright: try preempting again.
            if nominated_status.code == Code.UnschedulableAndUnresolvable:
                return True, ""
            i = self.handle.cluster.index.get(name)
            if i is not None:
                for p in self.handle.cluster.pods_on[i]:
                    if p.prio < pod.prio and _terminating_by_preemption(p):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def num_candidates(self, num_nodes: int) -> int:
        """default_preemption.go calculateNumCandidates."""
        n = num_nodes * self.min_pct // 100
        n = max(n, self.min_abs)
        return min(n, num_nodes)

    def potential_nodes(self, statuses: NodeToStatus) -> list[int]:
        """NodeToStatus.NodesForStatusCode(Unschedulable), in snapshot order."""
        if statuses.absent.code == Code.Unschedulable:
            n = self.handle.cluster.n
            return [
                i for i in range(n) if statuses.statuses.get(i, statuses.absent).code == Code.Unschedulable
            ]
        return sorted(i for i, s in statuses.statuses.items() if s.code == Code.Unschedulable)

    def find_candidates(self, pod: Pod, statuses: NodeToStatus, clock: _Clock) -> DryRun:
        """preemption.go findCandidates + DryRunPreemption, one node after another from offset 0."""
        run = DryRun()
        nodes = self.potential_nodes(statuses)
        run.potential = len(nodes)
        if not nodes:
            return run
        pdbs = self._pdbs()
        wanted = self.num_candidates(len(nodes))
        run.wanted = wanted
        fine: list[Candidate] = []
        violating: list[Candidate] = []
        names = self.handle.cluster.names
        for i in nodes:
            victims, n_violating, status = self.select_victims_on_node(pod, i, pdbs, clock)
            if status.is_success() and victims:
                c = Candidate(i, names[i], victims, n_violating)
                # candidateList.add: each list holds at most ``wanted`` candidates.
                target = fine if n_violating == 0 else violating
                if len(target) < wanted:
                    target.append(c)
                if fine and len(fine) + len(violating) >= wanted:
                    break
                continue
            if status.is_success():
                status = Status(Code.Error, f'expected at least one victim pod on node "{names[i]}"')
            if status.code == Code.Error:
                run.errors.append(status.message())
            run.statuses[i] = status
        run.candidates = fine + violating
        return run

    def select_victims_on_node(
        self, pod: Pod, node: int, pdbs: list[PDB], clock: _Clock
    ) -> tuple[list[Pod], int, Status]:
        """default_preemption.go SelectVictimsOnNode on the live cluster, restored afterwards.

        Every lower-priority pod is taken off the node; if the pod then fits, victims are put back
        one at a time, most important first (PDB-violating ones before the others), and those
        without which the pod no longer fits stay evicted.
        """
        cluster = self.handle.cluster
        framework = self.handle.framework
        original = list(cluster.pods_on[node])
        potential = [p for p in original if p.prio < pod.prio]
        if not potential:
            return [], 0, Status(Code.UnschedulableAndUnresolvable, NO_VICTIMS)

        def put_back() -> None:
            # Idempotent: run as the dry run ends, and again if the replay's budget stopped the cycle
            # before it had (engine/budget.py); ``original`` catches a pod a sort cut short lost.
            for p in (*potential, *original):
                if p.uid not in cluster.pod_node:
                    cluster.add_pod(p, node)
            cluster.pods_on[node] = original

        with restoring(put_back):
            for p in potential:
                cluster.remove_pod(p)
            status = self._evaluate(framework, pod, node)
            if not status.is_success():
                return [], 0, status
            go_sort_slice(potential, clock.more_important)
            bad, good = split_by_pdb_violation(potential, pdbs)
            victims: list[Pod] = []
            n_violating = 0
            for group, counts in ((bad, True), (good, False)):
                for p in group:
                    cluster.add_pod(p, node)
                    if self._evaluate(framework, pod, node).is_success():
                        continue
                    cluster.remove_pod(p)
                    victims.append(p)
                    if counts:
                        n_violating += 1
            if bad and good:
                go_sort_slice(victims, clock.more_important)
            return victims, n_violating, Status.success()

    @staticmethod
    def _evaluate(framework: Any, pod: Pod, node: int) -> Status:
        """PreFilter + Filter for ``pod`` on ``node`` as the cluster is now; plugin errors become Error."""
        try:
            status: Status = framework.evaluate_node(pod, node)
        except CycleError as exc:
            return Status(Code.Error, str(exc), plugin=exc.plugin)
        return status

    def select_candidate(self, candidates: list[Candidate], clock: _Clock) -> Candidate:
        """preemption.go SelectCandidate / pickOneNodeForPreemption; records why each other one lost."""
        if len(candidates) == 1:
            candidates[0].outcome = "selected"
            return candidates[0]

        def highest(c: Candidate) -> int:
            return -c.victims[0].prio

        def priority_sum(c: Candidate) -> int:
            # Shift every priority by MaxInt32+1 so that they all count as non-negative.
            return -sum(p.prio + _INT32_MAX + 1 for p in c.victims)

        def latest_start(c: Candidate) -> tuple[int, float]:
            return clock.earliest_start_of_top_victims(c.victims)

        criteria: list[Callable[[Candidate], Any]] = [
            lambda c: -c.pdb_violations,
            highest,
            priority_sum,
            lambda c: -len(c.victims),
            latest_start,
        ]
        remaining = list(candidates)
        for reason, score in zip(LOST_REASONS, criteria, strict=True):
            best: Any = None
            kept: list[Candidate] = []
            scored: list[tuple[Candidate, Any]] = []
            for c in remaining:
                s = score(c)
                scored.append((c, s))
                if best is None or s > best:
                    best = s
                    kept = []
                if s == best:
                    kept.append(c)
            for c, s in scored:
                if s != best:
                    c.outcome = reason
            remaining = kept
            if len(remaining) == 1:
                break
        winner = remaining[0]
        for c in remaining[1:]:
            c.outcome = LOST_TIE
        winner.outcome = "selected"
        return winner

    def _pdbs(self) -> list[PDB]:
        objs = self.handle.cluster.objects.of_kind("PodDisruptionBudget")
        key = (id(objs), len(objs))
        cached = self.handle.cluster.caches.get(NAME + "/pdbs")
        if cached is not None and cached[0] == key:
            pdbs: list[PDB] = cached[1]
            return pdbs
        pdbs = _parse_pdbs(objs)
        self.handle.cluster.caches[NAME + "/pdbs"] = (key, pdbs)
        return pdbs
