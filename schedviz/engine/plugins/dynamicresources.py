"""DynamicResources: a pod's ResourceClaims must be allocatable from the devices that
ResourceSlices publish for the node (structured parameters, DRA).

framework/plugins/dynamicresources/dynamicresources.go with the allocator of
dynamic-resource-allocation/structured (internal/incubating: the one v1.35's default gates select,
DRAPrioritizedList and DRAAdminAccess on). For pods without claims: PreFilter writes an empty
state and Skips (so Filter is skipped), Score gives 0 on every node (DynamicResources has no
PreScore, so it is never skipped), PostFilter answers Unschedulable "no new claims to deallocate"
(or Error "not found" when an earlier PreFilter rejected the pod before this one ran), Reserve and
PreBind succeed, PreBindPreFlight Skips.

Allocation is the allocator's exhaustive search: claims, then requests (or the first subrequest
of a firstAvailable list that works), then devices one by one from the node's complete pools,
checking the device class's and the request's CEL selectors, devices already allocated (by
claims' status or by claims in flight between Reserve and PreBind), and matchAttribute
constraints. Reserve puts the allocation in flight (later cycles see those devices as taken);
PreBind writes it into the claim, as the API update would. Selectors are CEL, evaluated by _cel.py
(cel-python with Kubernetes' CEL libraries); a selector's outcome depends only on the device's
driver, attributes and capacity and is kept for the replay. A selector the API server would not
have stored (validation.go: longer than CELSelectorExpressionMaxLength, or an estimated cost over
CELSelectorExpressionMaxCost, "Forbidden: too complex, exceeds cost limit") is an input error naming
the DeviceClass or ResourceClaim and the selector's field; every evaluation runs under the runtime
cost limit kube-scheduler applies (the same CELSelectorExpressionMaxCost), past which the
allocator's error is "... CEL runtime error: operation cancelled: actual cost limit exceeded".
Stage details (docs/trace-format.md) show the devices each node offered and why the allocator
passed over them, and the allocations at Reserve, PreBind and PostFilter.

Not modelled: the Filter timeout, partitionable devices (counters), device taints, binding
conditions, consumable capacity and DRA extended resources (their gates are off by default), and
the parts of Kubernetes' CEL environment _cel.py lists as unsupported.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import quantity
from ..apimachinery import ErrorList, parse_duration_ns
from ..errors import InputError
from ..framework import (
    Code,
    CycleState,
    Handle,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    Status,
    Verdicts,
)
from ..framework.diagnosis import Diagnosis, DiagnosisContext
from ..framework.interfaces import IntArray
from ..objects import Pod
from ..plugin_args import gates, obj
from . import _cel
from . import _storage as st

NAME = "DynamicResources"
STATE_KEY = NAME

ALLOCATION_RESULTS_MAX_SIZE = 32  # resourceapi.AllocationResultsMaxSize
FIRST_AVAILABLE_MAX_SIZE = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize
FINALIZER = "resource.kubernetes.io/delete-protection"

_CACHE_KEY = "dynamicresources/claims"
_SLICES_KEY = "dynamicresources/slices"

JSON = dict[str, Any]
DeviceID = tuple[str, str, str]  # driver, pool, device

# v1.35 defaults of the feature gates the plugin reads.
_GATE_DEFAULTS = {
    "DynamicResourceAllocation": True,
    "DRAPrioritizedList": True,
    "DRAAdminAccess": True,
    "DRAPartitionableDevices": False,
    "DRADeviceTaints": False,
    "DRADeviceBindingConditions": False,
    "DRAResourceClaimDeviceStatus": True,
    "DRAConsumableCapacity": False,
    "DRAExtendedResource": False,
}


class _AllocError(Exception):
    """An allocator error; ``on_node`` marks ErrFailedAllocationOnNode (not fatal for the cycle)."""

    def __init__(self, message: str, on_node: bool = False) -> None:
        super().__init__(message)
        self.on_node = on_node


def claim_key(claim: JSON) -> tuple[str, str]:
    return st.namespace_of(claim), st.name_of(claim)


def claim_uid(claim: JSON) -> str:
    return st.uid_of(claim) or f"ResourceClaim/{st.namespace_of(claim)}/{st.name_of(claim)}"


def claim_ref(claim: JSON) -> str:
    """klog.KObj: namespace/name."""
    return f"{st.namespace_of(claim)}/{st.name_of(claim)}"


def _status(claim: JSON) -> JSON:
    s = claim.get("status")
    return s if isinstance(s, dict) else {}


def _allocation(claim: JSON) -> JSON | None:
    a = _status(claim).get("allocation")
    return a if isinstance(a, dict) else None


def _reserved_for_pod(pod: Pod, claim: JSON) -> bool:
    for r in st.as_list(_status(claim).get("reservedFor"), "ResourceClaim", "status.reservedFor"):
        if isinstance(r, dict) and str(r.get("uid") or "") == pod.uid:
            return True
    return False


# ----- the claim tracker: informer claims, assumed updates and allocations in flight ------------


@dataclass
class ClaimTracker:
    """dra_manager.go claimTracker: the assume cache over claims and the in-flight allocations."""

    assumed: dict[tuple[str, str], JSON] = field(default_factory=dict)
    in_flight: dict[str, JSON] = field(default_factory=dict)
    version: int = 0

    def touch(self) -> None:
        self.version += 1


def tracker(cluster: Any) -> ClaimTracker:
    t = cluster.caches.get(_CACHE_KEY)
    if not isinstance(t, ClaimTracker):
        t = ClaimTracker()
        cluster.caches[_CACHE_KEY] = t
    return t


def _informer_claims(cluster: Any) -> dict[tuple[str, str], JSON]:
    key = "dynamicresources/informer"
    sig = (id(cluster.objects), tuple(sorted(cluster.objects.kinds().items())))
    cached = cluster.caches.get(key)
    if cached is not None and cached[0] == sig:
        claims: dict[tuple[str, str], JSON] = cached[1]
        return claims
    claims = {}
    for o in cluster.objects.of_kind("ResourceClaim"):
        raw = o.raw
        if not st.meta(raw).get("namespace"):
            raw = {**raw, "metadata": {**st.meta(raw), "namespace": o.namespace}}
        claims[(o.namespace, o.name)] = raw
    cluster.caches[key] = (sig, claims)
    return claims


def get_claim(cluster: Any, namespace: str, name: str) -> JSON | None:
    t = tracker(cluster)
    hit = t.assumed.get((namespace, name))
    if hit is not None:
        return hit
    return _informer_claims(cluster).get((namespace, name))


def _all_claims(cluster: Any) -> Iterator[JSON]:
    t = tracker(cluster)
    informer = _informer_claims(cluster)
    for k, c in informer.items():
        yield t.assumed.get(k, c)
    for k, c in t.assumed.items():
        if k not in informer:
            yield c


def allocated_devices(cluster: Any) -> set[DeviceID]:
    """ListAllAllocatedDevices: devices in claims' allocations (admin access excluded) and in flight."""
    out: set[DeviceID] = set()
    claims = list(_all_claims(cluster)) + list(tracker(cluster).in_flight.values())
    for claim in claims:
        alloc = _allocation(claim)
        if alloc is None:
            continue
        devices = st.as_map(alloc.get("devices"), "ResourceClaim", "status.allocation.devices")
        for r in st.as_list(devices.get("results"), "ResourceClaim", "status.allocation.devices.results"):
            if not isinstance(r, dict) or r.get("adminAccess") is True:
                continue
            out.add((str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or "")))
    return out


