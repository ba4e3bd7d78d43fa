"""VolumeBinding: bound claims need PVs whose node affinity admits the node; unbound claims of a
WaitForFirstConsumer class need a matching available PV on the node or a provisioner for it.

framework/plugins/volumebinding/volume_binding.go and binder.go (the SchedulerVolumeBinder), with
the PV matching of component-helpers/storage/volume/pv_helpers.go. PreFilter Skips pods without
claims and rejects pods whose Immediate-mode claims are not bound yet. Filter runs the binder's
FindPodVolumes for every node at once. Reserve assumes the chosen PVs (claimRef set) and the claims
to provision (selected-node annotation) into the assume caches, so the next cycles see them; Score
only runs with the StorageCapacityScoring gate (off by default), so PreScore Skips.

PreBind stands for BindPodVolumes and the PV controller it waits for: a statically bound claim
becomes Bound to its volume (so later cycles see it bound), a claim to provision keeps its
selected-node annotation. Stage details (docs/trace-format.md) show, per node, what each claim would
get (the volume to bind, provisioning, or why neither), and at Reserve and PreBind the bindings.

Not modelled: the translation of in-tree PVs to CSI before the node-affinity check (translated
in-tree PVs gain topology affinity from their zone labels) and the PV controller's own timing (the
binding completes within PreBind).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import quantity
from ..apimachinery import ErrorList
from ..framework import Code, CycleState, Handle, PreFilterResult, Status, Verdicts
from ..framework.diagnosis import Diagnosis, DiagnosisContext
from ..framework.interfaces import IntArray
from ..objects import Pod
from ..plugin_args import MAX_CUSTOM_PRIORITY_SCORE, SHAPE_POINT, gates, list_of, obj, validate_function_shape
from . import _storage as st

NAME = "VolumeBinding"
STATE_KEY = NAME

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

MAX_UTILIZATION = 100
_MAX_NODE_SCORE = 100
_MAX_CUSTOM_PRIORITY_SCORE = 10

# checkVolumeProvisions outcomes per claim and node (_UNSUPPORTED: no provisioner; _TOPOLOGY: the
# class's allowedTopologies exclude the node; both are upstream's "not satisfied")
_OK, _UNSUPPORTED, _NO_SPACE, _ERROR, _TOPOLOGY = 0, 1, 2, 3, 4

# What the trace's Filter details say about one claim on one node. Bound claims:
_B_OK, _B_AFFINITY, _B_MISSING, _B_NOT_CHECKED = 0, 1, 2, 3
# Unbound claims: the index of the chosen PV (>= 0), or one of these.
_V_PROVISION = -1
_V_NO_PROVISIONER = -2
_V_TOPOLOGY = -3
_V_NO_CAPACITY = -4
_V_ERROR = -5
_V_NOT_CHECKED = -6
_V_OTHER_NODE = -7
_V_FROM_PROVISION = {
    _OK: _V_PROVISION,
    _UNSUPPORTED: _V_NO_PROVISIONER,
    _TOPOLOGY: _V_TOPOLOGY,
    _NO_SPACE: _V_NO_CAPACITY,
    _ERROR: _V_ERROR,
}


@dataclass
class PodVolumes:
    """Static bindings (claim, PV) and claims to provision (claim, CSIStorageCapacity or None)."""

    static: list[tuple[st.JSON, st.JSON]] = field(default_factory=list)
    provisions: list[tuple[st.JSON, st.JSON | None]] = field(default_factory=list)


@dataclass
class _Claims:
    bound: list[st.JSON]
    delay: list[st.JSON]
    pvs_by_class: dict[str, list[st.JSON]]


@dataclass
class _Batch:
    """FindPodVolumes for one batch of nodes, kept to rebuild a node's PodVolumes on demand."""

    nodes: IntArray
    delay_order: list[st.JSON]  # annotated claims first, then the rest by size
    pvs: list[list[st.JSON]]  # candidate PVs per claim in delay_order
    choice: npt.NDArray[np.int64]  # claims x nodes: chosen PV index, -1 none (annotated claims: -1)
    provision: npt.NDArray[np.bool_]  # claims x nodes: claim goes to provisioning
    capacity: npt.NDArray[np.int64]  # claims x nodes: CSIStorageCapacity index, -1 none
    capacities: list[st.JSON]

    def pod_volumes(self, k: int) -> PodVolumes:
        pv = PodVolumes()
        for c, claim in enumerate(self.delay_order):
            j = int(self.choice[c, k])
            if j >= 0:
                pv.static.append((claim, self.pvs[c][j]))
        for c, claim in enumerate(self.delay_order):
            if self.provision[c, k]:
                cap = int(self.capacity[c, k])
                pv.provisions.append((claim, self.capacities[cap] if cap >= 0 else None))
        return pv


