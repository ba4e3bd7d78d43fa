"""`schedviz load`, short form: 20 websocket clients on one replay and 10 API requests a second for
10 seconds, against the real processes (uvicorn + a Celery worker on PostgreSQL and the machine's
Redis). The full form (200 clients, 50 requests/s, 2 minutes, a 1000-node replay) is in the README
with the figures measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .stack import (
    ROOT,
    base_env,
    database,
    free_port,
    manage,
    reachable,
    require_postgres,
    start_web,
    start_worker,
    token,
)

REDIS = os.environ.get("SCHEDVIZ_TEST_REDIS", "redis://127.0.0.1:6379/12")

pytestmark = pytest.mark.deploy


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    require_postgres()
    if not reachable("127.0.0.1", 6379):
        pytest.skip("Redis not running") if not os.environ.get("CI") else pytest.fail("Redis must run")
    import redis

    redis.Redis.from_url(REDIS).flushdb()
    data = tmp_path_factory.mktemp("load")
    with database(f"schedviz_load_test_{os.getpid()}") as url:
        env = base_env(data, url, REDIS)
        manage(env, "migrate", "--noinput")
        port = free_port()
        web = start_web(env, port, data)
        worker = start_worker(env, data)
        try:
            yield {"port": port, "env": env, "web": web, "worker": worker, "token": token(env)}
        finally:
            web.stop()
            worker.stop()


def test_short_load_run(server: dict[str, Any], tmp_path: Path) -> None:
    out_file = tmp_path / "load.json"
    cmd = [
        sys.executable,
        "-m",
        "schedviz",
        "load",
        "--url",
        f"http://127.0.0.1:{server['port']}",
        "--token",
        server["token"],
        "--clients",
        "20",
        "--api-rps",
        "10",
        "--duration",
        "10",
        "--nodes",
        "200",
        "--pods",
        "30",
        "--pid",
        str(server["web"].pid),
        "--p95-ms",
        "10000",
        "--output",
        str(out_file),
    ]
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=240)
    r = json.loads(out_file.read_text()) if out_file.exists() else None
    assert r is not None, run.stderr[-3000:]
    detail = (run.stdout, server["web"].tail(2000))
    s, a = r["streams"], r["api"]
    assert r["checks"]["replaySucceeded"], detail
    assert r["cycles"] == 30
    # every client streamed the whole replay at least once, then resumed mid-replay, with no gap or duplicate
    assert s["complete"] >= 20 and s["resumes"] >= 20, detail
    assert s["gaps"] == 0 and s["duplicates"] == 0 and s["errors"] == [], detail
    assert s["cycleEnds"] >= 20 * 30
    # the API kept answering, every request a 200 (latency is reported; the bound here is loose: the
    # suite shares a 2-core machine with the server it measures)
    assert a["errors"] == [] and set(a["statuses"]) == {"200"}, detail
    assert a["requests"] >= 80 and a["p95Ms"] is not None
    assert str(server["web"].pid) in r["memory"] and r["memory"][str(server["web"].pid)]["samples"] >= 5
    assert run.returncode == 0, detail
    assert "PASS" in run.stdout


def test_bench_stream_follows_a_replay_in_batched_frames() -> None:
    """`schedviz bench-stream` at a small size: the command works end to end and counts what it should."""
    require_postgres()
    if not reachable("127.0.0.1", 6379):
        pytest.skip("Redis not running") if not os.environ.get("CI") else pytest.fail("Redis must run")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SCHEDVIZ_TASK_MODE")}
    with database("schedviz_bench_stream_test") as url:
        out = subprocess.run(
            [sys.executable, "-m", "schedviz", "bench-stream", "--nodes", "40", "--pods", "6", "--json",
             "--database-url", url, "--redis-url", "redis://127.0.0.1:6379/11"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
        )
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["status"] == "succeeded" and r["cycles"] == r["expected"] == 6
    # a frame per cycle (of a few dozen messages), plus hello, nodes, the status updates and end
    assert r["messages"] > 6 * 10 and 6 + 3 <= r["frames"] < r["messages"] / 3
    assert 0 < r["maxFrameBytes"] < 2**20 and r["cyclesPerSecond"] > 0


def test_two_web_processes_stream_one_running_replay_alike(server: dict[str, Any], tmp_path: Path) -> None:
    """The worker publishes on Redis; a client on each of two web processes follows the replay as it
    runs and receives the same messages in the same order."""
    import asyncio

    import websockets

    from .stack import call, upload_synthetic

    tok = server["token"]
    port2 = free_port()
    web2 = start_web(server["env"], port2, tmp_path, name="web2")
    try:
        snap = upload_synthetic(server["port"], tok, 500, 150)
        status, _, replay = call(
            server["port"], "POST", "/api/v1/replays/", tok, {"snapshot": snap["id"], "all_nodes": True}
        )
        assert status == 201, replay

        async def follow(port: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
            url = f"ws://127.0.0.1:{port}/ws/replays/{replay['id']}/?token={tok}&batch=1"
            got: list[dict[str, Any]] = []
            async with websockets.connect(url, max_size=8 * 2**20) as ws:
                hello = json.loads(await ws.recv())
                while not got or got[-1]["type"] != "end":
                    frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=120))
                    got.extend(frame if isinstance(frame, list) else [frame])
            return hello, got

        async def both() -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
            return list(await asyncio.gather(follow(server["port"]), follow(port2)))

        (hello1, got1), (hello2, got2) = asyncio.run(both())
    finally:
        web2.stop()
    # they joined while the replay was queued or running, and followed it to its end
    assert {hello1["replay"]["status"], hello2["replay"]["status"]} & {"queued", "running"}, (hello1, hello2)
    cycles1 = [m for m in got1 if "pos" in m]
    assert cycles1 == [m for m in got2 if "pos" in m]
    assert sum(1 for m in cycles1 if m["type"] == "cycle.end") == snap["pending_count"]
    assert [m["status"] for m in got1 if m["type"] == "status"][-1] == "succeeded"
