"""A dense synthetic cluster as ``kubectl get -o json`` prints it (``schedviz bench --pods-per-node``).

Production clusters run tens of pods per node, made by Deployments. This cluster is shaped that way:

- nodes in 4 zones, 32 CPU / 128 GiB / 110 pods each (more when ``pods_per_node`` needs it), as a
  cloud provider's kubelet reports them: the well-known labels, addresses, conditions, node info and
  the images of the pods the node runs (so that ImageLocality has something to score);
- Deployments made from a handful of templates (``TEMPLATES``: a web server, an API, a worker, a
  cache, a JVM search service, a service with a proxy sidecar, a consumer with an init container, an
  exporter), eight per namespace, one namespace per ~2000 running pods, each with its ReplicaSet
  and Service in the dump (so the default topology spreading finds their selectors);
- ``pods_per_node`` running pods on every node, replicas of those Deployments scattered over the
  nodes, each as the ReplicaSet controller and the API server make it: owner reference, the
  service account's projected ``kube-api-access-*`` volume, the default not-ready/unreachable
  NoExecute tolerations (300 s), requests and limits, labels with ``pod-template-hash``, a status;
- half of the Deployments (so half of the pods) have a preferred pod anti-affinity (weight 100,
  their own ``app``, hostname topology), a quarter a zone topology spread constraint (maxSkew 1,
  DoNotSchedule, their own ``app``);
- ``pending`` pods: new replicas of the same Deployments (a scale-up), pending pod ``k`` of
  Deployment ``k mod D``.

Everything is deterministic: the same arguments write the same bytes. ``write_dump`` streams the
objects to a file (compact JSON, one object per line, or YAML as kubectl prints it), so writing a
dump of a million pods does not hold them in memory. A pod is about 2.6 kB of compact JSON (5000
nodes x 30 pods: about 400 MB).
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import yaml

ZONES = ("zone-a", "zone-b", "zone-c", "zone-d")
REGION = "region-1"
INSTANCE_TYPE = "m5.8xlarge"
DEPLOYMENTS_PER_NAMESPACE = 8
RUNNING_PODS_PER_NAMESPACE = 2000
# Kubernetes' rand.SafeEncodeString alphabet (pod-template-hash, generated name suffixes)
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_CREATED = "2026-01-05T08:00:00Z"
_STARTED = "2026-01-05T08:00:04Z"
_PENDING_CREATED = "2026-01-06T12:00:00Z"
_SYSTEM_IMAGES = (
    (["registry.k8s.io/pause@sha256:" + "7c" * 32, "registry.k8s.io/pause:3.10"], 320368),
    (["registry.k8s.io/kube-proxy@sha256:" + "3f" * 32, "registry.k8s.io/kube-proxy:v1.35.4"], 30215012),
    (["registry.example/cni/agent@sha256:" + "a1" * 32, "registry.example/cni/agent:1.16.3"], 71231877),
)


@dataclass(frozen=True)
class Container:
    name: str
    image: str
    cpu: str
    memory: str
    limits: dict[str, str]
    ports: tuple[tuple[str, int], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    probe_port: int | None = None
    image_bytes: int = 100_000_000


@dataclass(frozen=True)
class Template:
    """A Deployment's pod template, as the application team wrote it."""

    name: str
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...] = ()
    tier: str = "backend"


