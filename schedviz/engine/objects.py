"""Typed views of the Kubernetes objects the scheduler reads.

Each view keeps the object as ``kubectl`` printed it (``raw``) and the fields the scheduler needs,
already validated and converted; every conversion error names the object and the field.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from . import quantity
from .contentkey import content_key
from .errors import InputError
from .resources import PodResources, PodResourcesCache, compute_pod_resources, status_resources_key

DEFAULT_SCHEDULER_NAME = "default-scheduler"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"

JSON = dict[str, Any]


def _mapping(value: object, obj: str, field: str) -> JSON:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"expected an object, got {type(value).__name__}", obj=obj, field=field)
    return value


def _list(value: object, obj: str, field: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"expected a list, got {type(value).__name__}", obj=obj, field=field)
    return value


def _str_map(value: object, obj: str, field: str) -> dict[str, str]:
    m = _mapping(value, obj, field)
    for k, v in m.items():
        if type(k) is not str or type(v) is not str:
            break
    else:
        return m  # the usual map, strings to strings: the object's own (nothing changes it)
    out: dict[str, str] = {}
    for k, v in m.items():
        if not isinstance(k, str):
            raise InputError(f"key {k!r} is not a string", obj=obj, field=field)
        if v is None:
            v = ""
        if isinstance(v, bool):
            v = "true" if v else "false"
        if not isinstance(v, str | int | float):
            raise InputError(f"value of {k!r} must be a string", obj=obj, field=f"{field}.{k}")
        out[k] = str(v)
    return out


_TIMES: dict[str, float] = {}
_TIMES_LIMIT = 100_000


def parse_time(value: object, obj: str, field: str) -> float | None:
    """RFC 3339 timestamp to seconds since the epoch (None when absent)."""
    if value is None or value == "":
        return None
    if type(value) is str:
        hit = _TIMES.get(value)
        if hit is None:
            hit = _parse_time(value, obj, field)
            if len(_TIMES) < _TIMES_LIMIT:
                _TIMES[value] = hit
        return hit
    return _parse_time(value, obj, field)


def _parse_time(value: object, obj: str, field: str) -> float:
    if isinstance(value, datetime):
        return value.timestamp()
    if not isinstance(value, str):
        raise InputError(f"invalid timestamp {value!r}", obj=obj, field=field)
    text = value.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"invalid timestamp {value!r}: expected RFC 3339", obj=obj, field=field) from None
    return dt.timestamp()


class Meta:
    """The metadata every object has."""

    __slots__ = ("annotations", "creation", "deletion", "labels", "name", "namespace", "owner_refs", "uid")

    def __init__(self, raw: JSON, kind: str, namespaced: bool) -> None:
        md = _mapping(raw.get("metadata"), kind, "metadata")
        name = md.get("name")
        if not isinstance(name, str) or not name:
            raise InputError("metadata.name is required", obj=kind, field="metadata.name")
        ns = md.get("namespace") or ("default" if namespaced else "")
        if not isinstance(ns, str):
            raise InputError("must be a string", obj=f"{kind} {name}", field="metadata.namespace")
        ident = f"{kind} {ns + '/' if ns else ''}{name}"
        self.name: str = name
        self.namespace: str = ns
        self.uid: str = str(md.get("uid") or f"{kind}/{ns}/{name}")
        self.labels: dict[str, str] = _str_map(md.get("labels"), ident, "metadata.labels")
        self.annotations: dict[str, str] = _str_map(md.get("annotations"), ident, "metadata.annotations")
        self.creation: float | None = parse_time(
            md.get("creationTimestamp"), ident, "metadata.creationTimestamp"
        )
        self.deletion: float | None = parse_time(
            md.get("deletionTimestamp"), ident, "metadata.deletionTimestamp"
        )
        self.owner_refs: list[JSON] = [
            _mapping(r, ident, "metadata.ownerReferences")
            for r in _list(md.get("ownerReferences"), ident, "metadata.ownerReferences")
        ]


class KubeObject:
    """Any object kept from a snapshot (Namespaces, Services, PDBs, storage objects, ...)."""

    __slots__ = ("key", "kind", "meta", "raw")
    namespaced_kinds = frozenset(
        {
            "Pod",
            "Service",
            "ReplicaSet",
            "StatefulSet",
            "ReplicationController",
            "Deployment",
            "PodDisruptionBudget",
            "PersistentVolumeClaim",
            "ResourceClaim",
            "ResourceClaimTemplate",
            "PodGroup",
            "Job",
            "DaemonSet",
        }
    )

    def __init__(self, raw: JSON) -> None:
        kind = raw.get("kind")
        if not isinstance(kind, str):
            raise InputError("kind is required", field="kind")
        self.kind: str = kind
        self.raw = raw
        meta = self.meta = Meta(raw, kind, kind in self.namespaced_kinds)
        # namespace/name (the name alone for a cluster-scoped object): asked of every pod many
        # times while a snapshot is read and indexed, so made once
        self.key: str = f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace

    @property
    def uid(self) -> str:
        return self.meta.uid

    @property
    def ident(self) -> str:
        return f"{self.kind} {self.key}"

    @property
    def spec(self) -> JSON:
        spec = self.raw.get("spec")
        if type(spec) is dict:
            return spec
        return _mapping(spec, self.ident, "spec")


class Node(KubeObject):
    """A Node: allocatable resources in scheduler units, labels, taints, images."""

    __slots__ = ("allocatable", "images", "taints", "unschedulable")

    def __init__(self, raw: JSON) -> None:
        super().__init__(raw)
        ident = self.ident
        spec = self.spec
        status = _mapping(raw.get("status"), ident, "status")
        self.unschedulable: bool = bool(spec.get("unschedulable", False))
        self.taints: list[JSON] = []
        for i, t in enumerate(_list(spec.get("taints"), ident, "spec.taints")):
            t = _mapping(t, ident, f"spec.taints[{i}]")
            if not isinstance(t.get("key"), str) or not t.get("key"):
                raise InputError("taint key is required", obj=ident, field=f"spec.taints[{i}].key")
            if t.get("effect") not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
                raise InputError(
                    f"unsupported taint effect {t.get('effect')!r}: NoSchedule, PreferNoSchedule or NoExecute",
                    obj=ident,
                    field=f"spec.taints[{i}].effect",
                )
            self.taints.append(t)
        alloc_raw = _mapping(status.get("allocatable"), ident, "status.allocatable")
        if not alloc_raw:
            alloc_raw = _mapping(status.get("capacity"), ident, "status.capacity")
        self.allocatable: dict[str, int] = {
            str(k): quantity.to_int(str(k), v, obj=ident, field=f"status.allocatable.{k}")
            for k, v in alloc_raw.items()
        }
        self.images: list[tuple[list[str], int]] = []
        for i, img in enumerate(_list(status.get("images"), ident, "status.images")):
            img = _mapping(img, ident, f"status.images[{i}]")
            names = [str(n) for n in _list(img.get("names"), ident, f"status.images[{i}].names")]
            size = img.get("sizeBytes", 0)
            if isinstance(size, bool) or not isinstance(size, int | float):
                raise InputError("must be an integer", obj=ident, field=f"status.images[{i}].sizeBytes")
            self.images.append((names, int(size)))

    @property
    def labels(self) -> dict[str, str]:
        return self.meta.labels


# The spec sections ``PodTemplates`` groups pods by: ``validation.Validator(share_sections=True)``
# makes equal ones the same object, so a template is found by the sections' identities.
TEMPLATE_SECTIONS = ("affinity", "tolerations", "topologySpreadConstraints", "nodeSelector")


# What differs between the pods of one template, besides metadata and status: the node they are
# bound to, and the volumes (and the containers' mounts of them) named per pod.
_INSTANCE_SPEC_FIELDS = frozenset({"nodeName", "volumes", "containers", "initContainers"})


# Past this many pods, a snapshot's pods also hold one copy of what their template has in common
# (``_share_from``: the spec, the containers but for their mounts, the volumes' sources, the owner
# references): about half the memory of a pod, for about a fifth more reading time. A 5000-node
# cluster of 30 pods a node fits in 2.3 GB without it; a 65,000-node one does not fit with less.
COMPACT_AFTER_PODS = 200_000


class PodTemplate:
    """What the pods of one template share (``PodTemplates.template_of``), filled by the first of
    them: its validation (``errors``: the template's problems before and after the node name's) and
    the sections ``Validator(share_sections=True)`` shares (``sections``), its view's fields
    (``fields``), and ``shared``, the dict its pods' ``Pod.shared`` is."""

    __slots__ = ("errors", "fields", "first", "sections", "shared")

    def __init__(self) -> None:
        self.first: JSON = {}
        self.errors: tuple[tuple[Any, ...], tuple[Any, ...]] | None = None
        self.sections: dict[str, Any] = {}
        self.fields: tuple[str, int | None, str, str, tuple[str, ...], PodResources] | None = None
        self.shared: dict[str, Any] = {}


