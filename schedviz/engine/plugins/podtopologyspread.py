"""PodTopologySpread: spread a pod's replicas evenly over topology domains.

Mirrors pkg/scheduler/framework/plugins/podtopologyspread/ (plugin.go, common.go, filtering.go,
scoring.go) and helper/spread.go (DefaultSelector) of kube-scheduler v1.35.4:

- hard constraints (whenUnsatisfiable DoNotSchedule) are checked by PreFilter/Filter, soft ones
  (ScheduleAnyway) by PreScore/Score/NormalizeScore;
- a pod without constraints of its own gets the plugin's default constraints (the system defaults:
  hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway), with a selector deduced from the
  Services, ReplicationControllers, ReplicaSets and StatefulSets selecting the pod;
- only pods in the incoming pod's namespace, not terminating, count; only nodes holding every
  constraint's topology key, matching the pod's required node affinity (nodeAffinityPolicy Honor,
  the default) and, with nodeTaintsPolicy Honor, tolerating their NoSchedule/NoExecute taints,
  make up the domains.

Counting is vectorised: matching pods are counted per node with one ``np.bincount`` over the pod
groups whose labels the selector matches, then per domain with a second ``np.bincount`` over the
topology label's value codes.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..apimachinery import ErrorList, validate_label_name
from ..budget import uninterruptible
from ..errors import ConfigError, InputError
from ..framework import MAX_NODE_SCORE, Code, CycleState, Handle, PreFilterResult, Status, Verdicts
from ..framework.cycle_state import BARE_NODE_INFOS
from ..framework.diagnosis import Change, Diagnosis, DiagnosisContext, PodPatch, generic
from ..labels import LabelSelector, Requirement
from ..nodeselectors import label_key_problems, required_node_affinity_mask
from ..objects import KubeObject, Pod
from ..plugin_args import list_of, map_of, obj
from ..taints import COMPARISON_OPERATORS_GATE, DO_NOT_SCHEDULE, untolerated_mask

if TYPE_CHECKING:
    from ..cluster import ClusterState, ObjectStore

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

NAME = "PodTopologySpread"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

# plugin.go
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"

DO_NOT_SCHEDULE_ACTION = "DoNotSchedule"
SCHEDULE_ANYWAY_ACTION = "ScheduleAnyway"
ACTIONS = (DO_NOT_SCHEDULE_ACTION, SCHEDULE_ANYWAY_ACTION)
HONOR = "Honor"
IGNORE = "Ignore"
POLICIES = (HONOR, IGNORE)

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

MATCH_LABEL_KEYS_GATE = "MatchLabelKeysInPodTopologySpread"  # beta, on by default in v1.35

_INDEX_CACHE = NAME + ".pods"
_COUNTS_CACHE = NAME + ".counts"


# ----- constraints ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ConstraintSpec:
    """A validated v1.TopologySpreadConstraint, as written in a pod spec or in the plugin args."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector  # a nil labelSelector is the selector matching nothing
    match_label_keys: tuple[str, ...] = ()
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None


