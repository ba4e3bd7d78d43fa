"""Taints and tolerations, as the scheduler's plugins evaluate them.

Rules mirror:
- k8s.io/api/core/v1/toleration.go (Toleration.ToleratesTaint, incl. the alpha Lt/Gt operators of
  the TaintTolerationComparisonOperators feature gate, off by default in v1.35),
- component-helpers/scheduling/corev1/helpers.go (TolerationsTolerateTaint,
  FindMatchingUntoleratedTaint),
- pkg/scheduler/framework/plugins/helper/taint.go (DoNotScheduleTaintsFilterFunc: NoSchedule and
  NoExecute).

A pod's tolerations are parsed and validated once (kept in ``pod.cache``). Nodes are grouped by
their distinct taint list (kept in ``cluster.caches``), so that a pod's tolerations are matched once
per distinct taint list, not once per node.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from .errors import InputError
from .objects import Pod

if TYPE_CHECKING:
    from .cluster import ClusterState

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)

# helper/taint.go DoNotScheduleTaintsFilterFunc: the effects that keep a pod off a node.
DO_NOT_SCHEDULE: frozenset[str] = frozenset({NO_SCHEDULE, NO_EXECUTE})
PREFER_NOT: frozenset[str] = frozenset({PREFER_NO_SCHEDULE})

# api/core/v1 well-known taint keys
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

OP_EXISTS = "Exists"
OP_EQUAL = "Equal"
OP_LT = "Lt"
OP_GT = "Gt"
OPERATORS = ("", OP_EQUAL, OP_EXISTS, OP_LT, OP_GT)

# The feature gate that enables the Lt/Gt toleration operators (alpha in v1.35, off by default).
COMPARISON_OPERATORS_GATE = "TaintTolerationComparisonOperators"

_POD_CACHE_KEY = "taints"
CLUSTER_CACHE_KEY = "taints.groups"


class Taint(NamedTuple):
    key: str
    value: str
    effect: str


def _text(v: object) -> str:
    """A string field as the API would hold it (absent/None is empty)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def node_taint(raw: dict[str, Any]) -> Taint:
    """A node's raw taint dict (already checked by objects.Node) as a Taint."""
    return Taint(_text(raw.get("key")), _text(raw.get("value")), _text(raw.get("effect")))


def _decimal_int(text: str) -> int | None:
    """apimachinery validate/content IsDecimalInteger + strconv.ParseInt(10, 64): canonical form only."""
    body = text[1:] if text.startswith("-") else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    if body[0] == "0" and (len(body) > 1 or text.startswith("-")):
        return None  # leading zeros and "-0" are not canonical
    v = int(text)
    if v < -(2**63) or v > 2**63 - 1:
        return None
    return v