class PodTemplates:
    """The templates of the pods of a snapshot being read: a production cluster's 150,000 pods come
    from a few hundred Deployments, StatefulSets, DaemonSets and Jobs.

    A pod's template is found by content (``contentkey``): its namespace, its spec but for the node
    name, the volumes and the containers' mounts (named per pod: ``kube-api-access-xxxxx``), what
    its containers have of the template (name, ports, resources, restart policy), the resources its
    status reports and whether it is a mirror pod. Equal content, one template: pods that share one
    are validated and viewed once, and keep what plugins derive from the template's affinity,
    tolerations and node selectors together (``Pod.shared``).

    A pod of an unusual shape (a spec or container that is not an object) has no template and is read
    on its own; so is every pod once ``LIMIT`` templates are known. ``resources`` and ``shared_for``
    serve such pods."""

    LIMIT = 100_000

    def __init__(self) -> None:
        self.resources = PodResourcesCache()
        self._templates: dict[tuple[object, ...], PodTemplate] = {}
        self._values: dict[tuple[str, bytes | str], Any] = {}
        self._pods = 0
        # the sections are kept in the value: an id is only unique while its object lives
        self._shared: dict[tuple[object, ...], tuple[tuple[object, ...], dict[str, Any]]] = {}

    def template_of(self, raw: JSON, json_only: bool = False) -> PodTemplate | None:
        """The pod's template (None: read it on its own). ``json_only``: the pod was decoded from
        JSON (dicts, lists, strings, numbers, booleans and nulls only), so its content is keyed by
        its msgpack encoding (``_json_content_key``), about twice as fast as ``content_key``."""
        spec = raw.get("spec")
        md = raw.get("metadata")
        if type(spec) is not dict or type(md) is not dict:
            return None
        # past the threshold, pods hold one copy of their template's containers: the key is then
        # the whole containers but their mounts; before, what validation and the views read of them
        whole = self._pods >= COMPACT_AFTER_PODS
        containers = _template_containers(spec.get("containers"), whole)
        inits = _template_containers(spec.get("initContainers"), whole)
        if containers is None or inits is None:
            return None
        rest = {k: v for k, v in spec.items() if k not in _INSTANCE_SPEC_FIELDS}
        annotations = md.get("annotations")
        mirror = type(annotations) is dict and MIRROR_POD_ANNOTATION in annotations
        status = raw.get("status")
        reported = status_resources_key(status if type(status) is dict else None)
        if reported is None:
            return None
        content = (whole, containers, inits, rest, reported, mirror)
        key: tuple[object, ...]
        if json_only:
            key = ("json", _json_content_key((md.get("namespace"), content)))
        else:
            key = (content_key(md.get("namespace")), content_key(content))
        t = self._templates.get(key)
        if t is None:
            if len(self._templates) >= self.LIMIT:
                return None
            t = self._templates[key] = PodTemplate()
            t.first = spec
        elif self._pods >= COMPACT_AFTER_PODS:
            _share_from(spec, t.first)
        self.adopt(raw)
        return t

    def adopt(self, raw: JSON, *, volumes_shared: bool = False) -> None:
        """Count a pod of a known template (one whose spec already shares its template's values:
        ``template_of``, ``podsiblings``); past ``COMPACT_AFTER_PODS``, its volumes' sources (unless
        ``volumes_shared``: they are already) and owner references become the copies other pods
        hold."""
        self._pods += 1
        if self._pods > COMPACT_AFTER_PODS:
            if not volumes_shared:
                self._share_volumes(raw["spec"].get("volumes"))
            md = raw["metadata"]
            owners = md.get("ownerReferences")
            if type(owners) is list and owners:
                md["ownerReferences"] = self._canonical("owners", owners)

    def _canonical(self, kind: str, value: Any) -> Any:
        """The first value seen equal to ``value`` (``contentkey``), to hold one copy of it."""
        key = (kind, content_key(value))
        got = self._values.get(key)
        if got is None:
            if len(self._values) < self.LIMIT:
                self._values[key] = value
            return value
        return got

    def _share_volumes(self, volumes: object) -> None:
        """A volume's source (a service account token's projection, a config map) is the same in
        thousands of pods; its name is the pod's own."""
        if type(volumes) is not list:
            return
        for v in volumes:
            if type(v) is dict:
                for k, source in v.items():
                    if k != "name" and type(source) is dict:
                        v[k] = self._canonical("volume", source)

    def shared_for(self, namespace: str, spec: JSON) -> dict[str, Any]:
        """``Pod.shared`` for a pod without a template: one dict for the pods of a namespace whose
        ``TEMPLATE_SECTIONS`` are the same objects."""
        sections = tuple(spec.get(s) for s in TEMPLATE_SECTIONS)
        key = (namespace, *(id(v) for v in sections))
        hit = self._shared.get(key)
        if hit is None:
            hit = (sections, {})
            self._shared[key] = hit
        return hit[1]