@dataclass(frozen=True)
class Constraint:
    """common.go topologySpreadConstraint: a constraint with its selector resolved and defaults set."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int
    honor_node_affinity: bool
    honor_node_taints: bool


# plugin.go systemDefaultConstraints (hostname first, then zone)
SYSTEM_DEFAULT_CONSTRAINTS: tuple[ConstraintSpec, ...] = (
    ConstraintSpec(3, LABEL_HOSTNAME, SCHEDULE_ANYWAY_ACTION, LabelSelector([], nothing=True)),
    ConstraintSpec(5, LABEL_TOPOLOGY_ZONE, SCHEDULE_ANYWAY_ACTION, LabelSelector([], nothing=True)),
)


def _int_field(value: object, obj: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"must be an integer, got {value!r}", obj=obj, field=field)
    return value


def parse_constraints(raw: object, obj: str, field: str, *, defaults: bool = False) -> list[ConstraintSpec]:
    """Validate a list of topology spread constraints.

    Pods: the API server's rules (pkg/apis/core/validation validateTopologySpreadConstraints) for
    the fields the scheduler reads. ``defaults``: the plugin args' rules
    (apis/config/validation ValidatePodTopologySpreadArgs), which also forbid a labelSelector.
    """
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError("expected a list", obj=obj, field=field)
    out: list[ConstraintSpec] = []
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(raw):
        f = f"{field}[{i}]"
        if not isinstance(c, dict):
            raise InputError("expected an object", obj=obj, field=f)
        max_skew = _int_field(c.get("maxSkew", 0), obj, f"{f}.maxSkew")
        if max_skew <= 0:
            raise InputError(f"{max_skew}: must be greater than zero", obj=obj, field=f"{f}.maxSkew")
        key = c.get("topologyKey")
        if not isinstance(key, str) or not key:
            raise InputError("can not be empty", obj=obj, field=f"{f}.topologyKey")
        problems = label_key_problems(key)
        if problems:
            raise InputError(f"{key!r}: {'; '.join(problems)}", obj=obj, field=f"{f}.topologyKey")
        when = c.get("whenUnsatisfiable")
        if not when:
            raise InputError("can not be empty", obj=obj, field=f"{f}.whenUnsatisfiable")
        if when not in ACTIONS:
            raise InputError(
                f'Unsupported value: {when!r}: supported values: "DoNotSchedule", "ScheduleAnyway"',
                obj=obj,
                field=f"{f}.whenUnsatisfiable",
            )
        pair = (key, str(when))
        if pair in seen:
            raise InputError(f"Duplicate value: {{{key}, {when}}}", obj=obj, field=f)
        seen.add(pair)
        raw_sel = c.get("labelSelector")
        if defaults and raw_sel is not None:
            raise InputError(
                "constraint must not define a selector, as they deduced for each pod",
                obj=obj,
                field=f"{f}.labelSelector",
            )
        selector = LabelSelector.parse(raw_sel, obj=obj, field=f"{f}.labelSelector")
        mlk_raw = c.get("matchLabelKeys")
        if mlk_raw is not None and not isinstance(mlk_raw, list):
            raise InputError("expected a list", obj=obj, field=f"{f}.matchLabelKeys")
        mlk: list[str] = []
        for j, k in enumerate(mlk_raw or []):
            if not isinstance(k, str) or not k:
                raise InputError("must be a non-empty string", obj=obj, field=f"{f}.matchLabelKeys[{j}]")
            mlk.append(k)
        min_domains: int | None = None
        if c.get("minDomains") is not None:
            min_domains = _int_field(c.get("minDomains"), obj, f"{f}.minDomains")
            if min_domains <= 0:
                raise InputError(f"{min_domains}: must be greater than 0", obj=obj, field=f"{f}.minDomains")
            if when != DO_NOT_SCHEDULE_ACTION:
                raise InputError(
                    f"{min_domains}: can only use minDomains if whenUnsatisfiable=DoNotSchedule",
                    obj=obj,
                    field=f"{f}.minDomains",
                )
        policies: list[str | None] = []
        for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            p = c.get(name)
            if p is not None and p not in POLICIES:
                raise InputError(
                    f'Unsupported value: {p!r}: supported values: "Honor", "Ignore"',
                    obj=obj,
                    field=f"{f}.{name}",
                )
            policies.append(p)
        out.append(
            ConstraintSpec(
                max_skew, key, str(when), selector, tuple(mlk), min_domains, policies[0], policies[1]
            )
        )
    return out


def merge_label_set_with_selector(match_labels: dict[str, str], selector: LabelSelector) -> LabelSelector:
    """common.go mergeLabelSetWithSelector: the pod's values of matchLabelKeys ANDed with the
    selector; a nil (match-nothing) selector has no requirements to merge and stays as it is."""
    if selector.nothing:
        return selector
    return LabelSelector([*LabelSelector.from_labels(match_labels).requirements, *selector.requirements])


def resolve_constraints(
    specs: Sequence[ConstraintSpec], pod_labels: dict[str, str], action: str, match_label_keys: bool = True
) -> list[Constraint]:
    """common.go filterTopologySpreadConstraints: the constraints with ``action``, in order."""
    out: list[Constraint] = []
    for s in specs:
        if s.when_unsatisfiable != action:
            continue
        selector = s.label_selector
        if match_label_keys and s.match_label_keys:
            labels = {k: pod_labels[k] for k in s.match_label_keys if k in pod_labels}
            if labels:
                selector = merge_label_set_with_selector(labels, selector)
        out.append(
            Constraint(
                max_skew=s.max_skew,
                topology_key=s.topology_key,
                selector=selector,
                min_domains=1 if s.min_domains is None else s.min_domains,
                honor_node_affinity=(s.node_affinity_policy or HONOR) == HONOR,
                honor_node_taints=(s.node_taints_policy or IGNORE) == HONOR,
            )
        )
    return out


# ----- helper/spread.go DefaultSelector ------------------------------------------------------------
def _str_map(raw: object) -> dict[str, str]:
    if not isinstance(raw, dict):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in raw.items()}


def _controller_ref(pod: Pod) -> dict[str, Any] | None:
    """metav1.GetControllerOfNoCopy: the first owner reference with controller: true."""
    for ref in pod.meta.owner_refs:
        if ref.get("controller") is True:
            return ref
    return None


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """schema.ParseGroupVersion: "" and "v1" have no group; more than one "/" is an error."""
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", api_version
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def _selector_requirements(obj: KubeObject) -> list[Requirement] | None:
    """LabelSelectorAsSelector(spec.selector).Requirements(): None when it fails or selects nothing."""
    try:
        sel = LabelSelector.parse(obj.spec.get("selector"), obj=obj.ident, field="spec.selector")
    except InputError:
        return None
    if sel.nothing:
        return None
    return sel.requirements


def default_selector(pod: Pod, objects: ObjectStore) -> LabelSelector:
    """helper/spread.go DefaultSelector: the selectors of the Services selecting the pod, merged with
    the selector of the ReplicationController, ReplicaSet or StatefulSet controlling it.

    It reads the pod's namespace, labels and controller reference only: the pods of a template
    share the answer (kept in ``objects.memo``)."""
    owner = _controller_ref(pod)
    key = (
        NAME + ".default_selector",
        pod.namespace,
        frozenset(pod.labels.items()),
        None if owner is None else tuple(str(owner.get(f) or "") for f in ("apiVersion", "kind", "name")),
    )
    hit = objects.memo.get(key)
    if hit is None:
        hit = objects.memo[key] = _default_selector(pod, objects)
    assert isinstance(hit, LabelSelector)
    return hit


def _services_by_namespace(objects: ObjectStore) -> dict[str, list[KubeObject]]:
    key = NAME + ".services"
    got = objects.memo.get(key)
    if got is None:
        got = {}
        for svc in objects.of_kind("Service"):
            got.setdefault(svc.namespace, []).append(svc)
        objects.memo[key] = got
    assert isinstance(got, dict)
    return got


def _default_selector(pod: Pod, objects: ObjectStore) -> LabelSelector:
    label_set: dict[str, str] = {}
    for svc in _services_by_namespace(objects).get(pod.namespace, ()):
        raw = svc.spec.get("selector")
        # Services with a nil selector match nothing (an empty one adds nothing either).
        if not isinstance(raw, dict) or not raw:
            continue
        sel = _str_map(raw)
        if all(pod.labels.get(k) == v for k, v in sel.items()):
            label_set.update(sel)
    selector = LabelSelector.from_labels(label_set)
    owner = _controller_ref(pod)
    if owner is None:
        return selector
    gv = _parse_group_version(str(owner.get("apiVersion") or ""))
    if gv is None:
        return selector
    gvk = (gv[0], gv[1], str(owner.get("kind") or ""))
    name = str(owner.get("name") or "")
    if gvk == ("", "v1", "ReplicationController"):
        rc = objects.get("ReplicationController", f"{pod.namespace}/{name}")
        if rc is not None:
            label_set.update(_str_map(rc.spec.get("selector")))
            selector = LabelSelector.from_labels(label_set)
    elif gvk in (("apps", "v1", "ReplicaSet"), ("apps", "v1", "StatefulSet")):
        owner_obj = objects.get(gvk[2], f"{pod.namespace}/{name}")
        if owner_obj is not None:
            reqs = _selector_requirements(owner_obj)
            if reqs is not None:
                selector = selector.add(*reqs)
    return selector


# ----- counting matching pods -------------------------------------------------------------------------
def _selector_key(selector: LabelSelector) -> Hashable:
    return (
        selector.nothing,
        tuple((r.key, r.op, tuple(sorted(r.values))) for r in selector.requirements),
    )


class _PodIndex:
    """Every assigned pod as a slot of flat arrays (node, counted, namespace code, label value codes
    per label key), following ``cluster.changes``, so a selector is evaluated over all pods with a
    few vectorised comparisons rather than a Python loop over pods or pod groups.

    A slot is "counted" while its pod is assigned and has no deletionTimestamp
    (common.go countPodsMatchSelector bypasses terminating pods, #87621).
    """

    def __init__(self, cluster: ClusterState) -> None:
        self.n = cluster.n
        self.size = 0
        cap = 64
        self.node = np.zeros(cap, dtype=np.int64)
        self.counted = np.zeros(cap, dtype=bool)
        self.alive = np.zeros(cap, dtype=bool)  # no deletionTimestamp: counted until removed
        self.ns = np.zeros(cap, dtype=np.int32)
        # per change of ``cluster.changes`` taken so far: the slot it added or removed (-1: a
        # removal of a pod the index never held) and its sign
        self.change_slot = np.zeros(cap, dtype=np.int64)
        self.change_sign = np.zeros(cap, dtype=np.int64)
        self.labels: list[dict[str, str]] = []
        self.slot_of: dict[str, int] = {}
        self.ns_codes: dict[str, int] = {}
        self.columns: dict[str, tuple[npt.NDArray[np.int32], dict[str, int]]] = {}
        # per label key: the slots sorted by its value code, up to the size they were sorted at
        self.postings: dict[str, _Postings] = {}
        self.pos = 0
        self.sync(cluster)

    def _grow(self) -> None:
        cap = 2 * len(self.node)
        self.node = np.resize(self.node, cap)
        self.counted = np.resize(self.counted, cap)
        self.alive = np.resize(self.alive, cap)
        self.ns = np.resize(self.ns, cap)
        for key, (codes, vocab) in self.columns.items():
            self.columns[key] = (np.resize(codes, cap), vocab)

    def _log(self, pos: int, slots: IntArray | list[int], sign: int) -> None:
        """Record that the changes from ``pos`` on concern ``slots`` (one each), with ``sign``."""
        end = pos + len(slots)
        if end > len(self.change_slot):
            cap = max(end, 2 * len(self.change_slot))
            self.change_slot = np.resize(self.change_slot, cap)
            self.change_sign = np.resize(self.change_sign, cap)
        self.change_slot[pos:end] = slots
        self.change_sign[pos:end] = sign

    def _add(self, pod: Pod, node: int) -> None:
        if self.size == len(self.node):
            self._grow()
        k = self.size
        self.size += 1
        self.node[k] = node
        self.counted[k] = self.alive[k] = pod.meta.deletion is None
        self.ns[k] = self.ns_codes.setdefault(pod.namespace, len(self.ns_codes))
        self.labels.append(pod.labels)
        self.slot_of[pod.uid] = k
        for key, (codes, vocab) in self.columns.items():
            v = pod.labels.get(key)
            codes[k] = -1 if v is None else vocab.setdefault(v, len(vocab))

    def _remove(self, pod: Pod) -> int:
        k = self.slot_of.pop(pod.uid, None)
        if k is None:
            return -1
        self.counted[k] = False
        return k

    def sync(self, cluster: ClusterState) -> None:
        changes = cluster.changes
        if self.pos >= len(changes):
            return
        with uninterruptible():  # the index and pos move together (engine/budget.py)
            pos = self.pos
            todo = changes[pos:]
            start = 0
            for i in [i for i, change in enumerate(todo) if change[0] < 0]:
                k0 = self.size
                self._add_many(todo[start:i])
                self._log(pos + start, np.arange(k0, self.size, dtype=np.int64), 1)
                self._log(pos + i, [self._remove(todo[i][1])], -1)
                start = i + 1
            k0 = self.size
            self._add_many(todo[start:])
            self._log(pos + start, np.arange(k0, self.size, dtype=np.int64), 1)
            self.pos = len(changes)

    def _add_many(self, added: list[tuple[int, Pod, int]]) -> None:
        """``_add`` of each pod of a run of additions (``cluster.changes``), the arrays written at
        once (the first sync adds every assigned pod of the snapshot)."""
        if len(added) < 8:
            for _, pod, node in added:
                self._add(pod, node)
            return
        k0 = self.size
        k1 = k0 + len(added)
        while k1 > len(self.node):
            self._grow()
        pods = [pod for _, pod, _ in added]
        self.node[k0:k1] = [node for _, _, node in added]
        self.counted[k0:k1] = [pod.meta.deletion is None for pod in pods]
        self.alive[k0:k1] = self.counted[k0:k1]
        ns_codes = self.ns_codes
        self.ns[k0:k1] = [ns_codes.setdefault(pod.namespace, len(ns_codes)) for pod in pods]
        labels = [pod.labels for pod in pods]
        self.labels.extend(labels)
        slot_of = self.slot_of
        for k, pod in enumerate(pods, k0):
            slot_of[pod.uid] = k
        for key, (codes, vocab) in self.columns.items():
            codes[k0:k1] = [
                -1 if (v := lab.get(key)) is None else vocab.setdefault(v, len(vocab)) for lab in labels
            ]
        self.size = k1

    def column(self, key: str) -> tuple[npt.NDArray[np.int32], dict[str, int]]:
        col = self.columns.get(key)
        if col is None:
            vocab: dict[str, int] = {}
            codes = np.full(len(self.node), -1, dtype=np.int32)
            codes[: len(self.labels)] = [
                -1 if (v := labels.get(key)) is None else vocab.setdefault(v, len(vocab)) for labels in self.labels
            ]
            col = (codes, vocab)
            self.columns[key] = col
        return col

    def _matching(self, m: BoolArray, selector: LabelSelector, at: slice | IntArray) -> BoolArray:
        """``m`` (a mask over the slots ``at``) narrowed to the slots whose labels ``selector``
        (with requirements) matches."""
        for r in selector.requirements:
            if not m.any():
                break
            codes, vocab = self.column(r.key)
            c = codes[at]
            if r.op in ("In", "NotIn"):
                wanted = [vocab[v] for v in r.values if v in vocab]
                if len(wanted) == 1:  # a matchLabels entry: one comparison, not a set lookup
                    hit = c == wanted[0]
                elif wanted:
                    hit = np.isin(c, np.asarray(wanted, dtype=np.int32))
                else:
                    hit = np.zeros(len(c), dtype=bool)
                m &= hit if r.op == "In" else ~hit
            elif r.op == "Exists":
                m &= c >= 0
            else:  # DoesNotExist
                m &= c < 0
        return m

    def per_node(self, namespace: str, selector: LabelSelector) -> IntArray:
        """Matching counted pods of ``namespace`` per node; ``selector`` has requirements. When one
        of them asks a label for one value (a matchLabels entry), only the slots holding that value
        are looked at (``slots_with``: the fewest such, when several do); else every slot."""
        size = self.size
        ns = self.ns_codes.get(namespace)
        if ns is None or size == 0:
            return np.zeros(self.n, dtype=np.int64)
        at: IntArray | None = None
        for r in selector.requirements:
            if r.op != "In" or len(r.values) != 1:
                continue
            (value,) = r.values
            code = self.column(r.key)[1].get(value)
            if code is None:  # no pod has the value
                return np.zeros(self.n, dtype=np.int64)
            slots = self.slots_with(r.key, code)
            if at is None or len(slots) < len(at):
                at = slots
        if at is None:
            return self.scan_per_node(namespace, selector)
        m = self._matching(self.counted[at] & (self.ns[at] == ns), selector, at)
        return np.bincount(self.node[at[m]], minlength=self.n).astype(np.int64)

    def scan_per_node(self, namespace: str, selector: LabelSelector) -> IntArray:
        """``per_node`` evaluated over every slot."""
        size = self.size
        ns = self.ns_codes.get(namespace)
        if ns is None or size == 0:
            return np.zeros(self.n, dtype=np.int64)
        m = self._matching(self.counted[:size] & (self.ns[:size] == ns), selector, slice(0, size))
        return np.bincount(self.node[:size][m], minlength=self.n).astype(np.int64)

    def slots_with(self, key: str, code: int) -> IntArray:
        """The slots whose pod's label ``key`` has the value coded ``code`` (removed pods' too): a
        range of the slots sorted by that label, plus the slots added since they were sorted. They
        are sorted again once the unsorted ones are more than an eighth of them."""
        codes = self.column(key)[0]
        post = self.postings.get(key)
        size = self.size
        if post is None or size - post.size > max(_POSTINGS_TAIL, size >> 3):
            post = self.postings[key] = _Postings(codes[:size])
        # the values in the codes' own type: searching an int32 array for Python ints would convert
        # the whole array first
        lo, hi = post.codes.searchsorted(np.asarray((code, code + 1), dtype=post.codes.dtype)).tolist()
        head = post.order[lo:hi]
        if post.size == size:
            return head
        tail = np.flatnonzero(codes[post.size : size] == code)
        return np.concatenate((head, tail + post.size))

    def delta(self, namespace: str, selector: LabelSelector, start: int) -> IntArray | None:
        """The change in ``per_node`` that the changes from ``start`` to ``pos`` made: each added
        or removed pod that is of ``namespace``, not terminating and matched counts +1 or -1 on its
        node. None when one of them removed a pod the index never held."""
        slots = self.change_slot[start : self.pos]
        if (slots < 0).any():
            return None
        out = np.zeros(self.n, dtype=np.int64)
        ns = self.ns_codes.get(namespace)
        if ns is None or not len(slots):
            return out
        m = self._matching(self.alive[slots] & (self.ns[slots] == ns), selector, slots)
        if m.any():
            np.add.at(out, self.node[slots[m]], self.change_sign[start : self.pos][m])
        return out


class _Postings:
    """The slots of a ``_PodIndex`` sorted by one label's value codes (``_PodIndex.slots_with``)."""

    __slots__ = ("codes", "order", "size")

    def __init__(self, codes: npt.NDArray[np.int32]) -> None:
        self.size = len(codes)
        self.order: IntArray = np.argsort(codes, kind="stable").astype(np.int64)
        self.codes = codes[self.order]


