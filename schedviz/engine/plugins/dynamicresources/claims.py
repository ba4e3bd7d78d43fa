"""ResourceClaims as the scheduler sees them (dynamicresources/claims.go, dra_manager.go,
allocateddevices.go): the informer's claims with the assumed updates and the allocations in flight
(``ClaimTracker``), and the devices already allocated.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...objects import Pod
from .. import _storage as st

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