_msgpack = msgspec.msgpack.Encoder().encode


def _json_content_key(value: object) -> bytes | tuple[str, bytes | str]:
    """A key for content made of what JSON decodes to, and of tuples and ``content_key`` results at
    fixed places: its msgpack encoding, which tells apart what ``content_key`` tells apart there (1,
    1.0, "1" and True; a map from an array; a string from bytes) and is self-delimiting. Content it
    cannot encode (an integer beyond 64 bits, a lone surrogate) is keyed by ``content_key``, in a
    tuple: never equal to an encoding."""
    try:
        return _msgpack(value)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
        return ("content", content_key(value))


def _template_containers(raw: object, whole: bool) -> tuple[tuple[object, ...], ...] | None:
    """What a template's containers are: all but their volume mounts (named per pod) when
    ``whole``, else what the validation and the pod's view read of them (name, ports, resources,
    restart policy)."""
    if raw is None:
        return ()
    if type(raw) is not list:
        return None
    out: list[tuple[object, ...]] = []
    for c in raw:
        if type(c) is not dict:
            return None
        if whole:
            out.append(tuple(item for item in c.items() if item[0] != "volumeMounts"))
        else:
            out.append((c.get("name"), c.get("ports"), c.get("resources"), c.get("restartPolicy")))
    return tuple(out)