def device_holders(cluster: Any) -> dict[DeviceID, str]:
    """Which claim holds each allocated device (for the trace): "ns/name", with " (being allocated)"
    for allocations in flight between Reserve and PreBind."""
    out: dict[DeviceID, str] = {}
    flying = tracker(cluster).in_flight.values()
    for claim, suffix in [
        *((c, "") for c in _all_claims(cluster)),
        *((c, " (being allocated)") for c in flying),
    ]:
        alloc = _allocation(claim)
        if alloc is None:
            continue
        devices = st.as_map(alloc.get("devices"), "ResourceClaim", "status.allocation.devices")
        for r in st.as_list(devices.get("results"), "ResourceClaim", "status.allocation.devices.results"):
            if not isinstance(r, dict) or r.get("adminAccess") is True:
                continue
            dev = (str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or ""))
            out[dev] = claim_ref(claim) + suffix
    return out


def allocation_devices(allocation: JSON) -> list[str]:
    """An AllocationResult's devices as "driver/pool/device" (the trace's spelling)."""
    devices = allocation.get("devices")
    results = devices.get("results") if isinstance(devices, dict) else None
    out: list[str] = []
    for r in results if isinstance(results, list) else []:
        if isinstance(r, dict):
            out.append(f"{r.get('driver', '')}/{r.get('pool', '')}/{r.get('device', '')}")
    return out


# ----- requests, devices and slices ---------------------------------------------------------------


@dataclass
class _Request:
    """An exact request or one subrequest of a firstAvailable list (the allocator's requestAccessor)."""

    name: str
    class_name: str
    mode: str
    count: int
    admin_access: bool
    has_admin_access: bool
    selectors: list[str]
    # Where the selectors are in the claim (for errors naming one of them).
    selectors_field: str = "spec.devices.requests"


@dataclass
class _ClaimRequest:
    name: str
    exact: _Request | None
    subrequests: list[_Request]


def _parse_request(raw: JSON, name: str, ident: str, fld: str) -> _Request:
    mode = str(raw.get("allocationMode") or "ExactCount")
    count = raw.get("count")
    if count is None:
        count = 1 if mode == "ExactCount" else 0
    if isinstance(count, bool) or not isinstance(count, int):
        raise InputError("must be an integer", obj=ident, field=f"{fld}.count")
    selectors: list[str] = []
    for i, s in enumerate(st.as_list(raw.get("selectors"), ident, f"{fld}.selectors")):
        s = st.as_map(s, ident, f"{fld}.selectors[{i}]")
        cel = s.get("cel")
        # An empty string marks "not a CEL selector" (an unsupported future selector type).
        selectors.append(str(cel.get("expression") or "") if isinstance(cel, dict) else "")
    admin = raw.get("adminAccess")
    return _Request(
        name=name,
        class_name=str(raw.get("deviceClassName") or ""),
        mode=mode,
        count=count,
        admin_access=admin is True,
        has_admin_access=admin is not None,
        selectors=selectors,
        selectors_field=f"{fld}.selectors",
    )


def claim_requests(claim: JSON) -> list[_ClaimRequest]:
    """spec.devices.requests of a v1 claim (``exactly`` / ``firstAvailable``); v1beta1's flat form too."""
    ident = f"ResourceClaim {claim_ref(claim)}"
    devices = st.as_map(st.spec(claim).get("devices"), ident, "spec.devices")
    out: list[_ClaimRequest] = []
    for i, r in enumerate(st.as_list(devices.get("requests"), ident, "spec.devices.requests")):
        fld = f"spec.devices.requests[{i}]"
        r = st.as_map(r, ident, fld)
        name = str(r.get("name") or "")
        exact: _Request | None = None
        subs: list[_Request] = []
        if isinstance(r.get("exactly"), dict):
            exact = _parse_request(r["exactly"], name, ident, f"{fld}.exactly")
        elif r.get("firstAvailable"):
            for j, sr in enumerate(st.as_list(r.get("firstAvailable"), ident, f"{fld}.firstAvailable")):
                sr = st.as_map(sr, ident, f"{fld}.firstAvailable[{j}]")
                subs.append(
                    _parse_request(sr, str(sr.get("name") or ""), ident, f"{fld}.firstAvailable[{j}]")
                )
        elif r.get("deviceClassName"):
            exact = _parse_request(r, name, ident, fld)
        out.append(_ClaimRequest(name, exact, subs))
    return out


def _constraints(claim: JSON) -> list[tuple[set[str], str]]:
    """spec.devices.constraints: (request names, matchAttribute) pairs; None attribute is unsupported."""
    ident = f"ResourceClaim {claim_ref(claim)}"
    devices = st.as_map(st.spec(claim).get("devices"), ident, "spec.devices")
    out: list[tuple[set[str], str]] = []
    for i, c in enumerate(st.as_list(devices.get("constraints"), ident, "spec.devices.constraints")):
        c = st.as_map(c, ident, f"spec.devices.constraints[{i}]")
        attr = c.get("matchAttribute")
        reqs = {
            str(x) for x in st.as_list(c.get("requests"), ident, f"spec.devices.constraints[{i}].requests")
        }
        out.append((reqs, str(attr) if attr else ""))
    return out


@dataclass
class _Device:
    name: str
    attributes: dict[str, Any]  # qualified name -> CEL value
    attr_raw: dict[str, JSON]
    capacity: dict[str, Any]
    raw: JSON
    consumes_counters: bool
    binding_conditions: bool
    node_name: str
    all_nodes: bool
    node_selector: JSON | None
    # What selectors see of the device (driver, attributes, capacity), as a key into _VERDICTS.
    content: tuple[Any, ...] = ()


# Selector outcomes by (expression, device content): the verdict, or the CEL runtime error's text.
# An expression's outcome depends only on the device's driver, attributes and capacity, so devices
# that look alike (the same GPU model on every node) are evaluated once.
_VERDICTS: dict[tuple[str, tuple[Any, ...]], bool | str] = {}
_MAX_VERDICTS = 1 << 18


@dataclass
class _Slice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str
    all_nodes: bool
    node_selector: JSON | None
    per_device: bool
    shared_counters: bool
    devices: list[_Device]


def _attr_value(raw: object, ident: str, fld: str) -> Any:
    a = st.as_map(raw, ident, fld)
    if "int" in a:
        return a["int"]
    if "bool" in a:
        return a["bool"]
    if "string" in a:
        return str(a["string"])
    if "version" in a:
        v = _cel.parse_semver(str(a["version"]))
        return v if v is not None else _BadVersion(str(a["version"]))
    return _BadVersion("")


@dataclass(frozen=True)
class _BadVersion:
    text: str


def _parse_slice(raw: JSON) -> _Slice:
    ident = f"ResourceSlice {st.name_of(raw)}"
    sp = st.spec(raw)
    pool = st.as_map(sp.get("pool"), ident, "spec.pool")
    devices: list[_Device] = []
    for i, d in enumerate(st.as_list(sp.get("devices"), ident, "spec.devices")):
        fld = f"spec.devices[{i}]"
        d = st.as_map(d, ident, fld)
        basic = d.get("basic")
        body: JSON = basic if isinstance(basic, dict) else d  # v1beta1 nests fields in "basic"
        attrs: dict[str, Any] = {}
        attr_raw: dict[str, JSON] = {}
        for k, v in st.as_map(body.get("attributes"), ident, f"{fld}.attributes").items():
            attrs[str(k)] = _attr_value(v, ident, f"{fld}.attributes.{k}")
            attr_raw[str(k)] = v
        caps: dict[str, Any] = {}
        for k, v in st.as_map(body.get("capacity"), ident, f"{fld}.capacity").items():
            value = st.as_map(v, ident, f"{fld}.capacity.{k}").get("value")
            caps[str(k)] = _cel.Quantity(quantity.parse(value, obj=ident, field=f"{fld}.capacity.{k}.value"))
        devices.append(
            _Device(
                name=str(d.get("name") or ""),
                attributes=attrs,
                attr_raw=attr_raw,
                capacity=caps,
                raw=body,
                consumes_counters=bool(body.get("consumesCounters")),
                binding_conditions=bool(body.get("bindingConditions")),
                node_name=str(body.get("nodeName") or ""),
                all_nodes=body.get("allNodes") is True,
                node_selector=body.get("nodeSelector")
                if isinstance(body.get("nodeSelector"), dict)
                else None,
            )
        )
    gen = pool.get("generation", 0)
    count = pool.get("resourceSliceCount", 1)
    return _Slice(
        name=st.name_of(raw),
        driver=str(sp.get("driver") or ""),
        pool=str(pool.get("name") or ""),
        generation=int(gen) if isinstance(gen, int) else 0,
        slice_count=int(count) if isinstance(count, int) else 1,
        node_name=str(sp.get("nodeName") or ""),
        all_nodes=sp.get("allNodes") is True,
        node_selector=sp.get("nodeSelector") if isinstance(sp.get("nodeSelector"), dict) else None,
        per_device=sp.get("perDeviceNodeSelection") is True,
        shared_counters=bool(sp.get("sharedCounters")),
        devices=devices,
    )


