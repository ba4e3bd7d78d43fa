"""Writes schedviz/samples/cluster.yaml: the bundled sample cluster.

21 nodes over 3 zones (general, large, GPU, spot, a cordoned node, one under maintenance), running
workloads, and pending pods that exercise every plugin of the default profile, storage (a local
volume bound on first use, dynamic provisioning, a volume zone conflict, a CSI attach limit) and
dynamic resource allocation (GPU claims allocated, refused, and one freed by PostFilter). Run it again
after changing it: `python scripts/generate_sample.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).resolve().parent.parent / "schedviz" / "samples" / "cluster.yaml"
ZONES = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
T0 = "2026-03-01T10:00:00Z"


def node(name: str, zone: str, cpu: str, mem: str, *, pods: str = "110", labels: dict[str, str] | None = None,
         taints: list[dict[str, str]] | None = None, unschedulable: bool = False, extra: dict[str, str] | None = None,
         images: list[tuple[str, int]] | None = None) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": mem, "pods": pods, "ephemeral-storage": "100Gi", **(extra or {})}
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
            "topology.kubernetes.io/region": "eu-west-1", "topology.kubernetes.io/zone": zone, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": alloc,
                   "images": [{"names": [n], "sizeBytes": s} for n, s in (images or [])]},
    }


def pod(name: str, ns: str = "default", *, cpu: str | None = "250m", mem: str | None = "256Mi",
        labels: dict[str, str] | None = None, node_name: str | None = None, image: str = "registry.example/app:1.0",
        created: str = T0, owner: tuple[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    req = {k: v for k, v in (("cpu", cpu), ("memory", mem)) if v is not None}
    container: dict[str, Any] = {"name": "main", "image": image, "resources": {"requests": req} if req else {}}
    if "ports" in spec:
        container["ports"] = spec.pop("ports")
    if "extra_requests" in spec:
        extra = spec.pop("extra_requests")
        container["resources"].setdefault("requests", {}).update(extra)
        # extended resources are not overcommitted: the API server wants a limit equal to the request
        container["resources"].setdefault("limits", {}).update(extra)
    s: dict[str, Any] = {"containers": [container], **spec}
    if node_name:
        s["nodeName"] = node_name
    md: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"{ns}-{name}", "labels": labels or {},
                          "creationTimestamp": created}
    if owner:
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": f"{ns}-{owner[1]}",
                                  "controller": True}]
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": s}
    out["status"] = {"phase": "Running" if node_name else "Pending"}
    return out


def storage_objects() -> list[dict[str, Any]]:
    """StorageClasses, PVs, PVCs and CSINodes for the storage cases (see the pending pods)."""
    out: list[dict[str, Any]] = []

    def sc(name: str, provisioner: str, mode: str, **extra: Any) -> None:
        out.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                    "provisioner": provisioner, "volumeBindingMode": mode, **extra})

    def pvc(name: str, ns: str, size: str, sc_name: str, volume: str | None = None) -> None:
        md: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"{ns}-pvc-{name}"}
        spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "storageClassName": sc_name,
                                "resources": {"requests": {"storage": size}}}
        status = {"phase": "Pending"}
        if volume:
            md["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
            spec["volumeName"] = volume
            status = {"phase": "Bound"}
        out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec, "status": status})

    def pv(name: str, size: str, sc_name: str, *, claim: tuple[str, str] | None = None, host: str | None = None,
           csi_handle: str | None = None, labels: dict[str, str] | None = None) -> None:
        spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                                "storageClassName": sc_name, "persistentVolumeReclaimPolicy": "Retain"}
        if csi_handle:
            spec["csi"] = {"driver": "ebs.csi.aws.com", "volumeHandle": csi_handle, "fsType": "ext4"}
        else:
            spec["local"] = {"path": f"/mnt/disks/{name}"}
        if host:
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}]}}
        if claim:
            spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": claim[0], "name": claim[1],
                                "uid": f"{claim[0]}-pvc-{claim[1]}"}
        md: dict[str, Any] = {"name": name}
        if labels:
            md["labels"] = labels
        out.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": md, "spec": spec,
                    "status": {"phase": "Bound" if claim else "Available"}})

    # Local SSDs, bound when the first pod using a claim is scheduled (WaitForFirstConsumer).
    sc("local-ssd", "kubernetes.io/no-provisioner", "WaitForFirstConsumer")
    pv("local-ssd-big-1a", "200Gi", "local-ssd", host="big-1a")
    pvc("search-index", "shop", "100Gi", "local-ssd")
    pvc("search-index-replica", "shop", "100Gi", "local-ssd")
    # EBS volumes provisioned in eu-west-1a only, once the pod's node is known.
    sc("gp3-1a", "ebs.csi.aws.com", "WaitForFirstConsumer",
       allowedTopologies=[{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": [ZONES[0]]}]}])
    pvc("ingest-buffer", "batch", "20Gi", "gp3-1a")
    # A bound volume that lives in eu-west-1b.
    sc("gp3", "ebs.csi.aws.com", "Immediate")
    pv("pvc-orders-archive", "500Gi", "gp3", claim=("shop", "orders-archive"), csi_handle="vol-0a1b2c3d4e5f60001",
       labels={"topology.kubernetes.io/zone": ZONES[1], "topology.kubernetes.io/region": "eu-west-1"})
    pvc("orders-archive", "shop", "500Gi", "gp3", volume="pvc-orders-archive")
    # gen-1a-3 can attach one EBS volume, already used by etl-0's scratch volume.
    pv("pvc-etl-scratch", "50Gi", "gp3", claim=("batch", "etl-scratch"), csi_handle="vol-0a1b2c3d4e5f60002")
    pvc("etl-scratch", "batch", "50Gi", "gp3", volume="pvc-etl-scratch")
    pv("pvc-etl-output", "50Gi", "gp3", claim=("batch", "etl-output"), csi_handle="vol-0a1b2c3d4e5f60003")
    pvc("etl-output", "batch", "50Gi", "gp3", volume="pvc-etl-output")
    out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "gen-1a-3"},
                "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-0gen1a3",
                                      "topologyKeys": ["topology.kubernetes.io/zone"], "allocatable": {"count": 1}}]}})
    return out


GPU_DRIVER = "gpu.example.com"


def dra_objects() -> list[dict[str, Any]]:
    """DeviceClass, ResourceSlices and claims for the dynamic resource allocation cases."""
    out: list[dict[str, Any]] = [{
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": GPU_DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}}]},
    }]

    def gpu(name: str, model: str, memory: str, index: int) -> dict[str, Any]:
        return {"name": name, "attributes": {"model": {"string": model}, "index": {"int": index},
                                             "driverVersion": {"version": "1.4.2"}},
                "capacity": {"memory": {"value": memory}}}

    for node_name, devices in (
        ("gpu-1a", [gpu("gpu-0", "a100", "40Gi", 0)]),
        ("gpu-1b", [gpu("gpu-0", "a100", "40Gi", 0), gpu("gpu-1", "a100", "40Gi", 1)]),
        ("gpu-1c", [gpu("gpu-0", "h100", "80Gi", 0)]),
    ):
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                    "metadata": {"name": f"{node_name}-{GPU_DRIVER}"},
                    "spec": {"driver": GPU_DRIVER, "nodeName": node_name, "devices": devices,
                             "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1}}})

    def request(count: int, *selectors: str) -> dict[str, Any]:
        body: dict[str, Any] = {"deviceClassName": GPU_DRIVER, "allocationMode": "ExactCount", "count": count}
        if selectors:
            body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
        return {"devices": {"requests": [{"name": "gpu", "exactly": body}]}}

    def claim(name: str, ns: str, spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
        c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": name, "namespace": ns, "uid": f"{ns}-claim-{name}"}, "spec": spec}
        c.update(extra)
        return c

    at_least_40g = f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'
    a100 = f'device.attributes["{GPU_DRIVER}"].model == "a100"'
    h100 = f'device.attributes["{GPU_DRIVER}"].model == "h100"'
    # A template, and the claim the resourceclaim controller made from it for batch/inference-0.
    out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-a100", "namespace": "batch"},
                "spec": {"spec": request(1, a100, at_least_40g)}})
    generated = claim("inference-0-gpu-7x2kq", "batch", request(1, a100, at_least_40g))
    generated["metadata"]["annotations"] = {"resource.kubernetes.io/pod-claim-name": "gpu"}
    generated["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "inference-0",
                                                 "uid": "batch-inference-0", "controller": True,
                                                 "blockOwnerDeletion": True}]
    out.append(generated)
    # Two claims for the only H100: the first pod gets it, the second cannot.
    out.append(claim("finetune-a", "batch", request(1, h100)))
    out.append(claim("finetune-b", "batch", request(1, h100)))
    # Allocated on gpu-1a by an earlier pod that is gone; no pod holds it (reservedFor is empty).
    out.append(claim("notebook-gpu", "default", request(1), status={"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": GPU_DRIVER, "pool": "gpu-1a", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["gpu-1a"]}]}]},
    }}))
    return out


def build() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for ns, env in (("default", None), ("shop", "prod"), ("batch", "batch"), ("monitoring", "ops")):
        items.append({"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns, **({"env": env} if env else {})}}})
    items.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "critical-api"},
                  "value": 100000})
    items.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "best-effort-batch"},
                  "value": -100, "preemptionPolicy": "Never"})
    items.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
                  "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    items.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "api-7f9c", "namespace": "shop"},
                  "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "api"}}}})
    items.append({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "shop"},
                  "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}}}})
    items.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db", "namespace": "shop"},
                  "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "db"}}}})

    nodes: list[dict[str, Any]] = []
    for z, zone in enumerate(ZONES):
        for k in range(4):
            name = f"gen-{zone[-2:]}-{k}"
            disk = "ssd" if k % 2 == 0 else "hdd"
            imgs = [("registry.example/web:2.4", 420_000_000)] if k < 2 else [("registry.example/batch:7", 1_200_000_000)]
            nodes.append(node(name, zone, "8", "32Gi", labels={"pool": "general", "disktype": disk,
                                                               "node.kubernetes.io/instance-type": "m6i.2xlarge"},
                              images=imgs))
        nodes.append(node(f"big-{zone[-2:]}", zone, "32", "128Gi", labels={"pool": "large", "disktype": "ssd",
                                                                           "node.kubernetes.io/instance-type": "m6i.8xlarge"}))
        nodes.append(node(f"gpu-{zone[-2:]}", zone, "16", "64Gi", labels={"pool": "gpu", "accelerator": "nvidia-a100",
                                                                          "node.kubernetes.io/instance-type": "p4d.xlarge"},
                          taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
                          extra={"nvidia.com/gpu": "4"}))
    nodes.append(node("spot-1a", ZONES[0], "4", "16Gi", pods="8", labels={"pool": "spot"},
                      taints=[{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]))
    nodes.append(node("spot-1b", ZONES[1], "4", "16Gi", pods="8", labels={"pool": "spot"},
                      taints=[{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]))
    nodes.append(node("cordoned-1c", ZONES[2], "8", "32Gi", labels={"pool": "general"}, unschedulable=True,
                      taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]))
    items.extend(nodes)
    items.extend(storage_objects())
    items.extend(dra_objects())

    # running workloads
    running: list[dict[str, Any]] = []
    web_nodes = ["gen-1a-0", "gen-1a-1", "gen-1b-0"]
    for i, n in enumerate(web_nodes):
        running.append(pod(f"web-{i}", "shop", cpu="500m", mem="1Gi", labels={"app": "web", "tier": "frontend"},
                           node_name=n, image="registry.example/web:2.4", ports=[{"containerPort": 8080, "hostPort": 8080}]))
    for i, n in enumerate(["gen-1a-2", "gen-1b-1", "gen-1b-2", "gen-1c-0"]):
        running.append(pod(f"api-7f9c-{i}", "shop", cpu="1", mem="2Gi", labels={"app": "api"}, node_name=n,
                           owner=("ReplicaSet", "api-7f9c")))
    for i, n in enumerate(["big-1a", "big-1b", "big-1c"]):
        running.append(pod(f"db-{i}", "shop", cpu="6", mem="24Gi", labels={"app": "db"}, node_name=n,
                           owner=("StatefulSet", "db"), priority=1000,
                           affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                               {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}))
    for i, n in enumerate(["gen-1a-3", "gen-1b-3", "gen-1c-3", "gen-1c-1", "gen-1c-2"]):
        running.append(pod(f"etl-{i}", "batch", cpu="5", mem="20Gi", labels={"app": "etl"}, node_name=n,
                           image="registry.example/batch:7", priority=-100))
    # etl-0 writes to an EBS volume: gen-1a-3's only attachment slot (its CSINode allows one)
    running[-5]["spec"]["volumes"] = [{"name": "scratch", "persistentVolumeClaim": {"claimName": "etl-scratch"}}]
    running.append(pod("trainer-0", "batch", cpu="8", mem="32Gi", labels={"app": "trainer"}, node_name="gpu-1a",
                       extra_requests={"nvidia.com/gpu": "3"},
                       tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]))
    for i in range(6):
        running.append(pod(f"cache-{i}", "default", cpu="200m", mem="512Mi", labels={"app": "cache"},
                           node_name="spot-1a" if i < 4 else "spot-1b",
                           tolerations=[{"key": "spot", "operator": "Equal", "value": "true", "effect": "PreferNoSchedule"}]))
    running.append(pod("old-job", "batch", cpu="4", mem="8Gi", labels={"app": "etl"}, node_name="gen-1a-0"))
    running[-1]["status"]["phase"] = "Succeeded"  # finished: holds nothing
    items.extend(running)

    # pending pods, created one second apart
    def t(i: int) -> str:
        return f"2026-03-01T11:00:{i:02d}Z"

    pend: list[dict[str, Any]] = []
    add = pend.append
    add(pod("hello", cpu="100m", mem="64Mi", created=t(0)))
    add(pod("ssd-only", cpu="500m", mem="1Gi", created=t(1), nodeSelector={"disktype": "ssd"}))
    add(pod("zone-a-required", cpu="500m", mem="512Mi", created=t(2), affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1a"]}]}]}}}))
    add(pod("prefers-large", cpu="1", mem="2Gi", created=t(3), affinity={"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 80, "preference": {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["large"]}]}},
            {"weight": 20, "preference": {"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["ssd"]}]}}]}}))
    add(pod("huge", cpu="40", mem="8Gi", created=t(4)))
    add(pod("gpu-job", "batch", cpu="2", mem="8Gi", created=t(5), extra_requests={"nvidia.com/gpu": "2"},
            tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]))
    add(pod("gpu-no-toleration", "batch", cpu="2", mem="8Gi", created=t(6), extra_requests={"nvidia.com/gpu": "1"}))
    add(pod("gpu-too-many", "batch", cpu="2", mem="8Gi", created=t(7), extra_requests={"nvidia.com/gpu": "8"},
            tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}]))
    add(pod("web-3", "shop", cpu="500m", mem="1Gi", labels={"app": "web", "tier": "frontend"}, created=t(8),
            image="registry.example/web:2.4", ports=[{"containerPort": 8080, "hostPort": 8080}]))
    add(pod("web-4", "shop", cpu="500m", mem="1Gi", labels={"app": "web", "tier": "frontend"}, created=t(9),
            image="registry.example/web:2.4", ports=[{"containerPort": 8080, "hostPort": 8080}]))
    add(pod("near-db", "shop", cpu="500m", mem="1Gi", labels={"app": "reporting"}, created=t(10), affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}))
    add(pod("away-from-web", "shop", cpu="250m", mem="256Mi", labels={"app": "crawler"}, created=t(11), affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "topology.kubernetes.io/zone"}]}}))
    add(pod("db-3", "shop", cpu="6", mem="24Gi", labels={"app": "db"}, created=t(12), owner=("StatefulSet", "db"), affinity={
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}))
    for i in range(4):
        add(pod(f"spread-{i}", "default", cpu="300m", mem="512Mi", labels={"app": "spread"}, created=t(13 + i),
                topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "spread"}}}]))
    for i in range(3):
        add(pod(f"api-7f9c-{4 + i}", "shop", cpu="1", mem="2Gi", labels={"app": "api"}, created=t(17 + i),
                owner=("ReplicaSet", "api-7f9c")))
    add(pod("batch-image", "batch", cpu="500m", mem="1Gi", labels={"app": "etl"}, created=t(20), image="registry.example/batch:7"))
    add(pod("gated", cpu="100m", mem="64Mi", created=t(21), schedulingGates=[{"name": "example.com/quota-check"}]))
    add(pod("other-scheduler", cpu="100m", mem="64Mi", created=t(22), schedulerName="my-custom-scheduler"))
    add(pod("critical-api", "shop", cpu="2", mem="4Gi", labels={"app": "api-critical"}, created=t(23),
            priorityClassName="critical-api"))
    add(pod("spot-tolerant", "default", cpu="200m", mem="256Mi", labels={"app": "cache"}, created=t(24),
            tolerations=[{"key": "spot", "operator": "Equal", "value": "true", "effect": "PreferNoSchedule"}],
            affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["spot"]}]}]}}}))
    add(pod("scratch-heavy", "batch", cpu="500m", mem="1Gi", created=t(25), extra_requests={"ephemeral-storage": "150Gi"}))
    add(pod("prod-neighbour-averse", "monitoring", cpu="250m", mem="256Mi", labels={"app": "probe"}, created=t(26), affinity={
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
             "namespaceSelector": {"matchLabels": {"env": "prod"}}, "topologyKey": "kubernetes.io/hostname"}]}}))
    add(pod("with-sidecar", "default", cpu=None, mem=None, created=t(27), initContainers=[
        {"name": "setup", "image": "registry.example/init:1", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
        {"name": "proxy", "image": "registry.example/proxy:1", "restartPolicy": "Always",
         "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}}}]))
    add(pod("best-effort", "batch", cpu=None, mem=None, created=t(28), priorityClassName="best-effort-batch"))
    add(pod("spot-spill", "default", cpu="200m", mem="256Mi", created=t(29), affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["spot"]}]}]}}},
        tolerations=[{"key": "spot", "operator": "Exists"}]))
    for i in range(3):
        add(pod(f"spot-fill-{i}", "default", cpu="100m", mem="128Mi", created=t(30 + i), nodeSelector={"pool": "spot"},
                tolerations=[{"key": "spot", "operator": "Exists"}]))
    add(pod("prefer-spread", "default", cpu="300m", mem="256Mi", labels={"app": "soft"}, created=t(33),
            topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                        "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "soft"}}}],
            affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "etl"}},
                                                    "namespaces": ["batch"], "topologyKey": "kubernetes.io/hostname"}}]}}))
    add(pod("too-big-memory", "default", cpu="1", mem="200Gi", created=t(34)))
    add(pod("named-exact", "default", cpu="100m", mem="64Mi", created=t(35), affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gen-1b-2"]}]}]}}}))
    # storage
    gpu_toleration = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]

    def claim_volume(claim: str) -> list[dict[str, Any]]:
        return [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]

    add(pod("search-0", "shop", cpu="2", mem="8Gi", labels={"app": "search"}, created=t(36),
            volumes=claim_volume("search-index")))
    add(pod("search-1", "shop", cpu="2", mem="8Gi", labels={"app": "search"}, created=t(37),
            volumes=claim_volume("search-index-replica")))
    add(pod("ingest", "batch", cpu="500m", mem="1Gi", created=t(38), volumes=claim_volume("ingest-buffer")))
    add(pod("archive-reader", "shop", cpu="250m", mem="512Mi", created=t(39),
            nodeSelector={"topology.kubernetes.io/zone": ZONES[0]}, volumes=claim_volume("orders-archive")))
    add(pod("etl-export", "batch", cpu="500m", mem="1Gi", labels={"app": "etl"}, created=t(40),
            nodeSelector={"kubernetes.io/hostname": "gen-1a-3"}, volumes=claim_volume("etl-output")))
    # dynamic resource allocation
    inference = pod("inference-0", "batch", cpu="2", mem="8Gi", labels={"app": "inference"}, created=t(41),
                    tolerations=gpu_toleration,
                    resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "one-a100"}])
    inference["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    inference["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "inference-0-gpu-7x2kq"}]
    add(inference)
    for i, name in enumerate(("finetune-a", "finetune-b")):
        p = pod(name, "batch", cpu="4", mem="16Gi", labels={"app": "finetune"}, created=t(42 + i),
                tolerations=gpu_toleration, resourceClaims=[{"name": "gpu", "resourceClaimName": name}])
        p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
        add(p)
    notebook = pod("notebook", "default", cpu="12", mem="16Gi", labels={"app": "notebook"}, created=t(44),
                   tolerations=gpu_toleration, resourceClaims=[{"name": "gpu", "resourceClaimName": "notebook-gpu"}])
    notebook["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    add(notebook)
    items.extend(pend)
    return items


def main() -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": build()}
    header = "# SchedViz sample cluster: generated by scripts/generate_sample.py\n"
    OUT.write_text(header + yaml.safe_dump(doc, sort_keys=False, width=120))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
