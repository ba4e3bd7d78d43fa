"""Bounded replays in the web application: a cycle past SCHEDVIZ_CYCLE_SECONDS is stored as an Error
and the replay goes on; a cancel stops a replay mid-cycle (in-process and as a Celery worker runs it);
one user's replays do not starve another's (the in-process fair queue, the Celery per-user slots).

The plugins loop on purpose (tests/engine/spin_plugins.py); waits are generous (10 s) and no test
asserts that anything was fast."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import pytest
import yaml
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from schedviz.engine.runtime import registry
from schedviz.ingestion.models import Snapshot
from schedviz.replays import reporting, runner, tasks
from schedviz.replays.models import Cycle, Replay, Report
from tests.engine import spin_plugins
from tests.engine.builders import node, pod

WAIT = 10.0


@pytest.fixture(autouse=True)
def _reads_without_table_locks(transactional_db: None) -> Iterator[None]:
    """The test database is SQLite in memory with a shared cache, where a table lock another thread
    holds fails a statement at once ("database table is locked"; a database file waits instead, for
    its busy timeout). Here replays run on other threads while the test reads: reads take no table
    locks (read_uncommitted), and the tests below never write while a worker may."""
    from django.db import connection
    from django.db.backends.signals import connection_created

    def pragma(sender: Any, connection: Any, **kw: Any) -> None:
        if connection.vendor == "sqlite":
            connection.cursor().execute("PRAGMA read_uncommitted = 1")

    connection_created.connect(pragma)
    if connection.vendor == "sqlite":
        connection.cursor().execute("PRAGMA read_uncommitted = 1")
    yield
    connection_created.disconnect(pragma)


@pytest.fixture(autouse=True)
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(registry, "_extra", {})
    monkeypatch.setattr(registry, "_entry_points", None)
    with spin_plugins.registered():
        yield
    # nothing of this test may still run when the next one starts (or the database is flushed)
    until(lambda: tasks._executor_instance is None or tasks._executor_instance.pending() == 0)


def until(fn: Callable[[], Any], timeout: float = WAIT) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"not within {timeout} s")


def snapshot_yaml(*pods: dict[str, Any]) -> str:
    items = [node("n1", cpu="4"), node("n2", cpu="4"), *pods]
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})


def upload_as(client: APIClient, text: str) -> str:
    r = client.post("/api/v1/snapshots/", {"content": text}, format="json")
    assert r.status_code in (200, 201), r.content
    return str(r.json()["id"])


def start(client: APIClient, snapshot_id: str) -> str:
    r = client.post(
        "/api/v1/replays/", {"snapshot": snapshot_id, "config": spin_plugins.config()}, format="json"
    )
    assert r.status_code == 201, r.content
    return str(r.json()["id"])


def status(rid: str) -> str:
    return str(Replay.objects.values_list("status", flat=True).get(pk=rid))


def ended(rid: str) -> bool:
    return status(rid) in ("succeeded", "failed", "cancelled")


STUCK = pod("stuck", cpu="1", labels={"spin": "filter"}, created="2026-01-01T00:00:01Z")
NEXT = pod("next", cpu="1", created="2026-01-01T00:00:02Z")
HOLD = pod("hold", cpu="1", labels={"spin": "hold"}, created="2026-01-01T00:00:01Z")


def test_a_cycle_past_the_limit_is_stored_as_an_error_and_the_replay_goes_on(api: APIClient, settings: Any) -> None:
    settings.SCHEDVIZ_CYCLE_SECONDS = 0.25
    rid = start(api, upload_as(api, snapshot_yaml(STUCK, NEXT)))
    rep = api.get(f"/api/v1/replays/{rid}/").json()
    assert rep["status"] == "succeeded", rep
    assert rep["summary"]["results"] == {"Error": 1, "Scheduled": 1}
    cycles = api.get(f"/api/v1/replays/{rid}/cycles/").json()["results"]
    msg = "the cycle was stopped after 0.25 s (SCHEDVIZ_CYCLE_SECONDS)"
    assert [(c["pod"], c["result"], c["message"] or "") for c in cycles] == [
        ("default/stuck", "Error", msg),
        ("default/next", "Scheduled", ""),
    ]
    assert cycles[1]["node"] in ("n1", "n2")
    stuck, _ = Cycle.objects.get(replay_id=rid, seq=1).decoded()
    last = stuck.stages[-1]
    assert (last.point, last.plugin, last.code, last.reason) == ("Filter", spin_plugins.FILTER, "Error", msg)
    assert spin_plugins.spins_done == []


def test_building_the_scheduler_past_the_setup_limit_fails_the_replay(api: APIClient, settings: Any) -> None:
    settings.SCHEDVIZ_SETUP_SECONDS = 0.25
    sid = upload_as(api, snapshot_yaml(NEXT))
    r = api.post(
        "/api/v1/replays/", {"snapshot": sid, "config": spin_plugins.config(slow_start=True)}, format="json"
    )
    # the request validates the configuration without building the plugins; the replay builds them
    assert r.status_code == 201, r.content
    rep = api.get(f"/api/v1/replays/{r.json()['id']}/").json()
    assert rep["status"] == "failed"
    assert rep["reason"] == "building the scheduler was stopped after 0.25 s (SCHEDVIZ_SETUP_SECONDS)"


def test_cancel_stops_an_in_process_replay_mid_cycle(api: APIClient, settings: Any) -> None:
    settings.SCHEDVIZ_TASK_MODE = "thread"
    settings.SCHEDVIZ_CYCLE_SECONDS = 0  # no limit: only the cancel ends the cycle
    settings.SCHEDVIZ_CANCEL_POLL_SECONDS = 0.1
    rid = start(api, upload_as(api, snapshot_yaml(STUCK, NEXT)))
    assert spin_plugins.entered.wait(WAIT)
    assert status(rid) == "running"
    assert api.post(f"/api/v1/replays/{rid}/cancel/").status_code == 200
    until(lambda: ended(rid))
    r = Replay.objects.get(pk=rid)
    assert (r.status, r.reason) == ("cancelled", "cancelled by request")
    assert spin_plugins.spins_done == []  # the plugin's loop was stopped, not waited for
    assert not Cycle.objects.filter(replay_id=rid).exists()  # no batch was complete


def test_cancel_stops_a_replay_run_by_a_worker(api: APIClient, settings: Any) -> None:
    settings.SCHEDVIZ_TASK_MODE = "celery"
    settings.SCHEDVIZ_CYCLE_SECONDS = 0
    settings.SCHEDVIZ_CANCEL_POLL_SECONDS = 0.1
    sid = upload_as(api, snapshot_yaml(STUCK, NEXT))
    with mock.patch("schedviz.replays.tasks.run_replay_task.delay"):  # queued: the test plays the worker
        rid = start(api, sid)
    result: list[str] = []
    worker = threading.Thread(target=lambda: result.append(runner.run_replay(rid)))
    worker.start()
    try:
        assert spin_plugins.entered.wait(WAIT)
        assert api.post(f"/api/v1/replays/{rid}/cancel/").status_code == 200
        worker.join(WAIT)
        assert not worker.is_alive()
    finally:
        spin_plugins.release.set()
        worker.join(spin_plugins.SAFETY_SECONDS + 5)
    assert result == ["cancelled"]
    assert status(rid) == "cancelled" and spin_plugins.spins_done == []


class _Held:
    """Stands in for the fair queue while the test creates replays (its own writes then never
    overlap a worker's); ``release`` hands them to the real one."""

    def __init__(self) -> None:
        self.jobs: list[tuple[str, Any, Any]] = []

    def submit(self, owner: str, fn: Any, arg: Any) -> None:
        self.jobs.append((owner, fn, arg))


def _fair(api: APIClient, other_api: APIClient, settings: Any, threads: int) -> tuple[list[Replay], Replay]:
    """User A queues three long replays (each holds until released), then user B a short one."""
    settings.SCHEDVIZ_TASK_MODE = "thread"
    settings.SCHEDVIZ_REPLAY_THREADS = threads
    settings.SCHEDVIZ_REPLAYS_PER_USER = 1
    settings.SCHEDVIZ_CYCLE_SECONDS = 60
    long_snap = upload_as(api, snapshot_yaml(HOLD, NEXT))
    short_snap = upload_as(other_api, snapshot_yaml(NEXT))
    held = _Held()
    with mock.patch.object(tasks, "_executor", lambda: held):
        a_ids = [start(api, long_snap) for _ in range(3)]
        b_id = start(other_api, short_snap)
    a = [Replay.objects.get(pk=i) for i in a_ids]
    b = Replay.objects.get(pk=b_id)
    assert [owner for owner, _, _ in held.jobs] == [str(a[0].owner_id)] * 3 + [str(b.owner_id)]
    ex = tasks._executor()
    for job in held.jobs[:3]:
        ex.submit(*job)
    assert spin_plugins.entered.wait(WAIT)  # A's first replay holds its thread
    until(lambda: Replay.objects.filter(pk=a[0].pk, cycles_total=2).exists())  # and wrote what it writes first
    ex.submit(*held.jobs[3])
    return a, b


def test_one_users_replays_do_not_starve_anothers(
    api: APIClient, other_api: APIClient, settings: Any
) -> None:
    a, b = _fair(api, other_api, settings, threads=2)
    until(lambda: ended(str(b.pk)))  # while A's first replay still holds
    assert status(str(b.pk)) == "succeeded"
    assert [status(str(r.pk)) for r in a] == ["running", "queued", "queued"]  # one at a time per user
    spin_plugins.release.set()
    until(lambda: all(ended(str(r.pk)) for r in a))
    assert {status(str(r.pk)) for r in a} == {"succeeded"}


def test_owners_take_turns_on_a_single_thread(api: APIClient, other_api: APIClient, settings: Any) -> None:
    a, b = _fair(api, other_api, settings, threads=1)
    assert status(str(b.pk)) == "queued"  # the only thread is A's
    spin_plugins.release.set()
    until(lambda: ended(str(b.pk)) and all(ended(str(r.pk)) for r in a))
    b.refresh_from_db()
    for r in a:
        r.refresh_from_db()
    first, second, _ = sorted(a, key=lambda r: r.started)
    assert b.status == "succeeded" and b.finished is not None
    assert first.finished <= b.started and b.finished <= second.started  # B's turn came before A's second


def test_a_report_runs_through_the_fair_queue(api: APIClient, alice: User, settings: Any) -> None:
    settings.SCHEDVIZ_TASK_MODE = "thread"
    sid = upload_as(api, snapshot_yaml(NEXT))
    rep = reporting.create_report(alice, Snapshot.objects.get(pk=sid), None, None, False)
    until(lambda: Report.objects.values_list("status", flat=True).get(pk=rep.pk) in ("succeeded", "failed"))
    rep.refresh_from_db()
    assert rep.status == "succeeded", rep.error


def test_a_worker_defers_a_task_whose_owner_is_at_the_limit(
    api: APIClient, other_api: APIClient, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Celery: the owner's slot is held by a running replay; another replay of theirs goes back
    to the queue (retry with a countdown) instead of running; another user's runs."""
    settings.SCHEDVIZ_TASK_MODE = "celery"
    settings.SCHEDVIZ_REPLAYS_PER_USER = 1
    settings.SCHEDVIZ_REPLAY_RETRY_SECONDS = 2.5
    with mock.patch("schedviz.replays.tasks.run_replay_task.delay"):
        a1 = start(api, upload_as(api, snapshot_yaml(NEXT)))
        a2 = start(api, upload_as(api, snapshot_yaml(NEXT)))
        b1 = start(other_api, upload_as(other_api, snapshot_yaml(NEXT)))

    class Deferred(Exception):
        pass

    retries: list[dict[str, Any]] = []

    def retry(**kw: Any) -> Exception:
        retries.append(kw)
        return Deferred()

    monkeypatch.setattr(tasks.run_replay_task, "retry", retry)
    with tasks.owner_slot(Replay, a1) as granted:
        assert granted
        with pytest.raises(Deferred):
            tasks.run_replay_task.run(a2)
        assert retries == [{"args": (a2,), "kwargs": {"takeover": False}, "countdown": 2.5}]
        assert tasks.run_replay_task.max_retries is None  # deferred as long as it takes
        assert status(a2) == "queued"
        assert tasks.run_replay_task.run(b1) == "succeeded"  # another user's
    assert tasks.run_replay_task.run(a2) == "succeeded"  # the slot is free again
    # a finished replay needs no slot: its task ends at once
    with tasks.owner_slot(Replay, b1) as granted:
        assert granted
        assert tasks.run_replay_task.run(a2) == "succeeded"


def test_per_user_slots_count_up_to_the_limit(api: APIClient, settings: Any) -> None:
    settings.SCHEDVIZ_TASK_MODE = "celery"
    settings.SCHEDVIZ_REPLAYS_PER_USER = 2
    sid = upload_as(api, snapshot_yaml(NEXT))
    with mock.patch("schedviz.replays.tasks.run_replay_task.delay"):
        ids = [start(api, sid) for _ in range(3)]
    with tasks.owner_slot(Replay, ids[0]) as one, tasks.owner_slot(Replay, ids[1]) as two:
        assert one and two
        with tasks.owner_slot(Replay, ids[2]) as three:
            assert not three
    with tasks.owner_slot(Replay, ids[2]) as three:
        assert three
    # a worker died holding a slot (never freed); the task delivered again takes that slot over
    dead = tasks.owner_slot(Replay, ids[0])
    assert dead.__enter__()
    with tasks.owner_slot(Replay, ids[1]) as two, tasks.owner_slot(Replay, ids[2]) as three:
        assert two and not three
    settings.SCHEDVIZ_REPLAYS_PER_USER = 1
    with tasks.owner_slot(Replay, ids[0]) as again:
        assert not again  # an ordinary second delivery does not
    with tasks.owner_slot(Replay, ids[0], reclaim=True) as again:
        assert again
    dead.__exit__(None, None, None)
    settings.SCHEDVIZ_REPLAYS_PER_USER = 0  # no limit
    with (
        tasks.owner_slot(Replay, ids[0]) as a,
        tasks.owner_slot(Replay, ids[1]) as b,
        tasks.owner_slot(Replay, ids[2]) as c,
    ):
        assert a and b and c


def test_the_fair_queue_serves_owners_in_turn() -> None:
    ex = tasks.FairExecutor(threads=1, per_owner=1)
    gate = threading.Event()
    order: list[str] = []
    done = threading.Semaphore(0)

    def job(name: str) -> None:
        if name == "a1":
            gate.wait(WAIT)
        order.append(name)
        done.release()

    for name in ("a1", "a2", "a3"):
        ex.submit("alice", job, name)
    for name in ("b1", "b2"):
        ex.submit("bob", job, name)
    ex.submit("carol", job, "c1")
    gate.set()
    for _ in range(6):
        assert done.acquire(timeout=WAIT)
    assert order == ["a1", "b1", "c1", "a2", "b2", "a3"]
    ex.shutdown()
