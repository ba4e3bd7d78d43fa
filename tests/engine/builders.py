"""Small builders for Kubernetes objects in tests (dicts as kubectl prints them)."""

from __future__ import annotations

from typing import Any

from schedviz.engine.cluster import ClusterState, ObjectStore
from schedviz.engine.framework import CycleState, Handle
from schedviz.engine.objects import KubeObject, Node, Pod
from schedviz.engine.resources import is_overcommit_allowed


def node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
    extra: dict[str, str] | None = None,
    images: list[tuple[list[str], int]] | None = None,
) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {
            "allocatable": alloc,
            "capacity": alloc,
            "images": [{"names": n, "sizeBytes": s} for n, s in (images or [])],
        },
    }


def container(
    name: str = "c",
    *,
    cpu: str | None = None,
    memory: str | None = None,
    image: str = "registry.example/app:1",
    ports: list[dict[str, Any]] | None = None,
    extra: dict[str, str] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    req: dict[str, str] = {}
    if cpu is not None:
        req["cpu"] = cpu
    if memory is not None:
        req["memory"] = memory
    req.update(extra or {})
    resources: dict[str, Any] = {"requests": req} if req else {}
    # The API server refuses a request for an extended resource or hugepages without an equal limit.
    limits = {k: v for k, v in (extra or {}).items() if not is_overcommit_allowed(k)}
    if limits:
        resources["limits"] = limits
    c: dict[str, Any] = {"name": name, "image": image, "resources": resources}
    if ports:
        c["ports"] = ports
    c.update(fields)
    return c


def pod(
    name: str,
    *,
    namespace: str = "default",
    node_name: str | None = None,
    cpu: str | None = None,
    memory: str | None = None,
    labels: dict[str, str] | None = None,
    containers: list[dict[str, Any]] | None = None,
    priority: int | None = None,
    created: str = "2026-01-01T00:00:00Z",
    phase: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    s: dict[str, Any] = {"containers": containers or [container(cpu=cpu, memory=memory)]}
    if node_name:
        s["nodeName"] = node_name
    if priority is not None:
        s["priority"] = priority
    s.update(spec)
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{namespace}-{name}",
            "labels": labels or {},
            "creationTimestamp": created,
        },
        "spec": s,
    }
    if phase:
        out["status"] = {"phase": phase}
    return out


def cluster(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]] = (), objects: list[dict[str, Any]] = ()  # type: ignore[assignment]
) -> ClusterState:
    """A ClusterState with the given nodes and the given pods placed on their spec.nodeName."""
    c = ClusterState([Node(n) for n in nodes], ObjectStore(KubeObject(o) for o in objects))
    for i, p in enumerate(pods):
        po = Pod(p, i)
        if po.node_name and not po.terminal:
            c.add_pod(po, c.index[po.node_name])
    return c


def state_for(c: ClusterState) -> tuple[CycleState, Handle]:
    return CycleState(c), Handle(c)


def all_nodes(c: ClusterState) -> Any:
    import numpy as np

    return np.arange(c.n, dtype=np.int64)
