"""InterPodAffinity: required and preferred (anti-)affinity between the incoming pod and the pods
already placed, counted per topology domain.

Mirrors framework/plugins/interpodaffinity (plugin.go, filtering.go, scoring.go, v1.35) and the
term parsing of kube-scheduler/framework/types.go (AffinityTerm, GetAffinityTerms) and
pkg/scheduler/framework/types.go (PodInfo.Update, podWithAffinity, podWithRequiredAntiAffinity).

Counting is vectorised. A term's match depends only on a pod's namespace and labels, so the number
of matching assigned pods per node is kept per distinct term (``_Counter``), caught up from
``cluster.changes``; per-domain counts are then one ``np.bincount`` over the topology label's value
codes. Assigned pods that carry affinity terms themselves (needed for the existing pods'
anti-affinity and for scoring) are kept grouped by identical terms, so each distinct set of terms is
matched against the incoming pod once.

matchLabelKeys / mismatchLabelKeys are not read here: kube-scheduler never reads them (the API
server merges them into labelSelector when the pod is created).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from ..apimachinery import ErrorList
from ..budget import uninterruptible
from ..cluster import ClusterState
from ..errors import InputError
from ..framework import MAX_NODE_SCORE, Code, CycleState, Handle, PreFilterResult, Status, Verdicts
from ..framework.diagnosis import (
    REQUIRED,
    Change,
    Diagnosis,
    DiagnosisContext,
    PodPatch,
    format_selector,
    generic,
    name_list,
)
from ..labels import OPERATORS as SELECTOR_OPERATORS
from ..labels import LabelSelector
from ..nodeselectors import go_quote, new_requirement_errors
from ..objects import Pod
from ..plugin_args import obj

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

# filtering.go
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

_POD_CACHE = NAME
_COUNTERS_CACHE = NAME + ".counters"
_REGISTRY_CACHE = NAME + ".registry"
_COUNTERS_LIMIT = 512


# ----- terms ------------------------------------------------------------------------------------------
def _selector_signature(sel: LabelSelector) -> Hashable:
    if sel.nothing:
        return ("nothing",)
    return tuple(sorted((r.key, r.op, tuple(sorted(r.values))) for r in sel.requirements))


class AffinityTerm:
    """fwk.AffinityTerm (+ weight for WeightedAffinityTerm).

    ``ns_all`` stands for a namespace selector that is empty (matches every namespace);
    ``ns_selector`` is None when the selector selects nothing (nil, or merged into ``namespaces``).
    """

    __slots__ = ("match_sig", "namespaces", "ns_all", "ns_selector", "selector", "topology_key", "weight")

    def __init__(
        self,
        namespaces: frozenset[str],
        ns_selector: LabelSelector | None,
        selector: LabelSelector,
        topology_key: str,
        weight: int = 0,
    ) -> None:
        self.namespaces = namespaces
        self.ns_all = ns_selector is not None and ns_selector.is_empty()
        self.ns_selector = None if ns_selector is None or ns_selector.nothing else ns_selector
        self.selector = selector
        self.topology_key = topology_key
        self.weight = weight
        self.match_sig: Hashable = (
            tuple(sorted(namespaces)),
            self.ns_all,
            None if self.ns_selector is None else _selector_signature(self.ns_selector),
            _selector_signature(selector),
        )

    def matches(self, namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, str] | None) -> bool:
        """AffinityTerm.Matches: (namespace listed or namespace selector matches) and label selector matches."""
        if not (
            namespace in self.namespaces
            or self.ns_all
            or (self.ns_selector is not None and self.ns_selector.matches(ns_labels or {}))
        ):
            return False
        return self.selector.matches(labels)

    def merged(self, cluster: ClusterState) -> AffinityTerm:
        """mergeAffinityTermNamespacesIfNotEmpty for the incoming pod's terms: the names of the
        namespaces a non-empty namespace selector selects join ``namespaces``.

        Upstream receives the term by value: the names land in the shared set, but resetting the
        copy's selector to Nothing is lost. The selector therefore stays, and is later matched
        against nil namespace labels (so e.g. a DoesNotExist-only selector matches every namespace).
        """
        if self.ns_all or self.ns_selector is None:
            return self
        sel = self.ns_selector
        names = set(self.namespaces)
        for ns in cluster.objects.of_kind("Namespace"):
            if sel.matches(ns.meta.labels):
                names.add(ns.meta.name)
        return AffinityTerm(frozenset(names), sel, self.selector, self.topology_key, self.weight)

    def __repr__(self) -> str:
        return (
            f"AffinityTerm(ns={sorted(self.namespaces)}, ns_all={self.ns_all}, ns_sel={self.ns_selector!r}, "
            f"sel={self.selector!r}, tk={self.topology_key!r}, w={self.weight})"
        )


class _TermError(Exception):
    pass


def _selector_problem(raw: Any) -> str | None:
    """What metav1.LabelSelectorAsSelector would refuse in ``raw`` (structure is checked elsewhere)."""
    if not isinstance(raw, dict):
        return None
    ml = raw.get("matchLabels")
    if isinstance(ml, dict):
        for k, v in ml.items():
            errs = new_requirement_errors(str(k), "Equals", ["" if v is None else str(v)])
            if errs:
                return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
    exprs = raw.get("matchExpressions")
    if isinstance(exprs, list):
        for e in exprs:
            if not isinstance(e, dict):
                continue
            op = e.get("operator")
            if op not in SELECTOR_OPERATORS:
                return f"{go_quote(str(op or ''))} is not a valid label selector operator"
            vals = e.get("values") or []
            values = [str(v) for v in vals] if isinstance(vals, list) else []
            errs = new_requirement_errors(str(e.get("key") or ""), str(op), values)
            if errs:
                return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
    return None


def _parse_selector(raw: Any, obj: str, field: str) -> LabelSelector:
    problem = _selector_problem(raw)
    if problem is not None:
        raise _TermError(problem)
    return LabelSelector.parse(raw, obj=obj, field=field)


def _parse_term(raw: Any, pod_namespace: str, obj: str, field: str, weight: int = 0) -> AffinityTerm:
    """newAffinityTerm for one v1.PodAffinityTerm."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InputError("expected a pod affinity term object", obj=obj, field=field)
    selector = _parse_selector(raw.get("labelSelector"), obj, f"{field}.labelSelector")
    ns_raw = raw.get("namespaces")
    if ns_raw is None:
        ns_raw = []
    if not isinstance(ns_raw, list):
        raise InputError("expected a list", obj=obj, field=f"{field}.namespaces")
    ns_sel_raw = raw.get("namespaceSelector")
    # getNamespacesFromPodAffinityTerm: no namespaces and a nil selector mean the pod's own namespace
    namespaces = (
        frozenset([pod_namespace]) if not ns_raw and ns_sel_raw is None else frozenset(str(n) for n in ns_raw)
    )
    ns_selector = _parse_selector(ns_sel_raw, obj, f"{field}.namespaceSelector")
    tk = raw.get("topologyKey")
    if tk is None:
        tk = ""
    if not isinstance(tk, str):
        raise InputError(f"expected a string, got {tk!r}", obj=obj, field=f"{field}.topologyKey")
    return AffinityTerm(namespaces, None if ns_selector.nothing else ns_selector, selector, tk, weight)


