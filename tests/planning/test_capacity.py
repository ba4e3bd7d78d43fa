"""schedviz capacity: N copies fit exactly when a replay of N+1 copies as pending pods places N."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from schedviz.cli import main
from schedviz.engine import InputError
from schedviz.engine.loader import load_objects
from schedviz.planning import IN_ORDER, capacity, pod_spec, read_pod_spec
from schedviz.tools.dense_cluster import DenseShape, objects
from tests.engine.builders import node, pod

from .replaying import created_at, raw_objects, replay, scenarios

ZONE = "topology.kubernetes.io/zone"


def _spec(name: str = "web", cpu: str = "500m", memory: str = "256Mi", **extra: Any) -> dict[str, Any]:
    raw = pod(name, cpu=cpu, memory=memory, labels={"app": name}, **extra)
    del raw["metadata"]["creationTimestamp"]
    return raw


def _copies(raw: dict[str, Any], n: int, created: str | None, tag: str) -> list[dict[str, Any]]:
    """n copies as a test makes them: other names than the plan's, the same creation time."""
    out = []
    for k in range(n):
        c = copy.deepcopy(raw)
        c["metadata"]["name"] = f"{tag}-{k}"
        c["metadata"]["uid"] = f"test-{tag}-{k}"
        if created:
            c["metadata"]["creationTimestamp"] = created
        out.append(c)
    return out


def _check_against_replay(
    objs: list[dict[str, Any]], config: dict[str, Any] | None, spec: dict[str, Any]
) -> int:
    snap = load_objects(objs, config)
    plan = capacity(snap, [pod_spec(spec, "spec")], None)
    n = plan.replicas
    copies = _copies(spec, n + 1, created_at(snap), "copy")
    got = replay(objs + copies, config, "dry-run")
    results = [got[f"default/copy-{k}"] for k in range(n + 1)]
    assert [r[0] for r in results[:n]] == ["Scheduled"] * n
    assert results[n][0] != "Scheduled"
    per_node: dict[str, int] = {}
    for _, where, _ in results[:n]:
        assert where is not None
        per_node[where] = per_node.get(where, 0) + 1
    assert plan.per_node() == dict(sorted(per_node.items()))
    stop = plan.stop
    assert stop is not None and stop.message == results[n][2]
    return n


