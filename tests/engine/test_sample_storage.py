"""The bundled sample cluster's storage and DRA cases (scripts/generate_sample.py) replay as intended.

Each case is set up so that one rule decides it: the expected outcomes follow from the objects the
generator writes (see its comments), not from a previous run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from schedviz.engine.loader import load_paths
from schedviz.engine.runtime.replay import Replay, ReplayOptions
from schedviz.engine.trace import CycleRecord, ReplayTrace

SAMPLE = Path(__file__).resolve().parents[2] / "schedviz" / "samples" / "cluster.yaml"


@pytest.fixture(scope="module")
def trace() -> ReplayTrace:
    # The cases were laid out with preemption as a dry run (batch/etl-export's preemption of
    # batch/etl-0 would otherwise free gen-1a-3 for the pods queued after it).
    return Replay(load_paths([SAMPLE]), options=ReplayOptions(preemption="dry-run")).run()


def details(c: CycleRecord, point: str, plugin: str) -> dict[str, Any]:
    for s in c.stages:
        if s.point == point and s.plugin == plugin:
            return s.details
    raise AssertionError(f"{c.pod}: no {point} stage of {plugin}")


def verdict(trace: ReplayTrace, c: CycleRecord, node: str) -> tuple[str, tuple[str, ...]]:
    i = trace.node_names.index(node)
    assert c.filter_plugins is not None and c.filter_reasons is not None
    plugin = c.filter_plugin_names[int(c.filter_plugins[i])] if c.filter_plugins[i] >= 0 else ""
    return plugin, trace.reasons[int(c.filter_reasons[i])] if c.filter_reasons[i] >= 0 else ()


def test_local_volume_binds_on_first_use(trace: ReplayTrace) -> None:
    # search-0's claim waits for its consumer; the only local-ssd PV is on big-1a.
    c = trace.cycle("shop/search-0")
    assert (c.result, c.selected_node) == ("Scheduled", "big-1a")
    groups = details(c, "Filter", "VolumeBinding")["nodes"]
    assert groups[0] == {
        "nodes": ["big-1a"],
        "nodeCount": 1,
        "passed": True,
        "claims": {"shop/search-index": {"bind": "local-ssd-big-1a"}},
    }
    assert details(c, "PreBind", "VolumeBinding") == {
        "bindings": [{"claim": "shop/search-index", "volume": "local-ssd-big-1a"}],
        "provisions": [],
    }


def test_second_local_claim_finds_the_pv_taken(trace: ReplayTrace) -> None:
    c = trace.cycle("shop/search-1")
    assert c.result == "Unschedulable"
    assert "16 node(s) didn't find available persistent volumes to bind" in (c.message or "")
    bind_conflict = ("VolumeBinding", ("node(s) didn't find available persistent volumes to bind",))
    assert verdict(trace, c, "gen-1a-1") == bind_conflict
    problem = 'no available PersistentVolume matches and StorageClass "local-ssd" has no provisioner'
    for group in details(c, "Filter", "VolumeBinding")["nodes"]:
        assert group["claims"] == {"shop/search-index-replica": {"problem": problem}}


def test_provisioned_volume_in_its_zone(trace: ReplayTrace) -> None:
    # gp3-1a provisions in eu-west-1a only: the pod lands there and its claim gets the node.
    c = trace.cycle("batch/ingest")
    assert c.result == "Scheduled" and c.selected_node in (
        "gen-1a-0",
        "gen-1a-1",
        "gen-1a-2",
        "big-1a",
        "spot-1a",
    )
    assert details(c, "PreBind", "VolumeBinding") == {
        "bindings": [],
        "provisions": [
            {"claim": "batch/ingest-buffer", "storageClass": "gp3-1a", "selectedNode": c.selected_node}
        ],
    }


def test_volume_zone_conflict(trace: ReplayTrace) -> None:
    # The archive volume lives in eu-west-1b; the pod must run in eu-west-1a.
    c = trace.cycle("shop/archive-reader")
    assert c.result == "Unschedulable"
    assert verdict(trace, c, "gen-1a-0") == ("VolumeZone", ("node(s) had no available volume zone",))
    assert verdict(trace, c, "big-1a") == ("VolumeZone", ("node(s) had no available volume zone",))
    assert verdict(trace, c, "gen-1b-0") == (
        "NodeAffinity",
        ("node(s) didn't match Pod's node affinity/selector",),
    )
    assert "5 node(s) had no available volume zone" in (c.message or "")


def test_csi_attach_limit(trace: ReplayTrace) -> None:
    # gen-1a-3's CSINode allows one EBS attachment, used by etl-0; preemption would evict etl-0 (priority -100).
    c = trace.cycle("batch/etl-export")
    assert c.result == "Unschedulable"
    assert verdict(trace, c, "gen-1a-3") == ("NodeVolumeLimits", ("node(s) exceed max volume count",))
    assert c.message_before_post_filter == (
        "0/21 nodes are available: 1 node(s) exceed max volume count, 1 node(s) were unschedulable, "
        "16 node(s) didn't match Pod's node affinity/selector, 3 node(s) had untolerated taint(s)."
    )
    assert c.nominated_node == "gen-1a-3" and c.post_filter["victims"] == ["batch/etl-0"]


def test_gpu_claim_from_a_template_is_allocated(trace: ReplayTrace) -> None:
    # An A100 with at least 40Gi: gpu-1a's is held by notebook-gpu, gpu-1c has an H100.
    c = trace.cycle("batch/inference-0")
    assert (c.result, c.selected_node) == ("Scheduled", "gpu-1b")
    claim = "batch/inference-0-gpu-7x2kq"
    assert details(c, "Reserve", "DynamicResources") == {
        "inFlight": [{"claim": claim, "devices": ["gpu.example.com/gpu-1b/gpu-0"]}]
    }
    assert details(c, "PreBind", "DynamicResources") == {
        "claims": [
            {
                "claim": claim,
                "devices": ["gpu.example.com/gpu-1b/gpu-0"],
                "newlyAllocated": True,
                "reservedFor": "batch/inference-0",
            }
        ]
    }


def test_the_only_h100_goes_to_the_first_claim(trace: ReplayTrace) -> None:
    a = trace.cycle("batch/finetune-a")
    assert (a.result, a.selected_node) == ("Scheduled", "gpu-1c")
    b = trace.cycle("batch/finetune-b")
    assert b.result == "Unschedulable"
    assert verdict(trace, b, "gpu-1c") == ("DynamicResources", ("cannot allocate all claims",))
    assert "12 cannot allocate all claims" in (b.message or "")
    groups = {tuple(g["nodes"]): g for g in details(b, "Filter", "DynamicResources")["nodes"]}
    assert groups[("gpu-1c",)]["requests"][0]["rejected"] == {
        "gpu.example.com/gpu-1c/gpu-0": "already allocated to batch/finetune-a"
    }
    assert groups[("gpu-1b",)]["requests"][0]["rejected"] == {
        "gpu.example.com/gpu-1b/gpu-0": "already allocated to batch/inference-0-gpu-7x2kq",
        "gpu.example.com/gpu-1b/gpu-1": "does not match the request's selectors",
    }


def test_stale_allocation_is_freed_by_post_filter(trace: ReplayTrace) -> None:
    # notebook-gpu is allocated on gpu-1a, which lacks the CPU; no pod holds the claim.
    c = trace.cycle("default/notebook")
    assert c.result == "Unschedulable"
    assert verdict(trace, c, "gpu-1a") == ("NodeResourcesFit", ("Insufficient cpu",))
    assert verdict(trace, c, "big-1a") == ("DynamicResources", ("resourceclaim not available on the node",))
    assert "deallocation of ResourceClaim completed" in (c.message or "")
    assert details(c, "PostFilter", "DynamicResources") == {"deallocated": "default/notebook-gpu"}


def test_pods_before_the_storage_cases_keep_their_outcomes(trace: ReplayTrace) -> None:
    # The last pod in the queue (priority -100) still lands where it did without these cases.
    c = trace.cycle("batch/best-effort")
    assert (c.result, c.selected_node) == ("Scheduled", "gen-1b-0")
