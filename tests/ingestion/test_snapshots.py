"""Uploading and reading snapshots through the API."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from schedviz.ingestion.models import Snapshot
from tests.webfixtures import cluster_yaml, generous_throttles, sync_tasks


@pytest.fixture(autouse=True)
def _web_settings(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The web fixtures' autouse settings (tests/webfixtures.py), for this module."""
    sync_tasks(settings)
    generous_throttles(monkeypatch)


def test_upload_content_and_read_back(api: APIClient, upload: Callable[..., dict[str, Any]]) -> None:
    snap = upload(name="demo")
    assert snap["name"] == "demo" and snap["node_count"] == 3 and snap["pod_count"] == 3
    assert snap["pending_count"] == 2
    r = api.get(f"/api/v1/snapshots/{snap['id']}/")
    assert r.status_code == 200 and r.json()["content_hash"] == snap["content_hash"]
    nodes = api.get(f"/api/v1/snapshots/{snap['id']}/nodes/").json()
    assert nodes["count"] == 3
    small = next(n for n in nodes["results"] if n["name"] == "small")
    assert small["requested"]["cpu"] == 1000 and small["allocatable"]["cpu"] == 2000
    pending = api.get(f"/api/v1/snapshots/{snap['id']}/pods/?state=pending").json()
    assert sorted(p["key"] for p in pending["results"]) == ["default/huge", "default/web"]


def test_same_upload_twice_is_one_snapshot(api: APIClient) -> None:
    text = cluster_yaml()
    a = api.post("/api/v1/snapshots/", {"content": text}, format="json")
    b = api.post("/api/v1/snapshots/", {"content": text}, format="json")
    assert a.status_code == 201 and b.status_code == 200
    assert a.json()["id"] == b.json()["id"]
    assert Snapshot.objects.count() == 1


def test_upload_archive_file(api: APIClient) -> None:
    data = cluster_yaml().encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("cluster/all.yaml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    buf.name = "cluster.tar.gz"
    r = api.post("/api/v1/snapshots/", {"file": buf}, format="multipart")
    assert r.status_code == 201, r.content
    assert r.json()["node_count"] == 3


def test_invalid_upload_names_the_problem_and_stores_nothing(api: APIClient, upload: Callable[..., dict[str, Any]]) -> None:
    upload()
    bad = cluster_yaml().replace('cpu: "8"', 'cpu: "eight"').replace("cpu: '8'", "cpu: eight")
    r = api.post("/api/v1/snapshots/", {"content": bad}, format="json")
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["code"] == "invalid_upload"
    text = str(err)
    assert "status.allocatable.cpu" in text and "Node large" in text
    assert Snapshot.objects.count() == 1


def test_missing_file_is_a_field_error(api: APIClient) -> None:
    r = api.post("/api/v1/snapshots/", {}, format="json")
    assert r.status_code == 400 and "file" in r.json()["error"]["details"]


def test_delete(api: APIClient, upload: Callable[..., dict[str, Any]]) -> None:
    snap = upload()
    assert api.delete(f"/api/v1/snapshots/{snap['id']}/").status_code == 204
    assert api.get(f"/api/v1/snapshots/{snap['id']}/").status_code == 404


def test_other_users_snapshot_is_404(
    api: APIClient, other_api: APIClient, upload: Callable[..., dict[str, Any]]
) -> None:
    snap = upload()
    for url in (f"/api/v1/snapshots/{snap['id']}/", f"/api/v1/snapshots/{snap['id']}/nodes/"):
        r = other_api.get(url)
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert other_api.delete(f"/api/v1/snapshots/{snap['id']}/").status_code == 404
    assert other_api.get("/api/v1/snapshots/").json()["count"] == 0
    assert Snapshot.objects.count() == 1


def test_anonymous_is_401() -> None:
    r = APIClient().get("/api/v1/snapshots/")
    assert r.status_code in (401, 403)
    assert r.json()["error"]["code"] in ("not_authenticated", "authentication_failed")
