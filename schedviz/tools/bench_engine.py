"""A synthetic cluster for measuring replay speed (``schedviz bench``).

The cluster is fixed so that figures compare with the real kube-scheduler's on the same input:
nodes in 4 zones, 32 CPU / 128Gi / 110 pods each, labelled with hostname, instance type and pool;
two running pods per node (250m/512Mi and 500m/1Gi) spread over 20 ``app`` labels; pending pods
requesting 100m-1000m CPU and 128Mi-1Gi memory, every second one with a preferred pod
anti-affinity (weight 100, its own app, hostname topology) and every fourth one with a zone
topology spread constraint (maxSkew 1, DoNotSchedule).

Each size runs in its own process so that the peak resident memory it reports is its own.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from typing import Any

from schedviz.engine.loader import Snapshot
from schedviz.engine.objects import Node, Pod
from schedviz.engine.runtime.replay import Replay, ReplayOptions

ZONES = ("zone-a", "zone-b", "zone-c", "zone-d")
APPS = 20


def synthetic_cluster(num_nodes: int, num_pods: int) -> Snapshot:
    nodes: list[Node] = []
    pods: list[Pod] = []
    idx = 0
    for i in range(num_nodes):
        name = f"node-{i:05d}"
        nodes.append(
            Node(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": name,
                        "labels": {
                            "kubernetes.io/hostname": name,
                            "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
                            "node.kubernetes.io/instance-type": "m5.8xlarge",
                            "pool": f"pool-{i % 3}",
                        },
                    },
                    "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}},
                }
            )
        )
        for j, (cpu, mem) in enumerate((("250m", "512Mi"), ("500m", "1Gi"))):
            pods.append(Pod(_pod(f"run-{i}-{j}", f"app-{(2 * i + j) % APPS}", cpu, mem, node=name), idx))
            idx += 1
    for k in range(num_pods):
        cpu = f"{100 + (k * 37) % 901}m"
        mem = f"{128 + (k * 53) % 897}Mi"
        app = f"app-{k % APPS}"
        raw = _pod(f"pend-{k:05d}", app, cpu, mem)
        spec = raw["spec"]
        if k % 2 == 1:
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
        if k % 4 == 3:
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": app}},
                }
            ]
        pods.append(Pod(raw, idx))
        idx += 1
    return Snapshot(nodes=nodes, pods=pods, name=f"synthetic-{num_nodes}x{num_pods}")


def _pod(name: str, app: str, cpu: str, mem: str, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "image": f"registry.example/{app}:1",
                "resources": {"requests": {"cpu": cpu, "memory": mem}},
            }
        ]
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "labels": {"app": app},
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": spec,
    }


def measure(num_nodes: int, num_pods: int, all_nodes: bool) -> dict[str, Any]:
    """Replay the synthetic cluster in this process; the full trace is kept in memory."""
    snap = synthetic_cluster(num_nodes, num_pods)
    rp = Replay(snap, options=ReplayOptions(all_nodes=all_nodes))
    t0 = time.perf_counter()
    trace = rp.run()
    elapsed = time.perf_counter() - t0
    scheduled = sum(1 for c in trace.cycles if c.result == "Scheduled")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "nodes": num_nodes,
        "pods": num_pods,
        "scheduled": scheduled,
        "mode": "every node" if all_nodes else "default sampling",
        "seconds": round(elapsed, 3),
        "podsPerSecond": round(num_pods / elapsed, 1) if elapsed > 0 else 0.0,
        "peakMemoryBytes": peak,
    }


def run_bench(num_nodes: int, num_pods: int, all_nodes: bool = True) -> dict[str, Any]:
    """Measure one size in a fresh interpreter."""
    cmd = [
        sys.executable,
        "-m",
        "schedviz.tools.bench_engine",
        str(num_nodes),
        str(num_pods),
        "1" if all_nodes else "0",
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


if __name__ == "__main__":
    n, m, every = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
    print(json.dumps(measure(n, m, every)))
