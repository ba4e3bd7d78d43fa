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
PreBind writes it into the claim, as the API update would. Selectors are CEL, evaluated by cel/
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
the parts of Kubernetes' CEL environment cel/ lists as unsupported.

The package follows upstream's split: ``plugin`` (dynamicresources.go), ``claims`` (claims.go,
dra_manager.go, allocateddevices.go), ``slices`` and ``allocator`` (dynamic-resource-allocation's
structured allocator), ``cel/`` (dynamic-resource-allocation/cel and Kubernetes' CEL libraries).
"""

from .claims import NAME, ClaimTracker, allocated_devices, claim_key, claim_ref, claim_uid, get_claim, tracker
from .plugin import DynamicResources

__all__ = [
    "NAME",
    "ClaimTracker",
    "DynamicResources",
    "allocated_devices",
    "claim_key",
    "claim_ref",
    "claim_uid",
    "get_claim",
    "tracker",
]
