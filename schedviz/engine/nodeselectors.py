"""Node selectors evaluated over many nodes at once.

Mirrors component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go:
- the terms of a NodeSelector are ORed, the requirements of a term ANDed;
- a term without matchExpressions and matchFields is dropped, so a selector whose terms are all
  empty (or that has no terms) matches no node;
- operators In, NotIn, Exists, DoesNotExist, Gt, Lt on labels (Gt/Lt compare base-10 int64s, a
  node label value that does not parse never matches); In/NotIn with exactly one value on fields,
  where a node only has ``metadata.name`` (any other field reads as "");
- a requirement that does not parse (unknown operator, wrong number of values, invalid label key
  or value, Gt/Lt bound that is not an integer) does not raise: for required terms upstream uses a
  "lazy error" selector where such a term simply never matches; preferred terms report the errors
  (NodeAffinity's PreScore turns them into an Error status).

Malformed structure (a term that is not an object, values that are not a list, ...) is bad input
and raises ``InputError`` naming the object and the field path.

Matching is vectorised: a requirement on label ``key`` becomes a lookup table over the values of
``cluster.label(key)`` (one extra slot for "label absent"), indexed with the nodes' value codes.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .apimachinery import is_label_key, is_label_value
from .errors import InputError

if TYPE_CHECKING:
    from .cluster import ClusterState
    from .objects import Pod

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")
NODE_NAME_FIELD = "metadata.name"

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_GO_INT_RE = re.compile(r"[+-]?[0-9]+")

_MASK_CACHE = "nodeselectors.masks"
_INT_CACHE = "nodeselectors.ints"
_MASK_CACHE_LIMIT = 4096
_POD_CACHE_REQUIRED = "nodeselectors.required"
_POD_CACHE_PREFERRED = "nodeselectors.preferred"


# ----- validation helpers (apimachinery validation, used by labels.NewRequirement) -----------------
def parse_go_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64); None when it fails."""
    if not _GO_INT_RE.fullmatch(text):
        return None
    v = int(text)
    if v < _INT64_MIN or v > _INT64_MAX:
        return None
    return v


def label_key_problems(key: str) -> list[str]:
    """Why ``key`` is not a valid label key (content.IsLabelKey); empty when it is."""
    return is_label_key(key)


def label_value_problems(value: str) -> list[str]:
    """Why ``value`` is not a valid label value (content.IsLabelValue); empty when it is."""
    return is_label_value(value)


def go_quote(v: str) -> str:
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _values_json(values: list[str]) -> str:
    return "[" + ",".join(go_quote(v) for v in values) + "]" if values else "null"


# ----- per-cluster derived data ----------------------------------------------------------------------
def _label_ints(cluster: ClusterState, key: str) -> tuple[IntArray, BoolArray]:
    """The label ``key``'s vocabulary parsed as int64 (value, parsed ok), cached per cluster."""
    cache: dict[str, tuple[IntArray, BoolArray]] = cluster.caches.setdefault(_INT_CACHE, {})
    hit = cache.get(key)
    col = cluster.label(key)
    if hit is not None and len(hit[0]) == len(col.values):
        return hit
    ints = np.zeros(len(col.values), dtype=np.int64)
    ok = np.zeros(len(col.values), dtype=bool)
    for code, v in enumerate(col.values):
        parsed = parse_go_int64(v)
        if parsed is not None:
            ints[code] = parsed
            ok[code] = True
    cache[key] = (ints, ok)
    return ints, ok