class PodTerms:
    """The pod's parsed affinity terms (PodInfo): a category whose parsing failed is empty and its
    error is recorded, as PodInfo.Update leaves it."""

    __slots__ = (
        "errors",
        "has_affinity",
        "has_preferred",
        "has_required_anti",
        "preferred_affinity",
        "preferred_anti",
        "required_affinity",
        "required_anti",
        "signature",
    )

    def __init__(self, pod: Pod) -> None:
        ident = pod.ident
        aff = pod.spec.get("affinity")
        if aff is not None and not isinstance(aff, dict):
            raise InputError("expected an object", obj=ident, field="spec.affinity")
        aff = aff or {}
        pa = aff.get("podAffinity")
        paa = aff.get("podAntiAffinity")
        for name, v in (("podAffinity", pa), ("podAntiAffinity", paa)):
            if v is not None and not isinstance(v, dict):
                raise InputError("expected an object", obj=ident, field=f"spec.affinity.{name}")
        pa_d: dict[str, Any] = pa or {}
        paa_d: dict[str, Any] = paa or {}
        self.errors: list[str] = []
        self.has_affinity = pa is not None or paa is not None  # podWithAffinity
        req = "requiredDuringSchedulingIgnoredDuringExecution"
        pref = "preferredDuringSchedulingIgnoredDuringExecution"
        self.required_affinity = self._required(
            pod, pa_d.get(req), f"spec.affinity.podAffinity.{req}", "requiredAffinityTerms"
        )
        self.required_anti = self._required(
            pod, paa_d.get(req), f"spec.affinity.podAntiAffinity.{req}", "requiredAntiAffinityTerms"
        )
        self.preferred_affinity = self._weighted(
            pod, pa_d.get(pref), f"spec.affinity.podAffinity.{pref}", "preferredAffinityTerms"
        )
        self.preferred_anti = self._weighted(
            pod, paa_d.get(pref), f"spec.affinity.podAntiAffinity.{pref}", "preferredAntiAffinityTerms"
        )
        self.has_required_anti = bool(paa_d.get(req))  # podWithRequiredAntiAffinity
        self.has_preferred = bool(pa_d.get(pref)) or bool(paa_d.get(pref))
        self.signature: Hashable = tuple(
            tuple((t.match_sig, t.topology_key, t.weight) for t in terms)
            for terms in (
                self.required_affinity,
                self.required_anti,
                self.preferred_affinity,
                self.preferred_anti,
            )
        )

    def _required(self, pod: Pod, raw: Any, field: str, label: str) -> list[AffinityTerm]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise InputError("expected a list", obj=pod.ident, field=field)
        try:
            return [_parse_term(t, pod.namespace, pod.ident, f"{field}[{i}]") for i, t in enumerate(raw)]
        except _TermError as e:
            self.errors.append(f"{label}: {e}")
            return []

    def _weighted(self, pod: Pod, raw: Any, field: str, label: str) -> list[AffinityTerm]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise InputError("expected a list", obj=pod.ident, field=field)
        out: list[AffinityTerm] = []
        try:
            for i, t in enumerate(raw):
                f = f"{field}[{i}]"
                if t is None:
                    t = {}
                if not isinstance(t, dict):
                    raise InputError("expected an object", obj=pod.ident, field=f)
                w = t.get("weight", 0)
                if w is None:
                    w = 0
                if isinstance(w, bool) or not isinstance(w, int) or not -(2**31) <= w < 2**31:
                    raise InputError(f"expected an int32, got {w!r}", obj=pod.ident, field=f"{f}.weight")
                out.append(
                    _parse_term(t.get("podAffinityTerm"), pod.namespace, pod.ident, f"{f}.podAffinityTerm", w)
                )
        except _TermError as e:
            self.errors.append(f"{label}: {e}")
            return []
        return out

    def error_message(self) -> str:
        """utilerrors.NewAggregate(parseErrs).Error()."""
        return self.errors[0] if len(self.errors) == 1 else "[" + ", ".join(self.errors) + "]"


