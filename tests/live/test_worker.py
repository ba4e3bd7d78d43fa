"""The watch_clusters worker end to end: a cluster's live timeline through the API, snapshot now,
stopping and starting (with and without the history kept), leases shared by workers."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.core.management import call_command
from rest_framework.test import APIClient

from schedviz.kube.testing import TestApiServer
from schedviz.live import services
from schedviz.live.models import LiveCluster, LiveCycle
from schedviz.live.worker import Worker
from tests.kubefixtures import FAST, wait_until
from tests.webfixtures import error_of

from . import faults
from .test_replays import scenario, serve, split


class Running:
    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=worker.run, args=(self.stop_event, 0.05), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(15)
        assert not self.thread.is_alive()


@pytest.fixture
def workers() -> Iterator[Any]:
    made: list[Running] = []

    def start(name: str = "w1", **kw: Any) -> Running:
        opts = {
            "timing": FAST,
            "lease_seconds": 2.0,
            "checkpoint_seconds": 0.2,
            "retry_seconds": 0.2,
            "options": {"settle": 0.02, "event_grace": 0.3},
        }
        opts.update(kw)
        r = Running(Worker(name, **opts))
        made.append(r)
        return r

    yield start
    for r in made:
        if r.thread.is_alive():
            r.stop()


def add_cluster(owner: User, srv: TestApiServer, **kw: Any) -> LiveCluster:
    return services.create_cluster(
        owner,
        name="prod",
        credentials=services.Credentials("kubeconfig", yaml.safe_dump(srv.kubeconfig())),
        **kw,
    )


def status(cluster: LiveCluster) -> str:
    cluster.refresh_from_db(fields=["status"])
    return cluster.status


def cycles(cluster: LiveCluster) -> list[LiveCycle]:
    return list(LiveCycle.objects.filter(cluster=cluster).order_by("seq"))


def decide(srv: TestApiServer, r: dict[str, Any], node: str | None = None) -> None:
    ns, name = split(r["pod"])
    if r["selected"]:
        srv.bind(ns, name, node or r["selected"])
    else:
        srv.fail_scheduling(ns, name, r["unschedulableMessage"])


def test_a_clusters_live_timeline_through_the_api(
    apiserver: TestApiServer, alice: User, api: APIClient, workers: Any
) -> None:
    sc, expected = scenario("basic/scn-20001")
    serve(apiserver, sc)
    cluster = add_cluster(alice, apiserver)
    workers()
    wait_until(lambda: status(cluster) == "watching", what="watching")

    def settled() -> Any:
        h = api.get(f"/api/v1/clusters/{cluster.pk}/health/").json()
        return h if all(s["state"] in ("watching", "unavailable") for s in h["streams"]) else None

    health = wait_until(settled, what="every stream watching or unavailable")
    assert health["status"] == "watching" and health["worker"]["alive"] and health["worker"]["id"] == "w1"
    streams = {h["stream"]: h for h in health["streams"]}
    assert (
        streams["Pod"]["state"] == "watching" and streams["Pod"]["synced"] and streams["Pod"]["objects"] == 26
    )
    assert streams["PodGroup"]["state"] == "unavailable"  # the CRD is not installed
    assert health["config"]["profiles"] == ["default-scheduler"] and health["objects"] >= 35
    failed = next(r for r in expected if not r["selected"])
    placed = next(r for r in expected if r["selected"])
    decide(apiserver, failed)
    wait_until(lambda: len(cycles(cluster)) == 1, what="the first cycle")
    decide(apiserver, placed, node=next(n for n, v in placed["filter"].items() if v["code"] != "Success"))
    wait_until(lambda: len(cycles(cluster)) == 2, what="the second cycle")

    listing = api.get(f"/api/v1/clusters/{cluster.pk}/cycles/").json()
    assert listing["count"] == 2
    first, second = listing["results"]
    assert (first["seq"], first["pod"], first["trigger"], first["agreement"]) == (
        1,
        failed["pod"],
        "failed",
        "match",
    )
    assert first["actual_message"] == failed["unschedulableMessage"] == first["message"]
    # in the cluster's order: the revision of the failure's event, then of the binding
    assert 0 < int(first["resource_version"]) < int(second["resource_version"])
    assert health["droppedEvents"] == 0 and health["waitingFor"] is None
    assert (second["trigger"], second["agreement"], second["divergence"]) == ("bound", "diverged", "filter")
    assert second["node"] == placed["selected"]
    assert api.get(f"/api/v1/clusters/{cluster.pk}/cycles/?agreement=diverged").json()["count"] == 1
    assert api.get(f"/api/v1/clusters/{cluster.pk}/cycles/?after=1").json()["results"][0]["seq"] == 2
    assert error_of(api.get(f"/api/v1/clusters/{cluster.pk}/cycles/?agreement=maybe"), 400)["details"] == {
        "agreement": ["must be one of match, tie, diverged, skipped"]
    }

    detail = api.get(f"/api/v1/clusters/{cluster.pk}/cycles/2/?page_size=3").json()
    assert (
        detail["pod"] == placed["pod"] and detail["selectedNode"] == placed["selected"] and detail["seq"] == 2
    )
    assert detail["nodes"]["count"] == 8 and len(detail["nodes"]["results"]) == 3
    assert detail["nodeCounts"]["passed"] == len(placed["feasibleNodes"])
    live = detail["live"]
    assert live["actual"]["result"] == "Scheduled" and live["agreement"] == "diverged"
    assert live["resourceVersion"] == second["resource_version"]
    assert live["explanations"][-1]["code"] == "filter"
    summary = api.get(f"/api/v1/clusters/{cluster.pk}/divergences/").json()
    assert summary["summary"] == {
        **summary["summary"],
        "cycles": 2,
        "match": 1,
        "diverged": 1,
        "byCode": {"filter": 1},
    }
    assert [c["seq"] for c in summary["recent"]] == [2]
    body = api.get(f"/api/v1/clusters/{cluster.pk}/").json()
    assert body["status"] == "watching" and body["summary"]["cycles"] == 2


def test_snapshot_now_freezes_the_mirrored_state_for_what_if_replays(
    apiserver: TestApiServer, alice: User, api: APIClient, workers: Any
) -> None:
    sc, expected = scenario("basic/scn-20001")
    serve(apiserver, sc)
    cluster = add_cluster(alice, apiserver)
    workers()
    wait_until(lambda: status(cluster) == "watching", what="watching")
    placed = [r for r in expected if r["selected"]][:2]
    for r in placed:
        decide(apiserver, r)
    wait_until(lambda: len(cycles(cluster)) == 2, what="the cycles")
    r = api.post(
        f"/api/v1/clusters/{cluster.pk}/snapshot/", {"name": "before the change", "wait": 5}, format="json"
    )
    assert r.status_code == 201, r.content
    req = r.json()
    assert req["status"] == "done" and req["snapshot"]["name"] == "before the change"
    snap = req["snapshot"]
    assert snap["node_count"] == 8 and snap["pod_count"] == 26
    assert snap["pending_count"] == 10 - 2  # the two placed pods run now
    assert api.get(f"/api/v1/clusters/{cluster.pk}/snapshots/{req['id']}/").json()["status"] == "done"
    # a what-if replay of the frozen state: the remaining pods, as the real scheduler placed them
    replay = api.post("/api/v1/replays/", {"snapshot": snap["id"], "all_nodes": True}, format="json").json()
    rows = api.get(f"/api/v1/replays/{replay['id']}/cycles/?page_size=100").json()["results"]
    remaining = [r for r in expected if r not in placed]
    assert [c["pod"] for c in rows] == [r["pod"] for r in remaining]
    assert [c["node"] or None for c in rows] == [r["selected"] for r in remaining]


def test_stopping_and_starting_the_worker_resumes_cleanly(
    apiserver: TestApiServer, alice: User, workers: Any
) -> None:
    sc, expected = scenario("basic/scn-20001")
    serve(apiserver, sc)
    cluster = add_cluster(alice, apiserver)
    placed = [r for r in expected if r["selected"]]
    first = workers("w1")
    wait_until(lambda: status(cluster) == "watching", what="watching")
    decide(apiserver, placed[0])
    wait_until(lambda: len(cycles(cluster)) == 1, what="the first cycle")
    first.stop()
    cluster.refresh_from_db()
    assert cluster.status == "stopped" and cluster.worker == "" and cluster.checkpoint_blob
    # the health written last says so too, stream by stream
    assert cluster.health["status"] == "stopped"
    assert {s["state"] for s in cluster.health["streams"]} == {"stopped"}
    checkpoint_rv = cluster.checkpoint()["streams"]["Pod"]["rv"]  # type: ignore[index]
    decide(apiserver, placed[1])  # while no worker runs
    lists_before = sum(1 for r in apiserver.requests if r.path == "/api/v1/pods" and not r.watch)
    requests_before = len(apiserver.requests)
    workers("w2")
    wait_until(lambda: len(cycles(cluster)) == 2, what="the decision made while stopped")
    rows = cycles(cluster)
    assert [(c.seq, c.pod, c.agreement, c.gap, c.trigger_source) for c in rows] == [
        (1, placed[0]["pod"], "match", False, "pod"),
        (2, placed[1]["pod"], "match", False, "pod"),
    ]
    # it watched on from the checkpoint: no new list of pods
    pods = [r for r in apiserver.requests[requests_before:] if r.path == "/api/v1/pods"]
    assert sum(1 for r in apiserver.requests if r.path == "/api/v1/pods" and not r.watch) == lists_before
    assert pods and pods[0].watch and pods[0].query["resourceVersion"] == [checkpoint_rv]
    decide(apiserver, placed[2])
    wait_until(lambda: len(cycles(cluster)) == 3, what="the next decision")
    assert LiveCycle.objects.filter(cluster=cluster).values("dedup").distinct().count() == 3


def test_a_decision_waiting_when_the_worker_stops_is_replayed_by_the_next_one(
    apiserver: TestApiServer, alice: User, workers: Any
) -> None:
    sc, expected = scenario("basic/scn-20001")
    serve(apiserver, sc)
    cluster = add_cluster(alice, apiserver)
    first = workers("w1")
    wait_until(lambda: status(cluster) == "watching", what="watching")
    watcher = first.worker.running[str(cluster.pk)].watcher
    apiserver.hold_watches("pods")
    apiserver.drop_connections()
    failed = next(r for r in expected if not r["selected"])
    decide(apiserver, failed)  # its event comes; the pods' watch does not
    wait_until(lambda: "Pod (" in (watcher.health()["waitingFor"] or ""), what="the failure waiting")
    first.stop()
    assert cycles(cluster) == []
    checkpoint = LiveCluster.objects.get(pk=cluster.pk).checkpoint()
    assert checkpoint is not None and [t["pod"] for t in checkpoint["pending"]] == [failed["pod"]]
    apiserver.release_watches()
    second = workers("w2")
    wait_until(lambda: len(cycles(cluster)) == 1, what="the decision replayed by the next worker")
    row = cycles(cluster)[0]
    assert (row.pod, row.trigger, row.agreement, row.exact) == (failed["pod"], "failed", "match", True)
    assert row.actual_message == failed["unschedulableMessage"]
    resumed = second.worker.running[str(cluster.pk)].watcher
    wait_until(resumed.idle, what="nothing left to replay")
    assert len(cycles(cluster)) == 1


def test_a_faulty_history_through_the_api_and_restarted_workers_loses_no_decision(
    apiserver: TestApiServer, api: APIClient, workers: Any
) -> None:
    """As a user would run it: the cluster added with a kubeconfig through the API, watched by the
    worker, the watches broken while a scripted scheduler decides, and the worker itself stopped in
    the middle of a burst and another started: the timeline holds every decision once, in order."""
    rng = random.Random(18)
    sched = faults.build_cluster(apiserver, rng)
    r = api.post(
        "/api/v1/clusters/",
        {"name": "prod", "source": "kubeconfig", "kubeconfig_text": yaml.safe_dump(apiserver.kubeconfig())},
        format="json",
    )
    assert r.status_code == 201, r.content
    cluster = LiveCluster.objects.get(pk=r.json()["id"])
    running = workers("w1")
    wait_until(lambda: status(cluster) == "watching", what="watching")
    for step in ["events-first", "worker", "restart", "expired", "nodes-late", "worker", "pods-first"]:
        if step == "worker":
            faults.burst(sched, rng, 2, 0.02)
            running.stop()  # decisions may be waiting: they go into the checkpoint
            faults.burst(sched, rng, 2, 0.02)  # while no worker runs
            running = workers(f"w{len(sched.decisions)}")
            faults.burst(sched, rng, 2, 0.02)
        else:
            faults.break_watches(apiserver, sched, rng, step, 0.3)
    made = [(d.kind, d.pod, d.node, d.message, d.agreement) for d in sched.decisions]
    wait_until(lambda: len(cycles(cluster)) >= len(made), timeout=60, what="every decision")
    watcher = running.worker.running[str(cluster.pk)].watcher
    wait_until(watcher.idle, what="nothing left to replay")
    rows = cycles(cluster)
    assert [
        (c.trigger, c.pod, c.actual_node or None, c.actual_message or None, c.agreement) for c in rows
    ] == made
    assert [c.seq for c in rows] == list(range(1, len(made) + 1))
    assert [int(c.resource_version) for c in rows] == sorted(int(c.resource_version) for c in rows)
    listed = api.get(f"/api/v1/clusters/{cluster.pk}/cycles/?page_size=200").json()
    assert [(c["pod"], c["agreement"]) for c in listed["results"]] == [(m[1], m[4]) for m in made]


def test_a_restart_after_the_history_was_compacted_relists_and_flags_the_gap(
    apiserver: TestApiServer, alice: User, workers: Any
) -> None:
    sc, expected = scenario("basic/scn-20001")
    serve(apiserver, sc)
    cluster = add_cluster(alice, apiserver)
    placed = [r for r in expected if r["selected"]]
    first = workers("w1")
    wait_until(lambda: status(cluster) == "watching", what="watching")
    decide(apiserver, placed[0])
    wait_until(lambda: len(cycles(cluster)) == 1, what="the first cycle")
    first.stop()
    decide(apiserver, placed[1])
    apiserver.compact()
    workers("w2")
    wait_until(lambda: len(cycles(cluster)) == 2, what="the decision found by the relist")
    gap = cycles(cluster)[1]
    # found by the pods' relist, or by the Scheduled event's when that stream relisted first
    assert gap.pod == placed[1]["pod"] and gap.gap and gap.trigger_source in ("relist", "event")
    assert gap.agreement == "match"  # nothing else changed meanwhile
    assert any("watch gap" in n for n in gap.notes)

    def pod_health() -> dict[str, Any]:
        health = LiveCluster.objects.get(pk=cluster.pk).health
        return next(h for h in health["streams"] if h["stream"] == "Pod")

    wait_until(
        lambda: pod_health()["state"] == "watching" and pod_health()["relists"] == 1,
        what="the relist in the health",
    )
    assert pod_health()["expired"] == 1
    assert len(cycles(cluster)) == 2  # the first decision was not stored again


def test_workers_share_clusters_through_leases(
    apiserver: TestApiServer, alice: User, api: APIClient, workers: Any
) -> None:
    sc, expected = scenario("basic/scn-20001")
    serve(apiserver, sc)
    cluster = add_cluster(alice, apiserver)
    one = workers("w1")
    wait_until(lambda: status(cluster) == "watching", what="watching")
    two = workers("w2")
    wait_until(lambda: two.worker.running == {} and len(apiserver.requests) > 0, what="w2 ticking")
    cluster.refresh_from_db()
    assert cluster.worker == "w1" and str(cluster.pk) not in two.worker.running
    one.stop()
    wait_until(lambda: LiveCluster.objects.get(pk=cluster.pk).worker == "w2", what="w2 taking over")
    wait_until(lambda: status(cluster) == "watching", what="watching again")
    # disabling stops the watch; enabling starts it again; a new configuration restarts it
    api.patch(f"/api/v1/clusters/{cluster.pk}/", {"enabled": False}, format="json")
    wait_until(lambda: not two.worker.running, what="the watch stopped")
    assert LiveCluster.objects.get(pk=cluster.pk).status == "stopped"
    api.patch(f"/api/v1/clusters/{cluster.pk}/", {"enabled": True}, format="json")
    wait_until(lambda: status(cluster) == "watching", what="watching once enabled")
    watcher = two.worker.running[str(cluster.pk)].watcher
    config = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 50\n"
    api.patch(
        f"/api/v1/clusters/{cluster.pk}/", {"config_source": "uploaded", "config": config}, format="json"
    )
    wait_until(
        lambda: (
            str(cluster.pk) in two.worker.running
            and two.worker.running[str(cluster.pk)].watcher is not watcher
        ),
        what="a restart",
    )
    decide(apiserver, next(r for r in expected if r["selected"]))
    wait_until(lambda: len(cycles(cluster)) == 1, what="a cycle with the new configuration")


def test_the_management_commands(
    apiserver: TestApiServer, alice: User, monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    from cryptography.fernet import Fernet

    from schedviz.live import crypto

    apiserver.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    cluster = add_cluster(alice, apiserver)
    call_command("watch_clusters", "--max-seconds", "0.5", "--tick-seconds", "0.1", "--worker-id", "cmd")
    out = capsys.readouterr().out
    assert "worker cmd: watching clusters" in out and "worker cmd: stopped" in out
    cluster.refresh_from_db()
    assert cluster.status == "stopped" and cluster.checkpoint_blob  # it ran, and left a checkpoint
    # rotation: a new key first, the old one after it; then the old one can go
    old = crypto.keys()[0].decode()
    new = Fernet.generate_key().decode()
    monkeypatch.setenv(crypto.ENV, f"{new},{old}")
    call_command("rotate_cluster_credentials")
    assert "re-encrypted the credentials of 1 cluster(s)" in capsys.readouterr().out
    monkeypatch.setenv(crypto.ENV, new)
    cluster.refresh_from_db()
    assert (
        json.loads(crypto.decrypt(bytes(cluster.credentials)))["users"][0]["user"]["token"] == apiserver.token
    )  # type: ignore[arg-type]
    call_command("rotate_cluster_credentials", "--generate")
    assert Fernet(capsys.readouterr().out.strip().encode())


def test_the_live_demo_runs_a_scripted_cluster(alice: User, capsys: Any) -> None:
    call_command("live_demo", "--username", "alice", "--seconds", "2", "--interval", "0.1")
    out = capsys.readouterr().out
    assert "live demo: http://127.0.0.1:" in out and "bound default/hello to " in out
    cluster = LiveCluster.objects.get(owner=alice)
    rows = cycles(cluster)
    assert len(rows) >= 3 and cluster.status == "stopped"
    # the scripted scheduler places pods where the engine would, except every 7th decision
    assert rows[0].pod == "default/hello" and rows[0].agreement == "match"
    assert sum(1 for r in rows if r.agreement == "match") >= len(rows) // 2


def test_the_clusters_token_never_reaches_the_logs_or_the_stored_state(
    apiserver: TestApiServer, alice: User, workers: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The worker watching, then refused (the token revoked on the cluster's side), logs at every
    level: the token is in none of it, nor in what it stores about the cluster."""
    import logging

    caplog.set_level(logging.DEBUG)
    sc, expected = scenario("basic/scn-20001")
    serve(apiserver, sc)
    cluster = add_cluster(alice, apiserver)
    secret = apiserver.token
    w = workers("w1")
    wait_until(lambda: status(cluster) == "watching", what="watching")
    decide(apiserver, next(r for r in expected if r["selected"]))
    wait_until(lambda: len(cycles(cluster)) == 1, what="a cycle")
    apiserver.token = "rotated-on-the-cluster"
    apiserver.drop_connections()  # the watches reconnect, with a token the cluster no longer takes
    # the worker's own account of the refusal (a bare "401" shows up first in urllib3's debug lines,
    # before the worker has handled it)
    wait_until(lambda: "refused the credentials" in caplog.text, what="the refusal")
    w.stop()
    assert secret not in caplog.text
    cluster.refresh_from_db()
    stored = json.dumps(
        {k: v for k, v in cluster.__dict__.items() if not k.startswith("_") and k != "credentials"},
        default=str,
    )
    assert secret not in stored and "refused the credentials" in stored + caplog.text
    assert secret.encode() not in bytes(cluster.checkpoint_blob or b"")
