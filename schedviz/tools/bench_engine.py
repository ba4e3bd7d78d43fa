"""A synthetic cluster for measuring replay speed (``schedviz bench``).

Two shapes. The sparse one (the default) is fixed so that figures compare with the real
kube-scheduler's on the same input:
nodes in 4 zones, 32 CPU / 128Gi / 110 pods each, labelled with hostname, instance type and pool;
two running pods per node (250m/512Mi and 500m/1Gi) spread over 20 ``app`` labels; pending pods
requesting 100m-1000m CPU and 128Mi-1Gi memory, every second one with a preferred pod
anti-affinity (weight 100, its own app, hostname topology) and every fourth one with a zone
topology spread constraint (maxSkew 1, DoNotSchedule). It is built in memory; its figures are the
replay's cycles (``seconds``, ``podsPerSecond``), with the replay's construction as the ``index``
phase.

The dense one (``--pods-per-node K``, ``dense_cluster.py``) is a production-shaped cluster of
Deployment-made pods, written to a temporary file as a JSON ``kind: List`` and measured as the
command line meets it, in three phases:

- ``load``: reading and parsing the dump (``load_paths``, as ``schedviz replay`` does: JSON
  decoding, the API server's validation, the typed objects); ``--yaml`` also loads its YAML form, in
  a process of its own;
- ``index``: building the replay's cluster state and indexes (``Replay(...)`` and its scheduling
  queue, up to the first cycle);
- ``replay``: the cycles, the full trace kept in memory (not serialised); its first cycle is also
  reported apart (``firstCycleSeconds``: it builds what plugins index lazily, such as the affinity
  terms of every running pod), with the pods per second of the cycles after it.

Each phase reports its seconds, pods per second (``load`` and ``index``: every pod of the dump,
running and pending; ``replay``: pending pods) and the process's peak resident memory at its end
(a high-water mark: it includes the phases before).

Each size runs in its own process so that the peak resident memory it reports is its own.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from schedviz.engine.loader import Snapshot, load_paths
from schedviz.engine.objects import Node, Pod
from schedviz.engine.runtime.replay import Replay, ReplayOptions
from schedviz.engine.trace import CycleRecord, ReplayTrace

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


def _peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _phase(seconds: float, pods: int) -> dict[str, Any]:
    return {
        "seconds": round(seconds, 3),
        "podsPerSecond": round(pods / seconds, 1) if seconds > 0 else 0.0,
        "peakMemoryBytes": _peak(),
    }


def _mode(all_nodes: bool) -> str:
    return "every node" if all_nodes else "default sampling"


def _index(snap: Snapshot, all_nodes: bool) -> Replay:
    """The replay built up to its first cycle: cluster state, plugins' indexes, scheduling queue."""
    rp = Replay(snap, options=ReplayOptions(all_nodes=all_nodes))
    rp.scheduling_queue()
    return rp


def _run(rp: Replay, num_pods: int) -> tuple[ReplayTrace, dict[str, Any]]:
    """The replay phase; its first cycle apart too (it builds what plugins index lazily, e.g. the
    affinity terms of the running pods), and the pods per second after it."""
    first: list[float] = []
    t0 = time.perf_counter()

    def on_cycle(rec: CycleRecord) -> None:
        if not first:
            first.append(time.perf_counter() - t0)

    trace = rp.run(on_cycle)
    elapsed = time.perf_counter() - t0
    phase = _phase(elapsed, num_pods)
    if first:
        phase["firstCycleSeconds"] = round(first[0], 3)
        rest = elapsed - first[0]
        phase["podsPerSecondAfterFirst"] = (
            round((num_pods - 1) / rest, 1) if rest > 0 and num_pods > 1 else 0.0
        )
    return trace, phase


def measure(num_nodes: int, num_pods: int, all_nodes: bool) -> dict[str, Any]:
    """Replay the sparse synthetic cluster in this process; the full trace is kept in memory."""
    snap = synthetic_cluster(num_nodes, num_pods)
    t0 = time.perf_counter()
    rp = _index(snap, all_nodes)
    index = _phase(time.perf_counter() - t0, len(snap.pods))
    trace, replay = _run(rp, num_pods)
    scheduled = sum(1 for c in trace.cycles if c.result == "Scheduled")
    return {
        "nodes": num_nodes,
        "pods": num_pods,
        "scheduled": scheduled,
        "mode": _mode(all_nodes),
        "seconds": replay["seconds"],
        "podsPerSecond": replay["podsPerSecond"],
        "peakMemoryBytes": _peak(),
        "phases": {"index": index, "replay": replay},
    }


