"""`schedviz import-cluster --kubeconfig F` end to end against a fake API server: one snapshot per cluster."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from schedviz.cli import main
from schedviz.ingestion.models import Snapshot
from tests.kube.test_reader import FakeApiServer, kubeconfig, populate
from tests.webfixtures import client_for, generous_throttles, sync_tasks


@pytest.fixture(autouse=True)
def _web_settings(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The web fixtures' autouse settings (tests/webfixtures.py), for this module."""
    sync_tasks(settings)
    generous_throttles(monkeypatch)


@pytest.fixture
def fake_cluster() -> Iterator[FakeApiServer]:
    fake = FakeApiServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    populate(fake)
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def test_import_cluster_stores_one_snapshot_for_the_user(
    fake_cluster: FakeApiServer,
    tmp_path: Path,
    alice: User,
    bob: User,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = kubeconfig(tmp_path, fake_cluster.url)
    assert main(["import-cluster", "--kubeconfig", config, "--user", "alice", "--name", "prod"]) == 0
    out = capsys.readouterr()
    assert "stored snapshot" in out.out and "2 nodes, 5 pods (1 pending)" in out.out
    assert "skipped DeviceClass: not served by this cluster" in out.err
    snap = Snapshot.objects.get()
    assert snap.owner == alice and snap.name == "prod"
    # the same cluster again: the same snapshot
    assert main(["import-cluster", "--kubeconfig", config, "--user", "alice"]) == 0
    assert f"already stored as snapshot {snap.pk}" in capsys.readouterr().out
    assert Snapshot.objects.count() == 1
    # it is alice's, through the API, with what the cluster holds
    api = client_for(alice)
    listed = api.get("/api/v1/snapshots/").json()
    assert [s["id"] for s in listed["results"]] == [str(snap.pk)]
    nodes = {n["name"]: n for n in api.get(f"/api/v1/snapshots/{snap.pk}/nodes/").json()["results"]}
    assert nodes["a"]["requested"]["cpu"] == 3000
    pending = api.get(f"/api/v1/snapshots/{snap.pk}/pods/?state=pending").json()["results"]
    assert [p["key"] for p in pending] == ["default/p1"]
    assert client_for(bob).get("/api/v1/snapshots/").json()["count"] == 0
    # another user importing the same cluster gets a snapshot of their own
    assert main(["import-cluster", "--kubeconfig", config, "--user", "bob"]) == 0
    assert Snapshot.objects.filter(owner=bob).count() == 1 and Snapshot.objects.count() == 2
    # a cluster that cannot be read: exit 2 with the reason, nothing stored
    assert main(["import-cluster", "--kubeconfig", config, "--context", "nowhere", "--user", "alice"]) == 2
    assert "cannot read the cluster" in capsys.readouterr().err
    assert Snapshot.objects.count() == 2


def test_reimport_ignores_what_changes_without_a_scheduling_difference(
    fake_cluster: FakeApiServer, tmp_path: Path, alice: User
) -> None:
    config = kubeconfig(tmp_path, fake_cluster.url)

    def stamp(version: int) -> None:
        for item in fake_cluster.routes["/api/v1/nodes"]:
            meta: dict[str, Any] = item["metadata"]
            meta["resourceVersion"] = str(version)
            item["status"]["conditions"] = [
                {"type": "Ready", "status": "True", "lastHeartbeatTime": f"2026-01-01T00:00:{version:02d}Z"}
            ]

    stamp(1)
    assert main(["import-cluster", "--kubeconfig", config, "--user", "alice"]) == 0
    stamp(2)
    assert main(["import-cluster", "--kubeconfig", config, "--user", "alice"]) == 0
    assert Snapshot.objects.count() == 1


def test_import_reads_pages_of_the_size_asked_and_stores_what_an_upload_would(
    fake_cluster: FakeApiServer, tmp_path: Path, alice: User, capsys: pytest.CaptureFixture[str]
) -> None:
    from schedviz.ingestion.parsing import parse_objects
    from schedviz.kube.reader import read_cluster

    config = kubeconfig(tmp_path, fake_cluster.url)
    out = tmp_path / "cluster.json"
    assert main(["import-cluster", "--kubeconfig", config, "--output", str(out), "--page-size", "2"]) == 0
    assert "wrote 13 objects to" in capsys.readouterr().out
    pod_queries = [q for p, q in fake_cluster.requests if p == "/api/v1/pods"]
    assert len(pod_queries) == 3 and all(q["limit"] == ["2"] for q in pod_queries)
    objects = read_cluster(config)
    assert json.loads(out.read_text())["items"] == objects
    # stored: the content hash an upload of the same objects gets
    assert main(["import-cluster", "--kubeconfig", config, "--user", "alice", "--page-size", "3"]) == 0
    snap = Snapshot.objects.get()
    assert snap.content_hash == parse_objects(objects).content_hash
    assert snap.source_format == "live" and snap.status == "ready" and snap.node_count == 2
