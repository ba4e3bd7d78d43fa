"""Pods of a streamed JSON dump read through the first pod of their template.

A production cluster's 150,000 pods come from a few thousand templates: the pods of one template
differ in their metadata, their status, the node they are bound to and their volumes (named per pod:
``kube-api-access-xxxxx``, a StatefulSet's claims), and in nothing else. Decoding every pod into
dicts makes a Python object of every value of every pod, most of them copies of their template's;
here a pod's spec is first read as the JSON text of each field (``msgspec.Raw``, no Python objects),
and a pod whose text equals, field for field, that of an earlier pod of its namespace is built from
that earlier pod's spec: the fields it shares are the same objects, the instance fields (``nodeName``,
``volumes``, the containers' ``volumeMounts``) its own.

The dict built is equal to the one a whole decoding gives: the same keys and values, but not always
in the same order (the spec's keys are in the first pod's order, which in a dump is kubectl's,
sorted; the pod's are apiVersion, kind, metadata, spec and status; a volume's, its name then its
source). A pod this reader does not know how to split (a field the v1.35 PodSpec, Container or
Volume lacks, a value of an unexpected type) is decoded whole, as before; a pod that has a field its
earlier look-alike lacks is the first of its own kind. What it reads is only ever the faster way to
the same value.

``SiblingReader.read`` is ``jsonstream``'s batch reader; ``loader.load_documents`` finds the
template of a sibling from its first pod's (``Sibling.first``).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType

from .objects import MIRROR_POD_ANNOTATION, PodTemplate
from .resources import status_resources_key

_Field = Raw | UnsetType


class _Container(Struct, forbid_unknown_fields=True):
    """A v1.35 Container (core/v1 types.go), each field as its text but the per-pod mounts."""

    name: _Field = UNSET
    image: _Field = UNSET
    command: _Field = UNSET
    args: _Field = UNSET
    workingDir: _Field = UNSET
    ports: _Field = UNSET
    envFrom: _Field = UNSET
    env: _Field = UNSET
    resources: _Field = UNSET
    resizePolicy: _Field = UNSET
    restartPolicy: _Field = UNSET
    restartPolicyRules: _Field = UNSET
    volumeMounts: Any = UNSET
    volumeDevices: _Field = UNSET
    livenessProbe: _Field = UNSET
    readinessProbe: _Field = UNSET
    startupProbe: _Field = UNSET
    lifecycle: _Field = UNSET
    terminationMessagePath: _Field = UNSET
    terminationMessagePolicy: _Field = UNSET
    imagePullPolicy: _Field = UNSET
    securityContext: _Field = UNSET
    stdin: _Field = UNSET
    stdinOnce: _Field = UNSET
    tty: _Field = UNSET


class _Volume(Struct, forbid_unknown_fields=True):
    """A v1.35 Volume (core/v1 types.go): its name and its source's text."""

    name: Any = UNSET
    hostPath: _Field = UNSET
    emptyDir: _Field = UNSET
    gcePersistentDisk: _Field = UNSET
    awsElasticBlockStore: _Field = UNSET
    gitRepo: _Field = UNSET
    secret: _Field = UNSET
    nfs: _Field = UNSET
    iscsi: _Field = UNSET
    glusterfs: _Field = UNSET
    persistentVolumeClaim: _Field = UNSET
    rbd: _Field = UNSET
    flexVolume: _Field = UNSET
    cinder: _Field = UNSET
    cephfs: _Field = UNSET
    flocker: _Field = UNSET
    downwardAPI: _Field = UNSET
    fc: _Field = UNSET
    azureFile: _Field = UNSET
    configMap: _Field = UNSET
    vsphereVolume: _Field = UNSET
    quobyte: _Field = UNSET
    azureDisk: _Field = UNSET
    photonPersistentDisk: _Field = UNSET
    projected: _Field = UNSET
    portworxVolume: _Field = UNSET
    scaleIO: _Field = UNSET
    storageos: _Field = UNSET
    csi: _Field = UNSET
    ephemeral: _Field = UNSET
    image: _Field = UNSET


class _Spec(Struct, forbid_unknown_fields=True):
    """A v1.35 PodSpec (core/v1 types.go), each field as its text but the instance fields."""

    volumes: list[_Volume] | UnsetType = UNSET
    initContainers: list[_Container] | UnsetType = UNSET
    containers: list[_Container] | UnsetType = UNSET
    ephemeralContainers: _Field = UNSET
    restartPolicy: _Field = UNSET
    terminationGracePeriodSeconds: _Field = UNSET
    activeDeadlineSeconds: _Field = UNSET
    dnsPolicy: _Field = UNSET
    nodeSelector: _Field = UNSET
    serviceAccountName: _Field = UNSET
    serviceAccount: _Field = UNSET
    automountServiceAccountToken: _Field = UNSET
    nodeName: Any = UNSET
    hostNetwork: _Field = UNSET
    hostPID: _Field = UNSET
    hostIPC: _Field = UNSET
    shareProcessNamespace: _Field = UNSET
    securityContext: _Field = UNSET
    imagePullSecrets: _Field = UNSET
    hostname: _Field = UNSET
    subdomain: _Field = UNSET
    affinity: _Field = UNSET
    schedulerName: _Field = UNSET
    tolerations: _Field = UNSET
    hostAliases: _Field = UNSET
    priorityClassName: _Field = UNSET
    priority: _Field = UNSET
    dnsConfig: _Field = UNSET
    readinessGates: _Field = UNSET
    runtimeClassName: _Field = UNSET
    enableServiceLinks: _Field = UNSET
    preemptionPolicy: _Field = UNSET
    overhead: _Field = UNSET
    topologySpreadConstraints: _Field = UNSET
    setHostnameAsFQDN: _Field = UNSET
    os: _Field = UNSET
    hostUsers: _Field = UNSET
    schedulingGates: _Field = UNSET
    resourceClaims: _Field = UNSET
    resources: _Field = UNSET
    hostnameOverride: _Field = UNSET
    workloadRef: _Field = UNSET


