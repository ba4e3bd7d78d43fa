"""What live mode lists and watches: every kind the scheduler reads, plus the scheduler's events.

Each stream is one list-then-watch (one Reflector). The two event streams select only the events
about pods that kube-scheduler records (``Scheduled``, ``FailedScheduling``) with a field selector,
so the rest of the cluster's events never cross the wire. The shipped ClusterRole
(``deploy/kubernetes/rbac.yaml``) grants get/list/watch on exactly these resources; a test keeps
the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass


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


def _s(kind: str, api_version: str, api: str, method: str, plural: str, *, required: bool = False) -> Stream:
    return Stream(kind, kind, api_version, api, method, plural, required=required)


EVENTS_SCHEDULED = "Event/Scheduled"
EVENTS_FAILED = "Event/FailedScheduling"

STREAMS: tuple[Stream, ...] = (
    _s("Namespace", "v1", "CoreV1Api", "list_namespace", "namespaces", required=True),
    _s("Node", "v1", "CoreV1Api", "list_node", "nodes", required=True),
    _s("Pod", "v1", "CoreV1Api", "list_pod_for_all_namespaces", "pods", required=True),
    Stream(
        EVENTS_SCHEDULED,
        "Event",
        "v1",
        "CoreV1Api",
        "list_event_for_all_namespaces",
        "events",
        required=True,
        field_selector="involvedObject.kind=Pod,reason=Scheduled",
        mirrored=False,
    ),
    Stream(
        EVENTS_FAILED,
        "Event",
        "v1",
        "CoreV1Api",
        "list_event_for_all_namespaces",
        "events",
        required=True,
        field_selector="involvedObject.kind=Pod,reason=FailedScheduling",
        mirrored=False,
    ),
    _s("PriorityClass", "scheduling.k8s.io/v1", "SchedulingV1Api", "list_priority_class", "priorityclasses"),
    _s(
        "PodDisruptionBudget",
        "policy/v1",
        "PolicyV1Api",
        "list_pod_disruption_budget_for_all_namespaces",
        "poddisruptionbudgets",
    ),
    _s("PersistentVolume", "v1", "CoreV1Api", "list_persistent_volume", "persistentvolumes"),
    _s(
        "PersistentVolumeClaim",
        "v1",
        "CoreV1Api",
        "list_persistent_volume_claim_for_all_namespaces",
        "persistentvolumeclaims",
    ),
    _s("StorageClass", "storage.k8s.io/v1", "StorageV1Api", "list_storage_class", "storageclasses"),
    _s("CSINode", "storage.k8s.io/v1", "StorageV1Api", "list_csi_node", "csinodes"),
    _s("CSIDriver", "storage.k8s.io/v1", "StorageV1Api", "list_csi_driver", "csidrivers"),
    _s(
        "CSIStorageCapacity",
        "storage.k8s.io/v1",
        "StorageV1Api",
        "list_csi_storage_capacity_for_all_namespaces",
        "csistoragecapacities",
    ),
    _s(
        "VolumeAttachment", "storage.k8s.io/v1", "StorageV1Api", "list_volume_attachment", "volumeattachments"
    ),
    # PodTopologySpread's system default constraints select pods through these owners
    _s("Service", "v1", "CoreV1Api", "list_service_for_all_namespaces", "services"),
    _s(
        "ReplicationController",
        "v1",
        "CoreV1Api",
        "list_replication_controller_for_all_namespaces",
        "replicationcontrollers",
    ),
    _s("ReplicaSet", "apps/v1", "AppsV1Api", "list_replica_set_for_all_namespaces", "replicasets"),
    _s("StatefulSet", "apps/v1", "AppsV1Api", "list_stateful_set_for_all_namespaces", "statefulsets"),
    _s("DeviceClass", "resource.k8s.io/v1", "ResourceV1Api", "list_device_class", "deviceclasses"),
    _s("ResourceSlice", "resource.k8s.io/v1", "ResourceV1Api", "list_resource_slice", "resourceslices"),
    _s(
        "ResourceClaim",
        "resource.k8s.io/v1",
        "ResourceV1Api",
        "list_resource_claim_for_all_namespaces",
        "resourceclaims",
    ),
    Stream(
        "PodGroup",
        "PodGroup",
        "scheduling.x-k8s.io/v1alpha1",
        "CustomObjectsApi",
        "list_cluster_custom_object",
        "podgroups",
        custom=True,
    ),
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