@dataclass
class _State:
    claims: _Claims | None = None
    all_bound: bool = False
    has_static_bindings: bool = False
    by_node: dict[int, tuple[_Batch, int]] = field(default_factory=dict)
    assumed: dict[int, PodVolumes] = field(default_factory=dict)

    def clone(self) -> _State:
        # volume_binding.go: stateData.Clone returns the same pointer.
        return self

    def pod_volumes(self, node: int) -> PodVolumes | None:
        if node in self.assumed:
            return self.assumed[node]
        entry = self.by_node.get(node)
        if entry is None:
            return None
        return entry[0].pod_volumes(entry[1])


def _size(pvc: st.JSON) -> Decimal:
    q = st.pvc_request(pvc)
    return q if q is not None else Decimal(0)


def _volume_mode(raw: st.JSON) -> str:
    return str(st.spec(raw).get("volumeMode") or "Filesystem")


def _vac(raw: st.JSON) -> str:
    return str(st.spec(raw).get("volumeAttributesClassName") or "")


def _topology_mask(cluster: Any, terms: list[Any], nodes: IntArray, ident: str) -> npt.NDArray[np.bool_]:
    """v1helper.MatchTopologySelectorTerms over many nodes (an empty list matches every node)."""
    if not terms:
        return np.ones(len(nodes), dtype=bool)
    out = np.zeros(len(nodes), dtype=bool)
    for t, term in enumerate(terms):
        term = st.as_map(term, ident, f"allowedTopologies[{t}]")
        exprs = st.as_list(
            term.get("matchLabelExpressions"), ident, f"allowedTopologies[{t}].matchLabelExpressions"
        )
        if not exprs:
            continue
        m = np.ones(len(nodes), dtype=bool)
        for e in exprs:
            e = st.as_map(e, ident, f"allowedTopologies[{t}].matchLabelExpressions")
            values = [str(v) for v in st.as_list(e.get("values"), ident, "values")]
            m &= cluster.label(str(e.get("key") or "")).isin(values)[nodes]
        out |= m
    return out


def _claim_key(pvc: st.JSON) -> str:
    return f"{st.namespace_of(pvc)}/{st.name_of(pvc)}"