def pod_terms(pod: Pod) -> PodTerms:
    """The pod's parsed terms, kept in ``pod.shared``: they depend on the affinity and the namespace
    only, so the pods of one template parse them once."""
    t = pod.shared.get(_POD_CACHE)
    if t is None:
        t = PodTerms(pod)
        pod.shared[_POD_CACHE] = t
    assert isinstance(t, PodTerms)
    return t


def matches_all(terms: list[AffinityTerm], namespace: str, labels: Mapping[str, str]) -> bool:
    """podMatchesAllAffinityTerms (incoming pod's merged terms, so no namespace labels)."""
    if not terms:
        return False
    return all(t.matches(namespace, labels, None) for t in terms)


# ----- per-cluster incremental data ------------------------------------------------------------------
class _Counter:
    """Per node, how many assigned pods satisfy ``pred(namespace, labels)``; follows cluster.changes."""

    __slots__ = ("counts", "pos", "pred")

    def __init__(self, cluster: ClusterState, pred: Callable[[str, Mapping[str, str]], bool]) -> None:
        self.pred = pred
        self.counts = np.zeros(cluster.n, dtype=np.int64)
        parts = [g.node_array() for g in cluster.groups() if pred(g.namespace, g.labels)]
        if parts:
            self.counts += np.bincount(np.concatenate(parts), minlength=cluster.n)
        self.pos = len(cluster.changes)

    def sync(self, cluster: ClusterState) -> IntArray:
        changes = cluster.changes
        if self.pos < len(changes):
            with uninterruptible():  # counts and pos move together (engine/budget.py)
                pred = self.pred
                for sign, pod, node in changes[self.pos :]:
                    if pred(pod.namespace, pod.labels):
                        self.counts[node] += sign
                self.pos = len(changes)
        return self.counts


def _counter(
    cluster: ClusterState, sig: Hashable, pred: Callable[[str, Mapping[str, str]], bool]
) -> IntArray:
    cache: dict[Hashable, _Counter] = cluster.caches.setdefault(_COUNTERS_CACHE, {})
    c = cache.get(sig)
    if c is None or c.pos > len(cluster.changes) or len(c.counts) != cluster.n:
        if len(cache) >= _COUNTERS_LIMIT:
            cache.clear()
        c = _Counter(cluster, pred)
        cache[sig] = c
    return c.sync(cluster)


class _SigGroup:
    """Assigned pods (with affinity) sharing identical parsed terms; ``nodes`` with multiplicity."""

    __slots__ = ("_array", "nodes", "terms")

    def __init__(self, terms: PodTerms) -> None:
        self.terms = terms
        self.nodes: list[int] = []
        self._array: IntArray | None = None

    def node_array(self) -> IntArray:
        if self._array is None:
            self._array = np.asarray(self.nodes, dtype=np.int64)
        return self._array


def _index_labels(terms: list[AffinityTerm]) -> list[tuple[str, str]] | None:
    """The labels an incoming pod needs for one of ``terms`` to select it: for each term, the values
    of its first ``In`` requirement (a matchLabels entry is one). None when a term has no ``In``
    requirement: it may select any pod."""
    out: list[tuple[str, str]] = []
    for term in terms:
        sel = term.selector
        if sel.nothing:
            continue  # selects no pod
        req = next((r for r in sel.requirements if r.op == "In"), None)
        if req is None:
            return None
        out.extend((req.key, v) for v in req.values)
    return out


def _scored_terms(terms: PodTerms) -> list[AffinityTerm]:
    """An existing pod's terms PreScore matches against the incoming pod."""
    return [*terms.required_affinity, *terms.preferred_affinity, *terms.preferred_anti]


def _anti_terms(terms: PodTerms) -> list[AffinityTerm]:
    """An existing pod's terms PreFilter matches against the incoming pod."""
    return terms.required_anti