class Toleration:
    """One validated toleration of a pod's spec.tolerations."""

    __slots__ = ("effect", "key", "operator", "seconds", "value")

    def __init__(self, key: str, operator: str, value: str, effect: str, seconds: int | None = None) -> None:
        self.key = key
        self.operator = operator
        self.value = value
        self.effect = effect
        self.seconds = seconds

    def tolerates(self, taint: Taint, comparison_ops: bool = False) -> bool:
        """api/core/v1/toleration.go ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        op = self.operator
        if op in ("", OP_EQUAL):
            return self.value == taint.value
        if op == OP_EXISTS:
            return True
        if op in (OP_LT, OP_GT):
            if not comparison_ops:
                return False
            mine = _decimal_int(self.value)
            theirs = _decimal_int(taint.value)
            if mine is None or theirs is None:
                return False
            return theirs < mine if op == OP_LT else theirs > mine
        return False

    def __repr__(self) -> str:
        return f"Toleration({self.key!r} {self.operator or OP_EQUAL} {self.value!r} {self.effect or '*'})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Toleration):
            return NotImplemented
        return (self.key, self.operator, self.value, self.effect) == (
            other.key,
            other.operator,
            other.value,
            other.effect,
        )

    def __hash__(self) -> int:
        return hash((self.key, self.operator, self.value, self.effect))


def parse_tolerations(raw: object, ident: str, field: str = "spec.tolerations") -> tuple[Toleration, ...]:
    """Validate and convert a raw tolerations list (the API server's rules for the fields the
    scheduler reads: operator, effect, key/operator and operator/value combinations)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InputError("expected a list", obj=ident, field=field)
    out: list[Toleration] = []
    for i, t in enumerate(raw):
        f = f"{field}[{i}]"
        if not isinstance(t, dict):
            raise InputError("expected an object", obj=ident, field=f)
        key = _text(t.get("key"))
        op = _text(t.get("operator"))
        value = _text(t.get("value"))
        effect = _text(t.get("effect"))
        if op not in OPERATORS:
            raise InputError(
                f"unsupported toleration operator {op!r}: Exists or Equal (Lt/Gt behind the "
                f"{COMPARISON_OPERATORS_GATE} feature gate)",
                obj=ident,
                field=f"{f}.operator",
            )
        if effect and effect not in EFFECTS:
            raise InputError(
                f"unsupported toleration effect {effect!r}: NoSchedule, PreferNoSchedule, NoExecute or empty",
                obj=ident,
                field=f"{f}.effect",
            )
        if not key and op != OP_EXISTS:
            raise InputError(
                'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                obj=ident,
                field=f"{f}.operator",
            )
        if op == OP_EXISTS and value:
            raise InputError("value must be empty when `operator` is 'Exists'", obj=ident, field=f"{f}.value")
        secs = t.get("tolerationSeconds")
        if secs is not None and (isinstance(secs, bool) or not isinstance(secs, int)):
            raise InputError(f"must be an integer, got {secs!r}", obj=ident, field=f"{f}.tolerationSeconds")
        out.append(Toleration(key, op, value, effect, secs))
    return tuple(out)


def pod_tolerations(pod: Pod) -> tuple[Toleration, ...]:
    """The pod's validated tolerations, parsed once and kept in ``pod.shared`` (they depend on
    ``spec.tolerations`` only: the pods of one template parse them once)."""
    cached: _PodTaintCache | None = pod.shared.get(_POD_CACHE_KEY)
    if cached is None:
        cached = _PodTaintCache(parse_tolerations(pod.spec.get("tolerations"), pod.ident))
        pod.shared[_POD_CACHE_KEY] = cached
    return cached.tolerations


def tolerations_tolerate_taint(
    tolerations: Iterable[Toleration], taint: Taint, comparison_ops: bool = False
) -> bool:
    """corev1 TolerationsTolerateTaint: whether any toleration tolerates ``taint``."""
    return any(t.tolerates(taint, comparison_ops) for t in tolerations)


def find_matching_untolerated_taint(
    taints: Iterable[Taint],
    tolerations: Sequence[Toleration],
    effects: frozenset[str] | None = None,
    comparison_ops: bool = False,
) -> Taint | None:
    """corev1 FindMatchingUntoleratedTaint: the first taint (with an effect in ``effects``; all
    taints when None) that no toleration tolerates, or None."""
    for taint in taints:
        if effects is not None and taint.effect not in effects:
            continue
        if not tolerations_tolerate_taint(tolerations, taint, comparison_ops):
            return taint
    return None


def count_untolerated(
    taints: Iterable[Taint],
    tolerations: Sequence[Toleration],
    effects: frozenset[str] | None = None,
    comparison_ops: bool = False,
) -> int:
    """How many taints (with an effect in ``effects``) no toleration tolerates."""
    n = 0
    for taint in taints:
        if effects is not None and taint.effect not in effects:
            continue
        if not tolerations_tolerate_taint(tolerations, taint, comparison_ops):
            n += 1
    return n


class TaintGroups:
    """Nodes grouped by their taint list: ``ids[i]`` indexes ``sets`` for node ``i``."""

    __slots__ = ("effects_present", "ids", "sets")

    def __init__(self, ids: npt.NDArray[np.int32], sets: list[tuple[Taint, ...]]) -> None:
        self.ids = ids
        self.sets = sets
        self.effects_present: frozenset[str] = frozenset(t.effect for s in sets for t in s)