# ----- requirements ------------------------------------------------------------------------------------
class LabelRequirement:
    """One parsed, valid label requirement (labels.Requirement)."""

    __slots__ = ("bound", "key", "op", "values")

    def __init__(self, key: str, op: str, values: tuple[str, ...]) -> None:
        self.key = key
        self.op = op
        self.values = values
        self.bound = parse_go_int64(values[0]) if op in ("Gt", "Lt") and len(values) == 1 else None

    def signature(self) -> Hashable:
        return ("L", self.key, self.op, tuple(sorted(set(self.values))))

    def table(self, cluster: ClusterState) -> BoolArray:
        """Match per value code of ``cluster.label(key)``; the last slot is "label absent"."""
        col = cluster.label(self.key)
        size = len(col.values)
        op = self.op
        if op == "In":
            t = np.zeros(size + 1, dtype=bool)
            for v in self.values:
                c = col.vocab.get(v)
                if c is not None:
                    t[c] = True
        elif op == "NotIn":
            t = np.ones(size + 1, dtype=bool)
            for v in self.values:
                c = col.vocab.get(v)
                if c is not None:
                    t[c] = False
        elif op == "Exists":
            t = np.ones(size + 1, dtype=bool)
            t[size] = False
        elif op == "DoesNotExist":
            t = np.zeros(size + 1, dtype=bool)
            t[size] = True
        else:  # Gt / Lt: a node value that is not an integer never matches
            ints, ok = _label_ints(cluster, self.key)
            t = np.zeros(size + 1, dtype=bool)
            assert self.bound is not None
            cmp = ints > self.bound if op == "Gt" else ints < self.bound
            t[:size] = ok & cmp
        return t

    def mask(self, cluster: ClusterState, nodes: IntArray | None = None) -> BoolArray:
        codes = cluster.label(self.key).codes
        t = self.table(cluster)
        # code -1 (absent) indexes the last slot of the table
        return t[codes] if nodes is None else t[codes[nodes]]

    def matches_labels(self, labels: dict[str, str]) -> bool:
        v = labels.get(self.key)
        op = self.op
        if op == "In":
            return v is not None and v in self.values
        if op == "NotIn":
            return v is None or v not in self.values
        if op == "Exists":
            return v is not None
        if op == "DoesNotExist":
            return v is None
        if v is None:
            return False
        n = parse_go_int64(v)
        if n is None or self.bound is None:
            return False
        return n > self.bound if op == "Gt" else n < self.bound

    def __repr__(self) -> str:
        return f"{self.key} {self.op} {list(self.values)}"


class FieldRequirement:
    """One parsed field requirement: ``key`` equals (In) or differs from (NotIn) ``value``."""

    __slots__ = ("key", "op", "value")

    def __init__(self, key: str, op: str, value: str) -> None:
        self.key = key
        self.op = op
        self.value = value

    def signature(self) -> Hashable:
        return ("F", self.key, self.op, self.value)

    def mask(self, cluster: ClusterState, nodes: IntArray | None = None) -> BoolArray:
        count = cluster.n if nodes is None else len(nodes)
        if self.key == NODE_NAME_FIELD:
            idx = cluster.index.get(self.value)
            if idx is None:
                eq = np.zeros(count, dtype=bool)
            elif nodes is None:
                eq = np.zeros(count, dtype=bool)
                eq[idx] = True
            else:
                eq = nodes == idx
        else:
            # fields.Set of a node only has metadata.name; any other field reads as ""
            eq = np.full(count, self.value == "", dtype=bool)
        return eq if self.op == "In" else ~eq

    def __repr__(self) -> str:
        return f"{self.key} {self.op} {self.value!r}"


