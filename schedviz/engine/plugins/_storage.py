"""What the storage plugins share: listers over the snapshot's storage objects, the assume caches
that Reserve writes into, node selectors evaluated over many nodes at once, and quantity helpers.

The scheduler reads storage objects through informer listers (PersistentVolumeClaims, PVs,
StorageClasses, CSINodes, CSIDrivers, VolumeAttachments, CSIStorageCapacities) and, for the volume
binder, through assume caches that hold the scheduler's own not-yet-bound decisions
(framework/plugins/volumebinding/assume_cache.go). Here the listers are built once per object set
and the assumed objects live in ``cluster.caches`` for the whole replay (they outlive a cycle, as
the real assume caches do).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .. import quantity
from ..errors import InputError
from ..framework.diagnosis import Diagnosis, DiagnosisContext, format_requirement

if TYPE_CHECKING:
    from ..cluster import ClusterState
    from ..objects import KubeObject, Pod

JSON = dict[str, Any]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# component-helpers/storage/volume/pv_helpers.go
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
# api/core/v1 MigratedPluginsAnnotationKey
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"

_VIEW_KEY = "storage/view"
_ASSUMED_KEY = "storage/assumed"


def as_map(value: object, obj: str, fld: str) -> JSON:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"expected an object, got {type(value).__name__}", obj=obj, field=fld)
    return value


def as_list(value: object, obj: str, fld: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"expected a list, got {type(value).__name__}", obj=obj, field=fld)
    return value


def meta(raw: JSON) -> JSON:
    m = raw.get("metadata")
    return m if isinstance(m, dict) else {}


def spec(raw: JSON) -> JSON:
    s = raw.get("spec")
    return s if isinstance(s, dict) else {}


def annotations_of(raw: JSON) -> dict[str, Any]:
    a = meta(raw).get("annotations")
    return a if isinstance(a, dict) else {}


def labels_of(raw: JSON) -> dict[str, str]:
    lab = meta(raw).get("labels")
    if not isinstance(lab, dict):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in lab.items()}


def name_of(raw: JSON) -> str:
    return str(meta(raw).get("name") or "")


def namespace_of(raw: JSON) -> str:
    return str(meta(raw).get("namespace") or "default")


def uid_of(raw: JSON) -> str:
    return str(meta(raw).get("uid") or "")


def not_found(resource: str, name: str) -> str:
    """The text of apierrors.NewNotFound for a lister miss, e.g. `persistentvolumeclaim "x" not found`."""
    return f'{resource} "{name}" not found'


# ----- PersistentVolumeClaims and PersistentVolumes ---------------------------------------------


def pvc_class(pvc: JSON) -> str:
    """volume.GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
    ann = annotations_of(pvc)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return str(ann[BETA_STORAGE_CLASS_ANNOTATION])
    sc = spec(pvc).get("storageClassName")
    return "" if sc is None else str(sc)


def pv_class(pv: JSON) -> str:
    """volume.GetPersistentVolumeClass."""
    ann = annotations_of(pv)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return str(ann[BETA_STORAGE_CLASS_ANNOTATION])
    return str(spec(pv).get("storageClassName") or "")


def pvc_request(pvc: JSON) -> Decimal | None:
    """spec.resources.requests.storage, None when absent."""
    ident = f"PersistentVolumeClaim {namespace_of(pvc)}/{name_of(pvc)}"
    req = as_map(
        as_map(spec(pvc).get("resources"), ident, "spec.resources").get("requests"),
        ident,
        "spec.resources.requests",
    )
    if "storage" not in req:
        return None
    return quantity.parse(req["storage"], obj=ident, field="spec.resources.requests.storage")


def pv_capacity(pv: JSON) -> Decimal:
    ident = f"PersistentVolume {name_of(pv)}"
    cap = as_map(spec(pv).get("capacity"), ident, "spec.capacity")
    if "storage" not in cap:
        return Decimal(0)
    return quantity.parse(cap["storage"], obj=ident, field="spec.capacity.storage")


def quantity_value(q: Decimal) -> int:
    """resource.Quantity.Value(): rounded up to a whole unit."""
    return math.ceil(q)


def access_modes(raw: JSON) -> list[str]:
    modes = spec(raw).get("accessModes")
    return [str(m) for m in modes] if isinstance(modes, list) else []


def is_fully_bound(pvc: JSON) -> bool:
    """volumeBinder.isPVCFullyBound: a volume name and the bind-completed annotation."""
    return bool(spec(pvc).get("volumeName")) and ANN_BIND_COMPLETED in annotations_of(pvc)


