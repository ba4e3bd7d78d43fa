"""Builders for storage and DRA objects used by the storage plugin tests (dicts as kubectl prints them)."""

from __future__ import annotations

from typing import Any


def pvc(
    name: str,
    *,
    namespace: str = "default",
    storage: str | None = "1Gi",
    sc: str | None = None,
    volume: str | None = None,
    bound: bool = False,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    annotations: dict[str, str] | None = None,
    phase: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    s: dict[str, Any] = {"accessModes": list(modes)}
    if storage is not None:
        s["resources"] = {"requests": {"storage": storage}}
    if sc is not None:
        s["storageClassName"] = sc
    if volume is not None:
        s["volumeName"] = volume
    s.update(spec)
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    md: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-pvc-{name}"}
    if ann:
        md["annotations"] = ann
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": s}
    if phase:
        out["status"] = {"phase": phase}
    return out


def pv(
    name: str,
    *,
    storage: str = "5Gi",
    sc: str = "",
    hostnames: list[str] | None = None,
    affinity: dict[str, Any] | None = None,
    claim: str | None = None,
    claim_uid: str | None = None,
    labels: dict[str, str] | None = None,
    csi: tuple[str, str] | None = None,
    phase: str = "Available",
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    **spec: Any,
) -> dict[str, Any]:
    s: dict[str, Any] = {"accessModes": list(modes), "capacity": {"storage": storage}, "storageClassName": sc}
    if hostnames is not None:
        affinity = {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": hostnames}
                        ]
                    }
                ]
            }
        }
    if affinity is not None:
        s["nodeAffinity"] = affinity
    if claim is not None:
        ref = {"name": claim, "namespace": "default"}
        if claim_uid is not None:
            ref["uid"] = claim_uid
        s["claimRef"] = ref
    if csi is not None:
        s["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    else:
        s.setdefault("local", {"path": f"/mnt/{name}"})
    s.update(spec)
    md: dict[str, Any] = {"name": name}
    if labels:
        md["labels"] = labels
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": md,
        "spec": s,
        "status": {"phase": phase},
    }


def storage_class(
    name: str,
    *,
    mode: str | None = "WaitForFirstConsumer",
    provisioner: str = "kubernetes.io/no-provisioner",
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
    }
    if mode is not None:
        out["volumeBindingMode"] = mode
    out.update(extra)
    return out


def csinode(
    name: str, drivers: dict[str, int | None], annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    ds = []
    for d, count in drivers.items():
        entry: dict[str, Any] = {"name": d, "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        ds.append(entry)
    md: dict[str, Any] = {"name": name}
    if annotations:
        md["annotations"] = annotations
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": md, "spec": {"drivers": ds}}


def csidriver(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": name},
        "spec": dict(spec),
    }


def claim_vol(claim: str, name: str = "data") -> dict[str, Any]:
    return {"name": name, "persistentVolumeClaim": {"claimName": claim}}


# ----- DRA --------------------------------------------------------------------------------------


def device_class(name: str, *expressions: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


def device(name: str, **attrs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "attributes": {}}
    for k, v in attrs.items():
        if k == "memory":
            out["capacity"] = {"memory": {"value": v}}
        elif isinstance(v, bool):
            out["attributes"][k] = {"bool": v}
        elif isinstance(v, int):
            out["attributes"][k] = {"int": v}
        else:
            out["attributes"][k] = {"string": v}
    return out


def resource_slice(
    node: str | None,
    devices: list[dict[str, Any]],
    *,
    driver: str = "gpu.example.com",
    pool: str | None = None,
    name: str | None = None,
    count: int = 1,
    generation: int = 1,
    **spec: Any,
) -> dict[str, Any]:
    s: dict[str, Any] = {
        "driver": driver,
        "devices": devices,
        "pool": {"name": pool or node or "pool", "generation": generation, "resourceSliceCount": count},
    }
    if node is not None:
        s["nodeName"] = node
    s.update(spec)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node or pool}-{driver}"},
        "spec": s,
    }


def exact(
    name: str = "gpu", count: int = 1, cls: str = "gpu", *selectors: str, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"allocationMode": "ExactCount", "count": count, "deviceClassName": cls}
    if selectors:
        body["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    body.update(extra)
    return {"name": name, "exactly": body}


def resource_claim(
    name: str,
    *requests: dict[str, Any],
    status: dict[str, Any] | None = None,
    constraints: list[dict[str, Any]] | None = None,
    namespace: str = "default",
) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    out: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-claim-{name}"},
        "spec": {"devices": devices},
    }
    if status is not None:
        out["status"] = status
    return out


def pod_claims(*claims: str) -> dict[str, Any]:
    """spec fields for a pod using the named ResourceClaims (one container using all of them)."""
    return {"resourceClaims": [{"name": f"r{i}", "resourceClaimName": c} for i, c in enumerate(claims)]}