class _LabelIndex:
    """Groups by the labels a pod must have to be selected by one of their terms."""

    __slots__ = ("any", "by_label", "terms_of")

    def __init__(self, terms_of: Callable[[PodTerms], list[AffinityTerm]]) -> None:
        self.terms_of = terms_of
        self.by_label: dict[tuple[str, str], dict[Hashable, None]] = {}
        self.any: dict[Hashable, None] = {}

    def update(self, sig: Hashable, terms: PodTerms, add: bool) -> None:
        chosen = self.terms_of(terms)
        if not chosen:
            return
        keys = _index_labels(chosen)
        targets = [self.any] if keys is None else [self.by_label.setdefault(k, {}) for k in keys]
        for t in targets:
            if add:
                t[sig] = None
            else:
                t.pop(sig, None)

    def find(self, labels: Mapping[str, str]) -> dict[Hashable, None]:
        found = dict(self.any)
        by_label = self.by_label
        for kv in labels.items():
            hit = by_label.get(kv)
            if hit:
                found.update(hit)
        return found


def _affinity_terms(pod: Pod) -> PodTerms | None:
    """The pod's terms when it is podWithAffinity, else None (nothing to parse)."""
    aff = pod.spec.get("affinity")
    if not isinstance(aff, dict) or (aff.get("podAffinity") is None and aff.get("podAntiAffinity") is None):
        return None
    terms = pod_terms(pod)
    return terms if terms.has_affinity else None


class _Registry:
    """Assigned pods with affinity (NodeInfo.PodsWithAffinity), grouped by their terms.

    The groups are indexed by the labels a pod must have to be selected by one of their terms
    (``_index_labels``), so PreScore looks only at the groups whose terms may select the incoming
    pod (``candidates``) instead of at the hundreds of Deployments' anti-affinity terms of a dense
    cluster."""

    def __init__(self, cluster: ClusterState) -> None:
        self.groups: dict[Hashable, _SigGroup] = {}
        self._scored = _LabelIndex(_scored_terms)
        self._anti = _LabelIndex(_anti_terms)
        self.pos = 0
        # the pods of one template share one ``shared`` dict, and so their terms (``pod_terms``):
        # which of them have affinity is worked out once per dict (the dicts live on: ids are unique)
        terms_of: dict[int, PodTerms | None] = {}
        for pod in cluster.assigned_pods():
            key = id(pod.shared)
            if key in terms_of:
                terms = terms_of[key]
            else:
                terms = terms_of[key] = _affinity_terms(pod)
            if terms is not None:
                node = cluster.node_of(pod)
                assert node is not None
                self._add(terms, node)
        self.pos = len(cluster.changes)

    def _add(self, terms: PodTerms, node: int) -> None:
        sig = terms.signature
        g = self.groups.get(sig)
        if g is None:
            g = _SigGroup(terms)
            self.groups[sig] = g
            self._index(sig, terms, True)
        g.nodes.append(node)
        g._array = None

    def _apply(self, sign: int, pod: Pod, node: int) -> None:
        terms = _affinity_terms(pod)
        if terms is None:
            return
        if sign > 0:
            self._add(terms, node)
            return
        sig = terms.signature
        g = self.groups.get(sig)
        if g is None:
            return
        try:
            g.nodes.remove(node)
        except ValueError:
            return
        if not g.nodes:
            del self.groups[sig]
            self._index(sig, terms, False)
        g._array = None

    def _index(self, sig: Hashable, terms: PodTerms, add: bool) -> None:
        self._scored.update(sig, terms, add)
        self._anti.update(sig, terms, add)

    def candidates(self, labels: Mapping[str, str], anti: bool = False) -> list[_SigGroup]:
        """The groups with a term (a required anti-affinity one with ``anti``; else an affinity,
        preferred affinity or preferred anti-affinity one) that may select a pod with these labels:
        a superset of those that do (their terms are still matched), in no particular order (the
        plugin adds them up)."""
        groups = self.groups
        return [groups[sig] for sig in (self._anti if anti else self._scored).find(labels)]

    def sync(self, cluster: ClusterState) -> _Registry:
        changes = cluster.changes
        if self.pos < len(changes):
            with uninterruptible():
                for sign, pod, node in changes[self.pos :]:
                    self._apply(sign, pod, node)
                self.pos = len(changes)
        return self


def _registry(cluster: ClusterState) -> _Registry:
    r = cluster.caches.get(_REGISTRY_CACHE)
    if not isinstance(r, _Registry) or r.pos > len(cluster.changes):
        r = _Registry(cluster)
        cluster.caches[_REGISTRY_CACHE] = r
    return r.sync(cluster)


def _per_domain(cluster: ClusterState, key: str, node_counts: IntArray) -> tuple[IntArray, bool]:
    """Sum ``node_counts`` per value of label ``key``; also whether any counted node has the label."""
    col = cluster.label(key)
    size = len(col.values)
    nz = np.flatnonzero(node_counts)
    if len(nz) == 0:
        return np.zeros(size, dtype=np.int64), False
    codes = col.codes[nz]
    ok = codes >= 0
    if not ok.any():
        return np.zeros(size, dtype=np.int64), False
    sums = np.bincount(codes[ok], weights=node_counts[nz][ok].astype(np.float64), minlength=size)
    return np.rint(sums).astype(np.int64), True


