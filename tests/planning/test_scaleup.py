"""schedviz scale-up: each step is a replay of the snapshot with that many clones of the template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedviz.cli import main
from schedviz.engine.loader import load_objects
from schedviz.planning import scale_up, snapshot_document
from schedviz.planning.scaleup import clone, resolve_template
from schedviz.tools.dense_cluster import DenseShape, objects
from tests.engine.builders import node, pod

from .replaying import raw_objects, replay, scenarios


def _check(objs: list[dict[str, Any]], config: dict[str, Any] | None, template: str, max_nodes: int) -> Any:
    """The plan's final placements equal a replay of its snapshot, read back as a file is read."""
    plan = scale_up(load_objects(objs, config), [template], max_nodes=max_nodes).templates[0]
    doc = json.loads(json.dumps(snapshot_document(plan.snapshot)))
    got = replay(doc["items"], config, "evict")
    assert {p: r[1] if r[0] in ("Scheduled", "Waiting") else None for p, r in got.items()} == plan.placements
    added = [
        o
        for o in doc["items"]
        if o["kind"] == "Node" and o["metadata"]["name"].startswith(f"{template}-template-")
    ]
    assert len(added) == plan.steps[-1].nodes
    return plan


@pytest.mark.parametrize("path", scenarios(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_scale_up_equals_a_replay_with_the_added_nodes_on_the_conformance_scenarios(path: Path) -> None:
    objs, config = raw_objects(path)
    first = next(o for o in objs if o.get("kind") == "Node")
    _check(objs, config, first["metadata"]["name"], 2)


def test_scale_up_on_a_dense_cluster() -> None:
    shape = DenseShape(6, 30, 500)  # more pending pods than the nodes can take
    objs = list(objects(shape))
    plan = _check(objs, None, objs[0]["metadata"]["name"], 2)
    scheduled = [s.scheduled for s in plan.steps]
    assert scheduled == sorted(scheduled) and scheduled[-1] > scheduled[0]


def _small() -> list[dict[str, Any]]:
    nodes = [node("a", cpu="4", labels={"pool": "p"}), node("b", cpu="4", labels={"pool": "p"})]
    pending = [pod(f"w{i}", cpu="2") for i in range(7)]
    picky = pod("picky", cpu="1", nodeSelector={"disk": "ssd"})
    return [*nodes, *pending, picky]


def test_how_many_nodes_and_which_pods_no_node_helps() -> None:
    plan = scale_up(load_objects(_small()), ["a"], max_nodes=5).templates[0]
    assert [s.scheduled for s in plan.steps] == [4, 6, 7, 7]
    assert plan.stop == "no-progress" and plan.nodes_needed is None
    assert [h["pod"] for h in plan.helpless] == ["default/picky"]
    assert plan.helpless[0]["why"] == "NodeAffinity: node(s) didn't match Pod's node affinity/selector"
    assert plan.helpless[0]["helps"] is False
    fits = scale_up(load_objects(_small()[:-1]), ["a"], max_nodes=5).templates[0]
    assert fits.stop == "fits" and fits.nodes_needed == 2 and fits.helpless == []
    short = scale_up(load_objects(_small()[:-1]), ["a"], max_nodes=1).templates[0]
    assert short.stop == "max-nodes" and short.helpless[0]["helps"] is None


def test_clones_are_fresh_ready_nodes_of_the_template() -> None:
    tainted = node(
        "t",
        cpu="8",
        labels={"pool": "gpu", "node-name": "t"},
        taints=[
            {"key": "gpu", "value": "yes", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
        ],
        unschedulable=True,
        images=[(["registry.example/app:1"], 1000)],
    )
    ds = pod("agent-t", node_name="t", cpu="100m")
    ds["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u", "controller": True}
    ]
    snap = load_objects([tainted, ds])
    raw, pods = clone(resolve_template(snap, "t"), 1, None)
    assert raw["metadata"]["name"] == "t-template-1"
    assert raw["metadata"]["labels"] == {"pool": "gpu", "kubernetes.io/hostname": "t-template-1"}
    assert raw["spec"] == {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]}
    assert "images" not in raw["status"] and raw["status"]["allocatable"]["cpu"] == "8"
    assert [p["spec"]["nodeName"] for p in pods] == ["t-template-1"]


def _write(tmp_path: Path, name: str, doc: Any) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def test_cli_templates_side_by_side_and_bad_templates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = _write(tmp_path, "cluster.json", {"apiVersion": "v1", "kind": "List", "items": _small()[:-1]})
    bigger = _write(tmp_path, "big.json", node("big", cpu="16"))
    assert main(["scale-up", cluster, "--template", "a", "--template", bigger, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(t["template"], t["nodesNeeded"]) for t in doc["templates"]] == [("a", 2), ("big", 1)]
    assert main(["scale-up", cluster, "--template", "nope"]) == 2
    assert "no node 'nope' in the snapshot and no such file" in capsys.readouterr().err
    bare = node("bare")
    bare["status"] = {}
    assert main(["scale-up", cluster, "--template", _write(tmp_path, "bare.json", bare)]) == 2
    err = capsys.readouterr().err
    assert (
        "bare.json" in err
        and "field status.allocatable" in err
        and "a template needs allocatable resources" in err
    )
    assert main(["scale-up", cluster, "--template", _write(tmp_path, "pod.json", pod("x"))]) == 2
    assert "expected a Node, found a Pod" in capsys.readouterr().err