# slots added since a label's postings were sorted that are scanned rather than sorted again
_POSTINGS_TAIL = 4096


class _Counts:
    """Matching pods per node for one (namespace, selector), kept current through cluster.changes."""

    __slots__ = ("counts", "namespace", "pos", "selector")

    def __init__(self, index: _PodIndex, namespace: str, selector: LabelSelector, pos: int) -> None:
        self.namespace = namespace
        self.selector = selector
        self.counts = index.per_node(namespace, selector)
        self.counts.setflags(write=False)
        self.pos = pos

    def sync(self, cluster: ClusterState, index: _PodIndex | None = None) -> IntArray:
        """The counts as of ``cluster.changes``' end. A long run of changes since the last call
        (the pods of other templates placed meanwhile) is taken from ``index`` (synced to the same
        cluster) with a few array operations; a short one pod by pod."""
        changes = cluster.changes
        if index is not None and len(changes) - self.pos > _DELTA_FROM_INDEX:
            index.sync(cluster)
            delta = index.delta(self.namespace, self.selector, self.pos)
            if delta is not None:
                with uninterruptible():
                    if delta.any():
                        caught_up = self.counts + delta
                        caught_up.setflags(write=False)
                        self.counts = caught_up
                    self.pos = len(changes)
                return self.counts
        if self.pos < len(changes):
            counts: IntArray | None = None
            for sign, pod, node in changes[self.pos :]:
                if (
                    pod.namespace == self.namespace
                    and pod.meta.deletion is None
                    and self.selector.matches(pod.labels)
                ):
                    if counts is None:
                        counts = self.counts.copy()
                    counts[node] += sign
            with uninterruptible():  # a copy was counted: the counts and pos change together
                if counts is not None:
                    counts.setflags(write=False)
                    self.counts = counts
                self.pos = len(changes)
        return self.counts