def _nodes_per_domain(cluster: ClusterState, key: str, nodes: IntArray) -> tuple[IntArray, bool]:
    """How many entries of ``nodes`` (with multiplicity) fall in each value of label ``key``."""
    col = cluster.label(key)
    codes = col.codes[nodes]
    codes = codes[codes >= 0]
    return np.bincount(codes, minlength=len(col.values)).astype(np.int64), len(codes) > 0


def _add(target: dict[str, IntArray], key: str, values: IntArray) -> None:
    cur = target.get(key)
    target[key] = values.copy() if cur is None else cur + values


# ----- cycle state -------------------------------------------------------------------------------------
class _PreFilterState:
    """filtering.go preFilterState: counts per topology key, as arrays over the label's value codes."""

    __slots__ = (
        "affinity",
        "anti",
        "existing_anti",
        "ns_labels",
        "required_affinity",
        "required_anti",
        "self_match",
    )

    def __init__(
        self,
        required_affinity: list[AffinityTerm],
        required_anti: list[AffinityTerm],
        ns_labels: dict[str, str],
        self_match: bool,
    ) -> None:
        self.required_affinity = required_affinity
        self.required_anti = required_anti
        self.ns_labels = ns_labels
        self.self_match = self_match
        self.existing_anti: dict[str, IntArray] = {}
        self.affinity: dict[str, IntArray] = {}
        self.anti: dict[str, IntArray] = {}

    def clone(self) -> _PreFilterState:
        c = _PreFilterState(self.required_affinity, self.required_anti, self.ns_labels, self.self_match)
        c.existing_anti = {k: v.copy() for k, v in self.existing_anti.items()}
        c.affinity = {k: v.copy() for k, v in self.affinity.items()}
        c.anti = {k: v.copy() for k, v in self.anti.items()}
        return c

    @staticmethod
    def _any(counts: dict[str, IntArray]) -> bool:
        return any(bool((v != 0).any()) for v in counts.values())

    def update_with_pod(self, cluster: ClusterState, incoming: Pod, other: Pod, node: int, sign: int) -> None:
        """preFilterState.updateWithPod (AddPod / RemovePod)."""

        def bump(counts: dict[str, IntArray], key: str) -> None:
            col = cluster.label(key)
            code = int(col.codes[node])
            if code < 0:
                return
            arr = counts.get(key)
            if arr is None:
                arr = np.zeros(len(col.values), dtype=np.int64)
                counts[key] = arr
            arr[code] += sign

        for t in pod_terms(other).required_anti:
            if t.matches(incoming.namespace, incoming.labels, self.ns_labels):
                bump(self.existing_anti, t.topology_key)
        if matches_all(self.required_affinity, other.namespace, other.labels):
            for t in self.required_affinity:
                bump(self.affinity, t.topology_key)
        for t in self.required_anti:
            if t.matches(other.namespace, other.labels, None):
                bump(self.anti, t.topology_key)


class _PreScoreState:
    __slots__ = ("topology_score",)

    def __init__(self, topology_score: dict[str, IntArray]) -> None:
        self.topology_score = topology_score


# ----- the plugin --------------------------------------------------------------------------------------
# ----- args (kube-scheduler/config/v1 types_pluginargs.go InterPodAffinityArgs, v1/defaults.go,
# apis/config/validation/validation_pluginargs.go ValidateInterPodAffinityArgs)

ARGS_TYPE = obj(
    "v1.InterPodAffinityArgs", hardPodAffinityWeight="int32", ignorePreferredTermsOfExistingPods="bool"
)


def default_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> dict[str, Any]:
    return {
        "hardPodAffinityWeight": a.get("hardPodAffinityWeight", 1),
        "ignorePreferredTermsOfExistingPods": a.get("ignorePreferredTermsOfExistingPods", False),
    }


def validate_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> list[str]:
    errs = ErrorList()
    w = a["hardPodAffinityWeight"]
    if w < 0 or w > 100:
        errs.invalid("hardPodAffinityWeight", w, "not in valid range [0, 100]")
    return errs.items


# ----- explain (framework/diagnosis.py) ---------------------------------------------------------------


def _raw_required(pod: Pod, key: str) -> list[dict[str, Any]]:
    aff = pod.spec.get("affinity")
    block = aff.get(key) if isinstance(aff, dict) else None
    terms = block.get(REQUIRED) if isinstance(block, dict) else None
    return [t if isinstance(t, dict) else {} for t in terms] if isinstance(terms, list) else []


