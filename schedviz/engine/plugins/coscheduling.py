"""Coscheduling: gang scheduling of the pods of a PodGroup (an out-of-tree plugin).

Mirrors kubernetes-sigs/scheduler-plugins v0.35.4 (the release built on kube-scheduler v1.35.4):
pkg/coscheduling/coscheduling.go and pkg/coscheduling/core/core.go, with the PodGroup of
apis/scheduling/v1alpha1 (``scheduling.x-k8s.io/v1alpha1``: ``spec.minMember``,
``spec.minResources``, ``spec.scheduleTimeoutSeconds``) and CoschedulingArgs of apis/config
(``permitWaitingTimeSeconds`` 60, ``podGroupBackoffSeconds`` 0, ``podGroupRejectPercentage`` 10).

A pod belongs to the group named by its ``scheduling.x-k8s.io/pod-group`` label, in its namespace.

- QueueSort: higher priority first, then the earlier of the group's creationTimestamp (the pod's
  queue timestamp, its creationTimestamp in a replay, when it has no group, and the time of the
  group's last scheduling failure when there was one), then ``namespace/name`` of the pods.
- PreFilter (UnschedulableAndUnresolvable): the group was denied recently (backoff); it has fewer
  pods in total than minMember, or gated pods bring it below; the cluster cannot hold minResources
  (plus minMember pods), counting the group's own pods' resources as free. A group that passed the
  minResources check is not checked again for ``permitWaitingTimeSeconds``.
- PostFilter: when a member is unschedulable and the group lacks more than
  ``podGroupRejectPercentage`` of minMember, its waiting members are rejected, the group is backed
  off (``podGroupBackoffSeconds``) and marked failed.
- Permit: a member waits until minMember members are assumed or bound (timeout: the group's
  ``scheduleTimeoutSeconds``, else ``permitWaitingTimeSeconds``); the member that completes the
  quorum allows every waiting sibling.
- Unreserve: the member is no longer counted, its waiting siblings are rejected.

What a replay cannot do: re-queue pods. Sibling activation (``ActivateSiblings``) and the queue
order after a failure only matter to pods tried again, so they have no effect; time (caches,
backoff, failures) is the replay clock. minResources values too large for int64 arithmetic are
compared exactly but printed as if they were not (upstream prints a pointer then).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import quantity
from ..apimachinery import ErrorList
from ..errors import InputError
from ..framework import Code, CycleState, Handle, NodeToStatus, PostFilterResult, PreFilterResult, Status
from ..framework.waiting import NS_PER_SECOND
from ..objects import Pod
from ..plugin_args import obj
from ..resources import is_scalar_resource_name

IntArray = npt.NDArray[np.int64]

NAME = "Coscheduling"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"  # v1alpha1.PodGroupLabel
POD_GROUP_API_VERSION = "scheduling.x-k8s.io/v1alpha1"
DEFAULT_WAIT_SECONDS = 60  # util.DefaultWaitTime
# go-cache default expirations of core.NewPodGroupManager's caches, used when an entry is added
# with a zero duration.
PERMITTED_DEFAULT_NS = 3 * NS_PER_SECOND

MSG_NO_GROUP = "can not find pod group"
MSG_GROUP_NOT_FOUND = "PodGroup not found"
MSG_POSTFILTER_REJECT = "optimistic rejection in PostFilter"
MSG_UNRESERVE_REJECT = "rejection in Unreserve"

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"


# ----- resource.Quantity, as far as the minResources check and its message need it --------------

# (value, scale, format): the int64Amount of a Quantity (value x 10^scale) and its Format.
GoQuantity = tuple[int, int, str]

_DEC_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_QUANTITY = re.compile(r"([+-]?)0*([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*(?:[-+]?[0-9]+)?)")


def _suffix(suffix: str) -> tuple[int, str] | None:
    """suffixHandler.interpret: (exponent, format); the base follows from the format."""
    if suffix in _DEC_SUFFIXES:
        return _DEC_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BIN_SUFFIXES:
        return _BIN_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]):
        return int(suffix[1:]), DECIMAL_EXPONENT
    return None


def parse_go_quantity(text: str) -> GoQuantity | None:
    """resource.ParseQuantity of ``text`` as (value, scale, format); None when it is not a quantity.

    The int64 fast path is exact. Values upstream keeps as an inf.Dec instead (over 18 digits,
    finer than nano, fractional binary values) are kept exactly too, rounded away from zero to
    nano as upstream rounds them.
    """
    if text == "0":
        return (0, 0, DECIMAL_SI)
    m = _QUANTITY.fullmatch(text)
    if m is None or not text:
        return None
    sign, num, denom, suffix = m.group(1), m.group(2) or "0", m.group(3) or "", m.group(4)
    interpreted = _suffix(suffix)
    if interpreted is None:
        return None
    exponent, fmt = interpreted
    value, scale = int(num + denom), exponent - len(denom)
    if fmt == BINARY_SI:  # 2^exponent, exponent > 0
        value, scale = value << exponent, -len(denom)
    if scale < -9:  # inf.Dec rounded (away from zero) to nano
        factor = 10 ** (-9 - scale)
        value, scale = -(-value // factor), -9
    return (-value if sign == "-" else value, scale, fmt)


def _format_quantity(q: GoQuantity) -> str:
    """fmt's %v of a Quantity stored in a map after arithmetic: {{value scale} {<nil>}  Format}."""
    return f"{{{{{q[0]} {q[1]}}} {{<nil>}}  {q[2]}}}"