def is_volume_bound_to_claim(pv: JSON, pvc: JSON) -> bool:
    """volume.IsVolumeBoundToClaim: claimRef names the claim (and its UID when the ref has one)."""
    ref = spec(pv).get("claimRef")
    if not isinstance(ref, dict):
        return False
    if name_of(pvc) != str(ref.get("name") or "") or namespace_of(pvc) != str(ref.get("namespace") or ""):
        return False
    ref_uid = str(ref.get("uid") or "")
    return not ref_uid or ref_uid == uid_of(pvc)


def ephemeral_claim_name(pod: Pod, volume: JSON) -> str:
    """component-helpers/storage/ephemeral VolumeClaimName: <pod name>-<volume name>."""
    return f"{pod.name}-{volume.get('name', '')}"


def ephemeral_owner_error(pod: Pod, pvc: JSON) -> str | None:
    """ephemeral.VolumeIsForPod: the PVC must be controlled by the pod."""
    owned = False
    for ref in as_list(meta(pvc).get("ownerReferences"), "PersistentVolumeClaim", "metadata.ownerReferences"):
        if isinstance(ref, dict) and ref.get("controller") is True and str(ref.get("uid") or "") == pod.uid:
            owned = True
            break
    if namespace_of(pvc) != pod.namespace or not owned:
        return (
            f"PVC {namespace_of(pvc)}/{name_of(pvc)} was not created for pod "
            f"{pod.namespace}/{pod.name} (pod is not owner)"
        )
    return None


def pod_volumes(pod: Pod) -> list[JSON]:
    vols = as_list(pod.spec.get("volumes"), pod.ident, "spec.volumes")
    out: list[JSON] = []
    for i, v in enumerate(vols):
        out.append(as_map(v, pod.ident, f"spec.volumes[{i}]"))
    return out


def claim_name_of(volume: JSON) -> str | None:
    """The claim name of a persistentVolumeClaim volume, None for other volume types."""
    src = volume.get("persistentVolumeClaim")
    if not isinstance(src, dict):
        return None
    return str(src.get("claimName") or "")


# ----- the snapshot's storage objects ------------------------------------------------------------


@dataclass
class StorageView:
    """Informer listers over the snapshot's storage objects (objects in input order)."""

    pvcs: dict[tuple[str, str], JSON] = field(default_factory=dict)
    pvs: dict[str, JSON] = field(default_factory=dict)
    pv_order: list[str] = field(default_factory=list)
    classes: dict[str, JSON] = field(default_factory=dict)
    csinodes: dict[str, JSON] = field(default_factory=dict)
    csidrivers: dict[str, JSON] = field(default_factory=dict)
    attachments: list[JSON] = field(default_factory=list)
    capacities: list[JSON] = field(default_factory=list)


def _object_signature(cluster: ClusterState) -> tuple[int, tuple[tuple[str, int], ...]]:
    return id(cluster.objects), tuple(sorted(cluster.objects.kinds().items()))


def view(cluster: ClusterState) -> StorageView:
    sig = _object_signature(cluster)
    cached = cluster.caches.get(_VIEW_KEY)
    if cached is not None and cached[0] == sig:
        v: StorageView = cached[1]
        return v
    v = StorageView()
    objs = cluster.objects
    for o in objs.of_kind("PersistentVolumeClaim"):
        v.pvcs[(o.namespace, o.name)] = _with_defaults(o)
    for o in objs.of_kind("PersistentVolume"):
        v.pvs[o.name] = o.raw
        v.pv_order.append(o.name)
    for o in objs.of_kind("StorageClass"):
        v.classes[o.name] = o.raw
    for o in objs.of_kind("CSINode"):
        v.csinodes[o.name] = o.raw
    for o in objs.of_kind("CSIDriver"):
        v.csidrivers[o.name] = o.raw
    v.attachments = [o.raw for o in objs.of_kind("VolumeAttachment")]
    v.capacities = [o.raw for o in objs.of_kind("CSIStorageCapacity")]
    cluster.caches[_VIEW_KEY] = (sig, v)
    return v


def _with_defaults(o: KubeObject) -> JSON:
    """The object as the API server stores it: metadata.namespace filled in."""
    raw = o.raw
    md = meta(raw)
    if md.get("namespace"):
        return raw
    out = dict(raw)
    out["metadata"] = {**md, "namespace": o.namespace}
    return out