def _matching_pods(ctx: DiagnosisContext, t: AffinityTerm, key: str, code: int) -> list[str]:
    """The assigned pods matching ``t`` on nodes whose label ``key`` has value code ``code``."""
    c = ctx.cluster
    memo = (NAME, "matching", t.match_sig, key, code, c.generation)
    got: list[str] | None = ctx.cache.get(memo)
    if got is not None:
        return got
    codes = c.label(key).codes
    out: list[str] = []
    for g in c.groups():
        if not t.matches(g.namespace, g.labels, None):
            continue
        at = np.flatnonzero(codes[g.node_array()] == code)
        out.extend(g.pods[int(k)].key for k in at)
    got = sorted(out)
    ctx.cache[memo] = got
    return got


def _blockers(ctx: DiagnosisContext, pod: Pod) -> list[tuple[Pod, AffinityTerm, int]]:
    """Assigned pods whose required anti-affinity terms match ``pod``: (pod, term, its node)."""
    memo = (NAME, "blockers")
    if pod is ctx.target and memo in ctx.cache:
        cached: list[tuple[Pod, AffinityTerm, int]] = ctx.cache[memo]
        return cached
    c = ctx.cluster
    ns_labels = c.objects.namespace_labels(pod.namespace)
    out = []
    for p in c.assigned_pods():
        aff = p.spec.get("affinity")
        if not isinstance(aff, dict) or not isinstance(aff.get("podAntiAffinity"), dict):
            continue
        node = c.node_of(p)
        if node is None:
            continue
        for t in pod_terms(p).required_anti:
            if t.matches(pod.namespace, pod.labels, ns_labels):
                out.append((p, t, node))
    if pod is ctx.target:
        ctx.cache[memo] = out
    return out


def _diag_existing_anti(ctx: DiagnosisContext, pod: Pod, nodes: IntArray) -> list[Diagnosis]:
    c = ctx.cluster
    blockers = _blockers(ctx, pod)
    hits = np.zeros((len(blockers), len(nodes)), dtype=bool)
    for b, (_, t, pnode) in enumerate(blockers):
        codes = c.label(t.topology_key).codes
        own = codes[pnode]
        if own >= 0:
            hits[b] = codes[nodes] == own
    groups: dict[tuple[int, ...], list[int]] = {}
    for pos in range(len(nodes)):
        groups.setdefault(tuple(np.flatnonzero(hits[:, pos]).tolist()), []).append(pos)
    out = []
    for row, positions in groups.items():
        members = nodes[np.asarray(positions, dtype=np.int64)]
        if not row:
            out.append(Diagnosis(members, "no existing pod's anti-affinity found that matches", {}, None))
            continue
        parts = []
        for b in row:
            p, t, pnode = blockers[b]
            value = c.nodes[pnode].labels.get(t.topology_key)
            parts.append(
                f"pod {p.key} (on {c.names[pnode]}) has required anti-affinity to pods like this one "
                f"(topologyKey {t.topology_key}, {t.topology_key}={value})"
            )
        uids = tuple(sorted({blockers[b][0].uid for b in row}))
        keys = sorted({blockers[b][0].key for b in row})
        change = Change(
            "evict",
            "node",
            "evict pod(s) " + ", ".join(keys) + " whose anti-affinity rejects this pod",
            evict=uids,
            details={"pods": keys},
        )
        out.append(Diagnosis(members, "; ".join(parts), {"pods": keys}, change))
    return out