@dataclass
class _SliceIndex:
    slices: list[_Slice]
    by_node_name: dict[str, list[int]]
    selected: list[int]  # slices with allNodes / a node selector / per-device selection
    selector_masks: dict[int, Any]  # slice index -> mask over all nodes


def _slice_index(cluster: Any) -> _SliceIndex:
    sig = (id(cluster.objects), tuple(sorted(cluster.objects.kinds().items())), cluster.n)
    cached = cluster.caches.get(_SLICES_KEY)
    if cached is not None and cached[0] == sig:
        idx: _SliceIndex = cached[1]
        return idx
    slices = [_parse_slice(o.raw) for o in cluster.objects.of_kind("ResourceSlice")]
    by_node: dict[str, list[int]] = {}
    selected: list[int] = []
    masks: dict[int, Any] = {}
    all_nodes = np.arange(cluster.n, dtype=np.int64)
    for i, s in enumerate(slices):
        if s.node_name:
            by_node.setdefault(s.node_name, []).append(i)
        elif s.all_nodes or s.node_selector is not None or s.per_device or s.shared_counters:
            selected.append(i)
            if not s.all_nodes and s.node_selector is not None:
                masks[i] = st.node_selector_mask(
                    cluster,
                    s.node_selector,
                    all_nodes,
                    obj=f"ResourceSlice {s.name}",
                    fld="spec.nodeSelector",
                )
    idx = _SliceIndex(slices, by_node, selected, masks)
    cluster.caches[_SLICES_KEY] = (sig, idx)
    return idx


def _node_matches(
    cluster: Any, node: int, name: str, all_nodes: bool, selector: JSON | None, ident: str
) -> bool:
    """incubating NodeMatches."""
    if name:
        return bool(cluster.names[node] == name)
    if all_nodes:
        return True
    if selector is not None:
        m = st.node_selector_mask(
            cluster, selector, np.asarray([node], dtype=np.int64), obj=ident, fld="nodeSelector"
        )
        return bool(m[0])
    return False


@dataclass
class _Pool:
    driver: str
    pool: str
    slices: list[_Slice]
    incomplete: bool = False
    invalid: bool = False

    @property
    def ident(self) -> str:
        return f"{self.driver}/{self.pool}"


# ----- the allocator -------------------------------------------------------------------------------


@dataclass
class _Features:
    admin_access: bool
    prioritized_list: bool
    partitionable: bool
    device_taints: bool
    binding_conditions: bool


@dataclass
class _ReqData:
    request: _Request
    parent: str  # name of the parent request for a subrequest, "" otherwise
    class_raw: JSON | None
    num_devices: int
    all_devices: list[tuple[_Slice, _Device, _Pool]] | None = None

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.request.name}" if self.parent else self.request.name


@dataclass
class _Result:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None
    slice: _Slice
    dev: _Device