def binding_mode(sc: JSON) -> str:
    """StorageClass.volumeBindingMode; the API server defaults it to Immediate."""
    mode = sc.get("volumeBindingMode")
    return "Immediate" if mode is None or mode == "" else str(mode)


# ----- the assume caches (volumebinding/assume_cache.go, passive_assume_cache.go) ----------------


@dataclass
class Assumed:
    """Objects the scheduler assumed during Reserve, by key; they shadow the informer's version."""

    pvs: dict[str, JSON] = field(default_factory=dict)
    pvcs: dict[tuple[str, str], JSON] = field(default_factory=dict)


def assumed(cluster: ClusterState) -> Assumed:
    a = cluster.caches.get(_ASSUMED_KEY)
    if not isinstance(a, Assumed):
        a = Assumed()
        cluster.caches[_ASSUMED_KEY] = a
    return a


def cached_pvc(cluster: ClusterState, namespace: str, name: str) -> JSON | None:
    """pvcCache.Get: the assumed version if any, else the informer's."""
    a = assumed(cluster).pvcs.get((namespace, name))
    if a is not None:
        return a
    return view(cluster).pvcs.get((namespace, name))


def cached_pv(cluster: ClusterState, name: str) -> JSON | None:
    a = assumed(cluster).pvs.get(name)
    if a is not None:
        return a
    return view(cluster).pvs.get(name)


def cached_pvs_of_class(cluster: ClusterState, class_name: str) -> list[JSON]:
    """pvCache.ListPVs: every PV of the class (assumed versions included), in input order."""
    v = view(cluster)
    a = assumed(cluster).pvs
    out: list[JSON] = []
    for name in v.pv_order:
        pv = a.get(name, v.pvs[name])
        if pv_class(pv) == class_name:
            out.append(pv)
    return out


def bind_volume_to_claim(pv: JSON, pvc: JSON) -> tuple[JSON, bool]:
    """volume.GetBindVolumeToClaim: a copy of the PV whose claimRef names the claim; dirty if changed."""
    dirty = False
    set_by_controller = not is_volume_bound_to_claim(pv, pvc)
    clone = copy.deepcopy(pv)
    sp = clone.setdefault("spec", {})
    ref = sp.get("claimRef") if isinstance(sp.get("claimRef"), dict) else None
    if (
        ref is None
        or str(ref.get("name") or "") != name_of(pvc)
        or str(ref.get("namespace") or "") != namespace_of(pvc)
        or str(ref.get("uid") or "") != uid_of(pvc)
    ):
        new_ref: JSON = {
            "kind": "PersistentVolumeClaim",
            "namespace": namespace_of(pvc),
            "name": name_of(pvc),
            "uid": uid_of(pvc),
            "apiVersion": "v1",
        }
        rv = meta(pvc).get("resourceVersion")
        if rv:
            new_ref["resourceVersion"] = rv
        sp["claimRef"] = new_ref
        dirty = True
    md = clone.setdefault("metadata", {})
    anns = md.get("annotations") if isinstance(md.get("annotations"), dict) else {}
    if set_by_controller and ANN_BOUND_BY_CONTROLLER not in anns:
        md["annotations"] = {**anns, ANN_BOUND_BY_CONTROLLER: "yes"}
        dirty = True
    return clone, dirty


def complete_binding(pvc: JSON, pv: JSON) -> tuple[JSON, JSON]:
    """What the PV controller does with a volume the scheduler bound to a claim (the controller's
    bindClaimToVolume and bindVolumeToClaim): the claim names the volume, carries the bind-completed
    annotation, and both are Bound. Copies; the inputs are left alone."""
    claim = copy.deepcopy(pvc)
    claim.setdefault("spec", {})["volumeName"] = name_of(pv)
    md = claim.setdefault("metadata", {})
    anns = dict(md.get("annotations") or {})
    anns.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
    anns[ANN_BIND_COMPLETED] = "yes"
    md["annotations"] = anns
    status = claim.get("status")
    claim["status"] = {**(status if isinstance(status, dict) else {}), "phase": "Bound"}
    volume = copy.deepcopy(pv)
    vstatus = volume.get("status")
    volume["status"] = {**(vstatus if isinstance(vstatus, dict) else {}), "phase": "Bound"}
    return claim, volume


# ----- node selectors over many nodes (component-helpers/scheduling/corev1/nodeaffinity) ----------

_NODE_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): an optional sign and ASCII digits, nothing else."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    v = int(text)
    return v if -(2**63) <= v < 2**63 else None


