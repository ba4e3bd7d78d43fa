"""The one catalogue of the Kubernetes kinds SchedViz reads from a cluster.

``KINDS`` lists every kind kube-scheduler reads, once, with the ``kubernetes`` client calls that list
it; the order is the order ``import-cluster`` writes the objects in. Everything else is derived
from it:

- the one-shot reader (``reader.py``, ``schedviz import-cluster``) lists the built-in kinds
  (``custom=False``; PodGroups, a CRD, only in live mode);
- live mode lists and watches one ``Stream`` per kind (``STREAMS``: the required kinds, the
  scheduler's two event streams, then the others). The event streams select only the events about
  pods that kube-scheduler records (``Scheduled``, ``FailedScheduling``) with a field selector, so
  the rest of the cluster's events never cross the wire;
- the shipped ClusterRole (``deploy/kubernetes/rbac.yaml``) grants get/list/watch on exactly
  ``rbac_rules()``;
- the stand-in API server of the tests and the demo (``testing.py``) serves these kinds;
- the engine keeps these kinds from a snapshot (``schedviz.engine.loader.KEPT_KINDS``, Nodes and Pods
  apart), plus ``UPLOAD_ONLY_KINDS``.

``tests/kube/test_kinds.py`` keeps every one of those in step with this list (docs/live.md's too).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """A kind the scheduler reads, and the ``kubernetes.client`` calls that list it."""

    kind: str
    api_version: str
    api: str  # kubernetes.client API class
    plural: str
    list_all: str  # the cluster-scoped list, or list_*_for_all_namespaces
    list_namespaced: str | None = None  # its list in one namespace; None: a cluster-scoped kind
    required: bool = False  # False: a 403/404 skips the kind (or marks its stream unavailable)
    custom: bool = False  # a custom resource (CustomObjectsApi), served only where its CRD is installed

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    @property
    def namespaced(self) -> bool:
        return self.list_namespaced is not None


def _core(
    kind: str, plural: str, list_all: str, list_namespaced: str | None = None, *, required: bool = False
) -> Kind:
    return Kind(kind, "v1", "CoreV1Api", plural, list_all, list_namespaced, required=required)


KINDS: tuple[Kind, ...] = (
    _core("Namespace", "namespaces", "list_namespace", required=True),
    Kind(
        "PriorityClass", "scheduling.k8s.io/v1", "SchedulingV1Api", "priorityclasses", "list_priority_class"
    ),
    _core("Node", "nodes", "list_node", required=True),
    _core("Pod", "pods", "list_pod_for_all_namespaces", "list_namespaced_pod", required=True),
    # PodTopologySpread's system default constraints select pods through these owners
    _core("Service", "services", "list_service_for_all_namespaces", "list_namespaced_service"),
    _core(
        "ReplicationController",
        "replicationcontrollers",
        "list_replication_controller_for_all_namespaces",
        "list_namespaced_replication_controller",
    ),
    Kind(
        "ReplicaSet",
        "apps/v1",
        "AppsV1Api",
        "replicasets",
        "list_replica_set_for_all_namespaces",
        "list_namespaced_replica_set",
    ),
    Kind(
        "StatefulSet",
        "apps/v1",
        "AppsV1Api",
        "statefulsets",
        "list_stateful_set_for_all_namespaces",
        "list_namespaced_stateful_set",
    ),
    Kind(
        "PodDisruptionBudget",
        "policy/v1",
        "PolicyV1Api",
        "poddisruptionbudgets",
        "list_pod_disruption_budget_for_all_namespaces",
        "list_namespaced_pod_disruption_budget",
    ),
    _core("PersistentVolume", "persistentvolumes", "list_persistent_volume"),
    _core(
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "list_persistent_volume_claim_for_all_namespaces",
        "list_namespaced_persistent_volume_claim",
    ),
    Kind("StorageClass", "storage.k8s.io/v1", "StorageV1Api", "storageclasses", "list_storage_class"),
    Kind("CSINode", "storage.k8s.io/v1", "StorageV1Api", "csinodes", "list_csi_node"),
    Kind("CSIDriver", "storage.k8s.io/v1", "StorageV1Api", "csidrivers", "list_csi_driver"),
    Kind(
        "CSIStorageCapacity",
        "storage.k8s.io/v1",
        "StorageV1Api",
        "csistoragecapacities",
        "list_csi_storage_capacity_for_all_namespaces",
        "list_namespaced_csi_storage_capacity",
    ),
    Kind(
        "VolumeAttachment", "storage.k8s.io/v1", "StorageV1Api", "volumeattachments", "list_volume_attachment"
    ),
    Kind("DeviceClass", "resource.k8s.io/v1", "ResourceV1Api", "deviceclasses", "list_device_class"),
    Kind("ResourceSlice", "resource.k8s.io/v1", "ResourceV1Api", "resourceslices", "list_resource_slice"),
    Kind(
        "ResourceClaim",
        "resource.k8s.io/v1",
        "ResourceV1Api",
        "resourceclaims",
        "list_resource_claim_for_all_namespaces",
        "list_namespaced_resource_claim",
    ),
    Kind(
        "PodGroup",
        "scheduling.x-k8s.io/v1alpha1",
        "CustomObjectsApi",
        "podgroups",
        "list_cluster_custom_object",
        "list_namespaced_custom_object",
        custom=True,
    ),
)

# Kinds the engine keeps from uploaded manifests although kube-scheduler does not read them from a
# cluster (so no cluster read lists them).
UPLOAD_ONLY_KINDS = frozenset({"Deployment", "ResourceClaimTemplate"})


def kind(name: str) -> Kind:
    for k in KINDS:
        if k.kind == name:
            return k
    raise KeyError(name)


# ----- live mode's streams ------------------------------------------------------------------------


@dataclass(frozen=True)
class Stream:
    """One list/watch: a kind, the client call that lists (and, with watch=True, watches) it."""

    name: str  # unique among streams; the mirror keys its stores by it
    kind: str
    api_version: str
    api: str  # kubernetes.client API class
    method: str  # its list method over every namespace (or the cluster-scoped list)
    plural: str
    required: bool = False  # False: a 403/404 marks the stream unavailable instead of failing the cluster
    field_selector: str | None = None
    custom: bool = False  # a custom resource, listed with CustomObjectsApi.list_cluster_custom_object
    mirrored: bool = True  # part of the mirrored cluster state (False: events)

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    @classmethod
    def of(cls, k: Kind) -> Stream:
        return cls(
            k.kind, k.kind, k.api_version, k.api, k.list_all, k.plural, required=k.required, custom=k.custom
        )


EVENTS_SCHEDULED = "Event/Scheduled"
EVENTS_FAILED = "Event/FailedScheduling"


def _events(name: str, reason: str) -> Stream:
    return Stream(
        name,
        "Event",
        "v1",
        "CoreV1Api",
        "list_event_for_all_namespaces",
        "events",
        required=True,
        field_selector=f"involvedObject.kind=Pod,reason={reason}",
        mirrored=False,
    )


STREAMS: tuple[Stream, ...] = (
    *(Stream.of(k) for k in KINDS if k.required),
    _events(EVENTS_SCHEDULED, "Scheduled"),
    _events(EVENTS_FAILED, "FailedScheduling"),
    *(Stream.of(k) for k in KINDS if not k.required),
)

# ConfigMaps are read (get) only when the user names the one holding the scheduler's configuration.
CONFIGMAP_PLURAL = "configmaps"


def stream(name: str) -> Stream:
    for s in STREAMS:
        if s.name == name:
            return s
    raise KeyError(name)


def rbac_rules() -> dict[str, set[str]]:
    """API group -> resources live mode reads (what the ClusterRole must grant, get/list/watch)."""
    out: dict[str, set[str]] = {}
    for s in STREAMS:
        out.setdefault(s.group, set()).add(s.plural)
    return out