class Allocator:
    """structured.Allocator for one scheduling cycle: the state of allocated devices is fixed."""

    def __init__(
        self, cluster: Any, features: _Features, allocated: set[DeviceID], classes: dict[str, JSON]
    ) -> None:
        self.cluster = cluster
        self.features = features
        self.allocated = allocated
        self.classes = classes
        self.index = _slice_index(cluster)
        self._selectable: dict[tuple[DeviceID, int, int, int, int, int], bool] = {}
        self._class_selectors: dict[str, list[str]] = {}
        self.last_run: _Run | None = None
        self._holders: dict[DeviceID, str] | None = None
        self._parsed: dict[int, tuple[list[_ClaimRequest], list[tuple[set[str], str]]]] = {}

    def parsed(self, claim: JSON) -> tuple[list[_ClaimRequest], list[tuple[set[str], str]]]:
        """The claim's requests and constraints, parsed once per cycle."""
        hit = self._parsed.get(id(claim))
        if hit is None:
            hit = (claim_requests(claim), _constraints(claim))
            self._parsed[id(claim)] = hit
        return hit

    def gather_pools(self, node: int) -> list[_Pool]:
        """GatherPools: the pools with slices for the node, complete ones with their slices."""
        idx = self.index
        candidates = list(idx.by_node_name.get(self.cluster.names[node], []))
        for i in idx.selected:
            s = idx.slices[i]
            if not self.features.partitionable and (s.per_device or s.shared_counters):
                continue
            if s.shared_counters or s.all_nodes:
                candidates.append(i)
            elif s.node_selector is not None:
                if bool(idx.selector_masks[i][node]):
                    candidates.append(i)
            elif s.per_device:
                for d in s.devices:
                    if _node_matches(
                        self.cluster,
                        node,
                        d.node_name,
                        d.all_nodes,
                        d.node_selector,
                        f"ResourceSlice {s.name}",
                    ):
                        candidates.append(i)
                        break
        pools: dict[tuple[str, str], list[_Slice]] = {}
        for i in sorted(candidates):
            s = idx.slices[i]
            if not self.features.partitionable and (s.per_device or s.shared_counters):
                continue
            key = (s.driver, s.pool)
            have = pools.get(key)
            if have is None or s.generation > have[0].generation:
                pools[key] = [s]
            elif s.generation == have[0].generation:
                have.append(s)
        out: list[_Pool] = []
        for (driver, pool_name), slices in pools.items():
            gen = slices[0].generation
            if len(slices) != slices[0].slice_count:
                same = [s for s in idx.slices if s.driver == driver and s.pool == pool_name]
                if any(s.generation > gen for s in same):
                    continue  # obsolete
                if len([s for s in same if s.generation == gen]) != slices[0].slice_count:
                    out.append(_Pool(driver, pool_name, [], incomplete=True))
                    continue
            names: set[str] = set()
            invalid = False
            for s in slices:
                for d in s.devices:
                    if d.name in names:
                        invalid = True
                    names.add(d.name)
            out.append(_Pool(driver, pool_name, [] if invalid else slices, invalid=invalid))
        return out

    # allocate ------------------------------------------------------------------------------
    def allocate(self, node: int, claims: list[JSON]) -> list[JSON] | None:
        """Allocate: one AllocationResult per claim, None when the node cannot satisfy them all."""
        self.last_run = _Run(self, node, claims)
        return self.last_run.run()

    def holder(self, dev: DeviceID) -> str:
        if self._holders is None:
            self._holders = device_holders(self.cluster)
        return self._holders.get(dev, "another claim")

    def why_not(self, rd: _ReqData, claim: JSON, s: _Slice, d: _Device) -> str | None:
        """Why allocateOne would pass over the device for this request (None: it could take it), in
        the order the allocator checks; for the trace of a node where allocation failed."""
        dev_id = (s.driver, s.pool, d.name)
        if not rd.request.admin_access and dev_id in self.allocated:
            return f"already allocated to {self.holder(dev_id)}"
        if not self.features.binding_conditions and d.binding_conditions:
            return "has binding conditions (DRADeviceBindingConditions is off)"
        try:
            if rd.class_raw is not None:
                cname = st.name_of(rd.class_raw)
                cls_sel = self._class_selectors.get(cname)
                if cls_sel is None:
                    cls_sel = self._class_selectors[cname] = _class_selectors(rd.class_raw)
                if not self._match(cls_sel, s, d, f"class {cname}", rd.class_raw, "spec.selectors"):
                    return f"does not match DeviceClass {cname}"
            if not self._match(
                rd.request.selectors, s, d, f"claim {claim_ref(claim)}", claim, rd.request.selectors_field
            ):
                return "does not match the request's selectors"
        except _AllocError as exc:
            return str(exc)
        if s.per_device and not _node_matches(
            self.cluster, self._node, d.node_name, d.all_nodes, d.node_selector, f"ResourceSlice {s.name}"
        ):
            return "not available on this node"
        if not self.features.partitionable and d.consumes_counters:
            return "consumes shared counters (DRAPartitionableDevices is off)"
        return None

    def selectable(self, key: tuple[int, int, int], rd: _ReqData, claim: JSON, s: _Slice, d: _Device) -> bool:
        if not self.features.binding_conditions and d.binding_conditions:
            return False
        dev_id = (s.driver, s.pool, d.name)
        # Per-device node selection depends on the node: not cached across nodes.
        ckey = (dev_id, id(claim), *key, self._node if s.per_device else -1)
        hit = self._selectable.get(ckey)
        if hit is not None:
            return hit
        ok = True
        if rd.class_raw is not None:
            cname = st.name_of(rd.class_raw)
            cls_sel = self._class_selectors.get(cname)
            if cls_sel is None:
                cls_sel = self._class_selectors[cname] = _class_selectors(rd.class_raw)
            ok = self._match(
                cls_sel, s, d, f"class {st.name_of(rd.class_raw)}", rd.class_raw, "spec.selectors"
            )
        if ok:
            ok = self._match(
                rd.request.selectors, s, d, f"claim {claim_ref(claim)}", claim, rd.request.selectors_field
            )
        if ok and s.per_device:
            ok = _node_matches(
                self.cluster, self._node, d.node_name, d.all_nodes, d.node_selector, f"ResourceSlice {s.name}"
            )
        self._selectable[ckey] = ok
        return ok

    _node: int = 0

    def _match(self, selectors: list[str], s: _Slice, d: _Device, who: str, obj: JSON, fld: str) -> bool:
        for i, expr in enumerate(selectors):
            if not expr:
                raise _AllocError(f"{who}: selector #{i}: CEL expression empty (unsupported selector type?)")
            try:
                # The limits the API server applies when it stores the selector (length, estimated
                # cost), then kube-scheduler's runtime cost limit for each evaluation.
                program = _cel.compile_selector(expr, validate=True)
            except (_cel.CelUnsupported, _cel.CelRefused) as exc:
                kind = "DeviceClass" if who.startswith("class ") else "ResourceClaim"
                name = st.name_of(obj) if kind == "DeviceClass" else claim_ref(obj)
                if isinstance(exc, _cel.CelRefused):
                    # validation.go: the object would not have been admitted.
                    raise InputError(
                        str(exc), obj=f"{kind} {name}", field=f"{fld}[{i}].cel.expression"
                    ) from None
                raise InputError(
                    f"CEL expression {expr!r} uses {exc}, which SchedViz does not evaluate",
                    obj=f"{kind} {name}",
                    field=fld,
                ) from None
            except _cel.CelCompileError as exc:
                raise _AllocError(f"{who}: selector #{i}: CEL compile error: {exc.stage}{exc}") from None
            for name, value in d.attributes.items():
                if isinstance(value, _BadVersion):
                    raise _AllocError(
                        f"{who}: selector #{i}: CEL runtime error: attribute {name}: parse semantic "
                        f"version: {value.text!r} is not a valid version"
                    )
            if not d.content:
                # Types included: True and 1 are equal keys in Python, not in CEL.
                attrs = tuple((k, type(v).__name__, v) for k, v in d.attributes.items())
                d.content = (s.driver, attrs, tuple(d.capacity.items()))
            matched = _VERDICTS.get((expr, d.content))
            if matched is None:
                try:
                    matched = program.evaluate(_cel.device_env(s.driver, d.attributes, d.capacity))
                except _cel.CelError as exc:
                    matched = str(exc)
                if len(_VERDICTS) >= _MAX_VERDICTS:
                    _VERDICTS.clear()
                _VERDICTS[(expr, d.content)] = matched
            if isinstance(matched, str):
                raise _AllocError(f"{who}: selector #{i}: CEL runtime error: {matched}")
            if not matched:
                return False
        return True


def _class_selectors(cls: JSON) -> list[str]:
    out: list[str] = []
    ident = f"DeviceClass {st.name_of(cls)}"
    for i, s in enumerate(st.as_list(st.spec(cls).get("selectors"), ident, "spec.selectors")):
        s = st.as_map(s, ident, f"spec.selectors[{i}]")
        cel = s.get("cel")
        out.append(str(cel.get("expression") or "") if isinstance(cel, dict) else "")
    return out


def _lookup_attribute(d: _Device, driver: str, name: str) -> JSON | None:
    """lookupAttribute: a fully qualified name, or the bare id when the domain is the driver's."""
    if name in d.attr_raw:
        return d.attr_raw[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return d.attr_raw.get(ident)


class _MatchAttribute:
    """matchAttributeConstraint: every device of the named requests has the same attribute value."""

    def __init__(self, requests: set[str], attribute: str) -> None:
        self.requests = requests
        self.attribute = attribute
        self.value: tuple[str, Any] | None = None
        self.count = 0

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        if not sub:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str, s: _Slice, d: _Device) -> bool:
        if not self._applies(request, sub):
            return True
        raw = _lookup_attribute(d, s.driver, self.attribute)
        if raw is None:
            return False
        typed: tuple[str, Any] | None = None
        for kind in ("string", "int", "bool", "version"):
            if kind in raw:
                typed = (kind, raw[kind])
                break
        if typed is None:
            return False
        if self.count == 0:
            self.value = typed
            self.count = 1
            return True
        if self.value != typed:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if not self._applies(request, sub):
            return
        self.count -= 1


class _Stop(Exception):
    """errAllocationResultMaxSizeExceeded."""


