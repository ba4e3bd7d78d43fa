"""POST/GET /api/v1/plans/: the same answers as the command line, stored, owner-scoped, each opened
as a replay of the snapshot it replayed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework.test import APIClient

from schedviz.ingestion.models import Snapshot
from schedviz.planning import capacity, drain, pod_spec
from schedviz.plans.models import Plan
from schedviz.replays.models import Cycle, Replay
from tests.engine.builders import node, pod
from tests.webfixtures import error_of


def _copyable() -> dict[str, Any]:
    raw = pod("copy", cpu="1", labels={"app": "copy"})
    del raw["metadata"]["creationTimestamp"]
    return raw


def _post(api: APIClient, body: dict[str, Any]) -> Any:
    return api.post("/api/v1/plans/", body, format="json")


def test_capacity_plan_is_the_cli_answer_and_its_replay_holds_its_cycles(
    api: APIClient, upload: Callable[..., dict[str, Any]]
) -> None:
    snap_id = upload()["id"]
    r = _post(api, {"kind": "capacity", "snapshot": snap_id, "pods": [_copyable()]})
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["status"] == "succeeded", body
    engine = Snapshot.objects.get(pk=snap_id).engine_snapshot()
    expected = capacity(engine, [pod_spec(_copyable(), "pods[0]")]).to_dict(utilization=True)
    assert body["result"] == expected
    assert body["result"]["replicas"] == 8  # 1 CPU copies: small keeps 1 free, large 8 minus web's 500m
    (entry,) = body["replays"]
    replay = Replay.objects.get(pk=entry["replay"])
    assert replay.status == "succeeded" and replay.options["preemption"] == "dry-run"
    copies = Cycle.objects.filter(replay=replay, pod__startswith="default/copy-")
    assert copies.count() == 9
    assert copies.filter(result="Scheduled").count() == 8
    last = copies.exclude(result="Scheduled").get()
    assert last.pod == body["result"]["stop"]["pod"] and last.message == body["result"]["stop"]["message"]
    listed = api.get("/api/v1/plans/").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [(p["id"], p["headline"]) for p in rows] == [(body["id"], "8 more copies fit")]


def test_drain_plan_and_its_bad_node(api: APIClient, upload: Callable[..., dict[str, Any]]) -> None:
    snap_id = upload()["id"]
    ok = _post(api, {"kind": "drain", "snapshot": snap_id, "nodes": ["small"]}).json()
    engine = Snapshot.objects.get(pk=snap_id).engine_snapshot()
    assert ok["status"] == "succeeded"
    assert ok["result"] == drain(engine, ["small"]).to_dict(utilization=True)
    bad = _post(api, {"kind": "drain", "snapshot": snap_id, "nodes": ["nope"]}).json()
    assert bad["status"] == "failed"
    assert bad["error"] == "field nodes: no node 'nope' in the snapshot"
    assert bad["replays"] == []


def test_scale_up_plan_with_a_node_object(api: APIClient, upload: Callable[..., dict[str, Any]]) -> None:
    snap_id = upload()["id"]
    body = _post(api, {"kind": "scale-up", "snapshot": snap_id, "templates": ["large", node("big", cpu="32")]}).json()
    assert body["status"] == "succeeded", body
    by = {t["template"]: t for t in body["result"]["templates"]}
    assert by["big"]["nodesNeeded"] == 1  # the 16-CPU pod fits a 32-CPU node
    assert by["large"]["nodesNeeded"] is None and by["large"]["helpless"][0]["pod"] == "default/huge"
    assert [e["label"] for e in body["replays"]] == ["large", "big"]


def test_bad_questions_are_400_and_store_nothing(api: APIClient, upload: Callable[..., dict[str, Any]]) -> None:
    snap_id = upload()["id"]
    err = error_of(_post(api, {"kind": "capacity", "snapshot": snap_id, "pods": [node("n")]}), 400)
    assert err["code"] == "invalid_plan" and "pods[0].kind" in err["message"]
    bound = _copyable()
    bound["spec"]["nodeName"] = "small"
    err = error_of(_post(api, {"kind": "capacity", "snapshot": snap_id, "pods": [bound]}), 400)
    assert "spec.nodeName" in err["message"]
    bare = node("bare")
    bare["status"] = {}
    err = error_of(_post(api, {"kind": "scale-up", "snapshot": snap_id, "templates": [bare]}), 400)
    assert "status.allocatable" in err["message"]
    err = error_of(_post(api, {"kind": "drain", "snapshot": snap_id}), 400)
    assert err["details"]["field"] == "nodes"
    assert Plan.objects.count() == 0


def test_plans_are_their_owners(api: APIClient, other_api: APIClient, upload: Callable[..., dict[str, Any]]) -> None:
    snap_id = upload()["id"]
    plan = _post(api, {"kind": "drain", "snapshot": snap_id, "nodes": ["small"], "replay": False}).json()
    assert plan["replays"] == []
    assert error_of(other_api.get(f"/api/v1/plans/{plan['id']}/"), 404)["code"] == "not_found"
    listed = other_api.get("/api/v1/plans/").json()
    assert (listed["results"] if isinstance(listed, dict) else listed) == []
    assert error_of(_post(other_api, {"kind": "drain", "snapshot": snap_id, "nodes": ["small"]}), 404)
    assert api.delete(f"/api/v1/plans/{plan['id']}/").status_code == 204


def test_manifests_as_text(api: APIClient, upload: Callable[..., dict[str, Any]]) -> None:
    import yaml

    snap_id = upload()["id"]
    text = yaml.safe_dump(_copyable())
    body = _post(api, {"kind": "capacity", "snapshot": snap_id, "pods": [text], "max": 2}).json()
    assert body["status"] == "succeeded" and body["result"]["replicas"] == 2
    node_text = yaml.safe_dump(node("big", cpu="32"))
    body = _post(api, {"kind": "scale-up", "snapshot": snap_id, "templates": [node_text]}).json()
    assert body["result"]["templates"][0]["template"] == "big"
    err = error_of(_post(api, {"kind": "capacity", "snapshot": snap_id, "pods": ["a: [1, 2"]}), 400)
    assert err["code"] == "invalid_plan" and "pods[0]" in err["message"]
    other = _copyable()
    other["metadata"]["name"] = "other"
    two = yaml.safe_dump_all([_copyable(), other])
    err = error_of(_post(api, {"kind": "capacity", "snapshot": snap_id, "pods": [two]}), 400)
    assert "expected exactly one Pod" in err["message"]
