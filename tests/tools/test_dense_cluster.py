"""The dense synthetic cluster of ``schedviz bench --pods-per-node`` (schedviz/tools/dense_cluster.py)
and the bench's phases, on small instances."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from schedviz.cli import main
from schedviz.engine import load_paths
from schedviz.tools.bench_engine import run_bench, summary
from schedviz.tools.dense_cluster import TEMPLATES, DenseShape, objects, write_dump

SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
DEFAULT_TOLERATIONS = [
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
]


def _pods(shape: DenseShape) -> list[dict[str, Any]]:
    return [o for o in objects(shape) if o["kind"] == "Pod"]


def test_every_node_runs_pods_per_node_pods_and_the_pending_ones_are_extra() -> None:
    shape = DenseShape(nodes=12, pods_per_node=7, pending=16)
    pods = _pods(shape)
    per_node = Counter(p["spec"].get("nodeName") for p in pods)
    assert per_node.pop(None) == 16
    assert len(per_node) == 12 and set(per_node.values()) == {7}
    running = [p for p in pods if p["spec"].get("nodeName")]
    assert all(p["status"]["phase"] == "Running" for p in running)
    assert all(p["status"]["phase"] == "Pending" for p in pods if not p["spec"].get("nodeName"))
    # scattered: no node runs two replicas of one Deployment (pods_per_node <= Deployments)
    for n in per_node:
        apps = [p["metadata"]["labels"]["app"] for p in running if p["spec"]["nodeName"] == n]
        assert len(apps) == len(set(apps))
    keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods]
    assert len(set(keys)) == len(keys)
    assert len({p["metadata"]["uid"] for p in pods}) == len(pods)


def test_pods_are_shaped_as_deployments_make_them() -> None:
    shape = DenseShape(nodes=8, pods_per_node=6, pending=8)
    objs = list(objects(shape))
    replica_sets = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objs if o["kind"] == "ReplicaSet"
    }
    services = [o for o in objs if o["kind"] == "Service"]
    assert len(replica_sets) == len(services) == shape.deployments
    images = {c.image for t in TEMPLATES for c in (*t.containers, *t.init_containers)}
    for p in (o for o in objs if o["kind"] == "Pod"):
        md, spec = p["metadata"], p["spec"]
        (owner,) = md["ownerReferences"]
        assert owner["kind"] == "ReplicaSet" and owner["controller"] is True
        rs = replica_sets[(md["namespace"], owner["name"])]
        assert rs["metadata"]["uid"] == owner["uid"]
        assert rs["spec"]["selector"]["matchLabels"].items() <= md["labels"].items()
        assert md["name"].startswith(md["generateName"]) and md["labels"]["pod-template-hash"]
        assert spec["tolerations"] == DEFAULT_TOLERATIONS
        (vol,) = spec["volumes"]
        assert vol["name"].startswith("kube-api-access-")
        sources = vol["projected"]["sources"]
        assert sources[0]["serviceAccountToken"]["path"] == "token"
        for c in [*spec["containers"], *spec.get("initContainers", [])]:
            assert c["image"] in images
            assert {"cpu", "memory"} <= c["resources"]["requests"].keys() and c["resources"]["limits"]
            assert c["volumeMounts"] == [{"name": vol["name"], "mountPath": SA_MOUNT, "readOnly": True}]
    nodes = [o for o in objs if o["kind"] == "Node"]
    assert len(nodes) == 8
    for n in nodes:
        assert n["metadata"]["labels"]["topology.kubernetes.io/zone"]
        assert len(n["status"]["images"]) > 3  # the system's and its pods' images


def test_half_the_pods_have_anti_affinity_and_a_quarter_a_zone_spread() -> None:
    shape = DenseShape(nodes=16, pods_per_node=4, pending=32)  # 8 Deployments: 64 running pods, 32 pending
    pods = _pods(shape)
    for group in (
        [p for p in pods if p["spec"].get("nodeName")],
        [p for p in pods if not p["spec"].get("nodeName")],
    ):
        anti = [p for p in group if "affinity" in p["spec"]]
        spread = [p for p in group if "topologySpreadConstraints" in p["spec"]]
        assert len(anti) * 2 == len(group) and len(spread) * 4 == len(group)
        for p in anti:
            (term,) = p["spec"]["affinity"]["podAntiAffinity"][
                "preferredDuringSchedulingIgnoredDuringExecution"
            ]
            assert term["weight"] == 100
            assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
            assert term["podAffinityTerm"]["labelSelector"] == {
                "matchLabels": {"app": p["metadata"]["labels"]["app"]}
            }
        for p in spread:
            (c,) = p["spec"]["topologySpreadConstraints"]
            assert (c["maxSkew"], c["topologyKey"], c["whenUnsatisfiable"]) == (
                1,
                "topology.kubernetes.io/zone",
                "DoNotSchedule",
            )


def test_the_dump_loads_as_json_and_as_yaml_and_is_deterministic(tmp_path: Path) -> None:
    shape = DenseShape(nodes=6, pods_per_node=5, pending=4)
    j1, j2, y = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.yaml"
    write_dump(j1, shape)
    write_dump(j2, shape)
    write_dump(y, shape)
    assert j1.read_bytes() == j2.read_bytes()
    doc = json.loads(j1.read_text())
    assert doc["kind"] == "List" and doc["apiVersion"] == "v1"
    snap = load_paths([j1])  # the API server's validation included
    assert (len(snap.nodes), len(snap.running), len(snap.pending)) == (6, 30, 4)
    assert {o.kind for o in snap.objects} == {"Namespace", "Service", "ReplicaSet"}
    from_yaml = load_paths([y])
    assert [p.raw for p in from_yaml.pods] == [p.raw for p in snap.pods]
    assert [n.raw for n in from_yaml.nodes] == [n.raw for n in snap.nodes]


def test_the_dense_bench_reports_load_index_and_replay_phases() -> None:
    r = run_bench(10, 6, all_nodes=True, pods_per_node=3)
    assert (r["nodes"], r["podsPerNode"], r["pods"], r["runningPods"], r["mode"]) == (
        10,
        3,
        6,
        30,
        "every node",
    )
    assert r["scheduled"] == 6 and r["dumpBytes"] > 0
    assert set(r["phases"]) == {"load", "index", "replay"}
    for ph in r["phases"].values():
        assert ph["seconds"] > 0 and ph["podsPerSecond"] > 0 and ph["peakMemoryBytes"] > 0
    assert r["seconds"] == r["phases"]["replay"]["seconds"]
    assert r["peakMemoryBytes"] >= r["phases"]["load"]["peakMemoryBytes"]
    text = summary(r)
    assert "3 pods per node" in text and "load" in text and "index" in text and "replay" in text


def test_bench_dump_writes_a_reusable_dump(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "dense.json"
    assert main(["bench", "--nodes", "4", "--pods-per-node", "3", "--pods", "2", "--dump", str(out)]) == 0
    snap = load_paths([out])
    assert (len(snap.nodes), len(snap.running), len(snap.pending)) == (4, 12, 2)
    assert main(["bench", "--nodes", "4", "--nodes", "5", "--dump", str(out)]) == 2
    assert "one --nodes" in capsys.readouterr().err