class _Run:
    """One Allocate call (the allocator struct of allocator_incubating.go)."""

    def __init__(self, a: Allocator, node: int, claims: list[JSON]) -> None:
        self.a = a
        self.node = node
        self.claims = claims
        a._node = node
        self.pools = a.gather_pools(node)
        self.req: dict[tuple[int, int, int], _ReqData] = {}
        self.requests: list[list[_ClaimRequest]] = []
        self.constraints: list[list[_MatchAttribute]] = []
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}

    def run(self) -> list[JSON] | None:
        for ci, claim in enumerate(self.claims):
            reqs, constraints = self.a.parsed(claim)
            self.requests.append(reqs)
            min_devices = 0
            for ri, r in enumerate(reqs):
                if r.subrequests:
                    if not self.a.features.prioritized_list:
                        raise _AllocError(
                            f"claim {claim_ref(claim)}, request {r.name}: has subrequests, but the "
                            "DRAPrioritizedList feature is disabled"
                        )
                    least = None
                    for si, sub in enumerate(r.subrequests):
                        rd = self._validate((ci, ri, si), claim, sub, r.name)
                        self.req[(ci, ri, si)] = rd
                        least = rd.num_devices if least is None else min(least, rd.num_devices)
                    min_devices += least or 0
                elif r.exact is not None:
                    rd = self._validate((ci, ri, 0), claim, r.exact, "")
                    self.req[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
                else:
                    raise _AllocError(
                        f"claim {claim_ref(claim)}, request {r.name}: missing device class name (unsupported request type?)"
                    )
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise _AllocError(
                    f"claim {claim_ref(claim)}: number of requested devices {min_devices} exceeds the claim limit "
                    f"of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            cons: list[_MatchAttribute] = []
            for i, (names, attr) in enumerate(constraints):
                if not attr:
                    raise _AllocError(
                        f"claim {claim_ref(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
                cons.append(_MatchAttribute(names, attr))
            self.constraints.append(cons)
        try:
            done = self.one(0, 0, 0, 0, False)
        except _Stop:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise _AllocError("invalid resource pools were encountered", on_node=True)
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    def _validate(self, key: tuple[int, int, int], claim: JSON, r: _Request, parent: str) -> _ReqData:
        name = f"{parent}/{r.name}" if parent else r.name
        for i, sel in enumerate(r.selectors):
            if not sel:
                raise _AllocError(
                    f"claim {claim_ref(claim)}, request {name}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        if not self.a.features.admin_access and r.has_admin_access:
            raise _AllocError(
                f"claim {claim_ref(claim)}, request {name}: admin access is requested, but the feature is disabled"
            )
        if not r.class_name:
            raise _AllocError(
                f"claim {claim_ref(claim)}, request {name}: missing device class name (unsupported request type?)"
            )
        cls = self.a.classes.get(r.class_name)
        if cls is None:
            raise _AllocError(
                f"claim {claim_ref(claim)}, request {name}: could not retrieve device class {r.class_name}: "
                f'deviceclass.resource.k8s.io "{r.class_name}" not found'
            )
        rd = _ReqData(r, parent, cls, 0)
        if r.mode == "ExactCount":
            rd.num_devices = r.count
        elif r.mode == "All":
            rd.all_devices = []
            for p in self.pools:
                if p.incomplete:
                    raise _AllocError(
                        f"claim {claim_ref(claim)}, request {name}: asks for all devices, but resource pool {p.ident} "
                        "is currently being updated"
                    )
                if p.invalid:
                    raise _AllocError(
                        f"claim {claim_ref(claim)}, request {name}: asks for all devices, but resource pool {p.ident} "
                        "is currently invalid"
                    )
                for s in p.slices:
                    for d in s.devices:
                        if self.a.selectable(key, rd, claim, s, d):
                            rd.all_devices.append((s, d, p))
            rd.num_devices = len(rd.all_devices)
        else:
            raise _AllocError(f"claim {claim_ref(claim)}, request {name}: unsupported count mode {r.mode}")
        return rd

    def report(self) -> list[JSON]:
        """After a failed search: per request, the node's devices the allocator could take and why it
        passes over the others (the trace's Filter details)."""
        out: list[JSON] = []
        for (ci, _ri, _si), rd in self.req.items():  # claims, requests, subrequests in order
            claim = self.claims[ci]
            selectable: list[str] = []
            rejected: dict[str, str] = {}
            for p in self.pools:
                if p.incomplete or p.invalid:
                    rejected[p.ident] = (
                        "pool is being updated (incomplete)" if p.incomplete else "pool is invalid"
                    )
                    continue
                for s in p.slices:
                    for d in s.devices:
                        why = self.a.why_not(rd, claim, s, d)
                        name = f"{s.driver}/{s.pool}/{d.name}"
                        if why is None:
                            selectable.append(name)
                        else:
                            rejected[name] = why
            entry: JSON = {"claim": claim_ref(claim), "request": rd.full_name}
            entry["count"] = "All" if rd.request.mode == "All" else rd.num_devices
            entry["selectable"] = selectable
            entry["rejected"] = rejected
            out.append(entry)
        return out

    def _in_use(self, dev: DeviceID) -> bool:
        return dev in self.a.allocated or bool(self.allocating.get(dev))

    def one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        """allocateOne."""
        if ci >= len(self.claims):
            return True
        reqs = self.requests[ci]
        if ri >= len(reqs):
            try:
                return self.one(ci + 1, 0, 0, 0, False)
            except _Stop:
                return False
        rd = self.req[(ci, ri, si)]
        if not in_sub and rd.parent:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.req:
                try:
                    ok = self.one(ci, ri, sub, di, True)
                except _Stop:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[(ci, ri)] = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _Stop()
            return False
        request = rd.request
        if request.mode == "All" and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self.one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _Stop()
        claim = self.claims[ci]
        if request.mode == "All":
            assert rd.all_devices is not None
            s, d, _p = rd.all_devices[di]
            undo = self._allocate_device(ci, ri, si, rd, s, d, must=True)
            if undo is None:
                return False
            try:
                done = self.one(ci, ri, si, di + 1, in_sub)
            except _Stop:
                undo()
                raise
            if not done:
                undo()
            return done
        for p in self.pools:
            if p.incomplete or p.invalid:
                continue
            for s in p.slices:
                for d in s.devices:
                    dev_id = (p.driver, p.pool, d.name)
                    if request.admin_access:
                        if ci in self.allocating.get(dev_id, set()):
                            continue
                    elif self._in_use(dev_id):
                        continue
                    if not self.a.selectable((ci, ri, si), rd, claim, s, d):
                        continue
                    undo = self._allocate_device(ci, ri, si, rd, s, d, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self.one(ci, ri, si, di + 1, in_sub)
                    except _Stop:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _allocate_device(
        self, ci: int, ri: int, si: int, rd: _ReqData, s: _Slice, d: _Device, must: bool
    ) -> Any:
        """allocateDevice: None when the device cannot be used, else a function that undoes it."""
        request = rd.request
        dev_id = (s.driver, s.pool, d.name)
        if request.admin_access:
            if ci in self.allocating.get(dev_id, set()):
                return None
        elif self._in_use(dev_id):
            return None
        if not self.a.features.partitionable and d.consumes_counters:
            return None
        base = rd.parent or request.name
        sub = request.name if rd.parent else ""
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, s, d):
                if must:
                    raise _AllocError(
                        f"claim {claim_ref(self.claims[ci])}, request {request.name}: cannot add device "
                        f"{s.driver}/{s.pool}/{d.name} because a claim constraint would not be satisfied"
                    )
                for e in range(i):
                    cons[e].remove(base, sub)
                return None
        self.allocating.setdefault(dev_id, set()).add(ci)
        self.results[ci].append(
            _Result(rd.full_name, s.driver, s.pool, d.name, True if request.admin_access else None, s, d)
        )
        before = len(self.results[ci]) - 1

        def undo() -> None:
            for c in cons:
                c.remove(base, sub)
            self.allocating[dev_id].discard(ci)
            del self.results[ci][before:]

        return undo

    def _result(self, ci: int) -> JSON:
        claim = self.claims[ci]
        results: list[JSON] = []
        for r in self.results[ci]:
            entry: JSON = {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device}
            if r.admin_access is not None:
                entry["adminAccess"] = r.admin_access
            results.append(entry)
        config: list[JSON] = []
        seen_classes: dict[str, tuple[int, int]] = {}
        for ri, cr in enumerate(self.requests[ci]):
            rd = self.req.get((ci, ri, self.selected_sub.get((ci, ri), 0)))
            if rd is None or rd.class_raw is None:
                continue
            cname = st.name_of(rd.class_raw)
            if cname in seen_classes:
                a, b = seen_classes[cname]
                for k in range(a, b):
                    config[k]["requests"].append(rd.full_name)
                continue
            start = len(config)
            for c in st.as_list(st.spec(rd.class_raw).get("config"), "DeviceClass", "spec.config"):
                if isinstance(c, dict):
                    config.append(
                        {"source": "FromClass", "requests": [rd.full_name], **{k: v for k, v in c.items()}}
                    )
            seen_classes[cname] = (start, len(config))
            del cr
        devices = st.as_map(st.spec(claim).get("devices"), "ResourceClaim", "spec.devices")
        for c in st.as_list(devices.get("config"), "ResourceClaim", "spec.devices.config"):
            if not isinstance(c, dict):
                continue
            reqs = [
                str(x) for x in st.as_list(c.get("requests"), "ResourceClaim", "spec.devices.config.requests")
            ]
            body = {k: v for k, v in c.items() if k != "requests"}
            if not reqs:
                config.append({"source": "FromClaim", "requests": reqs, **body})
                continue
            for ri, cr in enumerate(self.requests[ci]):
                if cr.name in reqs:
                    config.append({"source": "FromClaim", "requests": reqs, **body})
                    continue
                if not cr.subrequests:
                    continue
                sub = cr.subrequests[self.selected_sub.get((ci, ri), 0)]
                if f"{cr.name}/{sub.name}" in reqs:
                    config.append({"source": "FromClaim", "requests": reqs, **body})
        out: JSON = {"devices": {"results": results}}
        if config:
            out["devices"]["config"] = config
        selector = self._node_selector(ci)
        if selector is not None:
            out["nodeSelector"] = selector
        return out

    def _node_selector(self, ci: int) -> JSON | None:
        """createNodeSelector: the node of a node-local device, else the slices' selectors ANDed."""
        exprs: list[JSON] = []
        fields: list[JSON] = []
        for r in self.results[ci]:
            s, d = r.slice, r.dev
            name = d.node_name if s.per_device else s.node_name
            selector = d.node_selector if s.per_device else s.node_selector
            if name:
                return {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
                    ]
                }
            if selector is not None:
                terms = st.as_list(selector.get("nodeSelectorTerms"), "ResourceSlice", "spec.nodeSelector")
                if len(terms) == 1 and isinstance(terms[0], dict):
                    for req in st.as_list(terms[0].get("matchFields"), "ResourceSlice", "matchFields"):
                        if req not in fields:
                            fields.append(req)
                    for req in st.as_list(
                        terms[0].get("matchExpressions"), "ResourceSlice", "matchExpressions"
                    ):
                        if req not in exprs:
                            exprs.append(req)
                elif len(terms) > 1:
                    raise _AllocError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        if not exprs and not fields:
            return None
        term: JSON = {}
        if exprs:
            term["matchExpressions"] = exprs
        if fields:
            term["matchFields"] = fields
        return {"nodeSelectorTerms": [term]}


# ----- the plugin ---------------------------------------------------------------------------------


@dataclass
class _State:
    claims: list[JSON] = field(default_factory=list)
    available_on: dict[int, JSON] = field(default_factory=dict)  # claim index -> allocation node selector
    allocator: Allocator | None = None
    node_allocations: dict[int, list[JSON]] = field(default_factory=dict)
    unavailable: set[int] = field(default_factory=set)
    reserved: dict[int, JSON] = field(default_factory=dict)  # claim index -> allocation set by Reserve

    def clone(self) -> _State:
        # dynamicresources.go: stateData.Clone returns the same pointer.
        return self

    def to_allocate(self) -> list[int]:
        return [i for i, c in enumerate(self.claims) if _allocation(c) is None]


# ----- args (kube-scheduler/config/v1 types_pluginargs.go DynamicResourcesArgs, v1/defaults.go,
# apis/config/validation/validation_pluginargs.go ValidateDynamicResourcesArgs)

ARGS_TYPE = obj("v1.DynamicResourcesArgs", filterTimeout="duration", bindingTimeout="duration")


def default_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> dict[str, Any]:
    g = gates(features)
    out: dict[str, Any] = {k: a[k] for k in ("filterTimeout", "bindingTimeout") if k in a}
    if "filterTimeout" not in out and g.get("DRASchedulerFilterTimeout"):
        out["filterTimeout"] = "10s"  # DynamicResourcesFilterTimeoutDefault
    if "bindingTimeout" not in out and g.get("DRADeviceBindingConditions") and g.get("DRAResourceClaimDeviceStatus"):
        out["bindingTimeout"] = "10m0s"  # DynamicResourcesBindingTimeoutDefault
    return out


def validate_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> list[str]:
    g = gates(features)
    errs = ErrorList()
    if g.get("DRASchedulerFilterTimeout"):
        if "filterTimeout" in a and parse_duration_ns(a["filterTimeout"]) < 0:
            errs.invalid("filterTimeout", a["filterTimeout"], "must be zero or positive")
    elif "filterTimeout" in a:
        errs.forbidden("filterTimeout", "DRASchedulingFilterTimeout feature gate is disabled")
    if g.get("DRADeviceBindingConditions") and g.get("DRAResourceClaimDeviceStatus"):
        if "bindingTimeout" in a and parse_duration_ns(a["bindingTimeout"]) < 1_000_000_000:
            errs.invalid("bindingTimeout", a["bindingTimeout"], "must be at least 1 second")
    elif "bindingTimeout" in a:
        errs.forbidden(
            "bindingTimeout",
            "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
        )
    return errs.items


class DynamicResources:
    name = NAME
    # args: declared here, decoded, defaulted and validated by the configuration (config/)
    args_type = ARGS_TYPE
    default_args = staticmethod(default_args)
    validate_args = staticmethod(validate_args)

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        gate = {k: handle.features.get(k, v) for k, v in _GATE_DEFAULTS.items()}
        self.enabled = gate["DynamicResourceAllocation"]
        self.features = _Features(
            admin_access=gate["DRAAdminAccess"],
            prioritized_list=gate["DRAPrioritizedList"],
            partitionable=gate["DRAPartitionableDevices"],
            device_taints=gate["DRADeviceTaints"],
            binding_conditions=gate["DRADeviceBindingConditions"] and gate["DRAResourceClaimDeviceStatus"],
        )
        self.filter_timeout = args.get("filterTimeout")

    # ----- claims of a pod ------------------------------------------------------------------
    def _pod_claims(self, pod: Pod) -> tuple[list[JSON], str]:
        """foreachPodResourceClaim: the pod's claims, or why one of them cannot be used."""
        cluster = self.handle.cluster
        out: list[JSON] = []
        entries = st.as_list(pod.spec.get("resourceClaims"), pod.ident, "spec.resourceClaims")
        statuses = st.as_list(
            (pod.raw.get("status") or {}).get("resourceClaimStatuses"),
            pod.ident,
            "status.resourceClaimStatuses",
        )
        for i, entry in enumerate(entries):
            entry = st.as_map(entry, pod.ident, f"spec.resourceClaims[{i}]")
            rname = str(entry.get("name") or "")
            must_check_owner = False
            if entry.get("resourceClaimName"):
                claim_name: str | None = str(entry["resourceClaimName"])
            elif entry.get("resourceClaimTemplateName"):
                found = [s for s in statuses if isinstance(s, dict) and s.get("name") == rname]
                if not found:
                    return [], f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet'
                rc = found[0].get("resourceClaimName")
                claim_name = str(rc) if rc else None
                must_check_owner = True
            else:
                return [], (
                    f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{rname}": none of the supported fields are set'
                )
            if claim_name is None:
                continue
            claim = get_claim(cluster, pod.namespace, claim_name)
            if claim is None:
                return [], f'could not find ResourceClaim "{pod.namespace}/{claim_name}"'
            if st.meta(claim).get("deletionTimestamp"):
                return [], f'resourceclaim "{st.name_of(claim)}" is being deleted'
            if must_check_owner and not self._owned_by(pod, claim):
                return [], (
                    f"ResourceClaim {st.namespace_of(claim)}/{st.name_of(claim)} was not created for pod "
                    f"{pod.namespace}/{pod.name} (pod is not owner)"
                )
            out.append(claim)
        return out, ""

    @staticmethod
    def _owned_by(pod: Pod, claim: JSON) -> bool:
        if st.namespace_of(claim) != pod.namespace:
            return False
        for ref in st.as_list(
            st.meta(claim).get("ownerReferences"), "ResourceClaim", "metadata.ownerReferences"
        ):
            if (
                isinstance(ref, dict)
                and ref.get("controller") is True
                and str(ref.get("uid") or "") == pod.uid
            ):
                return True
        return False

    # ----- PreEnqueue -------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status:
        if not self.enabled:
            return Status.success()
        _claims, problem = self._pod_claims(pod)
        if problem:
            return Status(Code.UnschedulableAndUnresolvable, problem)
        return Status.success()

    # ----- PreFilter ------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        if not self.enabled:
            return None, Status.skip()
        s = _State()
        state.write(STATE_KEY, s)
        claims, problem = self._pod_claims(pod)
        if problem:
            return None, Status(Code.UnschedulableAndUnresolvable, problem)
        if not claims:
            return None, Status.skip()
        cluster = state.cluster
        classes = {o.name: o.raw for o in cluster.objects.of_kind("DeviceClass")}
        in_flight = tracker(cluster).in_flight
        to_allocate = 0
        for index, claim in enumerate(claims):
            alloc = _allocation(claim)
            if alloc is not None:
                sel = alloc.get("nodeSelector")
                if isinstance(sel, dict):
                    s.available_on[index] = sel
                continue
            to_allocate += 1
            if claim_uid(claim) in in_flight:
                return None, Status(
                    Code.UnschedulableAndUnresolvable,
                    f"resource claim {claim_ref(claim)} is in the process of being allocated",
                )
            for r in claim_requests(claim):
                if r.exact is not None:
                    bad = self._validate_class(r.exact.class_name, r.name, classes)
                    if bad is not None:
                        return None, bad
                elif r.subrequests:
                    if not self.features.prioritized_list:
                        return None, Status(
                            Code.UnschedulableAndUnresolvable,
                            f"resource claim {claim_ref(claim)}, request {r.name}: has subrequests, but the "
                            "DRAPrioritizedList feature is disabled",
                        )
                    for sub in r.subrequests:
                        bad = self._validate_class(sub.class_name, f"{r.name}/{sub.name}", classes)
                        if bad is not None:
                            return None, bad
                else:
                    return None, Status(
                        Code.UnschedulableAndUnresolvable,
                        f"resource claim {claim_ref(claim)}, request {r.name}: unknown request type",
                    )
        if to_allocate > 0:
            s.allocator = Allocator(cluster, self.features, allocated_devices(cluster), classes)
        s.claims = claims
        return None, Status.success()

    @staticmethod
    def _validate_class(class_name: str, request: str, classes: dict[str, JSON]) -> Status | None:
        if not class_name:
            return Status.error(f"request {request}: unsupported request type")
        if class_name not in classes:
            return Status(
                Code.UnschedulableAndUnresolvable,
                f"request {request}: device class {class_name} does not exist",
            )
        return None

    # ----- Filter ---------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        b = Verdicts.build(len(nodes))
        if not self.enabled:
            return b.done()
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            b.reject(np.ones(len(nodes), dtype=bool), Code.Error, "not found")
            return b.done()
        if not s.claims:
            return b.done()
        cluster = state.cluster
        unavailable = np.zeros(len(nodes), dtype=bool)
        unavailable_claims: dict[int, list[int]] = {}
        for index, sel in s.available_on.items():
            ok = st.node_selector_mask(
                cluster,
                sel,
                nodes,
                obj=f"ResourceClaim {claim_ref(s.claims[index])}",
                fld="status.allocation.nodeSelector",
            )
            for pos in np.flatnonzero(~ok):
                unavailable_claims.setdefault(int(pos), []).append(index)
            unavailable |= ~ok
        to_allocate = [s.claims[i] for i in s.to_allocate()]
        shared: tuple[list[JSON] | None, _AllocError | None] | None = None
        # The trace: what each node offered (interned, so that nodes can be grouped).
        facts: dict[str, int] = {}
        fact_of = np.zeros(len(nodes), dtype=np.int64)
        shared_report: str | None = None

        def note(k: int, fact: JSON) -> None:
            text = json.dumps(fact)
            fact_of[k] = facts.setdefault(text, len(facts))

        for k, i in enumerate(nodes):
            node = int(i)
            allocations: list[JSON] | None = None
            if s.allocator is not None:
                has_slices = self._node_has_slices(s.allocator, node)
                try:
                    if not has_slices and shared is not None:
                        if shared[1] is not None:
                            raise shared[1]
                        allocations = shared[0]
                    else:
                        allocations = s.allocator.allocate(node, to_allocate)
                        if not has_slices:
                            shared = (allocations, None)
                except _AllocError as exc:
                    if not has_slices and shared is None:
                        shared = (None, exc)
                    code = Code.UnschedulableAndUnresolvable if exc.on_node else Code.Error
                    b.reject(k, code, str(exc))
                    note(k, {"error": str(exc)})
                    continue
                if allocations is None or len(allocations) != len(to_allocate):
                    b.reject(k, Code.UnschedulableAndUnresolvable, "cannot allocate all claims")
                    if has_slices or shared_report is None:
                        run = s.allocator.last_run
                        text = json.dumps({"requests": run.report() if run is not None else []})
                        if not has_slices:
                            shared_report = text
                    else:
                        text = shared_report
                    fact_of[k] = facts.setdefault(text, len(facts))
                    continue
            if unavailable[k]:
                s.unavailable.update(unavailable_claims.get(k, []))
                b.reject(k, Code.UnschedulableAndUnresolvable, "resourceclaim not available on the node")
                note(
                    k, {"unavailableClaims": [claim_ref(s.claims[c]) for c in unavailable_claims.get(k, [])]}
                )
                continue
            if s.allocator is not None:
                assert allocations is not None
                s.node_allocations[node] = allocations
                note(k, {"allocation": self._allocation_facts(to_allocate, allocations)})
            else:
                note(k, {})
        verdicts = b.done()
        state.record_details(
            "Filter", NAME, self._filter_details(state, s, nodes, verdicts.codes, facts, fact_of)
        )
        return verdicts

    @staticmethod
    def _allocation_facts(claims: list[JSON], allocations: list[JSON]) -> list[JSON]:
        out: list[JSON] = []
        for claim, allocation in zip(claims, allocations, strict=False):
            results = allocation["devices"]["results"]
            for r in results:
                out.append(
                    {
                        "claim": claim_ref(claim),
                        "request": str(r.get("request")),
                        "device": f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}",
                    }
                )
        return out

    @staticmethod
    def _filter_details(
        state: CycleState,
        s: _State,
        nodes: IntArray,
        codes: Any,
        facts: dict[str, int],
        fact_of: IntArray,
    ) -> JSON:
        """The Filter stage's details: the pod's claims, then nodes grouped by what they offered (the
        devices allocated, or per request the devices the allocator could take and why not the others)."""
        claims = [{"claim": claim_ref(c), "allocated": _allocation(c) is not None} for c in s.claims]
        texts = {v: k for k, v in facts.items()}
        groups, omitted = st.group_nodes(state.cluster, nodes, np.vstack([codes.astype(np.int64), fact_of]))
        out: list[JSON] = []
        for g in groups:
            entry: JSON = {"nodes": g.names, "nodeCount": g.count, "passed": int(codes[g.first]) == 0}
            entry.update(json.loads(texts[int(fact_of[g.first])]))
            out.append(entry)
        details: JSON = {"claims": claims, "nodes": out}
        if omitted:
            details["omittedGroups"] = omitted
        return details

    @staticmethod
    def _node_has_slices(allocator: Allocator, node: int) -> bool:
        idx = allocator.index
        return bool(idx.by_node_name.get(allocator.cluster.names[node])) or bool(idx.selected)

    # ----- PostFilter -----------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        if not self.enabled:
            return None, Status(Code.Unschedulable, "plugin disabled")
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            # getStateData: CycleState.Read's ErrNotFound.
            return None, Status.error("not found")
        if not s.claims:
            return None, Status(Code.Unschedulable, "no new claims to deallocate")
        # Upstream iterates a set (random order): SchedViz takes the lowest claim index.
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            reserved = [
                r
                for r in st.as_list(_status(claim).get("reservedFor"), "ResourceClaim", "status.reservedFor")
            ]
            if not reserved or (
                len(reserved) == 1 and isinstance(reserved[0], dict) and reserved[0].get("uid") == pod.uid
            ):
                updated = copy.deepcopy(claim)
                status = updated.setdefault("status", {})
                for k in ("reservedFor", "allocation", "devices"):
                    status.pop(k, None)
                t = tracker(state.cluster)
                t.assumed[claim_key(updated)] = updated
                t.touch()
                state.record_details("PostFilter", NAME, {"deallocated": claim_ref(claim)})
                return None, Status(Code.Unschedulable, "deallocation of ResourceClaim completed")
        return None, Status(Code.Unschedulable, "still not schedulable")

    # ----- Score ----------------------------------------------------------------------------
    def score(self, state: CycleState, pod: Pod, nodes: IntArray) -> IntArray:
        out = np.zeros(len(nodes), dtype=np.int64)
        if not self.enabled:
            return out
        s = state.get(STATE_KEY)
        if not isinstance(s, _State) or not s.claims:
            return out
        for k, i in enumerate(nodes):
            allocations = s.node_allocations.get(int(i))
            if allocations is None:
                continue
            out[k] = self._score(s.claims, allocations)
        return out

    @staticmethod
    def _score(claims: list[JSON], allocations: list[JSON]) -> int:
        """computeScore: firstAvailable subrequests score 8 - their position."""
        score = 0
        for i, claim in enumerate(claims):
            if i >= len(allocations):
                # computeScore's error path ("number of allocations ... smaller than number of claims").
                return 0
            allocated_subs = {
                str(r.get("request"))
                for r in allocations[i]["devices"]["results"]
                if len(str(r.get("request")).split("/")) == 2
            }
            for r in claim_requests(claim):
                if r.exact is not None:
                    continue
                for j, sub in enumerate(r.subrequests):
                    if f"{r.name}/{sub.name}" in allocated_subs:
                        score += FIRST_AVAILABLE_MAX_SIZE - j
        return score

    def normalize_score(self, state: CycleState, pod: Pod, nodes: IntArray, scores: IntArray) -> IntArray:
        """helper.DefaultNormalizeScore(MaxNodeScore, reverse=false)."""
        if not self.enabled or len(scores) == 0:
            return scores
        top = int(scores.max())
        if top <= 0:
            return scores
        return (100 * scores) // top

    # ----- Reserve / Unreserve --------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        if not self.enabled:
            return Status.success()
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status.error("not found")
        if not s.claims:
            return Status.success()
        pending = s.to_allocate()
        if not pending:
            return Status.success()
        if s.allocator is not None:
            allocations = s.node_allocations.get(state.cluster.index[node])
            if not allocations:
                return Status.error("claim allocation not found for node")
            if len(allocations) != len(pending):
                return Status.error(
                    f"internal error, have {len(allocations)} allocations, {len(pending)} claims to allocate, "
                    f"want {len(pending)} claims"
                )
            t = tracker(state.cluster)
            in_flight: list[JSON] = []
            for n, index in enumerate(pending):
                allocation = allocations[n]
                s.reserved[index] = allocation
                in_flight.append(
                    {"claim": claim_ref(s.claims[index]), "devices": allocation_devices(allocation)}
                )
                claim = copy.deepcopy(s.claims[index])
                md = claim.setdefault("metadata", {})
                finalizers = list(md.get("finalizers") or [])
                if FINALIZER not in finalizers:
                    md["finalizers"] = [*finalizers, FINALIZER]
                claim.setdefault("status", {})["allocation"] = allocation
                t.in_flight[claim_uid(claim)] = claim
            t.touch()
            state.record_details("Reserve", NAME, {"inFlight": in_flight})
        return Status.success()

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        if not self.enabled:
            return
        s = state.get(STATE_KEY)
        if not isinstance(s, _State) or not s.claims:
            return
        t = tracker(state.cluster)
        for claim in s.claims:
            if t.in_flight.pop(claim_uid(claim), None) is not None:
                # AssumedClaimRestore: back to the informer's object.
                t.assumed.pop(claim_key(claim), None)
            if _allocation(claim) is not None and _reserved_for_pod(pod, claim):
                # The strategic-merge patch that drops the pod from reservedFor.
                updated = copy.deepcopy(get_claim(state.cluster, *claim_key(claim)) or claim)
                status = updated.setdefault("status", {})
                status["reservedFor"] = [
                    r
                    for r in status.get("reservedFor") or []
                    if not (isinstance(r, dict) and r.get("uid") == pod.uid)
                ]
                t.assumed[claim_key(updated)] = updated
        t.touch()

    # ----- PreBind ----------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node: str) -> Status:
        if not self.enabled:
            return Status.skip()
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status.error("not found")
        if not s.claims:
            return Status.skip()
        return Status.success()

    def pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        if not self.enabled:
            return Status.success()
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status.error("not found")
        if not s.claims:
            return Status.success()
        t = tracker(state.cluster)
        written: list[JSON] = []
        for index, claim in enumerate(s.claims):
            if _reserved_for_pod(pod, claim):
                continue
            # bindClaim: store the allocation from Reserve and add the pod to reservedFor.
            allocation = s.reserved.get(index)
            current = get_claim(state.cluster, *claim_key(claim))
            if current is None:
                return Status.error(f'resourceclaims.resource.k8s.io "{st.name_of(claim)}" not found')
            updated = copy.deepcopy(current)
            status = updated.setdefault("status", {})
            if allocation is not None:
                if _allocation(updated) is not None:
                    t.in_flight.pop(claim_uid(claim), None)
                    return Status.error(f"claim {claim_ref(claim)} got allocated elsewhere in the meantime")
                md = updated.setdefault("metadata", {})
                finalizers = list(md.get("finalizers") or [])
                if FINALIZER not in finalizers:
                    md["finalizers"] = [*finalizers, FINALIZER]
                status["allocation"] = allocation
            status["reservedFor"] = [
                *(status.get("reservedFor") or []),
                {"resource": "pods", "name": pod.name, "uid": pod.uid},
            ]
            t.assumed[claim_key(updated)] = updated
            if allocation is not None:
                t.in_flight.pop(claim_uid(claim), None)
            s.claims[index] = updated
            final = _allocation(updated)
            written.append(
                {
                    "claim": claim_ref(updated),
                    "devices": allocation_devices(final) if final is not None else [],
                    "newlyAllocated": allocation is not None,
                    "reservedFor": f"{pod.namespace}/{pod.name}",
                }
            )
        t.touch()
        state.record_details("PreBind", NAME, {"claims": written})
        return Status.success()

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """The reasons and the pod's resource claims (a description; explain suggests no change)."""
        named: list[str] = []
        details: dict[str, Any] = {}
        claims = []
        for rc in pod.spec.get("resourceClaims") or []:
            if not isinstance(rc, dict):
                continue
            if rc.get("resourceClaimName"):
                claims.append(f"ResourceClaim {pod.namespace}/{rc['resourceClaimName']}")
            elif rc.get("resourceClaimTemplateName"):
                claims.append(f"ResourceClaimTemplate {pod.namespace}/{rc['resourceClaimTemplateName']}")
        named.extend(claims)
        details["claims"] = claims
        text = "; ".join(reasons)
        if named:
            text += " — " + "; ".join(named)
        return [Diagnosis(nodes, text, details, None)]