def _requirement_mask(cluster: ClusterState, req: JSON, nodes: IntArray, obj: str, fld: str) -> BoolArray:
    key = req.get("key")
    op = req.get("operator")
    values = as_list(req.get("values"), obj, f"{fld}.values")
    if not isinstance(key, str) or not key:
        raise InputError("key is required", obj=obj, field=f"{fld}.key")
    if op not in _NODE_SELECTOR_OPS:
        raise InputError(
            f'Unsupported value: "{op}": supported values: "DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"',
            obj=obj,
            field=f"{fld}.operator",
        )
    vals = [str(v) for v in values]
    col = cluster.label(key)
    codes = col.codes[nodes]
    if op in ("In", "NotIn"):
        if not vals:
            raise InputError(
                "for 'in', 'notin' operators, values set can't be empty", obj=obj, field=f"{fld}.values"
            )
        wanted = [col.vocab[v] for v in vals if v in col.vocab]
        hit = (
            np.isin(codes, np.asarray(wanted, dtype=np.int32)) if wanted else np.zeros(len(nodes), dtype=bool)
        )
        return hit if op == "In" else ~hit
    if op in ("Exists", "DoesNotExist"):
        if vals:
            raise InputError(
                "values set must be empty for exists and does not exist", obj=obj, field=f"{fld}.values"
            )
        present = codes >= 0
        return present if op == "Exists" else ~present
    if len(vals) != 1:
        raise InputError(
            "for 'Gt', 'Lt' operators, exactly one value is required", obj=obj, field=f"{fld}.values"
        )
    bound = _parse_int64(vals[0])
    if bound is None:
        raise InputError(
            f"for 'Gt', 'Lt' operators, the value must be an integer: {vals[0]!r}",
            obj=obj,
            field=f"{fld}.values",
        )
    # A label value that is not an integer never matches.
    per_code = np.zeros(len(col.values) + 1, dtype=bool)
    for code, text in enumerate(col.values):
        n = _parse_int64(text)
        if n is not None:
            per_code[code] = n > bound if op == "Gt" else n < bound
    return per_code[np.where(codes >= 0, codes, len(col.values))]


def _field_mask(cluster: ClusterState, req: JSON, nodes: IntArray, obj: str, fld: str) -> BoolArray:
    key = str(req.get("key") or "")
    op = req.get("operator")
    vals = [str(v) for v in as_list(req.get("values"), obj, f"{fld}.values")]
    if op not in ("In", "NotIn"):
        raise InputError(
            f'Unsupported value: "{op}": supported values: "In", "NotIn"', obj=obj, field=f"{fld}.operator"
        )
    if len(vals) != 1:
        raise InputError("must have one element", obj=obj, field=f"{fld}.values")
    if key == "metadata.name":
        names = np.asarray([cluster.names[int(i)] == vals[0] for i in nodes], dtype=bool)
    else:
        names = np.full(len(nodes), vals[0] == "", dtype=bool)
    return names if op == "In" else ~names


def node_selector_mask(
    cluster: ClusterState, selector: object, nodes: IntArray, *, obj: str, fld: str
) -> BoolArray:
    """Which of ``nodes`` a v1.NodeSelector matches: terms ORed, an empty term matches nothing."""
    sel = as_map(selector, obj, fld)
    terms = as_list(sel.get("nodeSelectorTerms"), obj, f"{fld}.nodeSelectorTerms")
    out = np.zeros(len(nodes), dtype=bool)
    for t, term in enumerate(terms):
        tf = f"{fld}.nodeSelectorTerms[{t}]"
        term = as_map(term, obj, tf)
        exprs = as_list(term.get("matchExpressions"), obj, f"{tf}.matchExpressions")
        fields = as_list(term.get("matchFields"), obj, f"{tf}.matchFields")
        if not exprs and not fields:
            continue
        m = np.ones(len(nodes), dtype=bool)
        for r, req in enumerate(exprs):
            m &= _requirement_mask(
                cluster,
                as_map(req, obj, f"{tf}.matchExpressions[{r}]"),
                nodes,
                obj,
                f"{tf}.matchExpressions[{r}]",
            )
        for r, req in enumerate(fields):
            m &= _field_mask(
                cluster, as_map(req, obj, f"{tf}.matchFields[{r}]"), nodes, obj, f"{tf}.matchFields[{r}]"
            )
        out |= m
    return out