TEMPLATES: tuple[Template, ...] = (
    Template(
        "web",
        (
            Container(
                "nginx",
                "registry.example/web/nginx:1.27.2",
                "100m",
                "128Mi",
                {"cpu": "500m", "memory": "256Mi"},
                ports=(("http", 8080),),
                probe_port=8080,
                image_bytes=67_000_000,
            ),
        ),
        tier="frontend",
    ),
    Template(
        "api",
        (
            Container(
                "server",
                "registry.example/api/server:3.14.1",
                "250m",
                "512Mi",
                {"memory": "1Gi"},
                ports=(("http", 8080), ("metrics", 9090)),
                env=(("LOG_LEVEL", "info"), ("GOMAXPROCS", "2"), ("DB_POOL_SIZE", "20")),
                probe_port=8080,
                image_bytes=48_000_000,
            ),
        ),
    ),
    Template(
        "worker",
        (
            Container(
                "worker",
                "registry.example/jobs/worker:2.8.0",
                "500m",
                "1Gi",
                {"memory": "2Gi"},
                env=(("QUEUE", "default"), ("CONCURRENCY", "8")),
                image_bytes=210_000_000,
            ),
        ),
    ),
    Template(
        "cache",
        (
            Container(
                "redis",
                "registry.example/cache/redis:7.4.1",
                "200m",
                "1Gi",
                {"cpu": "1", "memory": "1Gi"},
                ports=(("redis", 6379),),
                probe_port=6379,
                image_bytes=41_000_000,
            ),
        ),
        tier="cache",
    ),
    Template(
        "search",
        (
            Container(
                "search",
                "registry.example/search/engine:8.15.3",
                "1",
                "2Gi",
                {"cpu": "2", "memory": "4Gi"},
                ports=(("http", 9200), ("transport", 9300)),
                env=(("JAVA_OPTS", "-Xms1g -Xmx1g"), ("CLUSTER_NAME", "search")),
                probe_port=9200,
                image_bytes=640_000_000,
            ),
        ),
    ),
    Template(
        "auth",
        (
            Container(
                "auth",
                "registry.example/auth/service:1.9.4",
                "100m",
                "256Mi",
                {"memory": "512Mi"},
                ports=(("http", 8080),),
                probe_port=8080,
                image_bytes=35_000_000,
            ),
            Container(
                "proxy",
                "registry.example/mesh/proxy:1.24.0",
                "100m",
                "128Mi",
                {"memory": "256Mi"},
                ports=(("proxy", 15001), ("admin", 15000)),
                image_bytes=95_000_000,
            ),
        ),
    ),
    Template(
        "consumer",
        (
            Container(
                "consumer",
                "registry.example/events/consumer:4.2.0",
                "300m",
                "768Mi",
                {"memory": "1536Mi"},
                env=(("TOPIC", "events"), ("GROUP", "consumers")),
                image_bytes=120_000_000,
            ),
        ),
        init_containers=(
            Container(
                "migrate",
                "registry.example/events/migrate:4.2.0",
                "50m",
                "64Mi",
                {"memory": "128Mi"},
                image_bytes=22_000_000,
            ),
        ),
    ),
    Template(
        "exporter",
        (
            Container(
                "exporter",
                "registry.example/metrics/exporter:0.15.0",
                "50m",
                "64Mi",
                {"cpu": "100m", "memory": "128Mi"},
                ports=(("metrics", 9100),),
                probe_port=9100,
                image_bytes=12_000_000,
            ),
        ),
        tier="monitoring",
    ),
)

# The largest per-pod CPU request (millicores) and memory request (MiB): nodes are sized so that any
# pods_per_node of them fit.
_MAX_CPU_M = 1000
_MAX_MEM_MI = 2048


@dataclass(frozen=True)
class DenseShape:
    """The dense cluster's sizes, and where each Deployment's replicas go."""

    nodes: int
    pods_per_node: int
    pending: int

    @property
    def running(self) -> int:
        return self.nodes * self.pods_per_node

    @property
    def namespaces(self) -> int:
        return max(1, round(self.running / RUNNING_PODS_PER_NAMESPACE))

    @property
    def deployments(self) -> int:
        return self.namespaces * DEPLOYMENTS_PER_NAMESPACE

    @property
    def stride(self) -> int:
        """Running pod r (node r // pods_per_node) belongs to Deployment (r * stride) mod D: a
        permutation of every D consecutive pods, so replicas are scattered over the nodes and no
        node runs two replicas of one Deployment while pods_per_node <= D."""
        d = self.deployments
        for p in (7919, 7907, 7901, 7883, 7877):
            if math.gcd(p, d) == 1:
                return p
        return 1

    def deployment_of_running(self, r: int) -> int:
        return (r * self.stride) % self.deployments

    def deployment_of_pending(self, k: int) -> int:
        return k % self.deployments


