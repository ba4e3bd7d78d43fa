"""A pod's resource requests, computed as the scheduler does.

Mirrors, for kube-scheduler v1.35.4 with its default feature gates (PodLevelResources beta and on,
InPlacePodVerticalScaling GA, SidecarContainers GA, InPlacePodLevelResourcesVerticalScaling off):

- the API server's defaulting of a Pod (pkg/apis/core/v1/defaults.go): a container limit without a
  request becomes the request, every quantity is rounded up to milli precision, and pod-level
  requests are defaulted from container requests and pod-level limits;
- k8s.io/component-helpers/resource/helpers.go PodRequests / AggregateContainerRequests: regular and
  restartable (sidecar) init containers summed, other init containers as a running maximum, pod-level
  requests replacing the aggregate for cpu, memory and hugepages, then the pod overhead; quantities are
  summed exactly and converted only at the end;
- pkg/scheduler/framework/types.go PodInfo.CalculateResource and Resource.Add: what NodeInfo adds
  to a node for a pod (``requests``, status-aware), and the non-zero requests used by scoring
  (``nonzero_cpu``/``nonzero_memory``: a container that does not name cpu or memory counts as
  requesting 100m / 200Mi; an explicit zero stays zero);
- framework/plugins/noderesources/fit.go computePodResourceRequest (``fit_requests``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from functools import lru_cache
from typing import Any

from . import quantity
from .contentkey import content_key
from .errors import InputError

ResourceList = dict[str, Decimal]

CPU = quantity.CPU
MEMORY = quantity.MEMORY
EPHEMERAL_STORAGE = quantity.EPHEMERAL_STORAGE
PODS = quantity.PODS

# pkg/scheduler/util/pod_resources.go
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

# k8s.io/api/core/v1 resource name prefixes
HUGEPAGES_PREFIX = "hugepages-"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
REQUESTS_PREFIX = "requests."

_ZERO = Decimal(0)
_MILLI = Decimal("0.001")

# The defaults a container without a cpu / memory request counts for (as quantities).
NON_ZERO_DEFAULTS: ResourceList = {
    CPU: Decimal(DEFAULT_MILLI_CPU_REQUEST) / 1000,
    MEMORY: Decimal(DEFAULT_MEMORY_REQUEST),
}


# ----- resource names (pkg/apis/core/v1/helper/helpers.go, pkg/scheduler/util/utils.go) ------------

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _is_qualified_name(value: str) -> bool:
    """apimachinery validation.IsQualifiedName: an optional DNS-1123 subdomain prefix and a name."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return False
    else:
        return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


def is_prefixed_native_resource(name: str) -> bool:
    return DEFAULT_NAMESPACE_PREFIX in name


def is_native_resource(name: str) -> bool:
    return "/" not in name or is_prefixed_native_resource(name)


