"""VolumeRestrictions: disk conflicts between pods on a node, and ReadWriteOncePod claims.

framework/plugins/volumerestrictions/volume_restrictions.go. PreFilter looks the pod's claims up
(a missing claim rejects the pod outright) and Skips when there is neither an in-tree disk to
check (GCE PD, AWS EBS, iSCSI, Ceph RBD) nor a ReadWriteOncePod claim already used by a scheduled
pod. Filter rejects nodes whose pods mount the same disk, then every node when a ReadWriteOncePod
claim is in use.
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

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"

_DISK_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


@dataclass
class _PreFilterState:
    """Names of the pod's ReadWriteOncePod claims and how often scheduled pods reference them."""

    rwop_claims: frozenset[str]
    conflicting_refs: int

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.rwop_claims, self.conflicting_refs)

    def refs_of(self, pod: Pod) -> int:
        n = 0
        for v in st.pod_volumes(pod):
            name = st.claim_name_of(v)
            if name is not None and name in self.rwop_claims:
                n += 1
        return n


@dataclass(frozen=True)
class _Disk:
    """One in-tree disk a volume mounts, reduced to what isVolumeConflict compares."""

    kind: str
    ident: str
    read_only: bool
    monitors: frozenset[str] = frozenset()
    pool: str = ""

    def conflicts(self, other: _Disk) -> bool:
        if self.kind != other.kind:
            return False
        if self.kind == "gcePersistentDisk" or self.kind == "iscsi":
            return self.ident == other.ident and not (self.read_only and other.read_only)
        if self.kind == "awsElasticBlockStore":
            return self.ident == other.ident
        # rbd: overlapping monitors, same pool and image, unless both read-only.
        return (
            bool(self.monitors & other.monitors)
            and self.pool == other.pool
            and self.ident == other.ident
            and not (self.read_only and other.read_only)
        )


def _disk_of(volume: dict[str, Any]) -> _Disk | None:
    for kind in _DISK_SOURCES:
        src = volume.get(kind)
        if not isinstance(src, dict):
            continue
        ro = bool(src.get("readOnly", False))
        if kind == "gcePersistentDisk":
            return _Disk(kind, str(src.get("pdName") or ""), ro)
        if kind == "awsElasticBlockStore":
            return _Disk(kind, str(src.get("volumeID") or ""), ro)
        if kind == "iscsi":
            return _Disk(kind, str(src.get("iqn") or ""), ro)
        monitors = src.get("monitors")
        return _Disk(
            kind,
            str(src.get("image") or ""),
            ro,
            frozenset(str(m) for m in monitors) if isinstance(monitors, list) else frozenset(),
            # API defaulting: RBDVolumeSource.pool defaults to "rbd".
            str(src.get("pool") or "rbd"),
        )
    return None


def _pod_disks(pod: Pod) -> list[_Disk]:
    cached = pod.cache.get(NAME)
    if cached is None:
        cached = [d for d in (_disk_of(v) for v in st.pod_volumes(pod)) if d is not None]
        pod.cache[NAME] = cached
    disks: list[_Disk] = cached
    return disks


class VolumeRestrictions:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle

    # ----- PreFilter ------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        volumes = st.pod_volumes(pod)
        if not volumes:
            return None, Status.skip()
        needs_check = bool(_pod_disks(pod))
        rwop: set[str] = set()
        for v in volumes:
            claim = st.claim_name_of(v)
            if claim is None:
                continue
            pvc = st.view(state.cluster).pvcs.get((pod.namespace, claim))
            if pvc is None:
                return None, Status(
                    Code.UnschedulableAndUnresolvable, st.not_found("persistentvolumeclaim", claim)
                )
            if "ReadWriteOncePod" in st.access_modes(pvc):
                rwop.add(st.name_of(pvc))
        # At most one pod can use a ReadWriteOncePod claim: count claims in use, not pods.
        conflicting = 0
        if rwop:
            used = self._used_claims(state)
            conflicting = sum(1 for c in rwop if (pod.namespace, c) in used)
        if not needs_check and conflicting == 0:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(rwop), conflicting))
        return None, Status.success()

    def _used_claims(self, state: CycleState) -> set[tuple[str, str]]:
        """Snapshot.IsPVCUsedByPods: claims referenced by any pod placed on a node."""
        cluster = state.cluster
        key = NAME + "/used-claims"
        cached = cluster.caches.get(key)
        if cached is not None and cached[0] == cluster.generation:
            used: set[tuple[str, str]] = cached[1]
            return used
        used = set()
        for p in cluster.assigned_pods():
            for v in st.pod_volumes(p):
                claim = st.claim_name_of(v)
                if claim is not None:
                    used.add((p.namespace, claim))
        cluster.caches[key] = (cluster.generation, used)
        return used

    # ----- PreFilterExtensions (used by preemption's dry runs) ------------------------------
    def add_pod(self, state: CycleState, pod: Pod, other: Pod, node: int) -> Status:
        return self._update(state, other, 1)

    def remove_pod(self, state: CycleState, pod: Pod, other: Pod, node: int) -> Status:
        return self._update(state, other, -1)

    def _update(self, state: CycleState, other: Pod, sign: int) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.conflicting_refs += sign * s.refs_of(other)
        return Status.success()

    # ----- Filter ---------------------------------------------------------------------------
    def _disk_index(self, state: CycleState) -> list[tuple[int, _Disk]]:
        """(node, disk) for every in-tree disk mounted by a pod placed on a node."""
        cluster = state.cluster
        key = NAME + "/disks"
        cached = cluster.caches.get(key)
        if cached is not None and cached[0] == cluster.generation:
            index: list[tuple[int, _Disk]] = cached[1]
            return index
        index = []
        for p in cluster.assigned_pods():
            disks = _pod_disks(p)
            if disks:
                node = cluster.node_of(p)
                assert node is not None
                index.extend((node, d) for d in disks)
        cluster.caches[key] = (cluster.generation, index)
        return index

    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        b = Verdicts.build(len(nodes))
        disks = _pod_disks(pod)
        if disks:
            conflicting: set[int] = set()
            for node, existing in self._disk_index(state):
                if node not in conflicting and any(d.conflicts(existing) for d in disks):
                    conflicting.add(node)
            if conflicting:
                mask = np.isin(nodes, np.fromiter(conflicting, dtype=np.int64))
                b.reject(mask, Code.Unschedulable, ERR_REASON_DISK_CONFLICT)
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            b.reject(
                np.ones(len(nodes), dtype=bool),
                Code.Error,
                f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState',
            )
        elif s.conflicting_refs > 0:
            b.reject(np.ones(len(nodes), dtype=bool), Code.Unschedulable, ERR_REASON_RWOP_CONFLICT)
        return b.done()

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """The reasons and the pod's claims, volumes and their topology (_storage.volume_diagnosis)."""
        return st.volume_diagnosis(ctx, pod, nodes, reasons)