def pv_affinity_mask(cluster: ClusterState, pv: JSON, nodes: IntArray) -> BoolArray:
    """volume.CheckNodeAffinity over many nodes: the PV's required node affinity."""
    ident = f"PersistentVolume {name_of(pv)}"
    na = spec(pv).get("nodeAffinity")
    if not isinstance(na, dict):
        return np.ones(len(nodes), dtype=bool)
    req = na.get("required")
    if not isinstance(req, dict):
        return np.ones(len(nodes), dtype=bool)
    return node_selector_mask(cluster, req, nodes, obj=ident, fld="spec.nodeAffinity.required")


def label_selector_matches(selector: object, labels: Mapping[str, str], *, obj: str, fld: str) -> bool:
    from ..labels import LabelSelector

    return LabelSelector.parse(selector, obj=obj, field=fld).matches(labels)


# ----- CSI migration of in-tree volumes (csi-translation-lib) -------------------------------------

# in-tree volume source field -> (in-tree plugin name, CSI driver name)
IN_TREE_SOURCES: dict[str, tuple[str, str]] = {
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io"),
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "ebs.csi.aws.com"),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    "azureFile": ("kubernetes.io/azure-file", "file.csi.azure.com"),
    "vsphereVolume": ("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"),
    "portworxVolume": ("kubernetes.io/portworx-volume", "pxd.portworx.com"),
    "rbd": ("kubernetes.io/rbd", "rbd.csi.ceph.com"),
}
IN_TREE_PLUGIN_TO_CSI = dict(IN_TREE_SOURCES.values())


def in_tree_source(source: Mapping[str, Any]) -> str | None:
    """The migratable in-tree volume type a volume (or PV spec) uses, if any."""
    for key in IN_TREE_SOURCES:
        if isinstance(source.get(key), dict):
            return key
    return None


def in_tree_handle(kind: str, src: Mapping[str, Any]) -> str:
    """The CSI volume handle the translation library gives an in-tree source (the parts SchedViz needs:
    a stable identity per disk, used to count each volume once)."""
    if kind == "awsElasticBlockStore":
        vid = str(src.get("volumeID") or "")
        return vid.rsplit("/", 1)[-1] if vid.startswith("aws://") else vid
    if kind == "gcePersistentDisk":
        return f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{src.get('pdName', '')}"
    if kind == "azureDisk":
        return str(src.get("diskURI") or "")
    if kind in ("cinder", "portworxVolume"):
        return str(src.get("volumeID") or "")
    if kind == "azureFile":
        return str(src.get("shareName") or "")
    if kind == "vsphereVolume":
        return str(src.get("volumePath") or "")
    return str(src.get("image") or "")


def csi_migration_on(csinode: JSON | None, plugin: str, portworx: bool = True) -> bool:
    """nodevolumelimits/utils.go isCSIMigrationOn: the plugin is migratable and the CSINode says so."""
    if csinode is None or not plugin:
        return False
    if plugin == "kubernetes.io/portworx-volume":
        if not portworx:
            return False
    elif plugin not in (
        "kubernetes.io/aws-ebs",
        "kubernetes.io/gce-pd",
        "kubernetes.io/azure-disk",
        "kubernetes.io/cinder",
    ):
        return False
    mpa = str(annotations_of(csinode).get(MIGRATED_PLUGINS_ANNOTATION) or "")
    return plugin in (mpa.split(",") if mpa else [])


def csinode_limits(csinode: JSON | None) -> dict[str, int]:
    """nodevolumelimits getVolumeLimits: driver -> allocatable.count, for drivers that set one."""
    out: dict[str, int] = {}
    if csinode is None:
        return out
    ident = f"CSINode {name_of(csinode)}"
    for i, d in enumerate(as_list(spec(csinode).get("drivers"), ident, "spec.drivers")):
        d = as_map(d, ident, f"spec.drivers[{i}]")
        alloc = d.get("allocatable")
        if isinstance(alloc, dict) and alloc.get("count") is not None:
            count = alloc["count"]
            if isinstance(count, bool) or not isinstance(count, int):
                raise InputError(
                    "must be an integer", obj=ident, field=f"spec.drivers[{i}].allocatable.count"
                )
            out[str(d.get("name") or "")] = count
    return out


def go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


# ----- trace details (docs/trace-format.md) ---------------------------------------------------------

MAX_DETAIL_GROUPS = 50  # node groups a stage's details list; the others are only counted
MAX_DETAIL_NAMES = 20  # node names listed per group (nodeCount counts them all)