_COUNTS_LIMIT = 4096
# changes since a selector's last count past which its counts are caught up from the index's
# arrays rather than pod by pod
_DELTA_FROM_INDEX = 16


def matching_pods_per_node(cluster: ClusterState, namespace: str, selector: LabelSelector) -> IntArray:
    """common.go countPodsMatchSelector for every node at once (a read-only array): the assigned,
    non-terminating pods of ``namespace`` whose labels ``selector`` matches. An empty selector
    counts nothing, as upstream's ``selector.Empty()`` check does."""
    if selector.nothing or not selector.requirements:
        return np.zeros(cluster.n, dtype=np.int64)
    index = cluster.caches.get(_INDEX_CACHE)
    if not isinstance(index, _PodIndex) or index.n != cluster.n or index.pos > len(cluster.changes):
        index = _PodIndex(cluster)
        cluster.caches[_INDEX_CACHE] = index
        cluster.caches[_COUNTS_CACHE] = {}
    memo: dict[Hashable, _Counts] = cluster.caches.setdefault(_COUNTS_CACHE, {})
    key = (namespace, _selector_key(selector))
    entry = memo.get(key)
    if entry is None or entry.pos > len(cluster.changes):
        if len(memo) >= _COUNTS_LIMIT:
            memo.clear()
        index.sync(cluster)
        entry = _Counts(index, namespace, selector, index.pos)
        memo[key] = entry
    return entry.sync(cluster, index)


