"""Faults: a worker killed mid-replay, Redis restarted during a stream, PostgreSQL briefly unreachable.

The fast tests here run in-process; the ``deploy`` ones run the real processes (uvicorn, Celery
workers) on a database of their own on the machine's PostgreSQL, with a private redis-server on
another port or a TCP proxy in front of PostgreSQL that the test cuts and restores.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import urllib.parse
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from django.db import OperationalError
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from schedviz.replays.models import Replay

from .stack import (
    RedisServer,
    TcpProxy,
    base_env,
    call,
    database,
    free_port,
    manage,
    reachable,
    require_postgres,
    start_web,
    start_worker,
    token,
    upload_synthetic,
)

# The full form (README, Hardening): the same runs on larger replays, e.g. SCHEDVIZ_FAULT_SCALE=3, with
# `-s` to see the figures each prints.
SCALE = float(os.environ.get("SCHEDVIZ_FAULT_SCALE", "1"))


def scaled(n: int) -> int:
    return max(1, round(n * SCALE))


def figures(name: str, **values: Any) -> None:
    print(f"\n[fault figures] {name}: " + ", ".join(f"{k}={v}" for k, v in values.items()))


# --------------------------------------------------------------------------------------------------
# In-process: the answers when the database is away, and the take-over of a dead worker's replay


@pytest.mark.django_db
def test_database_error_in_an_api_view_is_a_503_json(api: APIClient) -> None:
    with mock.patch(
        "schedviz.ingestion.views.SnapshotViewSet.list", side_effect=OperationalError("connection refused")
    ):
        r = api.get("/api/v1/snapshots/")
    assert r.status_code == 503 and r["Retry-After"] == "5"
    assert r.json() == {
        "error": {
            "code": "unavailable",
            "message": "the database is unavailable; try again shortly",
            "details": None,
        }
    }


@pytest.mark.django_db
def test_database_error_outside_the_views_is_a_503_too(django_user_model: Any) -> None:
    """Raised in a middleware (the session store), past the views: the handler500 answers 503."""
    user = django_user_model.objects.create_user("u", password="pw-u")
    client = Client(raise_request_exception=False)
    client.force_login(user)
    broken = mock.patch(
        "django.contrib.sessions.middleware.SessionMiddleware.process_response",
        side_effect=OperationalError("server closed the connection unexpectedly"),
    )
    with broken:
        api = client.get("/api/v1/snapshots/")
        page = client.get("/accounts/login/")
    assert api.status_code == 503 and api.json()["error"]["code"] == "unavailable"
    assert page.status_code == 503 and b"briefly unavailable" in page.content
    # any other unexpected error under /api/ is a JSON 500 in the error shape, not Django's HTML page
    with mock.patch(
        "django.contrib.sessions.middleware.SessionMiddleware.process_response",
        side_effect=RuntimeError("bug"),
    ):
        r = client.get("/api/v1/snapshots/")
    assert r.status_code == 500 and r.json()["error"]["code"] == "server_error"


@pytest.mark.django_db(transaction=True)
def test_a_redelivered_task_takes_over_a_running_replay(
    api: APIClient, upload: Callable[..., dict[str, Any]], settings: Any
) -> None:
    from schedviz.replays.runner import run_replay

    settings.SCHEDVIZ_TASK_MODE = "celery"  # queued, not run: the test plays the worker
    with mock.patch("schedviz.replays.tasks.run_replay_task.delay"):
        rid = api.post("/api/v1/replays/", {"snapshot": upload()["id"]}, format="json").json()["id"]
    # a worker claimed it and died: running, with a recent heartbeat
    Replay.objects.filter(pk=rid).update(
        status="running", attempt=1, heartbeat=timezone.now(), started=timezone.now()
    )
    assert run_replay(rid) == "running"  # an ordinary second delivery leaves it alone
    assert run_replay(rid, takeover=True) == "succeeded"  # a redelivery takes it over
    r = Replay.objects.get(pk=rid)
    assert r.attempt == 2 and r.cycles_done == r.cycles_total == 2
    assert set(r.cycles.values_list("attempt", flat=True)) == {2}


@pytest.mark.django_db(transaction=True)
def test_a_stale_replay_becomes_re_runnable(
    api: APIClient, upload: Callable[..., dict[str, Any]], settings: Any
) -> None:
    settings.SCHEDVIZ_STALE_SECONDS = 30
    settings.SCHEDVIZ_TASK_MODE = "celery"
    with mock.patch("schedviz.replays.tasks.run_replay_task.delay"):
        rid = api.post("/api/v1/replays/", {"snapshot": upload()["id"]}, format="json").json()["id"]
    Replay.objects.filter(pk=rid).update(
        status="running", attempt=1, heartbeat=timezone.now() - timedelta(seconds=10)
    )
    assert api.post(f"/api/v1/replays/{rid}/rerun/").status_code == 409
    Replay.objects.filter(pk=rid).update(heartbeat=timezone.now() - timedelta(seconds=31))
    settings.SCHEDVIZ_TASK_MODE = "sync"
    r = api.post(f"/api/v1/replays/{rid}/rerun/")
    assert r.status_code == 202
    assert api.get(f"/api/v1/replays/{rid}/").json()["status"] == "succeeded"


# --------------------------------------------------------------------------------------------------
# Real processes


def _wait(what: str, fn: Callable[[], Any], timeout: float, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


def _cycles_by_attempt(database_url: str, replay_id: str) -> dict[int, tuple[int, int, int]]:
    import psycopg

    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT attempt, count(*), min(seq), max(seq) FROM replays_cycle WHERE replay_id = %s GROUP BY attempt",
            (replay_id.replace("-", ""),),
        ).fetchall()
    return {a: (n, lo, hi) for a, n, lo, hi in rows}


@pytest.fixture
def postgres_db(tmp_path: Path) -> Iterator[str]:
    require_postgres()
    with database(f"schedviz_faults_{os.getpid()}_{int(time.time() * 1000) % 100000}") as url:
        yield url


@pytest.mark.deploy
def test_worker_killed_mid_replay_is_retried_to_completion_by_another(
    postgres_db: str, tmp_path: Path
) -> None:
    redis = RedisServer(free_port(), tmp_path)
    redis.start()
    # the broker hands an unacknowledged task to another worker after 3 s (production: an hour)
    env = base_env(tmp_path, postgres_db, redis.url, SCHEDVIZ_TASK_VISIBILITY_SECONDS="3")
    manage(env, "migrate", "--noinput")
    port = free_port()
    web = start_web(env, port, tmp_path)
    first = start_worker(env, tmp_path, "worker-a")
    second = None
    try:
        tok = token(env)
        snap = upload_synthetic(port, tok, nodes=scaled(2000), pods=scaled(1500))
        status, _, rep = call(
            port, "POST", "/api/v1/replays/", tok, {"snapshot": snap["id"], "all_nodes": True}
        )
        assert status == 201, rep
        rid = rep["id"]

        def progressed() -> Any:
            r = call(port, "GET", f"/api/v1/replays/{rid}/", tok)[2]
            return r if r["status"] == "running" and r["cycles_done"] >= 50 else None

        mid = _wait("the replay to be under way", progressed, 120, every=0.05)
        assert mid["cycles_done"] < mid["cycles_total"]
        first.kill(signal.SIGKILL)  # the worker and its pool process, mid-replay
        killed_t = time.monotonic()
        killed_at = call(port, "GET", f"/api/v1/replays/{rid}/", tok)[2]
        # nothing pretends to be complete: still running (its worker is gone), a partial trace
        assert killed_at["status"] == "running" and killed_at["cycles_done"] < killed_at["cycles_total"]
        partial = _cycles_by_attempt(postgres_db, rid)
        assert set(partial) == {1} and partial[1][0] < snap["pending_count"]
        time.sleep(1.0)
        assert call(port, "GET", f"/api/v1/replays/{rid}/", tok)[2]["status"] == "running"

        second = start_worker(env, tmp_path, "worker-b")

        taken: dict[str, float] = {}

        def ended() -> Any:
            r = call(port, "GET", f"/api/v1/replays/{rid}/", tok)[2]
            if r.get("attempt", 1) >= 2 and "at" not in taken:
                taken["at"] = time.monotonic()
            return r if r["status"] in ("succeeded", "failed", "cancelled") else None

        final = _wait("another worker to finish the replay", ended, 150 * max(1.0, SCALE), every=0.5)
        assert final["status"] == "succeeded", (final, second.tail())
        assert final["cycles_done"] == final["cycles_total"] == snap["pending_count"]
        detail = call(port, "GET", f"/api/v1/replays/{rid}/", tok)[2]
        assert detail.get("attempt", 2) == 2
        stored = _cycles_by_attempt(postgres_db, rid)
        assert set(stored) == {2}, stored  # the dead attempt's cycles are gone
        n, lo, hi = stored[2]
        assert lo == 1 and hi == n and n >= snap["pending_count"]  # every cycle, 1..n, no hole
        assert "redelivered" in second.tail(200000) or "schedviz.run_replay" in second.tail(200000)
        figures(
            "worker SIGKILLed mid-replay",
            nodes=snap["node_count"],
            pods=snap["pending_count"],
            killed_after_cycles=killed_at["cycles_done"],
            taken_over_after_s=round(taken.get("at", killed_t) - killed_t, 1),
            finished_after_s=round(time.monotonic() - killed_t, 1),
            final=f"{final['status']} attempt 2, cycles 1..{n} with no hole",
        )
    finally:
        web.stop()
        first.stop()
        if second is not None:
            second.stop()
        redis.stop()


async def _follow(
    ws_url: str, total_cycles: int, on_cycle: Callable[[int], None], timeout: float
) -> dict[str, Any]:
    """A client that reconnects after any drop, resuming after its last position, until `end`."""
    from schedviz.tools.loadtest import StreamStats

    st = StreamStats()
    cursor: list[tuple[int, int] | None] = [None]
    deadline = time.monotonic() + timeout
    drops = 0
    last_cycle = 0
    while time.monotonic() < deadline:
        try:
            end = await _stream_with_progress(ws_url, cursor, st, deadline, total_cycles, on_cycle)
        except Exception:
            drops += 1
            await asyncio.sleep(0.3)
            continue
        last_cycle = end[0] if end else 0
        return {"stats": st, "drops": drops, "last": last_cycle}
    raise AssertionError(f"no end within {timeout} s: {st.errors[:5]}")


async def _stream_with_progress(
    ws_url: str,
    cursor: list[tuple[int, int] | None],
    st: Any,
    deadline: float,
    total: int,
    on_cycle: Callable[[int], None],
) -> Any:
    from schedviz.tools.loadtest import _stream

    seen = st.cycles

    async def watch() -> None:
        nonlocal seen
        while True:
            await asyncio.sleep(0.02)
            if st.cycles != seen:
                seen = st.cycles
                on_cycle(seen)

    w = asyncio.create_task(watch())
    try:
        return await _stream(ws_url, cursor[0], st, deadline, total, cursor)
    finally:
        w.cancel()


@pytest.mark.deploy
def test_redis_restarted_during_a_stream(postgres_db: str, tmp_path: Path) -> None:
    redis = RedisServer(free_port(), tmp_path)
    redis.start()
    env = base_env(tmp_path, postgres_db, redis.url)
    manage(env, "migrate", "--noinput")
    port = free_port()
    web = start_web(env, port, tmp_path)
    worker = start_worker(env, tmp_path)
    try:
        tok = token(env)
        snap = upload_synthetic(port, tok, nodes=scaled(1500), pods=scaled(600))
        status, _, rep = call(
            port, "POST", "/api/v1/replays/", tok, {"snapshot": snap["id"], "all_nodes": True}
        )
        assert status == 201
        url = f"ws://127.0.0.1:{port}/ws/replays/{rep['id']}/?token={urllib.parse.quote(tok)}"
        restarted: dict[str, float] = {}

        def on_cycle(n: int) -> None:
            if n >= 40 and "at" not in restarted:
                restarted["at"] = time.monotonic()
                redis.stop(signal.SIGKILL)  # the broker and the channel layer vanish mid-stream
                restarted["cycle"] = n

        async def go() -> dict[str, Any]:
            client = asyncio.create_task(_follow(url, snap["pending_count"], on_cycle, 240))
            while "at" not in restarted and not client.done():
                await asyncio.sleep(0.05)
            await asyncio.sleep(2.0)
            redis.start()  # back, empty (no persistence), on the same port
            return await client

        out = asyncio.run(go())
        st = out["stats"]
        assert "at" in restarted, "the stream ended before Redis could be restarted"
        # every cycle arrived once, in order, across the reconnections
        assert st.gaps == 0 and st.duplicates == 0, st.errors[:10]
        assert out["last"] == snap["pending_count"] and st.cycles == snap["pending_count"], (
            out,
            st.errors[:5],
        )
        final = call(port, "GET", f"/api/v1/replays/{rep['id']}/", tok)[2]
        assert final["status"] == "succeeded" and final["cycles_done"] == snap["pending_count"], (
            final,
            worker.tail(),
        )
        assert call(port, "GET", "/healthz", None)[0] == 200  # and the web tier recovered
        # the consumer noticed the channel layer go and came back to it (it kept sending by polling)
        log = web.tail(400000)
        assert "channel layer" in log, log[-3000:]
        figures(
            "Redis killed during a stream, back 2 s later",
            nodes=snap["node_count"],
            pods=snap["pending_count"],
            killed_at_cycle=restarted["cycle"],
            cycles_received=st.cycles,
            gaps=st.gaps,
            duplicates=st.duplicates,
            websocket_reconnects=out["drops"],
            stream_done_after_restart_s=round(time.monotonic() - restarted["at"] - 2.0, 1),
        )
    finally:
        web.stop()
        worker.stop()
        redis.stop()


@pytest.mark.deploy
def test_postgres_unavailable_answers_503_and_recovers(postgres_db: str, tmp_path: Path) -> None:
    if not reachable("127.0.0.1", 6379):
        pytest.skip("Redis not running")
    proxy = TcpProxy(("127.0.0.1", 5432))
    via_proxy = postgres_db.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    assert via_proxy != postgres_db
    env = base_env(tmp_path, via_proxy, "redis://127.0.0.1:6379/10", DATABASE_CONNECT_TIMEOUT="2")
    manage(env, "migrate", "--noinput")
    tok = token(env)
    port = free_port()
    web = start_web(env, port, tmp_path)
    try:
        assert call(port, "GET", "/api/v1/snapshots/", tok)[0] == 200
        for mode in ("down", "hold"):  # the server gone (refused), then hung (accepts, never answers)
            proxy.set_mode(mode)
            started = time.monotonic()
            status, headers, body = call(port, "GET", "/api/v1/snapshots/", tok, timeout=30)
            took = time.monotonic() - started
            assert status == 503, (mode, status, body)
            assert body == {
                "error": {
                    "code": "unavailable",
                    "message": "the database is unavailable; try again shortly",
                    "details": None,
                }
            }
            assert headers.get("retry-after") == "5" and headers["content-type"] == "application/json"
            # the server's own connect timeout (5 s) answered, not the client's 30 s: a wide margin
            # for a busy machine, still short of a hung request
            assert took < 25, (mode, took)
            assert call(port, "GET", "/healthz", None)[0] == 503
            s, _, _ = call(port, "GET", "/api/v1/replays/", tok)
            assert s == 503
            proxy.set_mode("up")
            back = time.monotonic()
            assert _wait("recovery", lambda: call(port, "GET", "/api/v1/snapshots/", tok)[0] == 200, 20)
            assert call(port, "GET", "/healthz", None)[0] == 200
            figures(
                f"PostgreSQL {'refusing' if mode == 'down' else 'hung'}",
                first_503_s=round(took, 2),
                serving_again_after_s=round(time.monotonic() - back, 2),
            )
        log = web.tail(100000)
        assert "Traceback" not in log or "database unavailable" in log
    finally:
        web.stop()
        proxy.close()