@dataclass
class NodeGroup:
    """Nodes with the same decision: the first MAX_DETAIL_NAMES names, how many, where the first is."""

    names: list[str]
    count: int
    first: int  # position in the nodes given of the group's first node (snapshot order)


def group_nodes(cluster: ClusterState, nodes: IntArray, keys: IntArray) -> tuple[list[NodeGroup], int]:
    """Group ``nodes`` by identical columns of ``keys`` (rows: facts, columns: nodes; row 0 is the
    Filter code). Groups of passing nodes come first, then in snapshot order of their first node,
    whose names are listed in snapshot order; returns the first MAX_DETAIL_GROUPS groups and how
    many were left out."""
    n = len(nodes)
    if n == 0:
        return [], 0
    if keys.shape[0] == 0:
        keys = np.zeros((1, n), dtype=np.int64)
    _, first, inverse, counts = np.unique(
        keys.T, axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    inverse = inverse.reshape(-1)
    # Groups and the names in them in snapshot order (the batch is in evaluation order).
    lowest = np.full(len(first), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(lowest, inverse, nodes)
    failing = keys[0, first] != 0
    rank = np.lexsort((lowest, failing))
    groups: list[NodeGroup] = []
    for g in rank[:MAX_DETAIL_GROUPS].tolist():
        members = np.flatnonzero(inverse == g)
        members = members[np.argsort(nodes[members], kind="stable")]
        names = [cluster.names[int(nodes[k])] for k in members[:MAX_DETAIL_NAMES].tolist()]
        groups.append(NodeGroup(names, int(counts[g]), int(members[0])))
    return groups, max(0, len(rank) - MAX_DETAIL_GROUPS)


# ----- explain (framework/diagnosis.py) ---------------------------------------------------------------


def volume_diagnosis(ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]) -> list[Diagnosis]:
    """What the volume plugins say of the nodes they rejected: the reasons, and the pod's claims with
    their volumes, storage classes and topology (a description; explain suggests no change)."""
    objects = ctx.cluster.objects
    named: list[str] = []
    details: dict[str, Any] = {}
    volumes = []
    for v in pod.spec.get("volumes") or []:
        if not isinstance(v, dict):
            continue
        src = v.get("persistentVolumeClaim")
        claim = src.get("claimName") if isinstance(src, dict) else None
        if claim is None and isinstance(v.get("ephemeral"), dict):
            claim = f"{pod.name}-{v.get('name', '')}"
        if not claim:
            continue
        entry: dict[str, Any] = {"claim": f"{pod.namespace}/{claim}"}
        text = f"PersistentVolumeClaim {pod.namespace}/{claim}"
        pvc = objects.get("PersistentVolumeClaim", f"{pod.namespace}/{claim}")
        if pvc is None:
            text += " (not in the snapshot)"
        else:
            spec = pvc.raw.get("spec") or {}
            pv_name = spec.get("volumeName")
            sc = spec.get("storageClassName")
            if sc:
                entry["storageClass"] = sc
            if pv_name:
                entry["volume"] = pv_name
                text += f" bound to PersistentVolume {pv_name}"
                pv = objects.get("PersistentVolume", str(pv_name))
                if pv is not None:
                    zones = {
                        k: val
                        for k, val in pv.meta.labels.items()
                        if k.endswith("/zone") or k.endswith("/region")
                    }
                    if zones:
                        entry["topology"] = zones
                    affinity = (pv.raw.get("spec") or {}).get("nodeAffinity")
                    if affinity:
                        entry["nodeAffinity"] = affinity
                        text += f" (node affinity: {_pv_affinity_text(affinity)})"
                    elif zones:
                        text += " (" + ", ".join(f"{k}={v}" for k, v in sorted(zones.items())) + ")"
            else:
                text += " (unbound" + (f", storageClass {sc})" if sc else ")")
        volumes.append(entry)
        named.append(text)
    details["volumes"] = volumes
    text = "; ".join(reasons)
    if named:
        text += " — " + "; ".join(named)
    return [Diagnosis(nodes, text, details, None)]


def _pv_affinity_text(affinity: Any) -> str:
    terms = ((affinity or {}).get("required") or {}).get("nodeSelectorTerms") or []
    texts = []
    for t in terms:
        if isinstance(t, dict):
            reqs = [*(t.get("matchExpressions") or []), *(t.get("matchFields") or [])]
            texts.append(" and ".join(format_requirement(e) for e in reqs))
    return " or ".join(texts) if texts else "none"
