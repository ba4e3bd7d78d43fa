"""The DynamicResources plugin (framework/plugins/dynamicresources/dynamicresources.go): PreEnqueue,
PreFilter, Filter, PostFilter, Score, Reserve, PreBind, its args and its diagnosis.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...apimachinery import ErrorList, parse_duration_ns
from ...framework import (
    Code,
    CycleState,
    Handle,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    Status,
    Verdicts,
)
from ...framework.diagnosis import Diagnosis, DiagnosisContext
from ...framework.interfaces import IntArray
from ...objects import Pod
from ...plugin_args import gates, obj
from .. import _storage as st
from .allocator import Allocator, _Features
from .claims import (
    _GATE_DEFAULTS,
    FINALIZER,
    FIRST_AVAILABLE_MAX_SIZE,
    JSON,
    NAME,
    STATE_KEY,
    _allocation,
    _AllocError,
    _reserved_for_pod,
    _status,
    allocated_devices,
    allocation_devices,
    claim_key,
    claim_ref,
    claim_uid,
    get_claim,
    tracker,
)
from .slices import claim_requests

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
