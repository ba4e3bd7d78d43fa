"""Scoring arithmetic shared by NodeResourcesFit and NodeResourcesBalancedAllocation, vectorised
over a batch of nodes.

Mirrors framework/plugins/noderesources/resource_allocation.go (resourceAllocationScorer: which
requests a scorer reads, calculateResourceAllocatableRequest, calculatePodResourceRequest),
least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go, balanced_allocation.go
(balancedResourceScorer) and helper/shape_score.go (BuildBrokenLinearFunction), v1.35.

All integer arithmetic is int64 with Go's truncating division; the float arithmetic follows the
same float64 operations in the same order as upstream, so results match bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import numpy.typing as npt

from ...cluster import ClusterState
from ...errors import ConfigError
from ...framework import MAX_NODE_SCORE
from ...resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    NON_ZERO_DEFAULTS,
    ParsedPodResources,
    is_scalar_resource_name,
    pod_requests,
    to_units,
)
from ..helper import go_div

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

# apis/config/types_pluginargs.go
MAX_CUSTOM_PRIORITY_SCORE = 10
# requested_to_capacity_ratio.go
MAX_UTILIZATION = 100

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """config.ResourceSpec: a resource name and its weight."""

    name: str
    weight: int


# apis/config/v1/defaults.go defaultResourceSpec
DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


def resource_specs(raw: object, where: str) -> tuple[ResourceSpec, ...]:
    """ResourceSpecs from plugin args, defaulted as v1/defaults.go does: an empty list becomes
    cpu and memory with weight 1, and a missing or zero weight becomes 1."""
    if raw is None:
        return DEFAULT_RESOURCES
    if not isinstance(raw, list):
        raise ConfigError([f"{where}: expected a list"])
    if not raw:
        return DEFAULT_RESOURCES
    out: list[ResourceSpec] = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise ConfigError([f"{where}[{i}].name: Required value"])
        weight = item.get("weight") or 0
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise ConfigError([f"{where}[{i}].weight: Invalid value: {weight!r}: must be an integer"])
        out.append(ResourceSpec(item["name"], weight or 1))
    return tuple(out)


def shape_points(raw: object, where: str) -> tuple[tuple[int, int], ...]:
    """requestedToCapacityRatioScorer: the shape as (utilization, score) with the score scaled from
    0..MaxCustomPriorityScore to 0..MaxNodeScore."""
    if not isinstance(raw, list) or not raw:
        raise ConfigError([f"{where}: Required value: at least one point must be specified"])
    out: list[tuple[int, int]] = []
    for i, pt in enumerate(raw):
        if not isinstance(pt, Mapping):
            raise ConfigError([f"{where}[{i}]: expected an object"])
        u, s = pt.get("utilization", 0), pt.get("score", 0)
        if isinstance(u, bool) or isinstance(s, bool) or not isinstance(u, int) or not isinstance(s, int):
            raise ConfigError([f"{where}[{i}]: utilization and score must be integers"])
        out.append((u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)))
    return tuple(out)


# ----- the pod's side ---------------------------------------------------------------------------


def scorer_requests(
    parsed: ParsedPodResources, *, use_requested: bool, use_status: bool, pod_level: bool
) -> dict[str, int]:
    """calculatePodResourceRequest for every resource at once: PodRequests with the scorer's options
    (non-zero container defaults unless the scorer uses actual requests), in scheduler units."""
    non_missing: Mapping[str, Decimal] | None = None if use_requested else NON_ZERO_DEFAULTS
    reqs = pod_requests(parsed, use_status=use_status, pod_level=pod_level, non_missing=non_missing)
    return {k: to_units(k, v) for k, v in reqs.items()}


# ----- the nodes' side --------------------------------------------------------------------------


def allocatable_and_requested(
    cluster: ClusterState,
    nodes: IntArray,
    resources: Sequence[ResourceSpec],
    pod_requests: Sequence[int],
    use_requested: bool,
    bare: BoolArray | None = None,
) -> tuple[IntArray, IntArray]:
    """calculateResourceAllocatableRequest for each resource over ``nodes``: matrices of shape
    (len(resources), len(nodes)) holding the allocatable amount (0 means "not scored on this node")
    and the node's requested amount plus the pod's. Nodes marked in ``bare`` (a mask over all
    nodes: NodeInfos a filter extender rebuilt, CycleState BARE_NODE_INFOS) request nothing."""
    n = len(nodes)
    empty = bare[nodes] if bare is not None else None
    alloc = np.zeros((len(resources), n), dtype=np.int64)
    req = np.zeros((len(resources), n), dtype=np.int64)
    for i, spec in enumerate(resources):
        name, pod_req = spec.name, int(pod_requests[i])
        scalar = is_scalar_resource_name(name)
        if pod_req == 0 and scalar:
            # an extended resource the pod does not request is left out of the score
            continue
        if name == CPU:
            used = cluster.requested(CPU) if use_requested else cluster.nonzero_cpu
        elif name == MEMORY:
            used = cluster.requested(MEMORY) if use_requested else cluster.nonzero_memory
        elif name == EPHEMERAL_STORAGE or scalar:
            # always the actual requests: NonZeroRequested only tracks cpu and memory
            used = cluster.requested(name)
        else:
            # not a resource framework.Resource tracks (e.g. "pods"): omitted
            continue
        a = cluster.alloc(name)[nodes]
        alloc[i] = a
        # score() only fills entries whose allocatable is non-zero
        u = used[nodes] if empty is None else np.where(empty, 0, used[nodes])
        req[i] = np.where(a != 0, u + pod_req, 0)
    return alloc, req


def score_nodes(
    cluster: ClusterState,
    nodes: IntArray,
    key: Hashable,
    resources: Sequence[ResourceSpec],
    pod_requests: Sequence[int],
    use_requested: bool,
    scorer: Callable[[IntArray, IntArray], IntArray],
    bare: BoolArray | None,
) -> IntArray:
    """resourceAllocationScorer.score over ``nodes``: ``scorer`` applied to their allocatable and
    requested amounts. A node's score depends on its own pods and ``key`` (the plugin, its
    arguments and the pod's requests) alone, so it is kept per node and worked out again only where
    pods changed (``ClusterState.memo_per_node``); NodeInfos a filter extender rebuilt (``bare``)
    are this cycle's alone and scored afresh."""
    if bare is not None:
        alloc, req = allocatable_and_requested(cluster, nodes, resources, pod_requests, use_requested, bare)
        return scorer(alloc, req)

    def compute(at: IntArray) -> IntArray:
        alloc, req = allocatable_and_requested(cluster, at, resources, pod_requests, use_requested)
        return scorer(alloc, req)

    return cluster.memo_per_node(key, nodes, compute)