@pytest.mark.parametrize("path", scenarios(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_capacity_equals_a_replay_of_n_plus_one_copies_on_the_conformance_scenarios(path: Path) -> None:
    objs, config = raw_objects(path)
    big = sum(1 for o in objs if o.get("kind") == "Node") > 100  # fewer, larger copies: fewer cycles
    _check_against_replay(objs, config, _spec(cpu="3" if big else "700m", memory="300Mi"))


def test_capacity_equals_a_replay_on_a_dense_cluster() -> None:
    shape = DenseShape(120, 20, 10)
    objs = list(objects(shape))
    spec = _spec("big", cpu="3", memory="4Gi")
    spec["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "big"}},
        }
    ]
    n = _check_against_replay(objs, None, spec)
    assert n > 100  # the dense nodes have room for a few each


def _zoned_cluster() -> list[dict[str, Any]]:
    return [node(f"n{i}", cpu="4", memory="8Gi", labels={ZONE: f"z{i % 2}"}) for i in range(4)]


def test_counts_per_node_and_zone_and_the_next_copys_message() -> None:
    snap = load_objects(_zoned_cluster())
    plan = capacity(snap, [pod_spec(_spec(cpu="1500m"), "spec")])
    d = plan.to_dict()
    assert d["replicas"] == 8  # two 1.5-CPU copies per 4-CPU node
    assert d["perNode"] == {"n0": 2, "n1": 2, "n2": 2, "n3": 2}
    assert d["perZone"] == {"z0": 4, "z1": 4}
    assert d["stop"]["reason"] == "unschedulable"
    assert d["stop"]["message"].startswith("0/4 nodes are available: 4 Insufficient cpu.")
    assert d["stop"]["nodes"] == {f"n{i}": "NodeResourcesFit: Insufficient cpu" for i in range(4)}
    # the copies are named as a ReplicaSet names them: prefix and five characters of its alphabet
    name = d["stop"]["pod"].split("/")[1]
    assert name.startswith("web-") and len(name) == len("web-") + 5
    assert all(ch in "bcdfghjklmnpqrstvwxz2456789" for ch in name[4:])


def test_max_stops_early() -> None:
    snap = load_objects(_zoned_cluster())
    plan = capacity(snap, [pod_spec(_spec(cpu="1500m"), "spec")], max_replicas=3)
    assert plan.replicas == 3
    assert plan.stop is not None and plan.stop.reason == "max"


def test_pending_pods_of_the_snapshot_go_first() -> None:
    objs = [*_zoned_cluster(), pod("waiting", cpu="3")]
    plan = capacity(load_objects(objs), [pod_spec(_spec(cpu="1500m"), "spec")])
    assert plan.replicas == 6  # one node keeps 1 CPU after the 3-CPU pending pod: no copy fits there


def test_round_robin_and_in_order_for_an_application() -> None:
    objs = _zoned_cluster()
    snap = load_objects(objs)
    a, b = _spec("a", cpu="1"), _spec("b", cpu="2")
    rr = capacity(snap, [pod_spec(a, "a"), pod_spec(b, "b")])
    # a replay of a0 b0 a1 b1 ... as pending pods: the copies before the first that fails all fit
    created = created_at(snap)
    inter: list[dict[str, Any]] = []
    for k in range(rr.specs[0].replicas + 2):
        inter += _copies(a, 1, created, f"a{k}") + _copies(b, 1, created, f"b{k}")
    got = replay(objs + inter, None, "dry-run")
    results = [got[f"default/{c['metadata']['name']}"] for c in inter]
    first_fail = next(i for i, r in enumerate(results) if r[0] != "Scheduled")
    assert rr.replicas == first_fail
    assert rr.specs[0].replicas == (first_fail + 1) // 2 and rr.specs[1].replicas == first_fail // 2
    assert rr.stop is not None and rr.stop.message == results[first_fail][2]
    # in order: copies of a first, then of b on top of them
    ordered = capacity(snap, [pod_spec(a, "a"), pod_spec(b, "b")], order=IN_ORDER)
    assert ordered.specs[0].replicas == 16  # a fills every CPU first
    assert ordered.specs[1].replicas == 0
    assert ordered.specs[1].stop is not None and ordered.specs[1].stop.reason == "unschedulable"
    got = replay(objs + _copies(a, 17, created, "a") + _copies(b, 1, created, "b"), None, "dry-run")
    assert [got[f"default/a-{k}"][0] for k in range(17)] == ["Scheduled"] * 16 + ["Unschedulable"]
    assert got["default/b-0"][2] == ordered.specs[1].stop.message


def _write(tmp_path: Path, name: str, doc: Any) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def test_bad_pod_files_exit_2_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster = _write(
        tmp_path, "cluster.json", {"apiVersion": "v1", "kind": "List", "items": _zoned_cluster()}
    )
    two = _write(
        tmp_path, "two.json", {"apiVersion": "v1", "kind": "List", "items": [_spec("a"), _spec("b")]}
    )
    assert main(["capacity", cluster, "--pod", two]) == 2
    err = capsys.readouterr().err
    assert "two.json" in err and "expected exactly one Pod, found 2 objects" in err
    a_node = _write(tmp_path, "node.json", node("x"))
    assert main(["capacity", cluster, "--pod", a_node]) == 2
    assert "expected a Pod, found a Node" in capsys.readouterr().err
    bound = _write(tmp_path, "bound.json", _spec(node_name="n0"))
    assert main(["capacity", cluster, "--pod", bound]) == 2
    assert "field spec.nodeName" in capsys.readouterr().err
    assert main(["capacity", cluster, "--pod", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml: no such file" in capsys.readouterr().err
    with pytest.raises(InputError, match="--max"):
        capacity(load_objects(_zoned_cluster()), [pod_spec(_spec(), "s")], max_replicas=-1)


def test_cli_json_and_the_written_snapshot_replays_to_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = _write(
        tmp_path, "cluster.json", {"apiVersion": "v1", "kind": "List", "items": _zoned_cluster()}
    )
    spec = _write(tmp_path, "web.json", _spec(cpu="1500m"))
    out = tmp_path / "plan.json"
    assert main(["capacity", cluster, "--pod", spec, "--format", "json", "--write-snapshot", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) >= {"replicas", "perNode", "perZone", "stop"}
    assert doc["replicas"] == 8
    got = replay(json.loads(out.read_text())["items"], None, "dry-run")
    assert sum(1 for r in got.values() if r[0] == "Scheduled") == 8
    assert got[doc["stop"]["pod"]][2] == doc["stop"]["message"]
    assert main(["capacity", cluster, "--pod", spec]) == 0
    assert "8 more copies fit" in capsys.readouterr().out
    assert read_pod_spec(spec).prefix == "web-"
