"""Bad input never gets a 500: each answer is a 4xx in the error shape, naming the field."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from schedviz.ingestion.models import Snapshot
from schedviz.replays.models import Replay, Report
from tests.replays.test_replays import start
from tests.webfixtures import cluster_yaml, error_of

BAD = "definitely-not-a-uuid"


@pytest.fixture
def ids(api: APIClient, upload: Callable[..., dict[str, Any]]) -> dict[str, str]:
    snap = upload()
    return {"snapshot": snap["id"], "replay": start(api, snap["id"])["id"]}


def test_malformed_bodies_and_wrong_types(api: APIClient, ids: dict[str, str]) -> None:
    snapshot = ids["snapshot"]
    cases: list[tuple[str, Any, str]] = [
        # (url, raw JSON body or a dict, the field the answer must name; "" for a parse error)
        ("/api/v1/replays/", "{not json", ""),
        ("/api/v1/snapshots/", '{"content": ', ""),
        ("/api/v1/replays/", "[1, 2]", "non_field_errors"),
        ("/api/v1/replays/", {"snapshot": "abc"}, "snapshot"),
        ("/api/v1/replays/", {"snapshot": snapshot, "all_nodes": "maybe"}, "all_nodes"),
        ("/api/v1/replays/", {"snapshot": snapshot, "configuration": 17.5}, "configuration"),
        ("/api/v1/replays/", {"snapshot": snapshot, "name": ["a"]}, "name"),
        ("/api/v1/replays/", {"snapshot": snapshot, "team": {"id": 1}}, "team"),
        ("/api/v1/snapshots/", {"content": ""}, "content"),
        ("/api/v1/snapshots/", {"name": "no content"}, "file"),
        ("/api/v1/snapshots/", {"content": cluster_yaml(), "name": "x" * 500}, "name"),
        ("/api/v1/snapshots/", {"content": cluster_yaml(), "name": "nul\x00byte"}, "name"),
        ("/api/v1/configurations/", {"text": "kind: X"}, "name"),
        ("/api/v1/configurations/validate/", {"text": ["a"]}, "text"),
        ("/api/v1/tokens/", {"name": "t", "ttl_days": "soon"}, "ttl_days"),
        ("/api/v1/tokens/", {"name": "t", "ttl_days": 0}, "ttl_days"),
        ("/api/v1/tokens/", {}, "name"),
        ("/api/v1/reports/", {"snapshot_id": snapshot, "wait": "long"}, "wait"),
        ("/api/v1/reports/", {"snapshot_id": snapshot, "wait": 10_000}, "wait"),
        ("/api/v1/reports/", {"snapshot_id": BAD}, "snapshot_id"),
        ("/api/v1/reports/", {"config": "not a file"}, "config"),
        ("/api/v1/reports/", {"wait": 1}, "snapshot"),
    ]
    for url, body, field in cases:
        data = body if isinstance(body, str) else json.dumps(body)
        err = error_of(api.post(url, data=data, content_type="application/json"), 400)
        if field:
            assert err["code"] == "invalid" and field in err["details"], (url, body, err)
        else:
            assert err["code"] == "parse_error" and "JSON parse error" in err["message"], (url, body, err)
    assert Snapshot.objects.count() == 1 and Replay.objects.count() == 1 and Report.objects.count() == 0


def test_non_uuid_and_unknown_ids_in_urls(api: APIClient, ids: dict[str, str]) -> None:
    rid = ids["replay"]
    for method, url in (
        ("get", f"/api/v1/snapshots/{BAD}/"),
        ("get", f"/api/v1/snapshots/{BAD}/nodes/"),
        ("delete", f"/api/v1/snapshots/{BAD}/"),
        ("get", f"/api/v1/replays/{BAD}/"),
        ("get", f"/api/v1/replays/{BAD}/cycles/1/"),
        ("post", f"/api/v1/replays/{BAD}/cancel/"),
        ("get", f"/api/v1/replays/{rid}/compare/{BAD}/"),  # was a 500
        ("get", f"/api/v1/replays/{rid}/compare/00000000-0000-0000-0000-000000000000/"),
        ("get", f"/api/v1/replays/{rid}/cycles/99999999999999999999999/"),
        ("get", f"/api/v1/replays/{rid}/cycles/3/"),
        ("get", f"/api/v1/configurations/{BAD}/"),
        ("get", f"/api/v1/reports/{BAD}/"),
        ("delete", "/api/v1/tokens/abc/"),  # was a 500
        ("delete", "/api/v1/tokens/99999999999999999999999/"),
        ("get", "/api/v1/no-such-endpoint/"),
        ("post", "/api/v1/snapshots"),  # no trailing slash: told where the endpoint is
    ):
        err = error_of(getattr(api, method)(url), 404)
        assert err["code"] == "not_found", (method, url)
    assert (
        "no cycle 3 in this replay" in error_of(api.get(f"/api/v1/replays/{rid}/cycles/3/"), 404)["message"]
    )
    assert "trailing slash" in error_of(api.post("/api/v1/snapshots"), 404)["message"]
    assert api.get("/api/v1/snapshots").status_code == 301  # GET without the slash is redirected


def test_bad_query_parameters(api: APIClient, ids: dict[str, str]) -> None:
    rid = ids["replay"]
    cases = [
        ("/api/v1/snapshots/?page=abc", "page"),
        ("/api/v1/snapshots/?page=0", "page"),
        ("/api/v1/snapshots/?page_size=-3", "page_size"),
        ("/api/v1/replays/?snapshot=xyz", "snapshot"),  # was a 500
        ("/api/v1/replays/?status=done", "status"),
        (f"/api/v1/snapshots/{ids['snapshot']}/pods/?state=sleeping", "state"),
        (f"/api/v1/replays/{rid}/cycles/?result=Fine", "result"),
        (
            f"/api/v1/replays/{rid}/cycles/?namespace=a%00b",
            "namespace",
        ),  # PostgreSQL refuses NUL: a 500 there
        (f"/api/v1/replays/{rid}/cycles/1/?page=x", "page"),
        (f"/api/v1/replays/{rid}/cycles/1/?page_size=5000", "page_size"),
        (f"/api/v1/replays/{rid}/cycles/1/?sort=size", "sort"),
        (f"/api/v1/replays/{rid}/cycles/1/?verdict=maybe", "verdict"),
        (f"/api/v1/replays/{rid}/cycles/1/?plugin=NoSuchPlugin", "plugin"),
        (f"/api/v1/replays/{rid}/explain/", "pod"),
        (f"/api/v1/replays/{rid}/explain/?pod=a/b/c", "pod"),
        (f"/api/v1/replays/{rid}/explain/?pod=default/running", "pod"),  # bound: no cycle to explain
        (f"/api/v1/replays/{rid}/explain/?pod=default/web&node=nowhere", "node"),
        (f"/api/v1/reports/{_report(api, ids)}/?format=pdf", "format"),
    ]
    for url, field in cases:
        err = error_of(api.get(url), 400)
        assert err["code"] == "invalid", url
        assert err["message"].startswith(f"{field}: ") or field in err["message"], (url, err)
        assert field in (err["details"] or {}), (url, err)


def test_huge_and_past_the_end_pages(api: APIClient, ids: dict[str, str]) -> None:
    for url in (
        "/api/v1/snapshots/?page=99999999999999999999999",
        f"/api/v1/replays/{ids['replay']}/cycles/?page=1000",
        "/api/v1/replays/?page=2",
    ):
        err = error_of(api.get(url), 404)
        assert err["message"].startswith("page: "), err
    # a big page_size is capped, not refused; page=last is DRF's and works
    assert api.get("/api/v1/snapshots/?page_size=100000").json()["count"] == 1
    assert api.get("/api/v1/snapshots/?page=last").status_code == 200
    # the nodes of a cycle past the last page: an empty page, as the explorer expects
    page = api.get(f"/api/v1/replays/{ids['replay']}/cycles/1/?page=99999999").json()
    assert page["nodes"]["results"] == [] and page["nodes"]["count"] == 3


def test_explain_unknown_pod_is_404_and_a_bare_name_is_in_default(
    api: APIClient, ids: dict[str, str]
) -> None:
    rid = ids["replay"]
    err = error_of(api.get(f"/api/v1/replays/{rid}/explain/?pod=default/ghost"), 404)
    assert "default/ghost" in err["message"]
    assert api.get(f"/api/v1/replays/{rid}/explain/?pod=web").json()["pod"] == "default/web"


def test_compare_across_snapshots_and_unfinished_replays_is_409(api: APIClient, ids: dict[str, str]) -> None:
    other = api.post("/api/v1/snapshots/", {"content": cluster_yaml(extra_pods=1)}, format="json").json()
    theirs = start(api, other["id"])
    err = error_of(api.get(f"/api/v1/replays/{ids['replay']}/compare/{theirs['id']}/"), 409)
    assert "different snapshots" in err["message"]
    second = start(api, ids["snapshot"])
    Replay.objects.filter(pk=second["id"]).update(status="running")
    err = error_of(api.get(f"/api/v1/replays/{ids['replay']}/compare/{second['id']}/"), 409)
    assert "succeeded" in err["message"]


def test_invalid_configurations_name_the_problem(api: APIClient, ids: dict[str, str]) -> None:
    bad = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "x", "plugins": {"score": {"enabled": [{"name": "Nope"}]}}}],
    }
    for config in (bad, "- just\n- a list\n", [1, 2], "profiles: [: broken"):
        err = error_of(
            api.post("/api/v1/replays/", {"snapshot": ids["snapshot"], "config": config}, format="json"), 400
        )
        assert err["code"] == "invalid_config" and err["details"]["problems"], config
    err = error_of(
        api.post("/api/v1/replays/", {"snapshot": ids["snapshot"], "config": bad}, format="json"), 400
    )
    assert "profiles[0].plugins.score.enabled[0]" in json.dumps(err)
    # the same through a report upload: the field is named, and no snapshot is stored for the refused request
    files = {
        "snapshot": _file("cluster.yaml", cluster_yaml(extra_pods=2)),
        "config": _file("bad.yaml", json.dumps(bad)),
    }
    err = error_of(api.post("/api/v1/reports/", files, format="multipart"), 400)
    assert err["code"] == "invalid_config" and err["details"]["field"] == "config"
    assert "profiles[0].plugins.score.enabled[0]" in json.dumps(err["details"]["problems"])
    files = {"snapshot_id": ids["snapshot"], "baseline": _file("b.yaml", "{{{")}
    err = error_of(api.post("/api/v1/reports/", files, format="multipart"), 400)
    assert err["details"]["field"] == "baseline"
    assert Snapshot.objects.count() == 1 and Report.objects.count() == 0


def _file(name: str, text: str) -> Any:
    import io

    f = io.BytesIO(text.encode())
    f.name = name
    return f


def _report(api: APIClient, ids: dict[str, str]) -> str:
    r = api.post("/api/v1/reports/", {"snapshot_id": ids["snapshot"], "wait": 5}, format="json")
    assert r.status_code == 200, r.content
    return str(Report.objects.get().pk)


def test_oversized_and_unparseable_bodies_get_the_error_shape(api: APIClient, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 5
    for fmt in ("json", "multipart"):
        err = error_of(api.post("/api/v1/snapshots/", {"content": "x" * 5000}, format=fmt), 413)
        assert err["code"] == "too_large" and "1000 bytes" in err["message"]
    many = {f"field{i}": "x" for i in range(10)}
    assert (
        "DATA_UPLOAD_MAX_NUMBER_FIELDS"
        in error_of(api.post("/api/v1/snapshots/", many, format="multipart"), 400)["message"]
    )
    err = error_of(api.post("/api/v1/snapshots/", data=b"\xff{", content_type="application/json"), 400)
    assert err["code"] == "parse_error"
    err = error_of(api.post("/api/v1/snapshots/", data=b"content=x", content_type="text/plain"), 415)
    assert err["code"] == "unsupported_media_type"
    err = error_of(
        api.post("/api/v1/snapshots/", data=b"--x\r\nbroken", content_type="multipart/form-data"), 400
    )
    assert err["code"] == "parse_error"
    assert Snapshot.objects.count() == 0