def _filter_details(
    cluster: Any,
    claims: _Claims,
    order: list[st.JSON],
    candidates: list[list[st.JSON]],
    capacities: list[st.JSON],
    claim_errors: dict[int, str],
    nodes: IntArray,
    keys: IntArray,
) -> dict[str, Any]:
    """The Filter stage's details: the pod's claims, then nodes grouped by what each claim would get
    there (the volume to bind, provisioning, or why not). ``keys`` rows: Filter code, one row per bound
    claim, one per unbound claim (in ``order``), then one CSIStorageCapacity index per unbound claim."""
    nb, m = len(claims.bound), len(order)
    info: list[dict[str, Any]] = []
    for pvc in claims.bound:
        info.append(
            {
                "claim": _claim_key(pvc),
                "storageClass": st.pvc_class(pvc),
                "phase": "Bound",
                "volume": str(st.spec(pvc).get("volumeName") or ""),
            }
        )
    for pvc in order:
        entry: dict[str, Any] = {
            "claim": _claim_key(pvc),
            "storageClass": st.pvc_class(pvc),
            "phase": "Unbound",
            "bindingMode": "WaitForFirstConsumer",
        }
        selected = st.annotations_of(pvc).get(st.ANN_SELECTED_NODE)
        if selected is not None:
            entry["selectedNode"] = str(selected)
        info.append(entry)
    groups, omitted = st.group_nodes(cluster, nodes, keys)
    out: list[dict[str, Any]] = []
    for g in groups:
        row = keys[:, g.first].tolist()
        decisions: dict[str, Any] = {}
        for b, pvc in enumerate(claims.bound):
            code, volume = row[1 + b], str(st.spec(pvc).get("volumeName") or "")
            if code == _B_OK:
                decisions[_claim_key(pvc)] = {"volume": volume}
            elif code == _B_AFFINITY:
                decisions[_claim_key(pvc)] = {
                    "volume": volume,
                    "problem": "the PersistentVolume's node affinity does not match the node",
                }
            elif code == _B_MISSING:
                decisions[_claim_key(pvc)] = {
                    "volume": volume,
                    "problem": "the PersistentVolume does not exist",
                }
        for c, pvc in enumerate(order):
            code, cap = row[1 + nb + c], row[1 + nb + m + c]
            cls = st.pvc_class(pvc)
            decision: dict[str, Any]
            if code >= 0:
                decision = {"bind": st.name_of(candidates[c][code])}
            elif code == _V_PROVISION:
                decision = {"provision": cls}
                if cap >= 0:
                    decision["capacity"] = st.name_of(capacities[cap]) or f"#{cap}"
            elif code == _V_NO_PROVISIONER:
                decision = {
                    "problem": f'no available PersistentVolume matches and StorageClass "{cls}" has no provisioner'
                }
            elif code == _V_TOPOLOGY:
                decision = {
                    "problem": f'no available PersistentVolume matches and StorageClass "{cls}" '
                    "cannot provision here (allowedTopologies)"
                }
            elif code == _V_NO_CAPACITY:
                decision = {
                    "problem": f'no CSIStorageCapacity of StorageClass "{cls}" for the node has room for the claim'
                }
            elif code == _V_ERROR:
                decision = {"problem": claim_errors.get(c, "error")}
            elif code == _V_OTHER_NODE:
                node = st.annotations_of(pvc).get(st.ANN_SELECTED_NODE)
                decision = {
                    "problem": f'the claim is being provisioned for node "{node}" ({st.ANN_SELECTED_NODE})'
                }
            else:
                continue  # not looked at: an earlier claim already ruled the node out
            decisions[_claim_key(pvc)] = decision
        out.append({"nodes": g.names, "nodeCount": g.count, "passed": row[0] == 0, "claims": decisions})
    details: dict[str, Any] = {"claims": info, "nodes": out}
    if omitted:
        details["omittedGroups"] = omitted
    return details


def _volumes_details(volumes: PodVolumes, node: str) -> dict[str, Any]:
    return {
        "bindings": [{"claim": _claim_key(pvc), "volume": st.name_of(pv)} for pvc, pv in volumes.static],
        "provisions": [
            {"claim": _claim_key(pvc), "storageClass": st.pvc_class(pvc), "selectedNode": node}
            for pvc, _cap in volumes.provisions
        ],
    }


# ----- args (kube-scheduler/config/v1 types_pluginargs.go VolumeBindingArgs, v1/defaults.go,
# apis/config/validation/validation_pluginargs.go ValidateVolumeBindingArgs)

ARGS_TYPE = obj("v1.VolumeBindingArgs", bindTimeoutSeconds="int64", shape=list_of(SHAPE_POINT))


def default_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"bindTimeoutSeconds": a.get("bindTimeoutSeconds", 600)}
    if "shape" in a:
        out["shape"] = a["shape"]
    if not a.get("shape") and gates(features).get("StorageCapacityScoring"):
        out["shape"] = [
            {"utilization": 0, "score": MAX_CUSTOM_PRIORITY_SCORE},
            {"utilization": 100, "score": 0},
        ]
    return out


def validate_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> list[str]:
    errs = ErrorList()
    t = a["bindTimeoutSeconds"]
    if t < 0:
        errs.invalid("bindTimeoutSeconds", t, "invalid BindTimeoutSeconds, should not be a negative value")
    if gates(features).get("StorageCapacityScoring"):
        validate_function_shape(a.get("shape", []), "shape", errs)
    elif "shape" in a:
        errs.invalid(
            "shape",
            a["shape"],
            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
        )
    return errs.items


