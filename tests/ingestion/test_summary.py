"""Snapshot summaries: node capacity and load in scheduler units, pod states, namespaces, the rest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedviz.engine.errors import InputError
from schedviz.ingestion.parsing import parse_upload
from schedviz.ingestion.summary import summarize
from tests.engine.builders import container, node, pod

GiB = 1024**3
MiB = 1024**2
SAMPLE = Path(__file__).resolve().parents[2] / "schedviz" / "samples" / "cluster.yaml"


def objects() -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}},
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
        node(
            "a",
            cpu="4",
            memory="8Gi",
            labels={"topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1"},
            extra={"nvidia.com/gpu": "2", "ephemeral-storage": "100Gi"},
        ),
        node(
            "b",
            labels={"failure-domain.beta.kubernetes.io/zone": "old-zone"},
            taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}],
            unschedulable=True,
        ),
        # on a: init container (2 CPU) dominates the 500m app container; memory from the app
        pod("init", node_name="a", cpu="500m", memory="1Gi", initContainers=[container("setup", cpu="2")]),
        # on a: no requests at all (counts 100m / 200Mi for scoring only)
        pod("bare", node_name="a", namespace="prod", priorityClassName="high"),
        # on a: an extended resource only
        pod("gpu", node_name="a", containers=[container(extra={"nvidia.com/gpu": "1"})]),
        # on a but finished: not counted
        pod("done", node_name="a", cpu="3", phase="Succeeded"),
        pod("web", cpu="250m", memory="64Mi", priority=5, schedulerName="custom"),
        pod("gated", schedulingGates=[{"name": "wait"}], priorityClassName="missing"),
        pod("lost", node_name="ghost", cpu="1"),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "prod"}, "spec": {}},
    ]


def test_nodes_allocatable_and_requested_in_scheduler_units() -> None:
    s = summarize(objects())
    a, b = s["nodes"]
    assert a["name"] == "a" and a["zone"] == "z1" and a["region"] == "r1"
    assert a["allocatable"] == {
        "cpu": 4000,
        "memory": 8 * GiB,
        "pods": 110,
        "nvidia.com/gpu": 2,
        "ephemeral-storage": 100 * GiB,
    }
    assert a["requested"] == {
        "cpu": 2000,
        "memory": 1 * GiB,
        "nvidia.com/gpu": 1,
        "ephemeral-storage": 0,
        "pods": 3,
    }
    # non-zero requests (what scoring uses): bare and gpu count 100m and 200Mi each
    assert a["nonZeroRequested"] == {"cpu": 2000 + 100 + 100, "memory": 1 * GiB + 2 * 200 * MiB}
    assert a["podCount"] == 3 and a["unschedulable"] is False and a["taints"] == []
    assert b["zone"] == "old-zone" and b["region"] == ""
    assert b["requested"] == {"cpu": 0, "memory": 0, "pods": 0}
    assert b["unschedulable"] is True
    assert b["taints"] == [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]
    assert b["labels"] == {
        "kubernetes.io/hostname": "b",
        "failure-domain.beta.kubernetes.io/zone": "old-zone",
    }
    json.dumps(s)  # JSON-serialisable throughout (no numpy integers)


def test_pods_states_requests_priorities() -> None:
    pods = {p["name"]: p for p in summarize(objects())["pods"]}
    assert [p for p in pods] == ["init", "bare", "gpu", "done", "web", "gated", "lost"]
    assert {n: p["state"] for n, p in pods.items()} == {
        "init": "running",
        "bare": "running",
        "gpu": "running",
        "done": "finished",
        "web": "pending",
        "gated": "pending",
        "lost": "running",
    }
    assert pods["init"]["requests"] == {"cpu": 2000, "memory": 1 * GiB}
    assert pods["init"]["node"] == "a" and pods["web"]["node"] is None
    assert pods["bare"]["key"] == "prod/bare" and pods["bare"]["namespace"] == "prod"
    assert pods["bare"]["priority"] == 1000 and pods["bare"]["priorityClassName"] == "high"
    assert pods["web"]["priority"] == 5 and pods["web"]["schedulerName"] == "custom"
    assert pods["web"]["requests"] == {"cpu": 250, "memory": 64 * MiB}
    assert pods["gpu"]["requests"] == {"nvidia.com/gpu": 1}
    assert pods["gated"]["schedulingGates"] == ["wait"] and pods["gated"]["priority"] == 0
    assert pods["done"]["phase"] == "Succeeded"


def test_counts_kinds_namespaces_objects_and_warnings() -> None:
    s = summarize(objects())
    assert s["counts"] == {
        "nodes": 2,
        "pods": 7,
        "running": 4,
        "pending": 2,
        "finished": 1,
        "namespaces": 2,
        "objects": 2,
    }
    assert s["kinds"] == {"Namespace": 1, "PriorityClass": 1, "Node": 2, "Pod": 7, "Service": 1}
    assert s["namespaces"] == [
        {"name": "prod", "labels": {"env": "prod"}, "declared": True, "podCount": 1},
        {"name": "default", "labels": {}, "declared": False, "podCount": 6},
    ]
    assert s["objects"] == [
        {"kind": "PriorityClass", "key": "high", "name": "high", "namespace": ""},
        {"kind": "Service", "key": "prod/svc", "name": "svc", "namespace": "prod"},
    ]
    assert len(s["warnings"]) == 2
    assert "Pod default/gated names PriorityClass missing" in s["warnings"][0]  # in pod order
    assert "Pod default/lost is bound to node ghost" in s["warnings"][1]


def test_sample_cluster_summary_is_consistent_with_its_objects() -> None:
    parsed = parse_upload(SAMPLE.read_bytes(), "cluster.yaml")
    s = summarize(parsed.objects)
    pods = [o for o in parsed.objects if o["kind"] == "Pod"]
    nodes = {o["metadata"]["name"] for o in parsed.objects if o["kind"] == "Node"}
    finished = [p for p in pods if (p.get("status") or {}).get("phase") in ("Succeeded", "Failed")]
    bound = [p for p in pods if p["spec"].get("nodeName") and p not in finished]
    assert s["counts"]["pods"] == len(pods) and s["counts"]["nodes"] == len(nodes)
    assert s["counts"]["finished"] == len(finished)
    assert s["counts"]["running"] == len(bound)
    assert sum(n["podCount"] for n in s["nodes"]) == sum(p["spec"]["nodeName"] in nodes for p in bound)
    assert s["kinds"] == parsed.kinds()


def test_invalid_objects_raise_the_engine_error() -> None:
    with pytest.raises(InputError, match=r"status\.allocatable\.cpu"):
        summarize([node("x", cpu="lots")])