def is_hugepage_resource_name(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_attachable_volume_resource_name(name: str) -> bool:
    return name.startswith(ATTACHABLE_VOLUMES_PREFIX)


@lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    """helper.IsExtendedResourceName: outside kubernetes.io/ and a valid quota name once prefixed."""
    if is_native_resource(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return _is_qualified_name(REQUESTS_PREFIX + name)


@lru_cache(maxsize=4096)
def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName: the names a framework.Resource keeps in ScalarResources."""
    return (
        is_extended_resource_name(name)
        or is_hugepage_resource_name(name)
        or is_prefixed_native_resource(name)
        or is_attachable_volume_resource_name(name)
    )


def is_scheduler_resource(name: str) -> bool:
    """The names framework.Resource accounts (besides pods): cpu, memory, ephemeral-storage, scalars."""
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource_name(name)


def is_supported_pod_level_resource(name: str) -> bool:
    """resource.IsSupportedPodLevelResource: cpu, memory and hugepages-*."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def is_overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed."""
    return is_native_resource(name) and not is_hugepage_resource_name(name)


# ----- quantities ------------------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def _parse_cached(value: str | int | float) -> Decimal:
    return quantity.parse(value)


def _parse_pod_quantity(value: object, ident: str, path: str) -> Decimal:
    """A Quantity from a pod, rounded up to milli precision as SetDefaults_ResourceList does."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InputError(f"invalid quantity {value!r}: expected a string or a number", obj=ident, field=path)
    try:
        q = _parse_cached(value)
    except InputError as exc:
        raise InputError(exc.problem, obj=ident, field=path) from None
    if q < 0:
        raise InputError(
            f"invalid quantity {value!r}: must be greater than or equal to 0", obj=ident, field=path
        )
    exp = q.as_tuple().exponent
    if isinstance(exp, int) and exp < -3:
        q = q.quantize(_MILLI, rounding=ROUND_CEILING)
    return q


def _resource_list(raw: object, ident: str, path: str) -> ResourceList | None:
    """A v1.ResourceList; None when the field is absent or null (Go's nil map)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InputError(f"expected an object, got {type(raw).__name__}", obj=ident, field=path)
    return {str(k): _parse_pod_quantity(v, ident, f"{path}.{k}") for k, v in raw.items()}


def to_units(name: str, q: Decimal) -> int:
    """Quantity.MilliValue() for cpu, Quantity.Value() for everything else (both round up)."""
    if name == CPU:
        return math.ceil(q * 1000)
    return math.ceil(q)


def list_to_units(rl: Mapping[str, Decimal]) -> dict[str, int]:
    return {k: to_units(k, v) for k, v in rl.items()}


def _add(dst: ResourceList, src: Mapping[str, Decimal] | None) -> None:
    """helpers.go addResourceList."""
    if src:
        for k, v in src.items():
            dst[k] = dst.get(k, _ZERO) + v


def _max_into(dst: ResourceList, src: Mapping[str, Decimal] | None) -> None:
    """helpers.go maxResourceList: dst[k] = max(dst[k], src[k]) for every k in src."""
    if src:
        for k, v in src.items():
            cur = dst.get(k)
            if cur is None or v > cur:
                dst[k] = v


def _max_of(first: Mapping[str, Decimal] | None, *others: Mapping[str, Decimal] | None) -> ResourceList:
    """helpers.go max(a, b...)."""
    out: ResourceList = dict(first) if first else {}
    for o in others:
        _max_into(out, o)
    return out


# ----- the parsed pod ----------------------------------------------------------------------------------


@dataclass(slots=True)
class ContainerResources:
    """One container's resources after API defaulting."""

    name: str
    requests: ResourceList
    limits: ResourceList | None
    restartable: bool = False  # an init container with restartPolicy: Always (a sidecar)
    # The container's status resources when the pod status reports them (cs.Resources != nil):
    # the actuated requests and the allocated resources.
    status_requests: ResourceList | None = None
    status_allocated: ResourceList | None = None
    has_status: bool = False


@dataclass(slots=True)
class ParsedPodResources:
    """The resource-related fields of a pod, defaulted as the API server stores them."""

    containers: list[ContainerResources]
    init_containers: list[ContainerResources]
    overhead: ResourceList | None
    pod_requests: ResourceList | None  # spec.resources.requests (pod-level), after defaulting
    pod_limits: ResourceList | None
    resize_infeasible: bool = False

    @property
    def pod_level_requests_set(self) -> bool:
        """resource.IsPodLevelRequestsSet."""
        return bool(self.pod_requests) and any(
            is_supported_pod_level_resource(k) for k in self.pod_requests or ()
        )

    @property
    def has_restartable_init_container(self) -> bool:
        return any(c.restartable for c in self.init_containers)


def _mapping(value: object, ident: str, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"expected an object, got {type(value).__name__}", obj=ident, field=path)
    return value


def _list(value: object, ident: str, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"expected a list, got {type(value).__name__}", obj=ident, field=path)
    return value


def _parse_container(raw: object, ident: str, path: str, init: bool) -> ContainerResources:
    c = _mapping(raw, ident, path)
    res = _mapping(c.get("resources"), ident, f"{path}.resources")
    requests = _resource_list(res.get("requests"), ident, f"{path}.resources.requests")
    limits = _resource_list(res.get("limits"), ident, f"{path}.resources.limits")
    # SetDefaults_Pod: a limit without a request makes the request equal to the limit.
    reqs: ResourceList = dict(requests) if requests else {}
    if limits is not None:
        for k, v in limits.items():
            if k not in reqs:
                reqs[k] = v
    restart_policy = c.get("restartPolicy")
    if restart_policy is not None and not isinstance(restart_policy, str):
        raise InputError("must be a string", obj=ident, field=f"{path}.restartPolicy")
    return ContainerResources(
        name=str(c.get("name") or ""),
        requests=reqs,
        limits=limits,
        restartable=init and restart_policy == "Always",
    )


def _aggregate_limits(containers: list[ContainerResources], inits: list[ContainerResources]) -> ResourceList:
    """resource.AggregateContainerLimits (spec only)."""
    out: ResourceList = {}
    for c in containers:
        _add(out, c.limits)
    restartable: ResourceList = {}
    init_max: ResourceList = {}
    for c in inits:
        if c.restartable:
            _add(out, c.limits)
            _add(restartable, c.limits)
            cur = restartable
        else:
            cur = {}
            _add(cur, c.limits)
            _add(cur, restartable)
        _max_into(init_max, cur)
    _max_into(out, init_max)
    return out


def parse_pod_resources(
    spec: Mapping[str, Any], status: Mapping[str, Any] | None, ident: str
) -> ParsedPodResources:
    """Parse and default the resource fields of a pod (spec and, for resize state, status)."""
    containers = [
        _parse_container(c, ident, f"spec.containers[{i}]", False)
        for i, c in enumerate(_list(spec.get("containers"), ident, "spec.containers"))
    ]
    inits = [
        _parse_container(c, ident, f"spec.initContainers[{i}]", True)
        for i, c in enumerate(_list(spec.get("initContainers"), ident, "spec.initContainers"))
    ]
    overhead = _resource_list(spec.get("overhead"), ident, "spec.overhead")
    pod_requests: ResourceList | None = None
    pod_limits: ResourceList | None = None
    raw_pod_res = spec.get("resources")
    if raw_pod_res is not None:
        pr = _mapping(raw_pod_res, ident, "spec.resources")
        pod_requests = _resource_list(pr.get("requests"), ident, "spec.resources.requests")
        pod_limits = _resource_list(pr.get("limits"), ident, "spec.resources.limits")
        pod_requests, pod_limits = _default_pod_level(containers, inits, pod_requests, pod_limits)

    parsed = ParsedPodResources(containers, inits, overhead, pod_requests, pod_limits)
    if status:
        _parse_status(parsed, status, ident)
    return parsed


def _default_pod_level(
    containers: list[ContainerResources],
    inits: list[ContainerResources],
    requests: ResourceList | None,
    limits: ResourceList | None,
) -> tuple[ResourceList | None, ResourceList | None]:
    """defaults.go defaultHugePagePodLimits then defaultPodRequests (PodLevelResources is on)."""
    # defaultHugePagePodLimits
    if limits or requests:
        lims: ResourceList = dict(limits) if limits else {}
        for k, v in _aggregate_limits(containers, inits).items():
            if not is_supported_pod_level_resource(k) or not is_hugepage_resource_name(k):
                continue
            if requests and k in requests:
                continue
            if k not in lims:
                lims[k] = v
        if lims:
            limits = lims
    # defaultPodRequests
    if limits:
        reqs: ResourceList = dict(requests) if requests else {}
        aggregate = _aggregate(containers, inits, use_status=False, non_missing=None, resize_infeasible=False)
        for k, v in aggregate.items():
            if k not in reqs and is_supported_pod_level_resource(k) and is_overcommit_allowed(k):
                reqs[k] = v
        for k, v in limits.items():
            if k not in reqs and is_supported_pod_level_resource(k):
                reqs[k] = v
        if reqs:
            requests = reqs
    return requests, limits


def _parse_status(parsed: ParsedPodResources, status: Mapping[str, Any], ident: str) -> None:
    """The container resources reported in the pod status (InPlacePodVerticalScaling is GA)."""
    for i, cond in enumerate(_list(status.get("conditions"), ident, "status.conditions")):
        cond = _mapping(cond, ident, f"status.conditions[{i}]")
        if cond.get("type") == "PodResizePending":
            # resource.IsPodResizeInfeasible looks at the first such condition only
            parsed.resize_infeasible = cond.get("reason") == "Infeasible"
            break
    by_name: dict[str, tuple[ResourceList | None, ResourceList | None]] = {}
    for key in ("containerStatuses", "initContainerStatuses"):
        for i, cs in enumerate(_list(status.get(key), ident, f"status.{key}")):
            path = f"status.{key}[{i}]"
            cs = _mapping(cs, ident, path)
            if cs.get("resources") is None:
                continue
            res = _mapping(cs.get("resources"), ident, f"{path}.resources")
            actuated = _resource_list(res.get("requests"), ident, f"{path}.resources.requests")
            allocated = _resource_list(cs.get("allocatedResources"), ident, f"{path}.allocatedResources")
            by_name[str(cs.get("name") or "")] = (actuated, allocated)
    if not by_name:
        return
    for c in parsed.containers:
        _attach_status(c, by_name)
    for c in parsed.init_containers:
        if c.restartable:
            _attach_status(c, by_name)


def _attach_status(
    c: ContainerResources, by_name: dict[str, tuple[ResourceList | None, ResourceList | None]]
) -> None:
    found = by_name.get(c.name)
    if found is not None:
        c.has_status = True
        c.status_requests, c.status_allocated = found


# ----- PodRequests -------------------------------------------------------------------------------------


def _effective(c: ContainerResources, use_status: bool, resize_infeasible: bool) -> ResourceList:
    """helpers.go determineEffectiveRequests when the container reports status resources."""
    if not use_status or not c.has_status:
        return c.requests
    if resize_infeasible:
        return _max_of(c.status_requests, c.status_allocated)
    return _max_of(c.requests, c.status_requests, c.status_allocated)


def _with_non_missing(reqs: ResourceList, non_missing: Mapping[str, Decimal] | None) -> ResourceList:
    """helpers.go applyNonMissing: add a default for each resource the container does not name."""
    if not non_missing:
        return reqs
    out = dict(reqs)
    for k, v in non_missing.items():
        if k not in reqs:
            out[k] = out.get(k, _ZERO) + v
    return out


def _aggregate(
    containers: list[ContainerResources],
    inits: list[ContainerResources],
    *,
    use_status: bool,
    non_missing: Mapping[str, Decimal] | None,
    resize_infeasible: bool,
) -> ResourceList:
    """resource.AggregateContainerRequests."""
    out: ResourceList = {}
    for c in containers:
        _add(out, _with_non_missing(_effective(c, use_status, resize_infeasible), non_missing))
    restartable: ResourceList = {}
    init_max: ResourceList = {}
    for c in inits:
        r = _with_non_missing(_effective(c, use_status and c.restartable, resize_infeasible), non_missing)
        if c.restartable:
            # a sidecar runs alongside the regular containers and every later init container
            _add(out, r)
            _add(restartable, r)
            cur = restartable
        else:
            cur = dict(r)
            _add(cur, restartable)
        _max_into(init_max, cur)
    _max_into(out, init_max)
    return out


def pod_requests(
    parsed: ParsedPodResources,
    *,
    use_status: bool = False,
    pod_level: bool = True,
    non_missing: Mapping[str, Decimal] | None = None,
    exclude_overhead: bool = False,
) -> ResourceList:
    """resource.PodRequests with the given PodResourcesOptions (UseStatusResources,
    !SkipPodLevelResources, NonMissingContainerRequests, ExcludeOverhead)."""
    reqs = _aggregate(
        parsed.containers,
        parsed.init_containers,
        use_status=use_status,
        non_missing=non_missing,
        resize_infeasible=parsed.resize_infeasible,
    )
    if pod_level and parsed.pod_level_requests_set:
        for k, v in (parsed.pod_requests or {}).items():
            if is_supported_pod_level_resource(k):
                reqs[k] = v
    if not exclude_overhead:
        _add(reqs, parsed.overhead)
    return reqs


def scheduler_view(rl: Mapping[str, Decimal]) -> dict[str, int]:
    """framework.Resource.Add / SetMaxResource: cpu in milli, the rest in whole units; pods and
    names that are neither native scheduler resources nor scalar resources are dropped."""
    return {k: to_units(k, v) for k, v in rl.items() if is_scheduler_resource(k)}


def non_missing_container_requests(requests: Mapping[str, Decimal], pod_level_set: bool) -> ResourceList:
    """types.go getNonMissingContainerRequests."""
    if not pod_level_set:
        return dict(NON_ZERO_DEFAULTS)
    return {k: v for k, v in NON_ZERO_DEFAULTS.items() if k not in requests}


# ----- what the scheduler keeps per pod ---------------------------------------------------------------------


@dataclass(slots=True)
class PodResources:
    """A pod's requests in scheduler units (milli-CPU, bytes, counts).

    ``requests`` is what NodeInfo adds to the pod's node (framework.Resource from CalculateResource:
    status-aware, pod-level requests honoured); ``nonzero_cpu``/``nonzero_memory`` are the non-zero
    requests NodeInfo.NonZeroRequested adds; ``fit_requests`` is what NodeResourcesFit's Filter
    checks for the pod (computePodResourceRequest: spec only).
    """

    requests: dict[str, int] = field(default_factory=dict)
    nonzero_cpu: int = 0
    nonzero_memory: int = 0
    fit_requests: dict[str, int] = field(default_factory=dict)
    parsed: ParsedPodResources | None = field(default=None, repr=False, compare=False)
    views: dict[str, dict[str, int]] = field(default_factory=dict, repr=False, compare=False)

    def view(self, key: str, compute: Callable[[ParsedPodResources], dict[str, int]]) -> dict[str, int]:
        """Another reading of the pod's requests (e.g. a scorer's), computed once and kept."""
        got = self.views.get(key)
        if got is None:
            got = compute(self.parsed or ParsedPodResources([], [], None, None, None))
            self.views[key] = got
        return got


def compute_pod_resources(
    spec: Mapping[str, Any], ident: str, status: Mapping[str, Any] | None = None
) -> PodResources:
    parsed = parse_pod_resources(spec, status, ident)
    # PodInfo.CalculateResource: UseStatusResources (InPlacePodVerticalScaling), pod-level on.
    reqs = pod_requests(parsed, use_status=True)
    pod_level_set = parsed.pod_level_requests_set
    non_missing = non_missing_container_requests(reqs, pod_level_set)
    non0 = pod_requests(parsed, use_status=True, non_missing=non_missing) if non_missing else reqs
    requests = scheduler_view(reqs)
    uses_status = any(c.has_status for c in parsed.containers) or any(
        c.has_status for c in parsed.init_containers
    )
    # computePodResourceRequest: the pod's spec only (SetMaxResource over PodRequests).
    fit = scheduler_view(pod_requests(parsed)) if uses_status else requests
    nonzero_cpu = to_units(CPU, non0.get(CPU, _ZERO))
    nonzero_memory = to_units(MEMORY, non0.get(MEMORY, _ZERO))
    for name, value in (*requests.items(), *fit.items(), (CPU, nonzero_cpu), (MEMORY, nonzero_memory)):
        if value > quantity.INT64_MAX:  # the scheduler adds requests up in 64-bit integers
            unit = "milli-CPU" if name == CPU else "units"
            raise InputError(
                f"the pod's {name} requests add up to {value} {unit}, more than {quantity.INT64_MAX}",
                obj=ident,
                field="spec.containers[*].resources.requests",
            )
    return PodResources(
        requests=requests,
        nonzero_cpu=nonzero_cpu,
        nonzero_memory=nonzero_memory,
        fit_requests=fit,
        parsed=parsed,
    )


def _section_key(value: object) -> bytes | str | None:
    return None if value is None else content_key(value)


def _containers_key(raw: object) -> tuple[object, ...] | None:
    if raw is None:
        return ()
    if type(raw) is not list:
        return None
    out: list[object] = []
    for c in raw:
        if type(c) is not dict:
            return None
        out.append(content_key((c.get("name"), c.get("resources"), c.get("restartPolicy"))))
    return tuple(out)


def status_resources_key(status: Mapping[str, Any] | None) -> tuple[object, ...] | None:
    """What ``_parse_status`` reads: the first PodResizePending condition's reason and the
    containers' reported resources."""
    if not status:
        return ()
    out: list[object] = []
    conditions = status.get("conditions")
    if conditions is not None:
        if type(conditions) is not list:
            return None
        for cond in conditions:
            if type(cond) is not dict:
                return None
            if cond.get("type") == "PodResizePending":
                out.append(("resize", content_key(cond.get("reason"))))
                break
    for key in ("containerStatuses", "initContainerStatuses"):
        statuses = status.get(key)
        if statuses is None:
            continue
        if type(statuses) is not list:
            return None
        for cs in statuses:
            if type(cs) is not dict:
                return None
            if cs.get("resources") is not None:
                out.append(
                    (
                        key,
                        content_key(cs.get("name")),
                        content_key(cs.get("resources")),
                        _section_key(cs.get("allocatedResources")),
                    )
                )
    return tuple(out)


class PodResourcesCache:
    """``compute_pod_resources`` once per distinct content: the pods of one template (a
    Deployment's thousands) share one ``PodResources``, and the readings kept in its ``views``.

    The key is everything the computation reads (each container's name, resources and restart
    policy, the pod-level resources and overhead, the status' resize condition and reported container
    resources); a pod whose fields are not of the usual shapes is computed on its own, so its error
    names it."""

    LIMIT = 100_000

    def __init__(self) -> None:
        self._hits: dict[tuple[object, ...], PodResources] = {}

    def compute(self, spec: Mapping[str, Any], ident: str, status: Mapping[str, Any] | None) -> PodResources:
        containers = _containers_key(spec.get("containers"))
        inits = _containers_key(spec.get("initContainers"))
        reported = status_resources_key(status)
        if containers is None or inits is None or reported is None:
            return compute_pod_resources(spec, ident, status)
        key = (
            containers,
            inits,
            _section_key(spec.get("resources")),
            _section_key(spec.get("overhead")),
            reported,
        )
        hit = self._hits.get(key)
        if hit is None:
            hit = compute_pod_resources(spec, ident, status)
            if len(self._hits) < self.LIMIT:
                self._hits[key] = hit
        return hit
