"""NodeResourcesFit: rejects nodes without room for the pod's requests and scores the rest with the
configured strategy (LeastAllocated, MostAllocated or RequestedToCapacityRatio).

Mirrors framework/plugins/noderesources/fit.go (v1.35): PreFilter (computePodResourceRequest),
Filter (fitsRequest: "Too many pods", "Insufficient <resource>", UnschedulableAndUnresolvable when
the request exceeds the node's whole allocatable, ignoredResources / ignoredResourceGroups for
extended resources), PreScore and Score (resource_allocation.go with useRequested false: the
nodes' non-zero cpu/memory requests and the pod's requests with non-zero container defaults).

Upstream quirk kept on purpose: NewFit never copies the PodLevelResources gate into its scorer, so
the pod's requests for scoring ignore pod-level resources (spec.resources), while Filter honours them.
Not modelled: DRAExtendedResource (alpha, off by default in v1.35).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ...apimachinery import ErrorList, validate_label_name
from ...errors import ConfigError
from ...framework import Code, CycleState, Handle, PreFilterResult, Status, Verdicts
from ...framework.cycle_state import BARE_NODE_INFOS
from ...framework.diagnosis import (
    Change,
    Diagnosis,
    DiagnosisContext,
    PodPatch,
    format_amount,
    generic,
    resource_words,
)
from ...objects import Pod
from ...plugin_args import (
    RESOURCE_SPEC,
    SHAPE_POINT,
    default_resources,
    list_of,
    obj,
    validate_function_shape,
)
from ...resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    ParsedPodResources,
    is_extended_resource_name,
)
from . import resource_allocation as ra

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
REASON_TOO_MANY_PODS = "Too many pods"


def insufficient_reason(resource: str) -> str:
    return f"Insufficient {resource}"


def _fit_score_requests(parsed: ParsedPodResources) -> dict[str, int]:
    # resource_allocation.go calculatePodResourceRequest as NewFit builds the scorer: useRequested
    # false (non-zero defaults), UseStatusResources false, SkipPodLevelResources true.
    return ra.scorer_requests(parsed, use_requested=False, use_status=False, pod_level=False)


def _str_list(raw: object, where: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise ConfigError([f"{where}: expected a list of strings"])
    return list(raw)


# ----- args (kube-scheduler/config/v1 types_pluginargs.go NodeResourcesFitArgs, v1/defaults.go,
# apis/config/validation/validation_pluginargs.go ValidateNodeResourcesFitArgs, run by NewFit)

ARGS_TYPE = obj(
    "v1.NodeResourcesFitArgs",
    ignoredResources=list_of("str"),
    ignoredResourceGroups=list_of("str"),
    scoringStrategy=obj(
        "v1.ScoringStrategy",
        type="str",
        resources=list_of(RESOURCE_SPEC),
        requestedToCapacityRatio=obj("v1.RequestedToCapacityRatioParam", shape=list_of(SHAPE_POINT)),
    ),
)


def default_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> dict[str, Any]:
    strategy = a.get("scoringStrategy")
    if strategy is None:
        strategy = {"type": "LeastAllocated", "resources": default_resources()}
    strategy = dict(strategy)
    strategy.setdefault("type", "")
    resources = [dict(r) for r in strategy.get("resources", [])] or default_resources()
    for r in resources:
        r.setdefault("name", "")
        if not r.get("weight"):
            r["weight"] = 1
    strategy["resources"] = resources
    return {
        "ignoredResources": a.get("ignoredResources", []),
        "ignoredResourceGroups": a.get("ignoredResourceGroups", []),
        "scoringStrategy": strategy,
    }


def validate_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> list[str]:
    errs = ErrorList()
    for i, res in enumerate(a["ignoredResources"]):
        validate_label_name(res, f"ignoredResources[{i}]", errs)
    for i, group in enumerate(a["ignoredResourceGroups"]):
        p = f"ignoredResourceGroups[{i}]"
        if "/" in group:
            errs.invalid(p, group, "resource group name can't contain '/'")
        validate_label_name(group, p, errs)
    spath = "scoringStrategy"
    strategy = a["scoringStrategy"]
    stype = strategy["type"]
    supported = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]
    if stype not in supported:
        errs.not_supported(f"{spath}.type", stype, supported)
    for i, r in enumerate(strategy["resources"]):
        w = r["weight"]
        if w <= 0 or w > 100:
            errs.invalid(
                f"{spath}.resources[{i}].weight",
                w,
                f"resource weight of {r['name']} not in valid range (0, 100]",
            )
    if "requestedToCapacityRatio" in strategy:
        # upstream names the path scoringStrategy.shape
        validate_function_shape(strategy["requestedToCapacityRatio"].get("shape", []), f"{spath}.shape", errs)
    elif stype == "RequestedToCapacityRatio":
        # upstream validation lets this through and NewFit then dereferences a nil pointer
        errs.required(f"{spath}.shape", "at least one point must be specified")
    return errs.items


@dataclass
class _Short:
    """One resource a node lacks: the pod's request and, per node, deficit, allocatable, in use."""

    resource: str
    request: int
    deficit: IntArray
    alloc: IntArray
    used: IntArray