def taint_groups(cluster: ClusterState) -> TaintGroups:
    """The cluster's nodes grouped by distinct taint list (cached in ``cluster.caches``).

    Taints belong to nodes, which a ClusterState never changes (only pods move), so the grouping
    does not depend on ``cluster.generation``; it is rebuilt if the node list object changes.
    """
    entry = cluster.caches.get(CLUSTER_CACHE_KEY)
    if entry is not None and entry[0] is cluster.nodes and entry[1] == len(cluster.nodes):
        return entry[2]  # type: ignore[no-any-return]
    index: dict[tuple[Taint, ...], int] = {(): 0}
    sets: list[tuple[Taint, ...]] = [()]
    ids = np.zeros(len(cluster.nodes), dtype=np.int32)
    for i, node in enumerate(cluster.nodes):
        if not node.taints:
            continue
        ts = tuple(node_taint(t) for t in node.taints)
        gid = index.get(ts)
        if gid is None:
            gid = len(sets)
            index[ts] = gid
            sets.append(ts)
        ids[i] = gid
    groups = TaintGroups(ids, sets)
    cluster.caches[CLUSTER_CACHE_KEY] = (cluster.nodes, len(cluster.nodes), groups)
    return groups


class _PodTaintCache:
    """What a pod keeps in ``pod.shared['taints']``: its tolerations and per-taint-group answers."""

    __slots__ = ("answers", "tolerations")

    def __init__(self, tolerations: tuple[Toleration, ...]) -> None:
        self.tolerations = tolerations
        # (effects, comparison_ops) -> (groups it was computed for, count per group)
        self.answers: dict[tuple[frozenset[str], bool], tuple[TaintGroups, IntArray]] = {}


def _group_counts(
    groups: TaintGroups, tolerations: Sequence[Toleration], effects: frozenset[str], comparison_ops: bool
) -> IntArray:
    return np.fromiter(
        (count_untolerated(s, tolerations, effects, comparison_ops) for s in groups.sets),
        dtype=np.int64,
        count=len(groups.sets),
    )


def _counts_for(
    cluster: ClusterState,
    tolerations: Sequence[Toleration] | Pod,
    effects: frozenset[str],
    comparison_ops: bool,
) -> tuple[TaintGroups, IntArray]:
    groups = taint_groups(cluster)
    if not isinstance(tolerations, Pod):
        return groups, _group_counts(groups, tolerations, effects, comparison_ops)
    pod = tolerations
    pod_tolerations(pod)
    cache: _PodTaintCache = pod.shared[_POD_CACHE_KEY]
    key = (effects, comparison_ops)
    hit = cache.answers.get(key)
    if hit is not None and hit[0] is groups:
        return hit
    counts = _group_counts(groups, cache.tolerations, effects, comparison_ops)
    cache.answers[key] = (groups, counts)
    return groups, counts


def untolerated_count(
    cluster: ClusterState,
    nodes: IntArray,
    tolerations: Sequence[Toleration] | Pod,
    effects: frozenset[str],
    *,
    comparison_ops: bool = False,
) -> IntArray:
    """Per node of ``nodes``: how many of its taints with an effect in ``effects`` the tolerations
    do not tolerate. ``tolerations`` may be a Pod (its tolerations, answers cached on the pod)."""
    groups, counts = _counts_for(cluster, tolerations, effects, comparison_ops)
    if not counts.any():
        return np.zeros(len(nodes), dtype=np.int64)
    return counts[groups.ids[nodes]]


def untolerated_mask(
    cluster: ClusterState,
    nodes: IntArray,
    tolerations: Sequence[Toleration] | Pod,
    effects: frozenset[str],
    *,
    comparison_ops: bool = False,
) -> BoolArray:
    """Per node of ``nodes``: whether it has at least one taint with an effect in ``effects`` that
    the tolerations do not tolerate (FindMatchingUntoleratedTaint with that effect filter).

    PodTopologySpread's nodeTaintsPolicy=Honor and TaintToleration's Filter use
    ``DO_NOT_SCHEDULE`` (NoSchedule, NoExecute), as helper/taint.go does.
    """
    groups, counts = _counts_for(cluster, tolerations, effects, comparison_ops)
    bad = counts > 0
    if not bad.any():
        return np.zeros(len(nodes), dtype=bool)
    return bad[groups.ids[nodes]]