class _PodItem(Struct, forbid_unknown_fields=True):
    kind: Literal["Pod"]
    apiVersion: Any = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    spec: _Spec | UnsetType = UNSET
    status: dict[str, Any] | UnsetType = UNSET


_decode_pod = msgspec.json.Decoder(_PodItem).decode
_decode_any = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


class First:
    """The first pod of its kind: ``template`` is set by the loader once the pod is read."""

    __slots__ = ("spec", "template")

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.template: PodTemplate | None = None


class Sibling:
    """A pod built from ``first``'s spec (``obj``, the whole pod) or the first pod itself."""

    __slots__ = ("first", "obj")

    def __init__(self, obj: dict[str, Any], first: First) -> None:
        self.obj = obj
        self.first = first

    @property
    def is_first(self) -> bool:
        return self.obj["spec"] is self.first.spec


# Past this many kinds of pods, new ones are read whole (a dump of unrelated pods gains nothing).
LIMIT = 100_000


class SiblingReader:
    """``read(items)``: the JSON items of a batch (their text) decoded, pods as ``Sibling``s.
    Raises ``msgspec.DecodeError`` where the strict decoder would (the caller reads such a batch
    otherwise); the first pods of a batch that raises are forgotten, so that the next pod of their
    kind, read by the loader, is a first pod again."""

    def __init__(self) -> None:
        self._firsts: dict[tuple[object, ...], First] = {}
        self._sources: dict[bytes, dict[str, Any]] = {}

    def read(self, items: list[Raw]) -> list[Any]:
        found: dict[tuple[object, ...], First] = {}
        out = [self._read(item, found) for item in items]
        self._firsts.update(found)
        return out

    def _read(self, item: Raw, found: dict[tuple[object, ...], First]) -> Any:
        try:
            pod = _decode_pod(item)
        except msgspec.ValidationError:
            return _decode_any(item)
        spec = pod.spec
        md = pod.metadata
        status = pod.status
        if (
            type(spec) is not _Spec
            or type(md) is not dict
            or type(spec.containers) is not list
            or pod.apiVersion is UNSET
        ):
            return _decode_any(item)
        namespace = md.get("namespace")
        if namespace is not None and type(namespace) is not str:
            return _decode_any(item)
        reported = status_resources_key(status if type(status) is dict else None)
        if reported is None:
            return _decode_any(item)
        node_name, volumes = spec.nodeName, spec.volumes
        spec.nodeName = spec.volumes = UNSET
        mounts = _take_mounts(spec.containers)
        inits = spec.initContainers
        init_mounts = _take_mounts(inits) if type(inits) is list else ()
        annotations = md.get("annotations")
        key = (
            namespace,
            type(annotations) is dict and MIRROR_POD_ANNOTATION in annotations,
            reported,
            status is UNSET,
            node_name is UNSET,
            volumes is UNSET,
            tuple(m is UNSET for m in mounts),
            tuple(m is UNSET for m in init_mounts),
            _encode(spec),
        )
        first = self._firsts.get(key) or found.get(key)
        if first is None:
            obj = _decode_any(item)
            if type(obj) is dict and type(obj.get("spec")) is dict and len(self._firsts) + len(found) < LIMIT:
                first = found[key] = First(obj["spec"])
                return Sibling(obj, first)
            return obj
        theirs = first.spec
        mine = dict(theirs)
        if node_name is not UNSET:
            mine["nodeName"] = node_name
        if volumes is not UNSET:
            mine["volumes"] = self._volumes(volumes)
        mine["containers"] = _with_mounts(theirs["containers"], mounts)
        if init_mounts:
            mine["initContainers"] = _with_mounts(theirs["initContainers"], init_mounts)
        obj = {"apiVersion": pod.apiVersion, "kind": "Pod", "metadata": md, "spec": mine}
        if status is not UNSET:
            obj["status"] = status
        return Sibling(obj, first)

    def _volumes(self, volumes: list[_Volume]) -> list[dict[str, Any]]:
        """The volumes as dicts, each source one object for the pods whose source text is the
        same (a service account token's projection, a config map)."""
        out = []
        sources = self._sources
        for v in volumes:
            name = v.name
            v.name = UNSET
            text = _encode(v)
            source = sources.get(text)
            if source is None:
                source = _decode_any(text)
                if len(sources) < LIMIT:
                    sources[text] = source
            volume = {} if name is UNSET else {"name": name}
            volume.update(source)
            out.append(volume)
        return out


def _take_mounts(containers: list[_Container]) -> list[Any]:
    """The containers' mounts (UNSET where absent), taken out of them."""
    out = []
    for c in containers:
        out.append(c.volumeMounts)
        c.volumeMounts = UNSET
    return out


def _with_mounts(theirs: list[dict[str, Any]], mounts: list[Any]) -> list[dict[str, Any]]:
    out = []
    for c, m in zip(theirs, mounts, strict=True):
        c = dict(c)
        if m is not UNSET:
            c["volumeMounts"] = m
        out.append(c)
    return out
