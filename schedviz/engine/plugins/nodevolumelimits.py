"""NodeVolumeLimits: a node's CSI drivers attach at most CSINode's allocatable.count volumes.

framework/plugins/nodevolumelimits/csi.go. PreFilter Skips pods without a claim, a generic
ephemeral volume or a migratable in-tree inline volume. Filter counts, per CSI driver, the distinct
volumes the node's pods use plus VolumeAttachments to the node, and rejects the node when the
pod's new volumes would go past the driver's limit. Unbound claims count through their
StorageClass's provisioner; in-tree volumes count only where the CSINode lists the plugin as
migrated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..framework import Code, CycleState, Handle, PreFilterResult, Status, Verdicts
from ..framework.diagnosis import Diagnosis, DiagnosisContext
from ..framework.interfaces import IntArray
from ..objects import Pod
from . import _storage as st

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

# csi.go uses a random prefix for volumes not yet provisioned (unique within one plugin instance).
_PROVISION_PREFIX = "schedviz-unbound"


class _LookupError(Exception):
    """filterAttachableVolumes failed for the new pod; ``not_found`` marks a missing claim."""

    def __init__(self, message: str, not_found: bool) -> None:
        super().__init__(message)
        self.not_found = not_found


@dataclass
class _AttachIndex:
    """Volumes in use per node: unique name -> driver, and per-driver counts, for nodes that have any."""

    by_node: dict[int, dict[str, str]] = field(default_factory=dict)
    errors: dict[int, str] = field(default_factory=dict)


def _pod_has_countable_volume(pod: Pod) -> bool:
    for v in st.pod_volumes(pod):
        if isinstance(v.get("persistentVolumeClaim"), dict) or isinstance(v.get("ephemeral"), dict):
            return True
        if st.in_tree_source(v) is not None:
            return True
    return False


class NodeVolumeLimits:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.portworx = handle.features.get("CSIMigrationPortworx", True)
        self.limit_scaling = handle.features.get("VolumeLimitScaling", False)

    # ----- PreFilter ------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        if _pod_has_countable_volume(pod):
            return None, Status.success()
        return None, Status.skip()

    # ----- volume identification ------------------------------------------------------------
    def _attachable(
        self, state: CycleState, pod: Pod, csinode: st.JSON | None, new_pod: bool
    ) -> dict[str, str]:
        """filterAttachableVolumes: unique volume name -> CSI driver for the pod's countable volumes."""
        cluster = state.cluster
        lister = st.view(cluster).pvcs
        out: dict[str, str] = {}
        for v in st.pod_volumes(pod):
            claim = st.claim_name_of(v)
            ephemeral = False
            if claim is None and isinstance(v.get("ephemeral"), dict):
                claim = st.ephemeral_claim_name(pod, v)
                ephemeral = True
            if claim is None:
                self._inline(v, csinode, out)
                continue
            if claim == "":
                raise _LookupError("PersistentVolumeClaim had no name", False)
            pvc = lister.get((pod.namespace, claim))
            if pvc is None:
                if new_pod:
                    msg = f"looking up PVC {pod.namespace}/{claim}: {st.not_found('persistentvolumeclaim', claim)}"
                    raise _LookupError(msg, True)
                continue
            if ephemeral:
                err = st.ephemeral_owner_error(pod, pvc)
                if err is not None:
                    raise _LookupError(err, False)
            driver, handle = self._driver_info(state, csinode, pvc)
            if not driver or not handle:
                continue
            out[f"{driver}/{handle}"] = driver
        return out

    def _inline(self, volume: st.JSON, csinode: st.JSON | None, out: dict[str, str]) -> None:
        kind = st.in_tree_source(volume)
        if kind is None:
            return
        plugin, driver = st.IN_TREE_SOURCES[kind]
        if not st.csi_migration_on(csinode, plugin, self.portworx):
            return
        if kind in ("azureFile", "vsphereVolume", "rbd"):
            return
        out[f"{driver}/{st.in_tree_handle(kind, volume[kind])}"] = driver

    def _driver_info(self, state: CycleState, csinode: st.JSON | None, pvc: st.JSON) -> tuple[str, str]:
        """getCSIDriverInfo: the driver and volume handle of a claim's PV, else from its StorageClass."""
        v = st.view(state.cluster)
        pv_name = str(st.spec(pvc).get("volumeName") or "")
        pv = v.pvs.get(pv_name) if pv_name else None
        if pv is None:
            return self._driver_info_from_class(state, csinode, pvc)
        csi = st.spec(pv).get("csi")
        if isinstance(csi, dict):
            return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")
        kind = st.in_tree_source(st.spec(pv))
        if kind is None or kind in ("azureFile", "vsphereVolume", "rbd"):
            return "", ""
        plugin, driver = st.IN_TREE_SOURCES[kind]
        if not st.csi_migration_on(csinode, plugin, self.portworx):
            return "", ""
        return driver, st.in_tree_handle(kind, st.spec(pv)[kind])

    def _driver_info_from_class(
        self, state: CycleState, csinode: st.JSON | None, pvc: st.JSON
    ) -> tuple[str, str]:
        sc_name = st.pvc_class(pvc)
        if not sc_name:
            return "", ""
        sc = st.view(state.cluster).classes.get(sc_name)
        if sc is None:
            return "", ""
        handle = f"{_PROVISION_PREFIX}-{st.namespace_of(pvc)}/{st.name_of(pvc)}"
        provisioner = str(sc.get("provisioner") or "")
        if provisioner in st.IN_TREE_PLUGIN_TO_CSI:
            if not st.csi_migration_on(csinode, provisioner, self.portworx):
                return "", ""
            return st.IN_TREE_PLUGIN_TO_CSI[provisioner], handle
        return provisioner, handle

    def _in_use(self, state: CycleState) -> _AttachIndex:
        """Volumes of the pods on each node (existing pods: claims that cannot be found are skipped)."""
        cluster = state.cluster
        key = NAME + "/in-use"
        cached = cluster.caches.get(key)
        if cached is not None and cached[0] == cluster.generation:
            idx: _AttachIndex = cached[1]
            return idx
        idx = _AttachIndex()
        csinodes = st.view(cluster).csinodes
        for p in cluster.assigned_pods():
            if not st.pod_volumes(p):
                continue
            node = cluster.node_of(p)
            assert node is not None
            try:
                vols = self._attachable(state, p, csinodes.get(cluster.names[node]), False)
            except _LookupError as exc:
                # Filter answers Error for this node (fwk.AsStatus of the lookup error).
                idx.errors.setdefault(node, str(exc))
                continue
            if vols:
                idx.by_node.setdefault(node, {}).update(vols)
        cluster.caches[key] = (cluster.generation, idx)
        return idx

    def _attachments(self, state: CycleState) -> dict[str, dict[str, str]]:
        """getNodeVolumeAttachmentInfo for every node: node name -> unique volume name -> attacher."""
        cluster = state.cluster
        v = st.view(cluster)
        key = NAME + "/attachments"
        cached = cluster.caches.get(key)
        if cached is not None and cached[0] is v:
            out: dict[str, dict[str, str]] = cached[1]
            return out
        out = {}
        for va in v.attachments:
            sp = st.spec(va)
            attacher = str(sp.get("attacher") or "")
            src = sp.get("source")
            pv_name = src.get("persistentVolumeName") if isinstance(src, dict) else None
            if not attacher or not pv_name:
                continue
            pv = v.pvs.get(str(pv_name))
            csi = st.spec(pv).get("csi") if pv is not None else None
            if not isinstance(csi, dict):
                continue
            node = str(sp.get("nodeName") or "")
            out.setdefault(node, {})[f"{attacher}/{csi.get('volumeHandle', '')}"] = attacher
        cluster.caches[key] = (v, out)
        return out

    # ----- Filter ---------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        b = Verdicts.build(len(nodes))
        if not st.pod_volumes(pod):
            return b.done()
        cluster = state.cluster
        v = st.view(cluster)
        # The pod's volumes depend on the node only through the CSINode (in-tree migration), so
        # nodes are grouped by their CSINode's migrated-plugins annotation.
        groups: dict[tuple[bool, str], list[int]] = {}
        for k, i in enumerate(nodes):
            csinode = v.csinodes.get(cluster.names[int(i)])
            sig = (
                csinode is not None,
                str(st.annotations_of(csinode).get(st.MIGRATED_PLUGINS_ANNOTATION) or "") if csinode else "",
            )
            groups.setdefault(sig, []).append(k)
        in_use: _AttachIndex | None = None
        for positions in groups.values():
            first = cluster.names[int(nodes[positions[0]])]
            try:
                new = self._attachable(state, pod, v.csinodes.get(first), True)
            except _LookupError as exc:
                code = Code.UnschedulableAndUnresolvable if exc.not_found else Code.Error
                b.reject(np.asarray(positions, dtype=np.intp), code, str(exc))
                continue
            if not new:
                continue
            if in_use is None:
                in_use = self._in_use(state)
            attachments = self._attachments(state)
            for k in positions:
                i = int(nodes[k])
                name = cluster.names[i]
                csinode = v.csinodes.get(name)
                if self.limit_scaling:
                    missing = self._driver_missing(state, new, csinode)
                    if missing:
                        b.reject(k, Code.Unschedulable, f"{missing} CSI driver is not installed on the node")
                        continue
                limits = st.csinode_limits(csinode)
                if not limits:
                    continue
                if i in in_use.errors:
                    b.reject(k, Code.Error, in_use.errors[i])
                    continue
                attached = in_use.by_node.get(i, {})
                count: dict[str, int] = {}
                for drv in attached.values():
                    count[drv] = count.get(drv, 0) + 1
                for uname, drv in attachments.get(name, {}).items():
                    if uname not in attached:
                        count[drv] = count.get(drv, 0) + 1
                wanted: dict[str, int] = {}
                for uname, drv in new.items():
                    if uname not in attached:
                        wanted[drv] = wanted.get(drv, 0) + 1
                for drv, n in wanted.items():
                    limit = limits.get(drv)
                    if limit is not None and count.get(drv, 0) + n > limit:
                        b.reject(k, Code.Unschedulable, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
                        break
        return b.done()

    def _driver_missing(self, state: CycleState, new: dict[str, str], csinode: st.JSON | None) -> str:
        """checkCSIDriverOnNode (VolumeLimitScaling): a known CSIDriver absent from the CSINode."""
        drivers = st.view(state.cluster).csidrivers
        for drv in new.values():
            if drv not in drivers:
                continue
            if csinode is None:
                return drv
            names = {
                str(d.get("name") or "")
                for d in st.as_list(st.spec(csinode).get("drivers"), "CSINode", "spec.drivers")
                if isinstance(d, dict)
            }
            if drv not in names:
                return drv
        return ""

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """The reasons and the pod's claims, volumes and their topology (_storage.volume_diagnosis)."""
        return st.volume_diagnosis(ctx, pod, nodes, reasons)