class InterPodAffinity:
    name = NAME
    # args: declared here, decoded, defaulted and validated by the configuration (config/)
    args_type = ARGS_TYPE
    default_args = staticmethod(default_args)
    validate_args = staticmethod(validate_args)

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        w = args.get("hardPodAffinityWeight", 1)
        self.hard_pod_affinity_weight = 1 if w is None else int(w)
        self.ignore_preferred_terms_of_existing_pods = bool(
            args.get("ignorePreferredTermsOfExistingPods", False)
        )

    # ----- PreFilter -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        cluster = state.cluster
        terms = pod_terms(pod)
        if terms.errors:
            return None, Status(Code.UnschedulableAndUnresolvable, f"parsing pod: {terms.error_message()}")
        req_aff = [t.merged(cluster) for t in terms.required_affinity]
        req_anti = [t.merged(cluster) for t in terms.required_anti]
        ns_labels = cluster.objects.namespace_labels(pod.namespace)
        s = _PreFilterState(req_aff, req_anti, ns_labels, matches_all(req_aff, pod.namespace, pod.labels))

        # existing pods' required anti-affinity terms that match the incoming pod
        for g in _registry(cluster).candidates(pod.labels, anti=True):
            for t in g.terms.required_anti:
                if t.matches(pod.namespace, pod.labels, ns_labels):
                    counts, hit = _nodes_per_domain(cluster, t.topology_key, g.node_array())
                    if hit:
                        _add(s.existing_anti, t.topology_key, counts)

        # existing pods matching all of the incoming pod's affinity terms / each anti-affinity term
        if req_aff:
            sig = ("all", tuple(t.match_sig for t in req_aff))
            node_counts = _counter(cluster, sig, lambda ns, labels: matches_all(req_aff, ns, labels))
            for t in req_aff:
                counts, hit = _per_domain(cluster, t.topology_key, node_counts)
                if hit:
                    _add(s.affinity, t.topology_key, counts)
        for t in req_anti:
            node_counts = _counter(cluster, ("one", t.match_sig), _term_pred(t))
            counts, hit = _per_domain(cluster, t.topology_key, node_counts)
            if hit:
                _add(s.anti, t.topology_key, counts)

        if not s.existing_anti and not req_aff and not req_anti:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, Status.success()

    # PreFilterExtensions
    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node: int) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, _PreFilterState):
            s.update_with_pod(state.cluster, pod, pod_to_add, node, 1)
        return Status.success()

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node: int) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, _PreFilterState):
            s.update_with_pod(state.cluster, pod, pod_to_remove, node, -1)
        return Status.success()

    # ----- Filter --------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            v = Verdicts.build(len(nodes))
            v.reject(
                np.ones(len(nodes), dtype=bool),
                Code.Error,
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',
            )
            return v.done()
        cluster = state.cluster
        v = Verdicts.build(len(nodes))

        # satisfyPodAffinity
        if s.required_affinity:
            has_all = np.ones(len(nodes), dtype=bool)
            exist = np.ones(len(nodes), dtype=bool)
            for t in s.required_affinity:
                codes = cluster.label(t.topology_key).codes[nodes]
                present = codes >= 0
                has_all &= present
                arr = s.affinity.get(t.topology_key)
                if arr is None:
                    exist[:] = False
                else:
                    exist &= present & (arr[np.where(present, codes, 0)] > 0)
            # the first pod of a group with affinity to itself may go anywhere with the topology labels
            special = s.self_match and not s._any(s.affinity)
            ok = has_all & (exist | special)
            v.reject(~ok, Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY)

        # satisfyPodAntiAffinity
        if s._any(s.anti):
            bad = np.zeros(len(nodes), dtype=bool)
            for t in s.required_anti:
                arr = s.anti.get(t.topology_key)
                if arr is None:
                    continue
                codes = cluster.label(t.topology_key).codes[nodes]
                present = codes >= 0
                bad |= present & (arr[np.where(present, codes, 0)] > 0)
            v.reject(bad, Code.Unschedulable, ERR_REASON_ANTI_AFFINITY)

        # satisfyExistingPodsAntiAffinity: any of the node's (key, value) pairs counted
        if s._any(s.existing_anti):
            bad = np.zeros(len(nodes), dtype=bool)
            for key, arr in s.existing_anti.items():
                codes = cluster.label(key).codes[nodes]
                present = codes >= 0
                bad |= present & (arr[np.where(present, codes, 0)] > 0)
            v.reject(bad, Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY)
        return v.done()

    # ----- PreScore / Score ------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: IntArray) -> Status:
        cluster = state.cluster
        terms = pod_terms(pod)
        has_constraints = terms.has_preferred
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status.skip()
        if terms.errors:
            return Status.error(f"failed to parse pod: {terms.error_message()}")
        ns_labels = cluster.objects.namespace_labels(pod.namespace)
        topo: dict[str, IntArray] = {}
        touched = False

        if has_constraints:
            # the incoming pod's preferred terms against every assigned pod
            for sign, tlist in ((1, terms.preferred_affinity), (-1, terms.preferred_anti)):
                for t0 in tlist:
                    t = t0.merged(cluster)
                    node_counts = _counter(cluster, ("one", t.match_sig), _term_pred(t))
                    counts, hit = _per_domain(cluster, t.topology_key, node_counts)
                    if hit:
                        touched = True
                        _add(topo, t.topology_key, counts * np.int64(_int32(t.weight * sign)))

        # existing pods' terms that the incoming pod matches
        hard = self.hard_pod_affinity_weight
        for g in _registry(cluster).candidates(pod.labels):
            et = g.terms
            contributions: list[tuple[AffinityTerm, int]] = []
            if hard > 0:
                contributions.extend((t, hard) for t in et.required_affinity)
            contributions.extend((t, t.weight) for t in et.preferred_affinity)
            contributions.extend((t, -t.weight) for t in et.preferred_anti)
            for t, w in contributions:
                if t.matches(pod.namespace, pod.labels, ns_labels):
                    counts, hit = _nodes_per_domain(cluster, t.topology_key, g.node_array())
                    if hit:
                        touched = True
                        _add(topo, t.topology_key, counts * np.int64(_int32(w)))

        if not touched:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(topo))
        return Status.success()

    def score(self, state: CycleState, pod: Pod, nodes: IntArray) -> IntArray:
        s = state.get(PRE_SCORE_STATE_KEY)
        out = np.zeros(len(nodes), dtype=np.int64)
        if not isinstance(s, _PreScoreState):
            return out
        cluster = state.cluster
        for key, arr in s.topology_score.items():
            codes = cluster.label(key).codes[nodes]
            present = codes >= 0
            out += np.where(present, arr[np.where(present, codes, 0)], 0)
        return out

    def normalize_score(self, state: CycleState, pod: Pod, nodes: IntArray, scores: IntArray) -> IntArray:
        s = state.get(PRE_SCORE_STATE_KEY)
        out = np.asarray(scores, dtype=np.int64).copy()
        if not isinstance(s, _PreScoreState) or not s.topology_score or len(out) == 0:
            return out
        lo = int(out.min())
        hi = int(out.max())
        diff = hi - lo
        if diff > 0:
            # float64(MaxNodeScore) * (float64(score-min) / float64(max-min)), truncated to int64
            frac = (out - lo).astype(np.float64) / np.float64(diff)
            return (np.float64(MAX_NODE_SCORE) * frac).astype(np.int64)
        return np.zeros(len(out), dtype=np.int64)

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """The failing required (anti-)affinity terms and the pods behind them, or the existing pods
        whose anti-affinity rejects this one; the changes drop the terms or evict those pods."""
        if not reasons:
            return None
        reason = reasons[0]
        if reason == ERR_REASON_EXISTING_ANTI_AFFINITY:
            return _diag_existing_anti(ctx, pod, nodes)
        state = CycleState(ctx.cluster)
        _, status = self.pre_filter(state, pod)
        s = state.get(PRE_FILTER_STATE_KEY) if status.is_success() else None
        if s is None or reason not in (ERR_REASON_AFFINITY, ERR_REASON_ANTI_AFFINITY):
            return generic(nodes, (reason,), "")
        anti = reason == ERR_REASON_ANTI_AFFINITY
        terms: list[AffinityTerm] = s.required_anti if anti else s.required_affinity
        counts: dict[str, IntArray] = s.anti if anti else s.affinity
        raw_terms = _raw_required(pod, "podAntiAffinity" if anti else "podAffinity")
        special = (not anti) and bool(s.self_match) and not any(bool((v != 0).any()) for v in counts.values())
        c = ctx.cluster
        rows = []
        for t in terms:
            codes = c.label(t.topology_key).codes[nodes]
            present = codes >= 0
            arr = counts.get(t.topology_key)
            hit = (
                np.zeros(len(nodes), dtype=bool)
                if arr is None
                else present & (arr[np.where(present, codes, 0)] > 0)
            )
            if anti:
                rows.append((hit, codes))
            else:
                rows.append((~present | (~hit & (not special)), codes))
        groups: dict[tuple[Any, ...], list[int]] = {}
        for pos in range(len(nodes)):
            sig = tuple((k, int(codes[pos])) for k, (bad, codes) in enumerate(rows) if bad[pos])
            groups.setdefault(sig, []).append(pos)
        label = "podAntiAffinity" if anti else "podAffinity"
        out = []
        for sig, positions in groups.items():
            members = nodes[np.asarray(positions, dtype=np.int64)]
            if not sig:
                out.append(Diagnosis(members, f"no failing {label} term found", {}, None))
                continue
            problems = []
            for k, code in sig:
                t = terms[k]
                sel = format_selector(raw_terms[k].get("labelSelector") if k < len(raw_terms) else None)
                head = f"{label} term {k} (pods {sel}, topologyKey {t.topology_key})"
                if code < 0:
                    problems.append(f"{head}: node has no label {t.topology_key}")
                    continue
                value = c.label(t.topology_key).values[code]
                if anti:
                    who = _matching_pods(ctx, t, t.topology_key, code)
                    problems.append(
                        f"{head}: {len(who)} matching pod(s) in {t.topology_key}={value}: {name_list(who, 5)}"
                    )
                else:
                    arr = counts.get(t.topology_key)
                    anywhere = int(arr.sum()) if arr is not None else 0
                    where = (
                        "no pod matching every podAffinity term runs anywhere"
                        if anywhere == 0
                        else "no pod matching every podAffinity term runs there"
                    )
                    problems.append(f"{head}: {where} ({t.topology_key}={value})")
            drop = tuple(sorted({k for k, _ in sig}))
            patch = PodPatch(drop_anti_terms=drop) if anti else PodPatch(drop_affinity_terms=drop)
            desc = (
                "drop the required "
                + label
                + " term"
                + ("s " if len(drop) > 1 else " ")
                + ", ".join(f"{k} (topologyKey {terms[k].topology_key})" for k in drop)
            )
            change = Change(
                "drop-" + ("anti-affinity" if anti else "affinity") + "-term", "pod", desc, pod=patch
            )
            out.append(Diagnosis(members, "; ".join(problems), {"terms": list(drop)}, change))
            if ctx.top:
                ctx.suggest(change)
                for k in drop:
                    p1 = PodPatch(drop_anti_terms=(k,)) if anti else PodPatch(drop_affinity_terms=(k,))
                    ctx.suggest(Change(
                            change.kind,
                            "pod",
                            f"drop the required {label} term {k} (topologyKey {terms[k].topology_key})",
                            pod=p1,
                        ),
                    )
        return out


def _term_pred(t: AffinityTerm) -> Callable[[str, Mapping[str, str]], bool]:
    return lambda ns, labels: t.matches(ns, labels, None)


def _int32(v: int) -> int:
    """int32 arithmetic wrap-around (weight * multiplier in scoring.go is an int32 product)."""
    return (v + 2**31) % 2**32 - 2**31