def anti_affinity(d: int) -> bool:
    """Deployment ``d`` has a preferred pod anti-affinity: half of them, every template included."""
    return (d % DEPLOYMENTS_PER_NAMESPACE + d // DEPLOYMENTS_PER_NAMESPACE) % 2 == 1


def spread(d: int) -> bool:
    """Deployment ``d`` has a zone topology spread constraint: a quarter of them."""
    return (d % DEPLOYMENTS_PER_NAMESPACE + d // DEPLOYMENTS_PER_NAMESPACE) % 4 == 3


def _template(d: int) -> Template:
    return TEMPLATES[d % DEPLOYMENTS_PER_NAMESPACE % len(TEMPLATES)]


def _namespace(d: int) -> str:
    return f"team-{d // DEPLOYMENTS_PER_NAMESPACE:03d}"


def _app(d: int) -> str:
    return f"{_template(d).name}-{d // DEPLOYMENTS_PER_NAMESPACE:03d}"


def _encode(n: int, length: int) -> str:
    out = []
    for _ in range(length):
        n, rem = divmod(n, len(_ALPHABET))
        out.append(_ALPHABET[rem])
    return "".join(out)


def _hash(d: int) -> str:
    return _encode(d * 2654435761 % 27**10 + 27**9, 10)


def _uid(kind: int, i: int) -> str:
    return str(uuid.UUID(int=(0x5C4ED << 104) | (kind << 64) | i))


def _node_name(i: int) -> str:
    return f"node-{i:05d}"


def _pod_ip(r: int) -> str:
    return f"10.{64 + (r >> 16) % 64}.{(r >> 8) & 255}.{r & 255}"


def _node_ip(i: int) -> str:
    return f"172.20.{(i >> 8) & 255}.{i & 255}" if i < 65536 else f"172.21.{(i >> 8) & 255}.{i & 255}"


def _image_id(image: str) -> str:
    repo = image.rsplit(":", 1)[0]
    digest = f"{abs(hash_str(image)):064x}"[-64:]
    return f"{repo}@sha256:{digest}"


def hash_str(s: str) -> int:
    """A stable string hash (Python's ``hash`` is salted per process)."""
    h = 1469598103934665603
    for ch in s.encode():
        h = ((h ^ ch) * 1099511628211) & (2**64 - 1)
    return h


def _container(c: Container) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": c.name,
        "image": c.image,
        "imagePullPolicy": "IfNotPresent",
        "resources": {"requests": {"cpu": c.cpu, "memory": c.memory}, "limits": dict(c.limits)},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [],  # the service account's, per pod
    }
    if c.ports:
        out["ports"] = [{"name": n, "containerPort": p, "protocol": "TCP"} for n, p in c.ports]
    if c.env:
        out["env"] = [{"name": k, "value": v} for k, v in c.env]
    if c.probe_port is not None:
        out["readinessProbe"] = {"tcpSocket": {"port": c.probe_port}, "periodSeconds": 10}
    return out


def pod(shape: DenseShape, d: int, replica: int, node: int | None, r: int) -> dict[str, Any]:
    """Replica ``replica`` of Deployment ``d``, running on node ``node`` (None: pending); ``r``
    numbers the pod in the dump (its uid and IP)."""
    t = _template(d)
    app = _app(d)
    ns = _namespace(d)
    rs = f"{app}-{_hash(d)}"
    name = f"{rs}-{_encode(replica * 40507 + d, 5)}"
    token = f"kube-api-access-{_encode(r * 7 + 3, 5)}"
    mount = {"name": token, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}
    containers = []
    for c in t.containers:
        cd = _container(c)
        cd["volumeMounts"] = [dict(mount)]
        containers.append(cd)
    spec: dict[str, Any] = {
        "containers": containers,
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
        ],
        "volumes": [
            {
                "name": token,
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {
                            "configMap": {
                                "name": "kube-root-ca.crt",
                                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                            }
                        },
                        {
                            "downwardAPI": {
                                "items": [
                                    {
                                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                        "path": "namespace",
                                    }
                                ]
                            }
                        },
                    ],
                },
            }
        ],
    }
    if t.init_containers:
        inits = []
        for c in t.init_containers:
            cd = _container(c)
            cd["volumeMounts"] = [dict(mount)]
            inits.append(cd)
        spec["initContainers"] = inits
    if anti_affinity(d):
        spec["affinity"] = {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": app}},
                            "topologyKey": "kubernetes.io/hostname",
                        },
                    }
                ]
            }
        }
    if spread(d):
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    status: dict[str, Any]
    if node is not None:
        spec["nodeName"] = _node_name(node)
        ip = _pod_ip(r)
        status = {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True", "lastProbeTime": None, "lastTransitionTime": _STARTED}
            ],
            "hostIP": _node_ip(node),
            "podIP": ip,
            "qosClass": "Burstable",
            "startTime": _STARTED,
        }
    else:
        status = {"phase": "Pending", "qosClass": "Burstable"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"{rs}-",
            "namespace": ns,
            "uid": _uid(1, r),
            "resourceVersion": str(100000 + r),
            "creationTimestamp": _CREATED if node is not None else _PENDING_CREATED,
            "labels": {
                "app": app,
                "app.kubernetes.io/name": t.name,
                "app.kubernetes.io/part-of": ns,
                "tier": t.tier,
                "pod-template-hash": _hash(d),
            },
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-01-05T07:59:00Z"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": rs,
                    "uid": _uid(2, d),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
        "status": status,
    }