# ----- arithmetic --------------------------------------------------------------------------------------
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_L1 = 6.666666666666735130e-01
_L2 = 3.999999999940941908e-01
_L3 = 2.857142874366239149e-01
_L4 = 2.222219843214978396e-01
_L5 = 1.818357216161805012e-01
_L6 = 1.531383769920937332e-01
_L7 = 1.479819860511658591e-01


def go_log(x: float) -> float:
    """Go's math.Log for a finite x > 0, bit for bit (the FreeBSD e_log.c algorithm that Go uses,
    in pure Go and in its amd64 assembly); C's log differs from it in the last bit for some
    integers (log(3) among them)."""
    f1, ki = math.frexp(x)
    if f1 < math.sqrt(2) / 2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def topology_normalizing_weight(size: int) -> float:
    """scoring.go topologyNormalizingWeight: log(size + 2)."""
    return go_log(float(size + 2))


def go_round(x: FloatArray) -> IntArray:
    """int64(math.Round(x)): halves round away from zero."""
    a: FloatArray = np.abs(x)
    t: FloatArray = np.trunc(a)
    r: FloatArray = t + (a - t >= 0.5)
    out: IntArray = (np.sign(x) * r).astype(np.int64)
    return out


# ----- cycle state -----------------------------------------------------------------------------------
@dataclass
class _HardEntry:
    constraint: Constraint
    codes: npt.NDArray[np.int32]  # the topology label's value code per node (-1: absent)
    counts: IntArray  # matching pods per domain (value code)
    domains: BoolArray  # the domains in TpValueToMatchNum
    values: list[str]  # value code -> topology value
    self_match: int
    min_match: int = 0

    def refresh_min(self) -> None:
        """filtering.go minMatchNum: the smallest domain count, or 0 with fewer domains than minDomains."""
        n = int(self.domains.sum())
        if n < self.constraint.min_domains:
            self.min_match = 0
        else:
            self.min_match = int(self.counts[self.domains].min())

    def clone(self) -> _HardEntry:
        return _HardEntry(
            self.constraint,
            self.codes,
            self.counts.copy(),
            self.domains.copy(),
            self.values,
            self.self_match,
            self.min_match,
        )


@dataclass
class PreFilterState:
    """filtering.go preFilterState."""

    entries: list[_HardEntry]

    def clone(self) -> PreFilterState:
        return PreFilterState([e.clone() for e in self.entries])

    def match_counts(self) -> list[dict[str, int]]:
        """TpValueToMatchNum, by topology value (for traces and tests)."""
        return [{e.values[v]: int(e.counts[v]) for v in np.flatnonzero(e.domains)} for e in self.entries]

    def min_matches(self) -> list[int]:
        """The global minimum per constraint, minDomains applied (for traces and tests)."""
        return [e.min_match for e in self.entries]


@dataclass
class _SoftEntry:
    constraint: Constraint
    codes: npt.NDArray[np.int32]
    per_node: IntArray  # matching pods per node (hostname constraints)
    domain_of: IntArray | None  # per node: domain slot, absent label sharing the "" slot
    counts: IntArray | None  # matching pods per domain slot (non-hostname constraints)
    registered: BoolArray | None  # domain slots of the scored nodes (TopologyValueToPodCounts keys)
    weight: float


@dataclass
class PreScoreState:
    """scoring.go preScoreState."""

    entries: list[_SoftEntry]
    ignored: BoolArray  # per node of the cluster: filtered nodes missing a topology key

    def clone(self) -> PreScoreState:
        return self


@dataclass
class _PodSpread:
    owner: int
    objects: int
    has_own: bool
    hard: list[Constraint]
    soft: list[Constraint]


# ----- the plugin --------------------------------------------------------------------------------------
# ----- args (kube-scheduler/config/v1 types_pluginargs.go PodTopologySpreadArgs, v1/defaults.go,
# apis/config/validation/validation_pluginargs.go ValidatePodTopologySpreadArgs)

_LABEL_SELECTOR = obj(
    "v1.LabelSelector",
    matchLabels=map_of("str"),
    matchExpressions=list_of(
        obj("v1.LabelSelectorRequirement", key="str", operator="str", values=list_of("str"))
    ),
)
_TOPOLOGY_SPREAD_CONSTRAINT = obj(
    "v1.TopologySpreadConstraint",
    maxSkew="int32",
    topologyKey="str",
    whenUnsatisfiable="str",
    labelSelector=_LABEL_SELECTOR,
    minDomains="int32",
    nodeAffinityPolicy="str",
    nodeTaintsPolicy="str",
    matchLabelKeys=list_of("str"),
)
ARGS_TYPE = obj(
    "v1.PodTopologySpreadArgs",
    defaultConstraints=list_of(_TOPOLOGY_SPREAD_CONSTRAINT),
    defaultingType="str",
)


