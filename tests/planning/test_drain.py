"""schedviz drain: the same as a replay of the cordoned snapshot with the recreated pods pending."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from schedviz.cli import main
from schedviz.engine import InputError
from schedviz.engine.loader import load_objects
from schedviz.planning import drain, parse_selector
from schedviz.planning.drain import budgets
from schedviz.tools.dense_cluster import DenseShape, objects
from tests.engine.builders import node, pod

from .replaying import created_at, raw_objects, replay, scenarios

READY = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}


def _owned(raw: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    raw["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": f"uid-{name}", "controller": True}
    ]
    return raw


def _expected(
    objs: list[dict[str, Any]], config: dict[str, Any] | None, drained: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """The test's own drain: cordon, drop the drained nodes' pods but DaemonSet and mirror pods,
    recreate the controller-owned ones as pending pods (created with the snapshot's latest object),
    replay. Returns the replay and the recreated pods' keys in the order they were made."""
    snap = load_objects(objs, None)
    created = created_at(snap)
    out: list[dict[str, Any]] = []
    recreated: list[dict[str, Any]] = []
    by_node: dict[str, list[dict[str, Any]]] = {n: [] for n in drained}
    for o in objs:
        if o.get("kind") == "Node" and o["metadata"]["name"] in drained:
            o = copy.deepcopy(o)
            o.setdefault("spec", {})["unschedulable"] = True
            out.append(o)
            continue
        node_name = (o.get("spec") or {}).get("nodeName") if o.get("kind") == "Pod" else None
        phase = (o.get("status") or {}).get("phase")
        if node_name in by_node and phase not in ("Succeeded", "Failed"):
            md = o["metadata"]
            refs = [r for r in md.get("ownerReferences") or [] if r.get("controller")]
            if "kubernetes.io/config.mirror" in (md.get("annotations") or {}) or (
                refs and refs[0]["kind"] == "DaemonSet"
            ):
                out.append(o)
            else:
                by_node[node_name].append(o)
            continue
        out.append(o)
    for name in drained:
        for o in by_node[name]:
            refs = [r for r in o["metadata"].get("ownerReferences") or [] if r.get("controller")]
            if not refs or refs[0]["kind"] not in (
                "ReplicaSet",
                "StatefulSet",
                "ReplicationController",
                "Job",
            ):
                continue
            r = copy.deepcopy(o)
            r["metadata"]["name"] = f"again-{len(recreated)}"
            r["metadata"]["uid"] = f"again-{len(recreated)}"
            if created:
                r["metadata"]["creationTimestamp"] = created
            else:
                r["metadata"].pop("creationTimestamp", None)
            del r["spec"]["nodeName"]
            r.pop("status", None)
            recreated.append(r)
    got = replay(out + recreated, config, "evict")
    keys = [f"{r['metadata'].get('namespace') or 'default'}/{r['metadata']['name']}" for r in recreated]
    return got, keys


def _check(objs: list[dict[str, Any]], config: dict[str, Any] | None, drained: list[str]) -> int:
    plan = drain(load_objects(objs, config), drained)
    got, keys = _expected(objs, config, drained)
    assert len(plan.recreated) == len(keys)
    for o, key in zip(plan.recreated, keys, strict=True):
        assert (o.result, o.selected_node, o.message) == got[key], o.pod
    return len(keys)


def _owned_pods(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every bound pod gets a ReplicaSet as controller (the fixtures' pods have none)."""
    out = []
    for o in objs:
        o = copy.deepcopy(o)
        if (
            o.get("kind") == "Pod"
            and (o.get("spec") or {}).get("nodeName")
            and not o["metadata"].get("ownerReferences")
        ):
            _owned(o, "ReplicaSet", "rs")
        out.append(o)
    return out


@pytest.mark.parametrize("path", scenarios(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_drain_equals_a_replay_of_the_cordoned_snapshot_on_the_conformance_scenarios(path: Path) -> None:
    objs, config = raw_objects(path)
    objs = _owned_pods(objs)
    nodes = [o["metadata"]["name"] for o in objs if o.get("kind") == "Node"]
    busy = sorted(
        {
            o["spec"]["nodeName"]
            for o in objs
            if o.get("kind") == "Pod" and (o.get("spec") or {}).get("nodeName")
        }
    )
    drained = (busy or nodes)[:2]
    _check(objs, config, drained)


def test_drain_equals_a_replay_on_a_dense_cluster() -> None:
    objs = list(objects(DenseShape(100, 25, 5)))
    n = _check(objs, None, [objs[0]["metadata"]["name"], objs[1]["metadata"]["name"]])
    assert n == 50  # every pod of the two nodes belongs to a ReplicaSet


def _small() -> list[dict[str, Any]]:
    nodes = [node("a", cpu="4"), node("b", cpu="4"), node("c", cpu="2")]
    web = [
        _owned(pod(f"web-{i}", node_name="a", cpu="1", labels={"app": "web"}), "ReplicaSet", "web-rs")
        for i in range(2)
    ]
    for w in web:
        w["status"] = READY
    ds = _owned(pod("agent-a", node_name="a", cpu="100m"), "DaemonSet", "agent")
    mirror = pod("etcd-a", node_name="a", cpu="100m")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    lone = pod("lone", node_name="a", cpu="100m")
    big = _owned(pod("big-0", node_name="a", cpu="3500m"), "StatefulSet", "big")
    return [*nodes, *web, ds, mirror, lone, big]


def test_what_stays_what_goes_and_what_comes_back() -> None:
    plan = drain(load_objects(_small()), ["a"])
    by_pod = {o.pod: o for o in plan.pods}
    assert by_pod["default/agent-a"].action == "stays" and by_pod["default/agent-a"].reason == "DaemonSet pod"
    assert by_pod["default/etcd-a"].reason == "mirror pod"
    assert by_pod["default/lone"].action == "deleted" and by_pod["default/lone"].replacement is None
    assert by_pod["default/big-0"].replacement == "default/big-0"  # a StatefulSet keeps the name
    web = by_pod["default/web-0"]
    assert web.replacement is not None and web.replacement.startswith("default/web-rs-")
    assert web.result == "Scheduled" and web.selected_node in ("b", "c")
    big = by_pod["default/big-0"]
    assert big.result == "Unschedulable"
    assert big.message is not None and "1 node(s) were unschedulable" in big.message
    assert [o.pod for o in plan.unschedulable] == ["default/big-0"]
    assert plan.after["nodes"]["a"]["requested"]["pods"] == 2  # the DaemonSet and mirror pods
    assert plan.before["nodes"]["a"]["requested"]["pods"] == 6


def _pdb(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _rs(name: str, replicas: int, deployment: str | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if deployment:
        md["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": deployment,
                "uid": f"uid-{deployment}",
                "controller": True,
            }
        ]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": md,
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}},
    }


def _web_budget(spec: dict[str, Any], extra: list[dict[str, Any]] = ()) -> Any:  # type: ignore[assignment]
    objs = [*_small(), *extra, _pdb("web", {"selector": {"matchLabels": {"app": "web"}}, **spec})]
    return budgets(load_objects(objs))[0]


def test_budgets_as_the_disruption_controller_computes_them() -> None:
    b = _web_budget({"minAvailable": 1})
    assert (b.expected, b.desired, b.healthy, b.allowed) == (2, 1, 2, 1)
    b = _web_budget({"minAvailable": "50%"}, [_rs("web-rs", 3)])
    assert (b.expected, b.desired, b.allowed) == (3, 2, 0)  # half of 3 rounded up
    b = _web_budget(
        {"maxUnavailable": "30%"},
        [
            _rs("web-rs", 3, "web"),
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "default", "uid": "uid-web"},
                "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}}},
            },
        ],
    )
    assert (b.expected, b.desired, b.allowed) == (4, 2, 0)  # the Deployment's 4, minus 30% of 4 rounded up
    b = _web_budget({"maxUnavailable": 1}, [_rs("web-rs", 2)])
    assert (b.expected, b.desired, b.allowed) == (2, 1, 1)


def test_respect_pdb_leaves_refused_pods_in_place() -> None:
    objs = [*_small(), _pdb("web", {"selector": {"matchLabels": {"app": "web"}}, "minAvailable": 1})]
    respected = drain(load_objects(objs), ["a"], respect_pdb=True)
    outcome = {o.pod: o for o in respected.pods}
    assert outcome["default/web-0"].action == "evicted"
    assert outcome["default/web-1"].action == "stays"
    assert outcome["default/web-1"].reason.startswith(
        "eviction refused by a PodDisruptionBudget: Cannot evict pod as it would violate the pod's disruption budget."
    )
    assert not respected.budgets[0].violated
    reported = drain(load_objects(objs), ["a"])
    assert {o.pod: o.action for o in reported.pods}["default/web-1"] == "evicted"
    assert reported.budgets[0].violated and reported.budgets[0].evicted == ["default/web-0", "default/web-1"]


def test_selectors() -> None:
    sel = parse_selector("pool=gpu, zone in (a,b),!spot,tier!=db")
    assert sel.matches({"pool": "gpu", "zone": "a"})
    assert not sel.matches({"pool": "gpu", "zone": "c"})
    assert not sel.matches({"pool": "gpu", "zone": "a", "spot": ""})
    assert not sel.matches({"pool": "gpu", "zone": "a", "tier": "db"})
    with pytest.raises(InputError, match="--selector"):
        parse_selector("a=b c")
    objs = [node("a", labels={"pool": "x"}), node("b", labels={"pool": "y"})]
    assert drain(load_objects(objs), selector="pool=x").nodes == ["a"]


def _write(tmp_path: Path, objs: list[dict[str, Any]]) -> str:
    p = tmp_path / "cluster.json"
    p.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    return str(p)


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _small())
    assert main(["drain", path, "--node", "a"]) == 0
    out = capsys.readouterr().out
    assert "default/big-0 (a) -> default/big-0: Unschedulable" in out
    assert main(["drain", path, "--node", "a", "--fail-on", "unschedulable"]) == 1
    capsys.readouterr()
    assert main(["drain", path, "--node", "b", "--fail-on", "unschedulable", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["nodes"] == ["b"] and doc["summary"]["pods"] == 0
    assert main(["drain", path, "--node", "nope"]) == 2
    assert "field --node: no node 'nope' in the snapshot" in capsys.readouterr().err
    assert main(["drain", path, "--selector", "pool=none"]) == 2
    assert "matches no node" in capsys.readouterr().err
    assert main(["drain", path]) == 2
    assert "--node" in capsys.readouterr().err