def _str_values(raw: Any, obj: str, field: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError("expected a list", obj=obj, field=field)
    out: list[str] = []
    for i, v in enumerate(raw):
        if isinstance(v, bool) or not isinstance(v, str | int):
            raise InputError(f"expected a string, got {v!r}", obj=obj, field=f"{field}[{i}]")
        out.append(str(v))
    return out


def _requirement_fields(e: Any, obj: str, path: str) -> tuple[str, str, list[str]]:
    if not isinstance(e, dict):
        raise InputError("expected an object", obj=obj, field=path)
    key = e.get("key")
    if key is None:
        key = ""
    if not isinstance(key, str):
        raise InputError(f"expected a string, got {key!r}", obj=obj, field=f"{path}.key")
    op = e.get("operator")
    if op is None:
        op = ""
    if not isinstance(op, str):
        raise InputError(f"expected a string, got {op!r}", obj=obj, field=f"{path}.operator")
    return key, op, _str_values(e.get("values"), obj, f"{path}.values")


def new_requirement_errors(key: str, op: str, values: list[str], path: str = "") -> list[str]:
    """The problems labels.NewRequirement finds in a requirement (``op`` one of In, NotIn, Exists,
    DoesNotExist, Gt, Lt, Equals); ``path`` prefixes the field paths as upstream's PathOption."""
    pre = f"{path}." if path else ""
    errs: list[str] = []
    key_problems = label_key_problems(key)
    if key_problems:
        errs.append(f"{pre}key: Invalid value: {go_quote(key)}: {'; '.join(key_problems)}")
    vpath = f"{pre}values"
    if op in ("In", "NotIn"):
        if not values:
            errs.append(
                f"{vpath}: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
            )
    elif op == "Equals":
        if len(values) != 1:
            errs.append(
                f"{vpath}: Invalid value: {_values_json(values)}: exact-match compatibility requires one single value"
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                f"{vpath}: Invalid value: {_values_json(values)}: "
                "values set must be empty for exists and does not exist"
            )
    else:  # Gt, Lt
        if len(values) != 1:
            errs.append(
                f"{vpath}: Invalid value: {_values_json(values)}: "
                "for 'Gt', 'Lt' operators, exactly one value is required"
            )
        for i, v in enumerate(values):
            if parse_go_int64(v) is None:
                errs.append(
                    f"{vpath}[{i}]: Invalid value: {go_quote(v)}: "
                    "for 'Gt', 'Lt' operators, the value must be an integer"
                )
    for i, v in enumerate(values):
        value_problems = label_value_problems(v)
        if value_problems:
            errs.append(f"{vpath}[{i}][{key}]: Invalid value: {go_quote(v)}: {'; '.join(value_problems)}")
    return errs


def _parse_label_requirement(
    e: Any, obj: str, path: str, epath: str, errs: list[str]
) -> LabelRequirement | None:
    """nodeSelectorRequirementsAsSelector + labels.NewRequirement for one requirement.

    ``path`` locates structural problems (InputError), ``epath`` prefixes the parse errors."""
    key, op, values = _requirement_fields(e, obj, path)
    if op not in LABEL_OPERATORS:
        supported = ", ".join(go_quote(o) for o in LABEL_OPERATORS)
        errs.append(f"{epath}.operator: Unsupported value: {go_quote(op)}: supported values: {supported}")
        return None
    problems = new_requirement_errors(key, op, values, epath)
    if problems:
        errs.extend(problems)
        return None
    return LabelRequirement(key, op, tuple(values))


def _parse_field_requirement(
    e: Any, obj: str, path: str, epath: str, errs: list[str]
) -> FieldRequirement | None:
    """nodeSelectorRequirementsAsFieldSelector for one requirement."""
    key, op, values = _requirement_fields(e, obj, path)
    if op not in FIELD_OPERATORS:
        supported = ", ".join(go_quote(o) for o in FIELD_OPERATORS)
        errs.append(f"{epath}.operator: Unsupported value: {go_quote(op)}: supported values: {supported}")
        return None
    if len(values) != 1:
        errs.append(f"{epath}.values: Invalid value: {_values_json(values)}: must have one element")
        return None
    return FieldRequirement(key, op, values[0])


# ----- terms and selectors --------------------------------------------------------------------------
class NodeSelectorTerm:
    """A parsed v1.NodeSelectorTerm: label requirements AND field requirements.

    ``labels``/``fields`` are None when the term has no matchExpressions/matchFields. A term with
    parse ``errors`` never matches.
    """

    __slots__ = ("errors", "fields", "labels")

    def __init__(
        self,
        labels: list[LabelRequirement] | None,
        fields: list[FieldRequirement] | None,
        errors: list[str],
    ) -> None:
        self.labels = labels
        self.fields = fields
        self.errors = errors

    @staticmethod
    def is_empty_raw(raw: Any) -> bool:
        if raw is None:
            return True
        if not isinstance(raw, dict):
            return False
        return not raw.get("matchExpressions") and not raw.get("matchFields")

    @classmethod
    def parse(
        cls, raw: Any, *, obj: str = "", field: str = "", error_path: str | None = None
    ) -> NodeSelectorTerm:
        """``field`` locates structural problems (InputError); ``error_path`` prefixes parse errors."""
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise InputError("expected a node selector term object", obj=obj, field=field)
        ep = field if error_path is None else error_path
        errs: list[str] = []
        labels: list[LabelRequirement] | None = None
        fields: list[FieldRequirement] | None = None
        exprs = raw.get("matchExpressions")
        if exprs is not None and not isinstance(exprs, list):
            raise InputError("expected a list", obj=obj, field=f"{field}.matchExpressions")
        if exprs:
            labels = []
            for i, e in enumerate(exprs):
                r = _parse_label_requirement(
                    e, obj, f"{field}.matchExpressions[{i}]", f"{ep}.matchExpressions[{i}]", errs
                )
                if r is not None:
                    labels.append(r)
        mfields = raw.get("matchFields")
        if mfields is not None and not isinstance(mfields, list):
            raise InputError("expected a list", obj=obj, field=f"{field}.matchFields")
        if mfields:
            fields = []
            for i, e in enumerate(mfields):
                f = _parse_field_requirement(
                    e, obj, f"{field}.matchFields[{i}]", f"{ep}.matchFields[{i}]", errs
                )
                if f is not None:
                    fields.append(f)
        return cls(labels, fields, errs)

    def signature(self) -> Hashable:
        if self.errors:
            return ("E",)
        return (
            "T",
            None if self.labels is None else tuple(sorted((r.signature() for r in self.labels), key=repr)),
            None if self.fields is None else tuple(sorted((f.signature() for f in self.fields), key=repr)),
        )

    def mask(self, cluster: ClusterState, nodes: IntArray | None = None) -> BoolArray:
        count = cluster.n if nodes is None else len(nodes)
        if self.errors:
            return np.zeros(count, dtype=bool)
        m = np.ones(count, dtype=bool)
        for r in self.labels or ():
            m &= r.mask(cluster, nodes)
        for f in self.fields or ():
            m &= f.mask(cluster, nodes)
        return m

    def __repr__(self) -> str:
        if self.errors:
            return f"NodeSelectorTerm(errors={self.errors!r})"
        return f"NodeSelectorTerm(labels={self.labels!r}, fields={self.fields!r})"


class NodeSelector:
    """A parsed v1.NodeSelector (the lazy-error flavour): terms ORed, empty terms dropped."""

    __slots__ = ("terms",)

    def __init__(self, terms: list[NodeSelectorTerm]) -> None:
        self.terms = terms

    @classmethod
    def parse(cls, raw: Any, *, obj: str = "", field: str = "", error_path: str = "") -> NodeSelector:
        """``field`` locates structural problems; ``error_path`` prefixes parse errors (upstream's
        field.WithPath option: empty for a pod's own selector)."""
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise InputError("expected a node selector object", obj=obj, field=field)
        items = raw.get("nodeSelectorTerms")
        if items is None:
            items = []
        if not isinstance(items, list):
            raise InputError("expected a list", obj=obj, field=f"{field}.nodeSelectorTerms")
        terms: list[NodeSelectorTerm] = []
        for i, t in enumerate(items):
            if NodeSelectorTerm.is_empty_raw(t):
                continue  # nil or empty term selects no objects
            ep = f"{error_path}.nodeSelectorTerms[{i}]" if error_path else f"nodeSelectorTerms[{i}]"
            terms.append(
                NodeSelectorTerm.parse(t, obj=obj, field=f"{field}.nodeSelectorTerms[{i}]", error_path=ep)
            )
        return cls(terms)

    @property
    def errors(self) -> list[str]:
        return [e for t in self.terms for e in t.errors]

    def signature(self) -> Hashable:
        return ("S", tuple(t.signature() for t in self.terms))

    def mask(self, cluster: ClusterState, nodes: IntArray | None = None) -> BoolArray:
        count = cluster.n if nodes is None else len(nodes)
        m = np.zeros(count, dtype=bool)
        for t in self.terms:
            m |= t.mask(cluster, nodes)
        return m


class RequiredNodeAffinity:
    """nodeaffinity.GetRequiredNodeAffinity: spec.nodeSelector AND the required node affinity."""

    __slots__ = ("_signature", "node_selector", "selector")

    def __init__(self, selector: dict[str, str] | None, node_selector: NodeSelector | None) -> None:
        self.selector = selector
        self.node_selector = node_selector
        self._signature: Hashable | None = None

    @classmethod
    def from_pod(cls, pod: Pod) -> RequiredNodeAffinity:
        spec = pod.spec
        ident = pod.ident
        raw_sel = spec.get("nodeSelector")
        selector: dict[str, str] | None = None
        if raw_sel is not None:
            if not isinstance(raw_sel, dict):
                raise InputError("expected an object", obj=ident, field="spec.nodeSelector")
            if raw_sel:
                selector = {}
                for k, v in raw_sel.items():
                    if v is None:
                        v = ""
                    if isinstance(v, bool) or not isinstance(v, str | int):
                        raise InputError(
                            f"expected a string, got {v!r}", obj=ident, field=f"spec.nodeSelector.{k}"
                        )
                    selector[str(k)] = str(v)
        node_aff = _node_affinity(pod)
        ns: NodeSelector | None = None
        req = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution")
        if req is not None:
            ns = NodeSelector.parse(
                req,
                obj=ident,
                field="spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
            )
        return cls(selector, ns)

    def signature(self) -> Hashable:
        if self._signature is None:
            sel = None if self.selector is None else tuple(sorted(self.selector.items()))
            ns = None if self.node_selector is None else self.node_selector.signature()
            self._signature = ("R", sel, ns)
        return self._signature

    def matches_everything(self) -> bool:
        return self.selector is None and self.node_selector is None

    def match(self, cluster: ClusterState, nodes: IntArray | None = None) -> BoolArray:
        """Which of ``nodes`` (all nodes when None) the pod may run on; parse errors ignored."""
        count = cluster.n if nodes is None else len(nodes)
        if self.matches_everything():
            return np.ones(count, dtype=bool)
        m = np.ones(count, dtype=bool)
        for k, v in (self.selector or {}).items():
            m &= cluster.label(k).equals(v) if nodes is None else cluster.label(k).equals(v)[nodes]
        if self.node_selector is not None:
            m &= self.node_selector.mask(cluster, nodes)
        return m

    def match_all(self, cluster: ClusterState) -> BoolArray:
        """``match`` over every node of ``cluster``, cached per distinct selector (read-only array)."""
        cache: dict[Hashable, BoolArray] = cluster.caches.setdefault(_MASK_CACHE, {})
        sig = self.signature()
        m = cache.get(sig)
        if m is None or len(m) != cluster.n:
            if len(cache) >= _MASK_CACHE_LIMIT:
                cache.clear()
            m = self.match(cluster)
            m.setflags(write=False)
            cache[sig] = m
        return m


def _node_affinity(pod: Pod) -> dict[str, Any]:
    spec = pod.spec
    aff = spec.get("affinity")
    if aff is None:
        return {}
    if not isinstance(aff, dict):
        raise InputError("expected an object", obj=pod.ident, field="spec.affinity")
    na = aff.get("nodeAffinity")
    if na is None:
        return {}
    if not isinstance(na, dict):
        raise InputError("expected an object", obj=pod.ident, field="spec.affinity.nodeAffinity")
    return na


def required_node_affinity(pod: Pod) -> RequiredNodeAffinity:
    """The pod's RequiredNodeAffinity, parsed once and kept in ``pod.shared`` (it reads the
    node selector and the affinity only)."""
    r = pod.shared.get(_POD_CACHE_REQUIRED)
    if r is None:
        r = RequiredNodeAffinity.from_pod(pod)
        pod.shared[_POD_CACHE_REQUIRED] = r
    assert isinstance(r, RequiredNodeAffinity)
    return r


def required_node_affinity_mask(pod: Pod, cluster: ClusterState, nodes: IntArray | None = None) -> BoolArray:
    """Which of ``nodes`` (all nodes when None) match the pod's nodeSelector and required node affinity."""
    r = required_node_affinity(pod)
    if r.matches_everything():
        return np.ones(cluster.n if nodes is None else len(nodes), dtype=bool)
    full = r.match_all(cluster)
    return full.copy() if nodes is None else full[nodes]


# ----- preferred terms ------------------------------------------------------------------------------
class PreferredSchedulingTerms:
    """nodeaffinity.PreferredSchedulingTerms: weighted terms; terms with weight 0 or empty are dropped.

    ``errors`` lists the parse errors of the other terms (upstream then refuses the whole list).
    """

    __slots__ = ("errors", "terms")

    def __init__(self, terms: list[tuple[int, NodeSelectorTerm]], errors: list[str]) -> None:
        self.terms = terms
        self.errors = errors

    @classmethod
    def parse(
        cls, raw: Any, *, obj: str = "", field: str = "", error_path: str = ""
    ) -> PreferredSchedulingTerms:
        """``error_path`` prefixes parse errors (upstream: empty for a pod's own terms)."""
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            raise InputError("expected a list", obj=obj, field=field)
        terms: list[tuple[int, NodeSelectorTerm]] = []
        errs: list[str] = []
        for i, item in enumerate(raw):
            path = f"{field}[{i}]"
            if item is None:
                item = {}
            if not isinstance(item, dict):
                raise InputError("expected an object", obj=obj, field=path)
            w = item.get("weight", 0)
            if w is None:
                w = 0
            if isinstance(w, bool) or not isinstance(w, int):
                raise InputError(f"expected an integer, got {w!r}", obj=obj, field=f"{path}.weight")
            if not -(2**31) <= w < 2**31:
                raise InputError(f"weight {w} out of int32 range", obj=obj, field=f"{path}.weight")
            pref = item.get("preference")
            if w == 0 or NodeSelectorTerm.is_empty_raw(pref):
                continue
            # upstream's error paths skip ".preference" ("[0].matchExpressions[0]...")
            term = NodeSelectorTerm.parse(
                pref, obj=obj, field=f"{path}.preference", error_path=f"{error_path}[{i}]"
            )
            if term.errors:
                errs.extend(term.errors)
            else:
                terms.append((w, term))
        return cls(terms, errs)

    def __bool__(self) -> bool:
        return True

    def error_message(self) -> str:
        """The text of upstream's flattened aggregate error."""
        if len(self.errors) == 1:
            return self.errors[0]
        return "[" + ", ".join(self.errors) + "]"

    def score(self, cluster: ClusterState, nodes: IntArray | None = None) -> IntArray:
        """Sum of the weights of the terms each node matches."""
        count = cluster.n if nodes is None else len(nodes)
        out = np.zeros(count, dtype=np.int64)
        for w, t in self.terms:
            out += np.int64(w) * t.mask(cluster, nodes)
        return out


def pod_preferred_terms(pod: Pod) -> PreferredSchedulingTerms | None:
    """The pod's preferred node affinity terms (None when it has none), kept in ``pod.shared``."""
    if _POD_CACHE_PREFERRED in pod.shared:
        r = pod.shared[_POD_CACHE_PREFERRED]
        assert r is None or isinstance(r, PreferredSchedulingTerms)
        return r
    raw = _node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution")
    out = None
    if raw is not None:
        out = PreferredSchedulingTerms.parse(
            raw,
            obj=pod.ident,
            field="spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        )
    pod.shared[_POD_CACHE_PREFERRED] = out
    return out