def default_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> dict[str, Any]:
    return {
        "defaultConstraints": a.get("defaultConstraints", []),
        "defaultingType": a.get("defaultingType") or "System",
    }


def validate_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> list[str]:
    errs = ErrorList()
    constraints: list[dict[str, Any]] = a["defaultConstraints"]
    dtype = a["defaultingType"]
    if dtype not in ("System", "List"):
        errs.not_supported("defaultingType", dtype, ["System", "List"])
    elif dtype == "System" and constraints:
        errs.invalid("defaultingType", dtype, "when .defaultConstraints are not empty")
    cpath = "defaultConstraints"
    for i, c in enumerate(constraints):
        p = f"{cpath}[{i}]"
        skew = c.get("maxSkew", 0)
        if skew <= 0:
            errs.invalid(f"{p}.maxSkew", skew, "not in valid range (0, inf)")
        key = c.get("topologyKey", "")
        if not key:
            errs.required(f"{p}.topologyKey", "can not be empty")
        else:
            validate_label_name(key, f"{p}.topologyKey", errs)
        action = c.get("whenUnsatisfiable", "")
        if not action:
            errs.required(f"{p}.whenUnsatisfiable", "can not be empty")
        elif action not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.not_supported(f"{p}.whenUnsatisfiable", action, ["DoNotSchedule", "ScheduleAnyway"])
        if "labelSelector" in c:
            errs.forbidden(
                f"{p}.labelSelector", "constraint must not define a selector, as they deduced for each pod"
            )
        for other in constraints[:i]:
            if other.get("topologyKey", "") == key and other.get("whenUnsatisfiable", "") == action:
                errs.duplicate(p, f"{{{key}, {action}}}")
                break
    return errs.items