def node(shape: DenseShape, i: int) -> dict[str, Any]:
    name = _node_name(i)
    zone = ZONES[i % len(ZONES)]
    cpu_cores = max(32, math.ceil(shape.pods_per_node * _MAX_CPU_M / 1000) + 2)
    mem_gi = max(128, math.ceil(shape.pods_per_node * _MAX_MEM_MI / 1024) + 8)
    max_pods = max(110, shape.pods_per_node + 20)
    capacity = {
        "cpu": str(cpu_cores),
        "ephemeral-storage": "104845292Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{mem_gi * 1024 * 1024}Ki",
        "pods": str(max_pods),
    }
    allocatable = {
        "cpu": f"{cpu_cores * 1000 - 250}m",
        "ephemeral-storage": "95551679124",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{mem_gi * 1024 * 1024 - 1_800_000}Ki",
        "pods": str(max_pods),
    }
    templates = sorted(
        {
            shape.deployment_of_running(i * shape.pods_per_node + j) % DEPLOYMENTS_PER_NAMESPACE
            for j in range(shape.pods_per_node)
        }
    )
    held: list[tuple[list[str], int]] = [(list(n), size) for n, size in _SYSTEM_IMAGES]
    for ti in templates:
        t = TEMPLATES[ti % len(TEMPLATES)]
        for c in (*t.containers, *t.init_containers):
            held.append(([_image_id(c.image), c.image], c.image_bytes))
    held.sort(key=lambda im: -im[1])  # the kubelet reports the largest first
    images = [{"names": n, "sizeBytes": size} for n, size in held]
    conditions = [
        {
            "type": t_,
            "status": "False",
            "reason": reason,
            "message": message,
            "lastHeartbeatTime": "2026-01-06T11:59:30Z",
            "lastTransitionTime": _CREATED,
        }
        for t_, reason, message in (
            ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        )
    ]
    conditions.append(
        {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": "2026-01-06T11:59:30Z",
            "lastTransitionTime": _CREATED,
        }
    )
    ip = _node_ip(i)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": _uid(3, i),
            "resourceVersion": str(5000000 + i),
            "creationTimestamp": _CREATED,
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/instance-type": INSTANCE_TYPE,
                "beta.kubernetes.io/os": "linux",
                "failure-domain.beta.kubernetes.io/region": REGION,
                "failure-domain.beta.kubernetes.io/zone": zone,
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": INSTANCE_TYPE,
                "pool": f"pool-{i % 3}",
                "topology.kubernetes.io/region": REGION,
                "topology.kubernetes.io/zone": zone,
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "podCIDR": f"10.{64 + i // 256 % 64}.{i % 256}.0/24",
            "podCIDRs": [f"10.{64 + i // 256 % 64}.{i % 256}.0/24"],
            "providerID": f"aws:///{zone}/i-{i:017x}",
        },
        "status": {
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "allocatable": allocatable,
            "capacity": capacity,
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": _uid(4, i),
                "containerRuntimeVersion": "containerd://2.0.5",
                "kernelVersion": "6.1.128",
                "kubeProxyVersion": "v1.35.4",
                "kubeletVersion": "v1.35.4",
                "machineID": f"{i:032x}",
                "operatingSystem": "linux",
                "osImage": "Linux 6.1",
                "systemUUID": _uid(5, i),
            },
        },
    }