# ----- strategies -------------------------------------------------------------------------------


def _weighted_mean(scores: IntArray, alloc: IntArray, weights: Sequence[int]) -> IntArray:
    """nodeScore / weightSum over the resources with non-zero allocatable (0 when there is none)."""
    w = np.asarray(weights, dtype=np.int64)[:, None]
    counted = alloc != 0
    node_score = np.where(counted, scores * w, 0).sum(axis=0)
    weight_sum = np.where(counted, w, 0).sum(axis=0)
    return np.where(weight_sum > 0, node_score // np.maximum(weight_sum, 1), 0).astype(np.int64)


def least_allocated(alloc: IntArray, req: IntArray, weights: Sequence[int]) -> IntArray:
    """least_allocated.go: ((capacity - requested) * MaxNodeScore) / capacity, 0 when over capacity."""
    cap = np.maximum(alloc, 1)
    per = np.where((alloc == 0) | (req > alloc), 0, ((alloc - req) * MAX_NODE_SCORE) // cap)
    return _weighted_mean(per, alloc, weights)


def most_allocated(alloc: IntArray, req: IntArray, weights: Sequence[int]) -> IntArray:
    """most_allocated.go: (requested * MaxNodeScore) / capacity, requested capped at capacity."""
    cap = np.maximum(alloc, 1)
    r = np.minimum(req, alloc)
    per = np.where(alloc == 0, 0, (r * MAX_NODE_SCORE) // cap)
    return _weighted_mean(per, alloc, weights)


def broken_linear(shape: Sequence[tuple[int, int]], p: IntArray) -> IntArray:
    """helper/shape_score.go BuildBrokenLinearFunction, applied elementwise."""
    out = np.full(p.shape, shape[-1][1], dtype=np.int64)
    done = np.zeros(p.shape, dtype=bool)
    for i, (u, s) in enumerate(shape):
        hit = (p <= u) & ~done
        if not hit.any():
            continue
        if i == 0:
            out[hit] = s
        else:
            u0, s0 = shape[i - 1]
            out[hit] = s0 + go_div((s - s0) * (p[hit] - u0), u - u0)
        done |= hit
    return out


def go_round(x: FloatArray) -> FloatArray:
    """math.Round: half away from zero (numpy rounds half to even)."""
    f = np.floor(np.abs(x))
    r = f + (np.abs(x) - f >= 0.5)
    return np.asarray(np.copysign(r, x), dtype=np.float64)


def requested_to_capacity_ratio(
    alloc: IntArray, req: IntArray, weights: Sequence[int], shape: Sequence[tuple[int, int]]
) -> IntArray:
    """requested_to_capacity_ratio.go: the shape applied to utilization = requested * 100 / capacity
    (100 when over capacity); only resources scoring above 0 count in the weighted mean, which is
    rounded (math.Round) rather than truncated."""
    cap = np.maximum(alloc, 1)
    util = np.where((alloc == 0) | (req > alloc), MAX_UTILIZATION, (req * MAX_UTILIZATION) // cap)
    per = broken_linear(shape, util)
    w = np.asarray(weights, dtype=np.int64)[:, None]
    counted = (alloc != 0) & (per > 0)
    node_score = np.where(counted, per * w, 0).sum(axis=0)
    weight_sum = np.where(counted, w, 0).sum(axis=0)
    ratio = node_score.astype(np.float64) / np.maximum(weight_sum, 1).astype(np.float64)
    return np.where(weight_sum > 0, go_round(ratio), 0).astype(np.int64)


def balanced(alloc: IntArray, req: IntArray) -> IntArray:
    """balanced_allocation.go balancedResourceScorer: (1 - std(fractions)) * MaxNodeScore, truncated,
    over the resources with non-zero allocatable; each fraction is capped at 1."""
    n = alloc.shape[1]
    total = np.zeros(n, dtype=np.float64)
    count = np.zeros(n, dtype=np.int64)
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    fractions: list[tuple[npt.NDArray[np.bool_], FloatArray]] = []
    for i in range(alloc.shape[0]):
        inc = alloc[i] != 0
        if not inc.any():
            continue
        frac = req[i].astype(np.float64) / np.where(inc, alloc[i], 1).astype(np.float64)
        frac = np.where(frac > 1, 1.0, frac)
        total = np.where(inc, total + frac, total)
        first = np.where(inc & (count == 0), frac, first)
        second = np.where(inc & (count == 1), frac, second)
        count = count + inc
        fractions.append((inc, frac))
    std = np.zeros(n, dtype=np.float64)
    two = count == 2
    if two.any():
        std = np.where(two, np.abs((first - second) / 2), std)
    many = count > 2
    if many.any():
        cnt = np.maximum(count, 1).astype(np.float64)
        mean = total / cnt
        acc = np.zeros(n, dtype=np.float64)
        for inc, frac in fractions:
            d = frac - mean
            acc = np.where(inc, acc + d * d, acc)
        std = np.where(many, np.sqrt(acc / cnt), std)
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
