"""Writes schedviz/samples/cluster.yaml: the bundled sample cluster.

21 nodes over 3 zones (general, large, GPU, spot, a cordoned node, one under maintenance), running
workloads, and pending pods that exercise every plugin of the default profile. Run it again after
changing it: `python scripts/generate_sample.py`.
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
        container["resources"].setdefault("requests", {}).update(spec.pop("extra_requests"))
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
    items.extend(pend)
    return items


def main() -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": build()}
    header = "# SchedViz sample cluster: generated by scripts/generate_sample.py\n"
    OUT.write_text(header + yaml.safe_dump(doc, sort_keys=False, width=120))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