def _namespace_obj(n: int) -> dict[str, Any]:
    name = f"team-{n:03d}"
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "uid": _uid(6, n),
            "creationTimestamp": _CREATED,
            "labels": {"kubernetes.io/metadata.name": name},
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def _replicas(shape: DenseShape, d: int) -> int:
    running = shape.running // shape.deployments + (1 if d < shape.running % shape.deployments else 0)
    pending = shape.pending // shape.deployments + (1 if d < shape.pending % shape.deployments else 0)
    return running + pending


def _replica_set(shape: DenseShape, d: int) -> dict[str, Any]:
    app = _app(d)
    h = _hash(d)
    n = _replicas(shape, d)
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{app}-{h}",
            "namespace": _namespace(d),
            "uid": _uid(2, d),
            "creationTimestamp": _CREATED,
            "labels": {"app": app, "pod-template-hash": h},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": app,
                    "uid": _uid(7, d),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": n,
            "selector": {"matchLabels": {"app": app, "pod-template-hash": h}},
            "template": {"metadata": {"labels": {"app": app, "pod-template-hash": h}}},
        },
        "status": {"replicas": n, "readyReplicas": shape.running // shape.deployments},
    }


def _service(d: int) -> dict[str, Any]:
    t = _template(d)
    app = _app(d)
    ports = [p for c in t.containers for p in c.ports] or [("metrics", 9090)]
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": app,
            "namespace": _namespace(d),
            "uid": _uid(8, d),
            "creationTimestamp": _CREATED,
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": f"10.96.{d // 256 % 256}.{d % 256}",
            "selector": {"app": app},
            "ports": [{"name": n, "port": p, "targetPort": p, "protocol": "TCP"} for n, p in ports],
        },
    }


def objects(shape: DenseShape) -> Iterator[dict[str, Any]]:
    """The dump's objects, in ``kubectl get nodes,namespaces,services,replicasets,pods -A`` order."""
    for i in range(shape.nodes):
        yield node(shape, i)
    for n in range(shape.namespaces):
        yield _namespace_obj(n)
    for d in range(shape.deployments):
        yield _service(d)
    for d in range(shape.deployments):
        yield _replica_set(shape, d)
    per = shape.pods_per_node
    for i in range(shape.nodes):
        for j in range(per):
            r = i * per + j
            yield pod(shape, shape.deployment_of_running(r), r // shape.deployments, i, r)
    base = -(-shape.running // shape.deployments)  # replica numbers after the running ones
    for k in range(shape.pending):
        yield pod(
            shape, shape.deployment_of_pending(k), base + k // shape.deployments, None, shape.running + k
        )


def write_dump(path: str | Path, shape: DenseShape, fmt: str | None = None) -> int:
    """Write the cluster as one ``kind: List`` to ``path``: ``json`` compact, one object per line
    (sorted keys, as ``kubectl get -o json | jq -c`` would put them), ``yaml`` as ``kubectl get -o
    yaml`` prints it; by default from the file's suffix (.yaml/.yml: YAML). Returns the bytes
    written."""
    path = Path(path)
    if fmt is None:
        fmt = "yaml" if path.suffix in (".yaml", ".yml") else "json"
    with path.open("w", encoding="utf-8") as f:
        if fmt == "yaml":
            _write_yaml(f, shape)
        elif fmt == "json":
            _write_json(f, shape)
        else:
            raise ValueError(f"unknown dump format {fmt!r}: json or yaml")
    return path.stat().st_size


def _write_json(f: IO[str], shape: DenseShape) -> None:
    f.write('{"apiVersion":"v1","items":[')
    sep = "\n"
    for obj in objects(shape):
        f.write(sep)
        f.write(json.dumps(obj, separators=(",", ":"), sort_keys=True))
        sep = ",\n"
    f.write('\n],"kind":"List","metadata":{"resourceVersion":""}}\n')


def _write_yaml(f: IO[str], shape: DenseShape) -> None:
    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    f.write("apiVersion: v1\nitems:\n")
    for obj in objects(shape):
        f.write(yaml.dump([obj], Dumper=dumper, default_flow_style=False, sort_keys=True))
    f.write('kind: List\nmetadata:\n  resourceVersion: ""\n')