class PodTopologySpread:
    """PreFilter, Filter, PreScore, Score and NormalizeScore of upstream's PodTopologySpread."""

    name = NAME
    # args: declared here, decoded, defaulted and validated by the configuration (config/)
    args_type = ARGS_TYPE
    default_args = staticmethod(default_args)
    validate_args = staticmethod(validate_args)

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        defaulting = args.get("defaultingType") or SYSTEM_DEFAULTING
        raw_defaults = args.get("defaultConstraints") or []
        if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            raise ConfigError(
                [f'defaultingType: Unsupported value: "{defaulting}": supported values: "List", "System"']
            )
        if defaulting == SYSTEM_DEFAULTING and raw_defaults:
            raise ConfigError(
                ['defaultingType: Invalid value: "System": when .defaultConstraints are not empty']
            )
        self.system_defaulted = defaulting == SYSTEM_DEFAULTING
        if self.system_defaulted:
            self.default_constraints: list[ConstraintSpec] = list(SYSTEM_DEFAULT_CONSTRAINTS)
        else:
            try:
                self.default_constraints = parse_constraints(
                    raw_defaults, "PodTopologySpreadArgs", "defaultConstraints", defaults=True
                )
            except InputError as e:
                raise ConfigError([f"{e.field}: {e.problem}"]) from None
        self.match_label_keys: bool = handle.features.get(MATCH_LABEL_KEYS_GATE, True)
        self.comparison_ops: bool = handle.feature(COMPARISON_OPERATORS_GATE)

    # ----- constraints of a pod ------------------------------------------------------------------
    def constraints(self, pod: Pod, objects: ObjectStore) -> _PodSpread:
        """The pod's hard and soft constraints (plugin.go getConstraints, scoring.go
        initPreScoreState): its own when it has any, else the defaults with DefaultSelector."""
        cached = pod.cache.get(NAME)
        if isinstance(cached, _PodSpread) and cached.owner == id(self) and cached.objects == id(objects):
            return cached
        specs = parse_constraints(
            pod.spec.get("topologySpreadConstraints"), pod.ident, "spec.topologySpreadConstraints"
        )
        if specs:
            hard = resolve_constraints(specs, pod.labels, DO_NOT_SCHEDULE_ACTION, self.match_label_keys)
            soft = resolve_constraints(specs, pod.labels, SCHEDULE_ANYWAY_ACTION, self.match_label_keys)
        else:
            hard = self._default_constraints(pod, objects, DO_NOT_SCHEDULE_ACTION)
            soft = self._default_constraints(pod, objects, SCHEDULE_ANYWAY_ACTION)
        spread = _PodSpread(id(self), id(objects), bool(specs), hard, soft)
        pod.cache[NAME] = spread
        return spread

    def _default_constraints(self, pod: Pod, objects: ObjectStore, action: str) -> list[Constraint]:
        """common.go buildDefaultConstraints."""
        constraints = resolve_constraints(self.default_constraints, pod.labels, action, self.match_label_keys)
        if not constraints:
            return []
        selector = default_selector(pod, objects)
        if not selector.requirements:
            return []
        return [
            Constraint(
                c.max_skew,
                c.topology_key,
                selector,
                c.min_domains,
                c.honor_node_affinity,
                c.honor_node_taints,
            )
            for c in constraints
        ]

    # ----- node inclusion policies ---------------------------------------------------------------
    def _inclusion_masks(
        self,
        cluster: ClusterState,
        pod: Pod,
        constraints: Sequence[Constraint],
        nodes: IntArray | None = None,
    ) -> tuple[BoolArray | None, BoolArray | None]:
        """common.go matchNodeInclusionPolicies, as masks over ``nodes`` (all nodes when None):
        the required node affinity match and the absence of untolerated NoSchedule/NoExecute taints."""
        affinity: BoolArray | None = None
        tolerated: BoolArray | None = None
        if any(c.honor_node_affinity for c in constraints):
            affinity = required_node_affinity_mask(pod, cluster, nodes)
        if any(c.honor_node_taints for c in constraints):
            idx = np.arange(cluster.n, dtype=np.int64) if nodes is None else nodes
            tolerated = ~untolerated_mask(
                cluster, idx, pod, DO_NOT_SCHEDULE, comparison_ops=self.comparison_ops
            )
        return affinity, tolerated

    @staticmethod
    def _keys_present(cluster: ClusterState, constraints: Sequence[Constraint]) -> BoolArray:
        """common.go nodeLabelsMatchSpreadConstraints over all nodes."""
        ok = np.ones(cluster.n, dtype=bool)
        for key in {c.topology_key for c in constraints}:
            ok &= cluster.label(key).present
        return ok

    # ----- PreFilter / Filter --------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        """filtering.go PreFilter/calPreFilterState over every node of the snapshot."""
        cluster = state.cluster
        hard = self.constraints(pod, cluster.objects).hard
        if not hard:
            return None, Status.skip()
        keys_ok = self._keys_present(cluster, hard)
        affinity, tolerated = self._inclusion_masks(cluster, pod, hard)
        entries: list[_HardEntry] = []
        for c in hard:
            col = cluster.label(c.topology_key)
            eligible = keys_ok.copy()
            if c.honor_node_affinity and affinity is not None:
                eligible &= affinity
            if c.honor_node_taints and tolerated is not None:
                eligible &= tolerated
            per_node = matching_pods_per_node(cluster, pod.namespace, c.selector)
            codes = col.codes[eligible]
            v = len(col.values)
            counts = np.bincount(codes, weights=per_node[eligible], minlength=v).astype(np.int64)
            domains = np.bincount(codes, minlength=v) > 0
            entry = _HardEntry(c, col.codes, counts, domains, col.values, int(c.selector.matches(pod.labels)))
            entry.refresh_min()
            entries.append(entry)
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(entries))
        return None, Status.success()

    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        """filtering.go Filter: per constraint in order, a node without the topology key is
        UnschedulableAndUnresolvable; 'matching pods in its domain + self match - global minimum >
        maxSkew' is Unschedulable."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return Verdicts.from_mask(
                np.ones(len(nodes), dtype=bool),
                Code.Error,
                f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',
            )
        if not s.entries:
            return Verdicts.all_pass(len(nodes))
        b = Verdicts.build(len(nodes))
        for e in s.entries:
            codes = e.codes[nodes]
            missing = codes < 0
            if missing.any():
                b.reject(missing, Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH)
            if len(e.counts) == 0:
                continue
            match = np.where(missing, 0, e.counts[np.maximum(codes, 0)])
            skew = match + e.self_match - e.min_match
            too_skewed = ~missing & (skew > e.constraint.max_skew)
            if too_skewed.any():
                b.reject(too_skewed, Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return b.done()

    # ----- PreFilterExtensions (AddPod / RemovePod) ----------------------------------------------
    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node: int) -> Status:
        """filtering.go AddPod: count ``pod_to_add`` as if it ran on node index ``node``."""
        self._update_with_pod(state, pod, pod_to_add, node, 1)
        return Status.success()

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node: int) -> Status:
        """filtering.go RemovePod: stop counting ``pod_to_remove`` on node index ``node``."""
        self._update_with_pod(state, pod, pod_to_remove, node, -1)
        return Status.success()

    def _update_with_pod(
        self, state: CycleState, preemptor: Pod, updated: Pod, node: int, delta: int
    ) -> None:
        """filtering.go updateWithPod. The global minimum is recomputed exactly; upstream's two
        critical paths give the same minimum when, as in preemption, only one node's pods change."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState) or updated.namespace != preemptor.namespace:
            return
        if any(e.codes[node] < 0 for e in s.entries):
            return
        cluster = state.cluster
        at = np.asarray([node], dtype=np.int64)
        affinity, tolerated = self._inclusion_masks(cluster, preemptor, [e.constraint for e in s.entries], at)
        for e in s.entries:
            c = e.constraint
            if not c.selector.matches(updated.labels):
                continue
            if c.honor_node_affinity and affinity is not None and not affinity[0]:
                continue
            if c.honor_node_taints and tolerated is not None and not tolerated[0]:
                continue
            code = int(e.codes[node])
            e.counts[code] += delta
            e.domains[code] = True
            e.refresh_min()

    # ----- PreScore / Score / NormalizeScore -----------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: IntArray) -> Status:
        """scoring.go PreScore/initPreScoreState; ``nodes`` are the nodes that passed Filter."""
        cluster = state.cluster
        if cluster.n == 0:
            return Status.skip()
        spread = self.constraints(pod, cluster.objects)
        soft = spread.soft
        if not soft:
            return Status.skip()
        # Only non-system-default spreading requires every topology key on a node; nodes without a
        # zone label still get hostname spreading under the system defaults.
        require_all = spread.has_own or not self.system_defaulted
        keys_ok = self._keys_present(cluster, soft)
        ignored = np.zeros(cluster.n, dtype=bool)
        if require_all:
            ignored[nodes] = ~keys_ok[nodes]
        scored = nodes[~ignored[nodes]]
        affinity, tolerated = self._inclusion_masks(cluster, pod, soft)
        entries: list[_SoftEntry] = []
        for c in soft:
            col = cluster.label(c.topology_key)
            per_node = matching_pods_per_node(cluster, pod.namespace, c.selector)
            if c.topology_key == LABEL_HOSTNAME:
                # per-node counts are taken in Score; the weight counts the scored nodes
                w = topology_normalizing_weight(len(scored))
                entries.append(_SoftEntry(c, col.codes, per_node, None, None, None, w))
                continue
            # A node without the label reads as value "" (Go's map lookup), sharing that domain.
            v = len(col.values)
            empty_slot = col.vocab.get("", v)
            domain_of = np.where(col.codes >= 0, col.codes, empty_slot).astype(np.int64)
            registered = np.zeros(v + 1, dtype=bool)
            registered[domain_of[scored]] = True
            w = topology_normalizing_weight(int(registered.sum()))
            counted = keys_ok.copy() if require_all else np.ones(cluster.n, dtype=bool)
            if c.honor_node_affinity and affinity is not None:
                counted &= affinity
            if c.honor_node_taints and tolerated is not None:
                counted &= tolerated
            counts = np.bincount(domain_of[counted], weights=per_node[counted], minlength=v + 1).astype(
                np.int64
            )
            counts[~registered] = 0
            entries.append(_SoftEntry(c, col.codes, per_node, domain_of, counts, registered, w))
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(entries, ignored))
        return Status.success()

    def score(self, state: CycleState, pod: Pod, nodes: IntArray) -> IntArray:
        """scoring.go Score: sum over constraints of count * weight + (maxSkew - 1), rounded."""
        s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        bare = state.get(BARE_NODE_INFOS)
        total = np.zeros(len(nodes), dtype=np.float64)
        for e in s.entries:
            has = e.codes[nodes] >= 0
            if e.domain_of is None or e.counts is None:
                cnt = e.per_node[nodes]
                if bare is not None:
                    # counted from the NodeInfo's pods: none on one a filter extender rebuilt
                    cnt = np.where(bare[nodes], 0, cnt)
            else:
                cnt = e.counts[e.domain_of[nodes]]
            term = cnt.astype(np.float64) * e.weight + float(e.constraint.max_skew - 1)
            total = np.where(has, total + term, total)
        out = go_round(total)
        out[s.ignored[nodes]] = 0
        return out

    def normalize_score(self, state: CycleState, pod: Pod, nodes: IntArray, scores: IntArray) -> IntArray:
        """scoring.go NormalizeScore: MaxNodeScore * (max + min - score) / max in int64; ignored
        nodes get 0, and every other node 100 when the maximum is 0."""
        s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        scores = np.asarray(scores, dtype=np.int64)
        ignored = s.ignored[nodes]
        valid = ~ignored
        out = np.zeros(len(nodes), dtype=np.int64)
        if not valid.any():
            return out
        vals = scores[valid]
        max_score = max(int(vals.max()), 0)
        min_score = int(vals.min())
        if max_score == 0:
            out[valid] = MAX_NODE_SCORE
            return out
        out[valid] = MAX_NODE_SCORE * (max_score + min_score - vals) // max_score
        return out

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """The violated DoNotSchedule constraints, their domains and skews; the changes raise maxSkew
        or drop the constraint (none when it comes from the profile's defaultConstraints)."""
        plugin = self
        state = CycleState(ctx.cluster)
        _, s = plugin.pre_filter(state, pod)
        pfs = state.get(PRE_FILTER_STATE_KEY)
        if not s.is_success() or not isinstance(pfs, PreFilterState):
            return generic(nodes, (ERR_REASON_CONSTRAINTS_NOT_MATCH,), "")
        own = plugin.constraints(pod, ctx.cluster.objects).has_own
        raw = pod.spec.get("topologySpreadConstraints") or []
        raw_index = [
            i
            for i, r in enumerate(raw)
            if isinstance(r, dict) and r.get("whenUnsatisfiable") == "DoNotSchedule"
        ]
        rows = []
        for e in pfs.entries:
            codes = e.codes[nodes]
            missing = codes < 0
            match = np.where(missing, 0, e.counts[np.maximum(codes, 0)] if len(e.counts) else 0)
            skew = match + e.self_match - e.min_match
            bad = missing | (skew > e.constraint.max_skew)
            rows.append((bad, codes, match, skew))
        groups: dict[tuple[Any, ...], list[int]] = {}
        for pos in range(len(nodes)):
            sig = tuple(
                (k, int(codes[pos]), int(match[pos]), int(skew[pos]))
                for k, (bad, codes, match, skew) in enumerate(rows)
                if bad[pos]
            )
            groups.setdefault(sig, []).append(pos)
        out = []
        for sig, positions in groups.items():
            members = nodes[np.asarray(positions, dtype=np.int64)]
            if not sig:
                out.append(Diagnosis(members, "no violated spread constraint found", {}, None))
                continue
            problems = []
            skews: list[tuple[int, int]] = []
            drops: list[int] = []
            descs = []
            details = []
            for k, code, matching, needed in sig:
                e = pfs.entries[k]
                con = e.constraint
                head = f"spread constraint {k} (topologyKey {con.topology_key}, maxSkew {con.max_skew})"
                ri = raw_index[k] if own and k < len(raw_index) else None
                if code < 0:
                    problems.append(f"{head}: node has no label {con.topology_key}")
                    details.append({"constraint": k, "missingLabel": con.topology_key})
                    if ri is not None:
                        drops.append(ri)
                        descs.append(f"drop the {con.topology_key} spread constraint")
                    continue
                value = e.values[code]
                domains = int(e.domains.sum())
                mins = (
                    f"global minimum {e.min_match}"
                    if domains >= con.min_domains
                    else f"global minimum 0 ({domains} domain(s) < minDomains {con.min_domains})"
                )
                self_part = " + 1 for this pod" if e.self_match else ""
                problems.append(
                    f"{head}: {con.topology_key}={value} has {matching} matching pod(s){self_part}, {mins}: "
                    f"skew {needed} > {con.max_skew}"
                )
                details.append(
                    {
                        "constraint": k,
                        "domain": value,
                        "matching": matching,
                        "globalMinimum": e.min_match,
                        "skew": needed,
                    }
                )
                if ri is not None:
                    skews.append((ri, needed))
                    descs.append(f"raise maxSkew of the {con.topology_key} spread constraint to {needed}")
            if not own:
                out.append(
                    Diagnosis(
                        members,
                        "; ".join(problems) + " (the constraint comes from the profile's defaultConstraints)",
                        {"constraints": details},
                        None,
                    )
                )
                continue
            patch = PodPatch(spread_skew=tuple(sorted(skews)), drop_spread=tuple(sorted(drops)))
            change = Change("relax-spread", "pod", " and ".join(descs), pod=patch)
            out.append(Diagnosis(members, "; ".join(problems), {"constraints": details}, change))
            if ctx.top:
                ctx.suggest(change)
                for k, *_ in sig:
                    if k < len(raw_index):
                        p1 = PodPatch(drop_spread=(raw_index[k],))
                        key = pfs.entries[k].constraint.topology_key
                        ctx.suggest(Change("relax-spread", "pod", f"drop the {key} spread constraint", pod=p1)
                        )
        return out