def format_resource_gap(gap: dict[str, GoQuantity]) -> str:
    """%v of a v1.ResourceList: keys in sorted order."""
    return "map[" + " ".join(f"{k}:{_format_quantity(gap[k])}" for k in sorted(gap)) + "]"


# ----- PodGroup (apis/scheduling/v1alpha1) ---------------------------------------------------------


@dataclass(frozen=True)
class PodGroupInfo:
    namespace: str
    name: str
    min_member: int
    min_resources: dict[str, GoQuantity] | None  # None: absent (a nil map)
    schedule_timeout_seconds: int | None
    creation: float | None

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}"


def _int_field(value: object, ident: str, field: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value < 2**31:
        raise InputError(f"must be a 32-bit integer, got {value!r}", obj=ident, field=field)
    return value


def parse_pod_group(
    raw: dict[str, Any], ident: str, namespace: str, name: str, creation: float | None
) -> PodGroupInfo:
    spec = raw.get("spec") or {}
    if not isinstance(spec, dict):
        raise InputError("expected an object", obj=ident, field="spec")
    min_member = _int_field(spec.get("minMember", 0), ident, "spec.minMember")
    resources: dict[str, GoQuantity] | None = None
    raw_resources = spec.get("minResources")
    if raw_resources is not None:
        if not isinstance(raw_resources, dict):
            raise InputError("expected an object", obj=ident, field="spec.minResources")
        resources = {}
        for k, v in raw_resources.items():
            field = f"spec.minResources.{k}"
            quantity.parse(v, obj=ident, field=field)  # the engine's validation
            q = parse_go_quantity(str(v).strip())
            if q is None:
                raise InputError(f"invalid quantity {v!r}", obj=ident, field=field)
            resources[str(k)] = q
    timeout = spec.get("scheduleTimeoutSeconds")
    if timeout is not None:
        timeout = _int_field(timeout, ident, "spec.scheduleTimeoutSeconds")
    return PodGroupInfo(namespace, name, min_member, resources, timeout, creation)


def pod_group_label(pod: Pod) -> str:
    """util.GetPodGroupLabel."""
    return pod.labels.get(POD_GROUP_LABEL, "")


def pod_group_full_name(pod: Pod) -> str:
    """util.GetPodGroupFullName: namespace/group, empty when the pod has no group."""
    label = pod_group_label(pod)
    return f"{pod.namespace}/{label}" if label else ""


class _ExpiringSet:
    """A go-cache used as a set: an entry lives until its expiry (ns of replay time), inclusive."""

    def __init__(self, default_ns: int) -> None:
        self.default_ns = default_ns
        self.expiry: dict[str, int] = {}

    def has(self, key: str, now_ns: int) -> bool:
        exp = self.expiry.get(key)
        return exp is not None and now_ns <= exp

    def add(self, key: str, now_ns: int, duration_ns: int) -> None:
        """cache.Add: kept as is while an unexpired entry exists; 0 means the default expiration."""
        if self.has(key, now_ns):
            return
        self.expiry[key] = now_ns + (duration_ns if duration_ns != 0 else self.default_ns)

    def delete(self, key: str) -> None:
        self.expiry.pop(key, None)


# ----- args (scheduler-plugins apis/config/v1 types.go CoschedulingArgs, defaults.go
# SetDefaults_CoschedulingArgs, apis/config/validation ValidateCoschedulingArgs, run by New)

ARGS_TYPE = obj(
    "v1.CoschedulingArgs",
    permitWaitingTimeSeconds="int64",
    podGroupBackoffSeconds="int64",
    podGroupRejectPercentage="int32",
)


def default_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> dict[str, Any]:
    return {
        "permitWaitingTimeSeconds": a.get("permitWaitingTimeSeconds", 60),
        "podGroupBackoffSeconds": a.get("podGroupBackoffSeconds", 0),
        "podGroupRejectPercentage": a.get("podGroupRejectPercentage", 10),
    }


def validate_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> list[str]:
    errs = ErrorList()
    for name in ("permitWaitingTimeSeconds", "podGroupBackoffSeconds"):
        if a[name] < 0:
            errs.invalid(name, a[name], "must be greater than 0")
    pct = a["podGroupRejectPercentage"]
    if pct < 0 or pct > 100:
        errs.invalid("podGroupRejectPercentage", pct, "must be between 0 and 100")
    return errs.items


class Coscheduling:
    name = NAME
    # args: declared here, decoded, defaulted and validated by the configuration (config/)
    args_type = ARGS_TYPE
    default_args = staticmethod(default_args)
    validate_args = staticmethod(validate_args)
    # upstream validates these args in the plugin's constructor: only when the plugin is enabled
    validate_args_when_built = True

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.schedule_timeout_ns = (
            int(args.get("permitWaitingTimeSeconds", DEFAULT_WAIT_SECONDS)) * NS_PER_SECOND
        )
        backoff = int(args.get("podGroupBackoffSeconds", 0))
        self.backoff_ns: int | None = backoff * NS_PER_SECOND if backoff > 0 else None
        self.reject_threshold = float(int(args.get("podGroupRejectPercentage", 10))) / 100.0
        # core.PodGroupManager
        self.groups: dict[str, PodGroupInfo] = {}
        for o in handle.cluster.objects.of_kind("PodGroup"):
            if o.raw.get("apiVersion", POD_GROUP_API_VERSION) != POD_GROUP_API_VERSION:
                continue
            info = parse_pod_group(o.raw, o.ident, o.namespace, o.name, o.meta.creation)
            self.groups[info.full_name] = info
        self.members: dict[str, list[Pod]] = {}  # group full name -> the informer's pods
        self.assigned: dict[str, set[str]] = {}  # group full name -> names of assumed or bound pods
        for p in handle.pods:
            full = pod_group_full_name(p)
            if not full:
                continue
            self.members.setdefault(full, []).append(p)
            if p.node_name:  # AddPodFactory: the informer's Add events of bound pods
                self.assigned.setdefault(full, set()).add(p.name)
        self.permitted = _ExpiringSet(PERMITTED_DEFAULT_NS)
        self.backed_off = _ExpiringSet(10 * NS_PER_SECOND)
        self.last_failed: dict[str, float] = {}

    def pod_group(self, pod: Pod) -> tuple[str, PodGroupInfo | None]:
        """PodGroupManager.GetPodGroup: the group's full name (empty without a label) and the group."""
        full = pod_group_full_name(pod)
        if not full:
            return "", None
        return full, self.groups.get(full)

    # ----- QueueSort ---------------------------------------------------------------------------
    def creation_timestamp(self, pod: Pod) -> float | None:
        """GetCreationTimestamp, with the pod's creationTimestamp as its queue timestamp (None: zero time)."""
        label = pod_group_label(pod)
        if not label:
            return pod.meta.creation
        full = f"{pod.namespace}/{label}"
        if full in self.last_failed:
            return self.last_failed[full]
        pg = self.groups.get(full)
        return pod.meta.creation if pg is None else pg.creation

    def key(self, pod: Pod) -> tuple[int, int, float, str]:
        ts = self.creation_timestamp(pod)
        return (-pod.prio, 0 if ts is None else 1, ts or 0.0, f"{pod.namespace}/{pod.name}")

    def less(self, a: Pod, b: Pod) -> bool:
        return self.key(a) < self.key(b)

    # ----- PreFilter ---------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        err = self._pre_filter(pod)
        if err:
            return None, Status(Code.UnschedulableAndUnresolvable, err)
        return None, Status.success()

    def _pre_filter(self, pod: Pod) -> str:
        """PodGroupManager.PreFilter: the error message, empty when the pod may go on."""
        full, pg = self.pod_group(pod)
        if pg is None:
            return ""
        now = self.handle.clock.ns
        if self.backed_off.has(full, now):
            return f"podGroup {full} failed recently"
        pods = self.members.get(full, [])
        gap = pg.min_member - len(pods)
        if gap > 0:
            return (
                f"pre-filter pod {pod.name} cannot find enough sibling pods, "
                f"current pods number: {len(pods)}, minMember of group: {pg.min_member}"
            )
        gap += sum(1 for p in pods if p.scheduling_gates)
        if gap > 0:
            return f"pre-filter pod {pod.name} cannot proceed due to gated pods in the same PodGroup"
        if pg.min_resources is None or self.permitted.has(full, now):
            return ""
        wanted = dict(pg.min_resources)
        wanted["pods"] = (pg.min_member, 0, DECIMAL_SI)
        missing = self.resource_gap(full, wanted)
        if missing:
            return f"resource gap: {format_resource_gap(missing)}"
        if not self.handle.dry_run:
            self.permitted.add(full, now, self.schedule_timeout_ns)
        return ""

    def resource_gap(self, full: str, wanted: dict[str, GoQuantity]) -> dict[str, GoQuantity]:
        """CheckClusterResource: what ``wanted`` still lacks after every node's free resources (node-tree
        order, the group's own pods counted as free); empty when some prefix of nodes covers it all."""
        cluster = self.handle.cluster
        order = cluster.tree_order
        namespace, _, label = full.partition("/")
        own: dict[str, IntArray] = {}
        own_count = np.zeros(cluster.n, dtype=np.int64)
        for g in cluster.groups():
            if g.namespace != namespace or g.labels.get(POD_GROUP_LABEL) != label:
                continue
            nodes = g.node_array()
            np.add.at(own_count, nodes, 1)
            for p, i in zip(g.pods, g.nodes, strict=True):
                for r, v in p.resources.requests.items():
                    own.setdefault(r, np.zeros(cluster.n, dtype=np.int64))[i] += v
        gap: dict[str, GoQuantity] = {}
        for r, (v0, s0, fmt) in wanted.items():
            left, node_scale = self._free(r, own, own_count)
            left = left[order]
            if v0 <= 0:
                continue  # removed at the first node
            nonzero = left != 0
            if not nonzero.any():
                gap[r] = (v0, s0, fmt)
                continue
            scale = min(s0, node_scale)
            target = v0 * 10 ** (s0 - scale)
            factor = 10 ** (node_scale - scale)
            sums = np.cumsum(left)
            if int(sums.max()) * factor >= target:
                continue
            gap[r] = (target - int(sums[-1]) * factor, scale, fmt)
        return gap

    def _free(self, r: str, own: dict[str, IntArray], own_count: IntArray) -> tuple[IntArray, int]:
        """getNodeResource's free amount of ``r`` on every node and the scale util.ResourceList gives it."""
        cluster = self.handle.cluster
        zero = np.zeros(cluster.n, dtype=np.int64)
        if r == quantity.PODS:
            return cluster.alloc(r) - (cluster.pod_count - own_count), 0
        if r in (quantity.CPU, quantity.MEMORY, quantity.EPHEMERAL_STORAGE):
            free = cluster.alloc(r) - cluster.requested(r) + own.get(r, zero)
            return free, (-3 if r == quantity.CPU else 0)
        if not is_scalar_resource_name(r):
            return zero, 0  # not a resource a NodeInfo keeps
        # ScalarResources of the allocatable only
        present = np.asarray([r in n.allocatable for n in cluster.nodes], dtype=bool)
        free = cluster.alloc(r) - cluster.requested(r) + own.get(r, zero)
        return np.where(present, free, 0), 0

    # ----- PostFilter --------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        full, pg = self.pod_group(pod)
        if pg is None:
            return None, Status(Code.Unschedulable, MSG_NO_GROUP)
        assigned = len(self.assigned.get(full, ()))
        if assigned >= pg.min_member:
            return None, Status(Code.Unschedulable)
        not_assigned = float(pg.min_member - assigned) / float(pg.min_member)
        if not_assigned <= self.reject_threshold:
            return None, Status(Code.Unschedulable)
        for wp in self.handle.iterate_over_waiting_pods():
            other = wp.get_pod()
            if other.namespace == pod.namespace and pod_group_label(other) == pg.name:
                wp.reject(NAME, MSG_POSTFILTER_REJECT)
        if not self.handle.dry_run:
            now = self.handle.clock.ns
            if self.backoff_ns is not None and len(self.members.get(full, [])) >= pg.min_member:
                self.backed_off.add(full, now, self.backoff_ns)
            self.permitted.delete(full)
            self.last_failed[full] = self.handle.now()
        return None, Status(
            Code.Unschedulable,
            f"PodGroup {full} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter",
        )

    # ----- Permit ------------------------------------------------------------------------------
    def permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, float]:
        full, pg = self.pod_group(pod)
        if not full:
            return Status.success(), 0.0
        if pg is None:
            return Status(Code.Unschedulable, MSG_GROUP_NOT_FOUND), 0.0
        assigned = self.assigned.setdefault(full, set())
        assigned.add(pod.name)
        if len(assigned) >= pg.min_member:
            self.last_failed.pop(full, None)
            for wp in self.handle.iterate_over_waiting_pods():
                if pod_group_full_name(wp.get_pod()) == full:
                    wp.allow(NAME)
            return Status.success(), 0.0
        # util.GetWaitTimeDuration; a zero group timeout leaves the plugin's own one
        wait_ns = self.schedule_timeout_ns
        if pg.schedule_timeout_seconds is not None:
            group_ns = pg.schedule_timeout_seconds * NS_PER_SECOND
        elif self.schedule_timeout_ns != 0:
            group_ns = self.schedule_timeout_ns
        else:
            group_ns = DEFAULT_WAIT_SECONDS * NS_PER_SECOND
        if group_ns != 0:
            wait_ns = group_ns
        return Status(Code.Wait), wait_ns / NS_PER_SECOND

    # ----- Reserve -----------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        return Status.success()

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        full, pg = self.pod_group(pod)
        if pg is None:
            return
        assigned = self.assigned.get(full)
        if assigned is not None:
            assigned.discard(pod.name)
            if not assigned:
                del self.assigned[full]
        for wp in self.handle.iterate_over_waiting_pods():
            other = wp.get_pod()
            if other.namespace == pod.namespace and pod_group_label(other) == pg.name:
                wp.reject(NAME, MSG_UNRESERVE_REJECT)
        self.permitted.delete(full)
        self.last_failed[full] = self.handle.now()