def _resource_singles(ctx: DiagnosisContext, cols: list[_Short]) -> None:
    """Request less: for each short resource, the most that one of the rejected nodes has free."""
    for col in cols:
        if col.resource == PODS:
            continue
        free = col.alloc - col.used
        usable = free[(free > 0) & (free < col.request)]
        if len(usable) == 0:
            continue
        r, cap = col.resource, int(usable.max())
        label = "CPU" if r == CPU else r
        desc = f"request at most {format_amount(r, cap)} {label} (the pod requests {format_amount(r, col.request)})"
        patch = PodPatch(request_caps=((r, cap),))
        ctx.suggest(Change("lower-request", "pod", desc, pod=patch))


class Fit:
    name = NAME
    # args: declared here, decoded, defaulted and validated by the configuration (config/)
    args_type = ARGS_TYPE
    default_args = staticmethod(default_args)
    validate_args = staticmethod(validate_args)
    # upstream validates these args in the plugin's constructor: only when the plugin is enabled
    validate_args_when_built = True

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.ignored_resources = frozenset(_str_list(args.get("ignoredResources"), "ignoredResources"))
        self.ignored_resource_groups = frozenset(
            _str_list(args.get("ignoredResourceGroups"), "ignoredResourceGroups")
        )
        strategy = args.get("scoringStrategy")
        if strategy is None:
            # apis/config/v1/defaults.go SetDefaults_NodeResourcesFitArgs
            strategy = {"type": ra.LEAST_ALLOCATED}
        if not isinstance(strategy, Mapping):
            raise ConfigError(["scoringStrategy: expected an object"])
        kind = strategy.get("type")
        if kind not in ra.STRATEGIES:
            raise ConfigError(
                [
                    f'scoringStrategy.type: Unsupported value: "{kind or ""}": supported values: '
                    + ", ".join(f'"{s}"' for s in sorted(ra.STRATEGIES))
                ]
            )
        self.strategy: str = str(kind)
        self.resources: tuple[ra.ResourceSpec, ...] = ra.resource_specs(
            strategy.get("resources"), "scoringStrategy.resources"
        )
        self.weights: list[int] = [r.weight for r in self.resources]
        self.shape: tuple[tuple[int, int], ...] = ()
        if self.strategy == ra.REQUESTED_TO_CAPACITY_RATIO:
            rtcr = strategy.get("requestedToCapacityRatio")
            if not isinstance(rtcr, Mapping):
                raise ConfigError(["scoringStrategy.requestedToCapacityRatio: Required value"])
            self.shape = ra.shape_points(rtcr.get("shape"), "scoringStrategy.requestedToCapacityRatio.shape")
        self._scorer: Callable[[IntArray, IntArray], IntArray] = self._make_scorer()

    def _make_scorer(self) -> Callable[[IntArray, IntArray], IntArray]:
        weights, shape = self.weights, self.shape
        if self.strategy == ra.MOST_ALLOCATED:
            return lambda alloc, req: ra.most_allocated(alloc, req, weights)
        if self.strategy == ra.REQUESTED_TO_CAPACITY_RATIO:
            return lambda alloc, req: ra.requested_to_capacity_ratio(alloc, req, weights, shape)
        return lambda alloc, req: ra.least_allocated(alloc, req, weights)

    # ----- PreFilter / Filter -----------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        # SidecarContainers is GA (locked on) in v1.35, so pods with restartable init containers
        # are never rejected here; the plugin never returns Skip.
        state.write(PRE_FILTER_STATE_KEY, pod.resources.fit_requests)
        return None, Status.success()

    def _ignored(self, resource: str) -> bool:
        if not is_extended_resource_name(resource):
            return False
        if resource in self.ignored_resources:
            return True
        return bool(self.ignored_resource_groups) and resource.split("/")[0] in self.ignored_resource_groups

    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        request: Mapping[str, int] | None = state.get(PRE_FILTER_STATE_KEY)
        if request is None:
            return Verdicts.from_mask(
                np.ones(len(nodes), dtype=bool),
                Code.Error,
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',
            )
        c = state.cluster
        # the resources fitsRequest checks, in its order: a zero request is never checked, and
        # ignored extended resources are skipped
        scalars = sorted(r for r in request if r not in (CPU, MEMORY, EPHEMERAL_STORAGE))
        checked = tuple(
            (r, q)
            for r in (CPU, MEMORY, EPHEMERAL_STORAGE, *scalars)
            if (q := request.get(r, 0)) > 0 and not self._ignored(r)
        )

        def compute(at: IntArray) -> IntArray:
            # bit 0: too many pods; bit j: the j-th checked resource is short; times 2, plus 1 when
            # a short resource exceeds the node's whole allocatable (unresolvable)
            pattern = (c.pod_count[at] + 1 > c.alloc(PODS)[at]).astype(np.int64)
            unresolvable = np.zeros(len(at), dtype=bool)
            for j, (r, q) in enumerate(checked, 1):
                alloc = c.alloc(r)[at]
                short = q > alloc - c.requested(r)[at]
                pattern |= short.astype(np.int64) << j
                unresolvable |= short & (q > alloc)
            out: IntArray = pattern * 2 + unresolvable
            return out

        keys = c.memo_per_node((NAME, checked), nodes, compute)
        return _verdicts(keys, (REASON_TOO_MANY_PODS, *(insufficient_reason(r) for r, _ in checked)))

    # ----- PreScore / Score -------------------------------------------------------------------

    def _pod_requests(self, pod: Pod) -> list[int]:
        view = pod.resources.view(NAME + "/score", _fit_score_requests)
        return [view.get(r.name, 0) for r in self.resources]

    def pre_score(self, state: CycleState, pod: Pod, nodes: IntArray) -> Status:
        state.write(PRE_SCORE_STATE_KEY, self._pod_requests(pod))
        return Status.success()

    def score(self, state: CycleState, pod: Pod, nodes: IntArray) -> IntArray:
        requests: Sequence[int] | None = state.get(PRE_SCORE_STATE_KEY)
        if requests is None:
            # Score computes the requests itself when PreScore did not run
            requests = self._pod_requests(pod)
        key = (NAME, self.strategy, self.resources, self.shape, tuple(requests))
        return ra.score_nodes(
            state.cluster, nodes, key, self.resources, requests, False, self._scorer, state.get(BARE_NODE_INFOS)
        )

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """Per short resource: deficit = request - (allocatable - requested) (one pod slot for "Too
        many pods"); nodes are grouped by equal deficits."""
        c = ctx.cluster
        request = pod.resources.fit_requests
        cols: list[_Short] = []
        for reason in reasons:
            if reason == REASON_TOO_MANY_PODS:
                alloc = c.alloc(PODS)[nodes]
                used = c.pod_count[nodes]
                cols.append(_Short(PODS, 1, used + 1 - alloc, alloc, used))
            elif reason.startswith("Insufficient "):
                r = reason[len("Insufficient ") :]
                q = int(request.get(r, 0))
                alloc = c.alloc(r)[nodes]
                used = c.requested(r)[nodes]
                cols.append(_Short(r, q, q - (alloc - used), alloc, used))
        if not cols:
            return generic(nodes, reasons, "")
        keys = np.stack(
            [col.deficit for col in cols] + [(col.request > col.alloc).astype(np.int64) for col in cols],
            axis=1,
        )
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        out: list[Diagnosis] = []
        for g, row in enumerate(uniq.tolist()):
            sel = inverse == g
            members = nodes[sel]
            parts: list[str] = []
            extra: list[tuple[str, int]] = []
            never: list[str] = []
            details: dict[str, Any] = {}
            for j, col in enumerate(cols):
                deficit, nv = int(row[j]), bool(row[len(cols) + j])
                alloc_g, used_g = col.alloc[sel], col.used[sel]
                free_g = alloc_g - used_g
                r = col.resource
                if r == PODS:
                    uniform = bool((alloc_g == alloc_g[0]).all() and (used_g == used_g[0]).all())
                    usage = f" ({int(used_g[0])} of {int(alloc_g[0])} pods in use)" if uniform else ""
                    parts.append(f"needs 1 more pod slot{usage}")
                else:
                    uniform = bool((alloc_g == alloc_g[0]).all() and (used_g == used_g[0]).all())
                    usage = (
                        f", {format_amount(r, max(int(free_g[0]), 0))} free of {format_amount(r, int(alloc_g[0]))} allocatable"
                        if uniform
                        else ""
                    )
                    parts.append(
                        f"needs {resource_words(r, deficit)} (request {format_amount(r, col.request)}{usage})"
                    )
                details[r] = {
                    "request": col.request,
                    "deficit": deficit,
                    "text": format_amount(r, deficit),
                    "allocatable": [int(alloc_g.min()), int(alloc_g.max())],
                    "free": [int(free_g.min()), int(free_g.max())],
                    "neverFits": nv,
                }
                if nv:
                    never.append(r)
                extra.append((r, deficit))
            text = "; ".join(parts)
            amounts = " and ".join(resource_words(r, d).replace(" more ", " ") for r, d in extra)
            if never:
                text += (
                    f"; the node could never fit the pod, even empty: its allocatable {', '.join(never)} "
                    "is smaller than the request"
                )
                desc = f"add {amounts} of allocatable capacity to the node (it is too small for the pod even empty)"
            else:
                desc = f"free {amounts} on the node (evict pods or add capacity)"
            change = Change("free-resources", "node", desc, extra=tuple(extra))
            out.append(Diagnosis(members, text, details, change))
        if ctx.top:
            _resource_singles(ctx, cols)
        return out


def _verdicts(keys: IntArray, reasons: Sequence[str]) -> Verdicts:
    """One status per node from its key (``filter``'s compute): every insufficient resource's
    reason, in order; UnschedulableAndUnresolvable when any of them exceeds the node's allocatable
    even with the node empty."""
    n = len(keys)
    failed = keys > 1
    if not failed.any():
        return Verdicts.all_pass(n)
    builder = Verdicts.build(n)
    for k in np.unique(keys[failed]).tolist():
        bits, unres_flag = k >> 1, k & 1
        code = Code.UnschedulableAndUnresolvable if unres_flag else Code.Unschedulable
        builder.reject(keys == k, code, *(reasons[j] for j in range(len(reasons)) if bits >> j & 1))
    return builder.done()