def measure_dense(path: str, num_pods: int, all_nodes: bool) -> dict[str, Any]:
    """Load the dump at ``path``, build the replay and run it, in this process; the full trace is
    kept in memory."""
    t0 = time.perf_counter()
    snap = load_paths([path], freeze=True)  # as `schedviz replay` reads it
    total = len(snap.pods)
    load = _phase(time.perf_counter() - t0, total)
    t0 = time.perf_counter()
    rp = _index(snap, all_nodes)
    index = _phase(time.perf_counter() - t0, total)
    trace, replay = _run(rp, num_pods)
    return {
        "runningPods": total - len(snap.pending),
        "scheduled": sum(1 for c in trace.cycles if c.result == "Scheduled"),
        "seconds": replay["seconds"],
        "podsPerSecond": replay["podsPerSecond"],
        "peakMemoryBytes": _peak(),
        "phases": {"load": load, "index": index, "replay": replay},
    }


def measure_load(path: str) -> dict[str, Any]:
    """Only load the dump at ``path`` (the YAML form's figures)."""
    t0 = time.perf_counter()
    snap = load_paths([path])
    return _phase(time.perf_counter() - t0, len(snap.pods))


def _child(*args: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "schedviz.tools.bench_engine", *args]
    out = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if out.returncode != 0:
        tail = "\n".join(out.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"the measuring process failed (exit status {out.returncode}): {tail}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def run_bench(
    num_nodes: int,
    num_pods: int,
    all_nodes: bool = True,
    pods_per_node: int | None = None,
    yaml_form: bool = False,
    tmpdir: str | None = None,
) -> dict[str, Any]:
    """Measure one size in a fresh interpreter: the sparse cluster, or with ``pods_per_node`` the
    dense one (its dump written under ``tmpdir`` and removed after; ``yaml_form``: its YAML form
    loaded too, in another fresh interpreter)."""
    every = "1" if all_nodes else "0"
    if pods_per_node is None:
        return _child(str(num_nodes), str(num_pods), every)
    from .dense_cluster import DenseShape, write_dump

    shape = DenseShape(num_nodes, pods_per_node, num_pods)
    result: dict[str, Any] = {
        "nodes": num_nodes,
        "podsPerNode": pods_per_node,
        "pods": num_pods,
        "mode": _mode(all_nodes),
    }
    with tempfile.TemporaryDirectory(prefix="schedviz-bench-", dir=tmpdir) as tmp:
        path = Path(tmp) / "dump.json"
        result["dumpBytes"] = write_dump(path, shape)
        result.update(_child("dense", str(path), str(num_pods), every))
        path.unlink()
        if yaml_form:
            ypath = Path(tmp) / "dump.yaml"
            size = write_dump(ypath, shape)
            result["phases"]["loadYaml"] = {**_child("load", str(ypath)), "dumpBytes": size}
    return result


def summary(r: dict[str, Any]) -> str:
    """One size's figures as text."""
    mib = 2**20
    if "podsPerNode" not in r:
        return (
            f"{r['nodes']:>6} nodes x {r['pods']} pods: {r['podsPerSecond']:8.1f} pods/s, "
            f"peak memory {r['peakMemoryBytes'] / mib:8.1f} MiB ({r['mode']})"
        )
    lines = [
        f"{r['nodes']:>6} nodes x {r['podsPerNode']} pods per node + {r['pods']} pending "
        f"({r['mode']}; dump {r['dumpBytes'] / 1e6:.0f} MB, {r['runningPods']} running pods, "
        f"{r['scheduled']} scheduled):"
    ]
    for name, label in (
        ("load", "load"),
        ("loadYaml", "load (YAML)"),
        ("index", "index"),
        ("replay", "replay"),
    ):
        ph = r["phases"].get(name)
        if ph is None:
            continue
        line = (
            f"    {label:<12} {ph['seconds']:9.2f} s {ph['podsPerSecond']:10.1f} pods/s   "
            f"peak memory {ph['peakMemoryBytes'] / mib:8.1f} MiB"
        )
        if "firstCycleSeconds" in ph:
            line += f"   (first cycle {ph['firstCycleSeconds']:.2f} s, then {ph['podsPerSecondAfterFirst']:.1f} pods/s)"
        lines.append(line)
    return "\n".join(lines)


def _main(argv: list[str]) -> None:
    if argv[0] == "dense":
        out = measure_dense(argv[1], int(argv[2]), argv[3] == "1")
    elif argv[0] == "load":
        out = measure_load(argv[1])
    else:
        out = measure(int(argv[0]), int(argv[1]), argv[2] == "1")
    print(json.dumps(out))


if __name__ == "__main__":
    _main(sys.argv[1:])