class VolumeBinding:
    name = NAME
    # args: declared here, decoded, defaulted and validated by the configuration (config/)
    args_type = ARGS_TYPE
    default_args = staticmethod(default_args)
    validate_args = staticmethod(validate_args)

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.bind_timeout = int(args.get("bindTimeoutSeconds", 600))
        self.capacity_scoring = handle.features.get("StorageCapacityScoring", False)
        self.vac_enabled = handle.features.get("VolumeAttributesClass", True)
        self.shape: list[tuple[int, int]] | None = None
        if self.capacity_scoring:
            raw_shape = args.get("shape") or [
                {"utilization": 0, "score": _MAX_CUSTOM_PRIORITY_SCORE},
                {"utilization": 100, "score": 0},
            ]
            self.shape = [
                (int(p["utilization"]), int(p["score"]) * (_MAX_NODE_SCORE // _MAX_CUSTOM_PRIORITY_SCORE))
                for p in raw_shape
            ]

    # ----- PreFilter ------------------------------------------------------------------------
    def _has_pvcs(self, state: CycleState, pod: Pod) -> tuple[bool, str]:
        """podHasPVCs: whether the pod uses claims, and why one of them makes it unschedulable."""
        has = False
        for v in st.pod_volumes(pod):
            claim = st.claim_name_of(v)
            ephemeral = False
            if claim is None and isinstance(v.get("ephemeral"), dict):
                claim = st.ephemeral_claim_name(pod, v)
                ephemeral = True
            if claim is None:
                continue
            has = True
            pvc = st.view(state.cluster).pvcs.get((pod.namespace, claim))
            if pvc is None:
                if ephemeral:
                    return (
                        has,
                        f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{claim}"',
                    )
                return has, st.not_found("persistentvolumeclaim", claim)
            status = pvc.get("status")
            if isinstance(status, dict) and status.get("phase") == "Lost":
                vn = str(st.spec(pvc).get("volumeName") or "")
                return (
                    has,
                    f'persistentvolumeclaim "{st.name_of(pvc)}" bound to non-existent persistentvolume "{vn}"',
                )
            if st.meta(pvc).get("deletionTimestamp"):
                return has, f'persistentvolumeclaim "{st.name_of(pvc)}" is being deleted'
            if ephemeral:
                err = st.ephemeral_owner_error(pod, pvc)
                if err is not None:
                    return has, err
        return has, ""

    def _pod_claims(self, state: CycleState, pod: Pod) -> tuple[_Claims | None, list[st.JSON], str]:
        """GetPodVolumeClaims, reading the assume cache: bound, delayed and unbound immediate claims."""
        cluster = state.cluster
        classes = st.view(cluster).classes
        bound: list[st.JSON] = []
        delay: list[st.JSON] = []
        immediate: list[st.JSON] = []
        for v in st.pod_volumes(pod):
            claim = st.claim_name_of(v)
            ephemeral = False
            if claim is None and isinstance(v.get("ephemeral"), dict):
                claim = st.ephemeral_claim_name(pod, v)
                ephemeral = True
            if claim is None:
                continue
            pvc = st.cached_pvc(cluster, pod.namespace, claim)
            if pvc is None:
                return (
                    None,
                    [],
                    f'error getting PVC "{pod.namespace}/{claim}": {st.not_found("persistentvolumeclaim", claim)}',
                )
            if ephemeral:
                err = st.ephemeral_owner_error(pod, pvc)
                if err is not None:
                    return None, [], err
            if st.is_fully_bound(pvc):
                bound.append(pvc)
                continue
            sc_name = st.pvc_class(pvc)
            sc = classes.get(sc_name) if sc_name else None
            delayed = sc is not None and st.binding_mode(sc) == "WaitForFirstConsumer"
            # A claim naming a volume that is not fully bound yet counts as immediate.
            if delayed and not st.spec(pvc).get("volumeName"):
                delay.append(pvc)
            else:
                immediate.append(pvc)
        pvs_by_class = {st.pvc_class(c): st.cached_pvs_of_class(cluster, st.pvc_class(c)) for c in delay}
        return _Claims(bound, delay, pvs_by_class), immediate, ""

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        has, problem = self._has_pvcs(state, pod)
        if problem:
            return None, Status(Code.UnschedulableAndUnresolvable, problem)
        if not has:
            state.write(STATE_KEY, _State())
            return None, Status.skip()
        claims, immediate, err = self._pod_claims(state, pod)
        if err:
            return None, Status.error(err)
        if immediate:
            return None, Status(Code.UnschedulableAndUnresolvable, UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, _State(claims=claims))
        return None, Status.success()

    # ----- Filter (binder.go FindPodVolumes, for a batch of nodes) -----------------------------
    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        b = Verdicts.build(len(nodes))
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            b.reject(np.ones(len(nodes), dtype=bool), Code.Error, "not found")
            return b.done()
        claims = s.claims or _Claims([], [], {})
        cluster = state.cluster
        n = len(nodes)
        all_nodes = np.ones(n, dtype=bool)

        # Bound claims: the PV must exist and its node affinity must admit the node; the first
        # claim that fails decides (checkBoundClaims).
        bound_ok = all_nodes.copy()
        pvs_found = all_nodes.copy()
        decided = np.zeros(n, dtype=bool)
        bound_codes = np.full((len(claims.bound), n), _B_NOT_CHECKED, dtype=np.int64)
        for b_i, pvc in enumerate(claims.bound):
            pv = st.cached_pv(cluster, str(st.spec(pvc).get("volumeName") or ""))
            if pv is None:
                bound_codes[b_i] = np.where(decided, _B_NOT_CHECKED, _B_MISSING)
                pvs_found &= decided
                break
            fits = st.pv_affinity_mask(cluster, pv, nodes)
            bound_codes[b_i] = np.where(decided, _B_NOT_CHECKED, np.where(fits, _B_OK, _B_AFFINITY))
            fail = ~decided & ~fits
            bound_ok &= ~fail
            decided |= fail

        # Unbound claims of WaitForFirstConsumer classes.
        unbound_ok = all_nodes.copy()
        sufficient = all_nodes.copy()
        error = np.zeros(n, dtype=bool)
        error_msg = ""
        annotated = [c for c in claims.delay if st.ANN_SELECTED_NODE in st.annotations_of(c)]
        to_match = sorted(
            (c for c in claims.delay if st.ANN_SELECTED_NODE not in st.annotations_of(c)), key=_size
        )
        order = annotated + to_match
        m = len(order)
        choice = np.full((m, n), -1, dtype=np.int64)
        provision = np.zeros((m, n), dtype=bool)
        cap_choice = np.full((m, n), -1, dtype=np.int64)
        outcome = np.full((m, n), _V_NOT_CHECKED, dtype=np.int64)
        claim_errors: dict[int, str] = {}
        candidates: list[list[st.JSON]] = [[] for _ in order]
        capacities = st.view(cluster).capacities
        if order:
            names = np.asarray([cluster.names[int(i)] for i in nodes], dtype=object)
            # A claim already given to a node by an earlier cycle fits only that node (fast path).
            fast_fail = np.zeros(n, dtype=bool)
            for c, claim in enumerate(annotated):
                elsewhere = names != str(st.annotations_of(claim)[st.ANN_SELECTED_NODE])
                outcome[c][elsewhere] = _V_OTHER_NODE
                fast_fail |= elsewhere
            live = ~fast_fail
            unbound_ok &= live
            provision[: len(annotated)] = live
            # findMatchingVolumes: smallest fitting PV per claim, chosen PVs excluded for later claims.
            for c_off, pvc in enumerate(to_match):
                c = len(annotated) + c_off
                pvs = claims.pvs_by_class.get(st.pvc_class(pvc), [])
                candidates[c] = pvs
                result = self._match(cluster, pvc, pvs, nodes, choice, candidates, c)
                choice[c] = np.where(live, result, -1)
                provision[c] = live & (choice[c] < 0)
                outcome[c] = np.where(choice[c] >= 0, choice[c], outcome[c])
            # checkVolumeProvisions: the first claim (in provisioning order) that cannot be
            # provisioned on the node decides.
            undecided = live.copy()
            for c, pvc in enumerate(order):
                member = undecided & provision[c]
                if not member.any():
                    continue
                code, cap_idx, msg = self._provision_outcome(cluster, pvc, nodes, capacities)
                cap_choice[c] = np.where(member, cap_idx, -1)
                if msg:
                    claim_errors[c] = msg
                for k_code, v_code in _V_FROM_PROVISION.items():
                    outcome[c][member & (code == k_code)] = v_code
                bad = member & (code != _OK)
                unbound_ok &= ~(bad & ((code == _UNSUPPORTED) | (code == _TOPOLOGY)))
                sufficient &= ~(bad & (code == _NO_SPACE))
                is_err = bad & (code == _ERROR)
                if is_err.any():
                    error |= is_err
                    error_msg = msg
                undecided &= ~bad

        if error.any():
            b.reject(error, Code.Error, error_msg)
        # Reasons in binder.go's order.
        for mask_bits, reasons in self._reason_groups(bound_ok, unbound_ok, sufficient, pvs_found):
            b.reject(mask_bits & ~error, Code.UnschedulableAndUnresolvable, *reasons)
        verdicts = b.done()
        batch = _Batch(nodes, order, candidates, choice, provision, cap_choice, capacities)
        passed = np.flatnonzero(verdicts.codes == 0)
        for k in passed:
            s.by_node[int(nodes[k])] = (batch, int(k))
        if len(passed) and m and (choice[:, passed] >= 0).any():
            s.has_static_bindings = True
        state.record_details(
            "Filter",
            NAME,
            _filter_details(
                cluster,
                claims,
                order,
                candidates,
                capacities,
                claim_errors,
                nodes,
                np.vstack([verdicts.codes.astype(np.int64), bound_codes, outcome, cap_choice]),
            ),
        )
        return verdicts

    @staticmethod
    def _reason_groups(
        bound_ok: npt.NDArray[np.bool_],
        unbound_ok: npt.NDArray[np.bool_],
        sufficient: npt.NDArray[np.bool_],
        pvs_found: npt.NDArray[np.bool_],
    ) -> list[tuple[npt.NDArray[np.bool_], tuple[str, ...]]]:
        flags = np.stack([~bound_ok, ~unbound_ok, ~sufficient, ~pvs_found])
        texts = (
            ERR_REASON_NODE_CONFLICT,
            ERR_REASON_BIND_CONFLICT,
            ERR_REASON_NOT_ENOUGH_SPACE,
            ERR_REASON_PV_NOT_EXIST,
        )
        codes = flags[0] * 1 + flags[1] * 2 + flags[2] * 4 + flags[3] * 8
        out = []
        for code in np.unique(codes):
            if code == 0:
                continue
            reasons = tuple(t for bit, t in enumerate(texts) if int(code) >> bit & 1)
            out.append((codes == code, reasons))
        return out

    def _match(
        self,
        cluster: Any,
        pvc: st.JSON,
        pvs: list[st.JSON],
        nodes: IntArray,
        choice: npt.NDArray[np.int64],
        candidates: list[list[st.JSON]],
        c: int,
    ) -> npt.NDArray[np.int64]:
        """volume.FindMatchingVolume (scheduler path) for every node: the chosen PV's index or -1."""
        n = len(nodes)
        requested = _size(pvc)
        claim_class = st.pvc_class(pvc)
        claim_modes = st.access_modes(pvc)
        ident = f"PersistentVolumeClaim {st.namespace_of(pvc)}/{st.name_of(pvc)}"
        sel_raw = st.spec(pvc).get("selector")
        prebound: list[int] = []
        unbound: list[tuple[Decimal, int]] = []
        for j, pv in enumerate(pvs):
            sp = st.spec(pv)
            if isinstance(sp.get("claimRef"), dict) and not st.is_volume_bound_to_claim(pv, pvc):
                continue
            qty = st.pv_capacity(pv)
            if qty < requested:
                continue
            if _volume_mode(pvc) != _volume_mode(pv):
                continue
            if self.vac_enabled and _vac(pvc) != _vac(pv):
                continue
            if not self.vac_enabled and _vac(pv):
                continue
            if st.meta(pv).get("deletionTimestamp"):
                continue
            if st.is_volume_bound_to_claim(pv, pvc):
                prebound.append(j)
                continue
            phase = pv.get("status", {}).get("phase") if isinstance(pv.get("status"), dict) else None
            if phase != "Available":
                continue
            if isinstance(sel_raw, dict) and not st.label_selector_matches(
                sel_raw, st.labels_of(pv), obj=ident, fld="spec.selector"
            ):
                continue
            if st.pv_class(pv) != claim_class:
                continue
            pv_modes = set(st.access_modes(pv))
            if any(mode not in pv_modes for mode in claim_modes):
                continue
            unbound.append((qty, j))

        # PVs already chosen for earlier claims on the same node are excluded.
        def excluded(j: int) -> npt.NDArray[np.bool_]:
            name = st.name_of(pvs[j])
            ex = np.zeros(n, dtype=bool)
            for e in range(c):
                for jj, other in enumerate(candidates[e]):
                    if st.name_of(other) == name:
                        ex |= choice[e] == jj
            return ex

        result = np.full(n, -1, dtype=np.int64)
        decided = np.zeros(n, dtype=bool)
        for j in prebound:
            # The first PV pre-bound to the claim decides: it if its affinity admits the node, else none.
            avail = ~decided & ~excluded(j)
            result[avail & st.pv_affinity_mask(cluster, pvs[j], nodes)] = j
            decided |= avail
        for _, j in sorted(unbound, key=lambda t: (t[0], t[1])):
            ok = ~decided & ~excluded(j) & st.pv_affinity_mask(cluster, pvs[j], nodes)
            result[ok] = j
            decided |= ok
        return result

    def _provision_outcome(
        self, cluster: Any, pvc: st.JSON, nodes: IntArray, capacities: list[st.JSON]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], str]:
        """checkVolumeProvisions for one claim on every node: outcome code, capacity index, error text."""
        n = len(nodes)
        cap_idx = np.full(n, -1, dtype=np.int64)
        key = f"{st.namespace_of(pvc)}/{st.name_of(pvc)}"
        class_name = st.pvc_class(pvc)
        if not class_name:
            return np.full(n, _ERROR, dtype=np.int64), cap_idx, f'no class for claim "{key}"'
        v = st.view(cluster)
        sc = v.classes.get(class_name)
        if sc is None:
            return np.full(n, _ERROR, dtype=np.int64), cap_idx, f'failed to find storage class "{class_name}"'
        provisioner = str(sc.get("provisioner") or "")
        if not provisioner or provisioner == st.NOT_SUPPORTED_PROVISIONER:
            return np.full(n, _UNSUPPORTED, dtype=np.int64), cap_idx, ""
        ident = f"StorageClass {class_name}"
        topo = _topology_mask(
            cluster, st.as_list(sc.get("allowedTopologies"), ident, "allowedTopologies"), nodes, ident
        )
        code = np.where(topo, _OK, _TOPOLOGY).astype(np.int64)
        size = st.pvc_request(pvc)
        if size is None:
            return code, cap_idx, ""
        driver = v.csidrivers.get(provisioner)
        if driver is None or st.spec(driver).get("storageCapacity") is not True:
            return code, cap_idx, ""
        # hasEnoughCapacity: the first CSIStorageCapacity of the class, large enough, visible from the node.
        found = np.zeros(n, dtype=bool)
        for idx, cap in enumerate(capacities):
            if str(cap.get("storageClassName") or "") != class_name:
                continue
            limit_raw = cap.get("maximumVolumeSize", cap.get("capacity"))
            if limit_raw is None:
                continue
            limit = quantity.parse(limit_raw, obj=f"CSIStorageCapacity {st.name_of(cap)}", field="capacity")
            if math.ceil(limit) < math.ceil(size):
                continue
            topology = cap.get("nodeTopology")
            if not isinstance(topology, dict):
                continue
            from ..labels import LabelSelector

            sel = LabelSelector.parse(
                topology, obj=f"CSIStorageCapacity {st.name_of(cap)}", field="nodeTopology"
            )
            hit = np.asarray([sel.matches(cluster.nodes[int(i)].labels) for i in nodes], dtype=bool) & ~found
            cap_idx[hit] = idx
            found |= hit
        code = np.where(topo & ~found, _NO_SPACE, code).astype(np.int64)
        return code, cap_idx, ""

    # ----- Reserve / Unreserve ----------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status.error("not found")
        cluster = state.cluster
        idx = cluster.index[node]
        volumes = s.pod_volumes(idx)
        if volumes is None:
            # The pod uses no claim.
            s.all_bound = True
            return Status.success()
        if self._all_bound(state, pod):
            s.all_bound = True
            return Status.success()
        cache = st.assumed(cluster)
        new_static: list[tuple[st.JSON, st.JSON]] = []
        for pvc, pv in volumes.static:
            new_pv, dirty = st.bind_volume_to_claim(pv, pvc)
            if dirty:
                cache.pvs[st.name_of(new_pv)] = new_pv
            new_static.append((pvc, new_pv))
        new_prov: list[tuple[st.JSON, st.JSON | None]] = []
        for pvc, _cap in volumes.provisions:
            clone = copy.deepcopy(pvc)
            md = clone.setdefault("metadata", {})
            md["annotations"] = {**(md.get("annotations") or {}), st.ANN_SELECTED_NODE: node}
            cache.pvcs[(st.namespace_of(clone), st.name_of(clone))] = clone
            new_prov.append((clone, None))
        s.assumed[idx] = PodVolumes(new_static, new_prov)
        s.all_bound = False
        state.record_details("Reserve", NAME, {"assumed": _volumes_details(s.assumed[idx], node)})
        return Status.success()

    def _all_bound(self, state: CycleState, pod: Pod) -> bool:
        """arePodVolumesBound: every claim of the pod is fully bound in the assume cache."""
        for v in st.pod_volumes(pod):
            claim = st.claim_name_of(v)
            if claim is None and isinstance(v.get("ephemeral"), dict):
                claim = st.ephemeral_claim_name(pod, v)
            if claim is None:
                continue
            pvc = st.cached_pvc(state.cluster, pod.namespace, claim)
            if pvc is None or not st.is_fully_bound(pvc):
                return False
        return True

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return
        cluster = state.cluster
        volumes = s.pod_volumes(cluster.index[node])
        if volumes is None:
            return
        # RevertAssumedPodVolumes: the caches go back to the informer's objects.
        cache = st.assumed(cluster)
        for pvc, pv in volumes.static:
            cache.pvs.pop(st.name_of(pv), None)
            # The claim is only assumed once PreBind played the PV controller.
            cache.pvcs.pop((st.namespace_of(pvc), st.name_of(pvc)), None)
        for pvc, _cap in volumes.provisions:
            cache.pvcs.pop((st.namespace_of(pvc), st.name_of(pvc)), None)

    # ----- PreBind ----------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node: str) -> Status:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status.error("not found")
        if s.all_bound:
            return Status.skip()
        if s.pod_volumes(state.cluster.index[node]) is None:
            return Status.error(f'no pod volume found for node "{node}"')
        return Status.success()

    def pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status.error("not found")
        if s.all_bound:
            return Status.success()
        volumes = s.pod_volumes(state.cluster.index[node])
        if volumes is None:
            return Status.error(f'no pod volume found for node "{node}"')
        # BindPodVolumes writes the assumed objects and waits for the PV controller; the replay
        # plays the controller for static bindings (claim and volume Bound) so that later cycles see
        # them bound. Claims to provision keep their selected-node annotation: the provisioner's PV
        # is unknown.
        cache = st.assumed(state.cluster)
        for pvc, pv in volumes.static:
            claim = st.cached_pvc(state.cluster, st.namespace_of(pvc), st.name_of(pvc)) or pvc
            bound_pvc, bound_pv = st.complete_binding(claim, pv)
            cache.pvcs[(st.namespace_of(bound_pvc), st.name_of(bound_pvc))] = bound_pvc
            cache.pvs[st.name_of(bound_pv)] = bound_pv
        state.record_details("PreBind", NAME, _volumes_details(volumes, node))
        return Status.success()

    # ----- PreScore / Score -------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: IntArray) -> Status:
        if self.shape is None:
            return Status.skip()
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status.error("not found")
        if s.has_static_bindings or self.capacity_scoring:
            return Status.success()
        return Status.skip()

    def score(self, state: CycleState, pod: Pod, nodes: IntArray) -> IntArray:
        out = np.zeros(len(nodes), dtype=np.int64)
        if self.shape is None:
            return out
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return out
        for k, i in enumerate(nodes):
            volumes = s.pod_volumes(int(i))
            if volumes is not None:
                out[k] = self._score_volumes(volumes)
        return out

    def _score_volumes(self, volumes: PodVolumes) -> int:
        classes: dict[str, list[int]] = {}
        if volumes.static or not self.capacity_scoring:
            for pvc, pv in volumes.static:
                r = classes.setdefault(st.pv_class(pv), [0, 0])
                r[0] += st.quantity_value(_size(pvc))
                r[1] += st.quantity_value(st.pv_capacity(pv))
        else:
            for pvc, cap in volumes.provisions:
                if cap is None:
                    continue
                r = classes.setdefault(st.pvc_class(pvc), [0, 0])
                raw_cap = cap.get("capacity")
                r[1] = st.quantity_value(quantity.parse(raw_cap)) if raw_cap is not None else 0
                r[0] += st.quantity_value(_size(pvc))
        if not classes:
            return 0
        total = 0
        for requested, cap_value in classes.values():
            if cap_value == 0 or requested > cap_value:
                total += self._shape(MAX_UTILIZATION)
            else:
                total += self._shape(requested * MAX_UTILIZATION // cap_value)
        # math.Round: halves away from zero.
        avg = total / len(classes)
        return math.floor(avg + 0.5) if avg >= 0 else -math.floor(-avg + 0.5)

    def _shape(self, p: int) -> int:
        """helper.BuildBrokenLinearFunction."""
        shape = self.shape or []
        for i, (util, score) in enumerate(shape):
            if p <= util:
                if i == 0:
                    return score
                pu, ps = shape[i - 1]
                return ps + st.go_div((score - ps) * (p - pu), util - pu)
        return shape[-1][1]

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """The reasons and the pod's claims, volumes and their topology (_storage.volume_diagnosis)."""
        return st.volume_diagnosis(ctx, pod, nodes, reasons)