def _share_from(spec: JSON, first: JSON) -> None:
    """Make ``spec`` hold the values of ``first`` (the spec of its template's first pod, equal but
    for the instance fields): one copy of a template's spec, containers but for their mounts, for
    all its pods."""
    for k in spec:
        if k not in _INSTANCE_SPEC_FIELDS:
            spec[k] = first[k]
    for field in ("containers", "initContainers"):
        mine, theirs = spec.get(field), first.get(field)
        if type(mine) is list and type(theirs) is list:
            for c, fc in zip(mine, theirs, strict=True):
                for k in c:
                    if k != "volumeMounts":
                        c[k] = fc[k]


class Pod(KubeObject):
    """A Pod with the scheduler-relevant fields resolved.

    ``cache`` holds what plugins derive from this pod; ``shared`` what they derive from its
    template's sections and namespace only (``PodTemplates``; a dict of its own when the pod was
    built alone)."""

    __slots__ = (
        "cache",
        "index",
        "node_name",
        "nominated_node_name",
        "phase",
        "preemption_policy",
        "priority",
        "priority_class_name",
        "resources",
        "scheduler_name",
        "scheduling_gates",
        "shared",
    )

    def __init__(
        self,
        raw: JSON,
        index: int = 0,
        templates: PodTemplates | None = None,
        template: PodTemplate | None = None,
    ) -> None:
        super().__init__(raw)
        ident = self.ident
        spec = self.spec
        status = _mapping(raw.get("status"), ident, "status")
        self.index = index
        self.cache: dict[str, Any] = {}
        nn = spec.get("nodeName") or ""
        if not isinstance(nn, str):
            raise InputError("must be a string", obj=ident, field="spec.nodeName")
        self.node_name: str = nn
        self.phase: str = str(status.get("phase") or "")
        self.nominated_node_name: str = str(status.get("nominatedNodeName") or "")
        fields = template.fields if template is not None else None
        if fields is None:
            fields = self._template_fields(ident, spec, status, templates)
            if template is not None:
                template.fields = fields
        (
            self.scheduler_name,
            self.priority,
            self.priority_class_name,
            self.preemption_policy,
            gates,
            self.resources,
        ) = fields
        self.scheduling_gates: list[str] = list(gates)
        if template is not None:
            self.shared: dict[str, Any] = template.shared
        elif templates is not None:
            self.shared = templates.shared_for(self.namespace, spec)
        else:
            self.shared = {}

    @staticmethod
    def _template_fields(
        ident: str, spec: JSON, status: JSON, templates: PodTemplates | None
    ) -> tuple[str, int | None, str, str, tuple[str, ...], PodResources]:
        """The fields a pod has from its template (``PodTemplate.fields``)."""
        sn = spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME
        prio = spec.get("priority")
        if prio is not None and (isinstance(prio, bool) or not isinstance(prio, int)):
            raise InputError(f"must be an integer, got {prio!r}", obj=ident, field="spec.priority")
        gates: list[str] = []
        for i, g in enumerate(_list(spec.get("schedulingGates"), ident, "spec.schedulingGates")):
            g = _mapping(g, ident, f"spec.schedulingGates[{i}]")
            gates.append(str(g.get("name", "")))
        resources = (
            compute_pod_resources(spec, ident, status)
            if templates is None
            else templates.resources.compute(spec, ident, status)
        )
        return (
            str(sn),
            prio,
            str(spec.get("priorityClassName") or ""),
            str(spec.get("preemptionPolicy") or "PreemptLowerPriority"),
            tuple(gates),
            resources,
        )

    @property
    def labels(self) -> dict[str, str]:
        return self.meta.labels

    @property
    def prio(self) -> int:
        return self.priority or 0

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def requests(self) -> dict[str, int]:
        return self.resources.requests
