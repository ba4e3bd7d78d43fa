"""VolumeZone: a bound PersistentVolume's zone/region labels must match the node's.

framework/plugins/volumezone/volume_zone.go. PreFilter collects the topology labels of the PVs
bound to the pod's claims (unbound claims of a WaitForFirstConsumer class are left out) and Skips
when there are none. Filter passes nodes without any zone or region label, and otherwise needs
every PV label value set to contain the node's value (a beta PV label also matches the node's GA
label).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..framework import Code, CycleState, Handle, PreFilterResult, Status, Verdicts
from ..framework.diagnosis import Diagnosis, DiagnosisContext
from ..framework.interfaces import IntArray
from ..objects import Pod
from . import _storage as st

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GA_ZONE = "topology.kubernetes.io/zone"
GA_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)
_TO_GA = {BETA_REGION: GA_REGION, BETA_ZONE: GA_ZONE}


@dataclass(frozen=True)
class _PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


@dataclass
class _State:
    topologies: list[_PVTopology]

    def clone(self) -> _State:
        return self


def _label_zones(value: str) -> frozenset[str] | None:
    """cloud-provider volume helpers LabelZonesToSet: "__"-separated zones, none of them empty."""
    zones = [z.strip() for z in value.split("__")]
    if any(z == "" for z in zones):
        return None
    return frozenset(zones)


def pv_topologies(pv: st.JSON) -> list[_PVTopology]:
    """getPVTopologies: one entry per topology label the PV carries (unparsable values are ignored)."""
    labels = st.labels_of(pv)
    out: list[_PVTopology] = []
    for key in TOPOLOGY_LABELS:
        if key in labels:
            zones = _label_zones(labels[key])
            if zones is None:
                continue
            out.append(_PVTopology(st.name_of(pv), key, zones))
    return out


class VolumeZone:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle

    def _topologies(self, state: CycleState, pod: Pod) -> tuple[list[_PVTopology], Status]:
        """getPVbyPod."""
        out: list[_PVTopology] = []
        for vol in st.pod_volumes(pod):
            claim = st.claim_name_of(vol)
            if claim is None:
                continue
            v = st.view(state.cluster)
            if claim == "":
                return [], Status(Code.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name")
            pvc = v.pvcs.get((pod.namespace, claim))
            if pvc is None:
                return [], Status(
                    Code.UnschedulableAndUnresolvable, st.not_found("persistentvolumeclaim", claim)
                )
            pv_name = str(st.spec(pvc).get("volumeName") or "")
            if not pv_name:
                sc_name = st.pvc_class(pvc)
                if not sc_name:
                    return [], Status(
                        Code.UnschedulableAndUnresolvable,
                        "PersistentVolumeClaim had no pv name and storageClass name",
                    )
                sc = v.classes.get(sc_name)
                if sc is None:
                    return [], Status(
                        Code.UnschedulableAndUnresolvable,
                        st.not_found("storageclass.storage.k8s.io", sc_name),
                    )
                if st.binding_mode(sc) == "WaitForFirstConsumer":
                    continue
                return [], Status(Code.UnschedulableAndUnresolvable, "PersistentVolume had no name")
            pv = v.pvs.get(pv_name)
            if pv is None:
                return [], Status(
                    Code.UnschedulableAndUnresolvable, st.not_found("persistentvolume", pv_name)
                )
            out.extend(pv_topologies(pv))
        return out, Status.success()

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        topologies, status = self._topologies(state, pod)
        if not status.is_success():
            return None, status
        if not topologies:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _State(topologies))
        return None, Status.success()

    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        b = Verdicts.build(len(nodes))
        if not st.pod_volumes(pod):
            return b.done()
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, _State):
            topologies = s.topologies
        else:
            # Without PreFilter's state, upstream computes the list here.
            topologies, status = self._topologies(state, pod)
            if not status.is_success():
                b.reject(np.ones(len(nodes), dtype=bool), status.code, *status.reasons)
                return b.done()
        cluster = state.cluster
        constrained = np.zeros(len(nodes), dtype=bool)
        for key in TOPOLOGY_LABELS:
            constrained |= cluster.label(key).codes[nodes] >= 0
        ok = np.ones(len(nodes), dtype=bool)
        for t in topologies:
            own = cluster.label(t.key)
            value_codes = own.codes[nodes]
            matched = own.isin(t.values)[nodes]
            ga = _TO_GA.get(t.key)
            if ga is not None:
                # The node lacks the PV's (beta) key: try the GA key instead.
                ga_col = cluster.label(ga)
                matched = np.where(value_codes >= 0, matched, ga_col.isin(t.values)[nodes])
            ok &= matched
        b.reject(constrained & ~ok, Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return b.done()

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """The reasons and the pod's claims, volumes and their topology (_storage.volume_diagnosis)."""
        return st.volume_diagnosis(ctx, pod, nodes, reasons)
