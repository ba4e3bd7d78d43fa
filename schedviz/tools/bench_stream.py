"""`schedviz bench-stream`: end-to-end streaming speed, worker -> channel layer -> websocket client.

Starts the ASGI server and a Celery worker as separate processes on PostgreSQL and Redis (the
production shape), stores a synthetic snapshot, connects a websocket client to a replay before it
starts, queues the replay on the worker and measures, at the client, cycles per second from the first
cycle's first message to the last one, and the largest frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # the repository (this is schedviz/tools/)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _objects(nodes: int, pods: int) -> list[dict[str, Any]]:
    from schedviz.tools.bench_engine import synthetic_cluster

    snap = synthetic_cluster(nodes, pods)
    return [n.raw for n in snap.nodes] + [p.raw for p in snap.pods]


async def _client(url: str, expect: int) -> dict[str, Any]:
    import websockets

    sizes: list[int] = []
    cycles = messages = 0
    first = last = 0.0
    async with websockets.connect(url, max_size=4 * 2**20, open_timeout=30) as ws:
        while True:
            raw = await asyncio.wait_for(ws.recv(), timeout=600)
            now = time.perf_counter()
            sizes.append(len(raw))
            data = json.loads(raw)
            over = False
            for msg in data if isinstance(data, list) else [data]:  # a batched frame: a cycle's messages
                messages += 1
                kind = msg.get("type")
                if kind == "cycle.start" and not first:
                    first = now
                elif kind == "cycle.end":
                    cycles += 1
                    last = now
                elif kind == "end" or (kind == "status" and msg.get("status") == "failed"):
                    over = True
            if over:
                break
    elapsed = max(last - first, 1e-9)
    return {
        "cycles": cycles,
        "expected": expect,
        "seconds": round(elapsed, 3),
        "cyclesPerSecond": round(cycles / elapsed, 1),
        "messages": messages,
        "frames": len(sizes),
        "maxFrameBytes": max(sizes) if sizes else 0,
    }


def run(nodes: int, pods: int, database_url: str, redis_url: str) -> dict[str, Any]:
    from schedviz.lib.dbs import ensure_database

    ensure_database(database_url)
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-stream-secret-key-0123456789-abcdefghijklmnop"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    env.pop("SCHEDVIZ_TASK_MODE", None)
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY")})
    os.environ["DJANGO_SETTINGS_MODULE"] = "schedviz.settings"
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from schedviz.accounts.models import ApiToken
    from schedviz.ingestion.parsing import Limits
    from schedviz.ingestion.services import create_snapshot
    from schedviz.replays.models import Replay

    call_command("migrate", interactive=False, verbosity=0)
    user, _ = User.objects.get_or_create(username="bench")
    _, token = ApiToken.issue(user, "bench-stream", ttl_days=1)
    payload = json.dumps({"kind": "List", "items": _objects(nodes, pods)}).encode()
    import dataclasses

    base = Limits.from_env()
    limits = dataclasses.replace(base, max_upload_bytes=max(base.max_upload_bytes, len(payload) + 1))
    snap, _ = create_snapshot(user, payload, "bench.json", name=f"bench {nodes}x{pods}", limits=limits)
    replay = Replay.objects.create(owner=user, snapshot=snap, options={"allNodes": True}, cycles_total=snap.pending_count)

    port = _free_port()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "schedviz.asgi:application", "--host", "127.0.0.1", "--port", str(port),
             "--log-level", "warning"],
            cwd=ROOT, env=env, start_new_session=True,
        ),
        subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "schedviz", "worker", "--loglevel", "WARNING", "--queues",
             "schedviz", "--concurrency", "1"],
            cwd=ROOT, env=env, start_new_session=True,
        ),
    ]
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the web server did not start") from None
                time.sleep(0.3)

        async def go() -> dict[str, Any]:
            from schedviz.replays.tasks import run_replay_task

            url = f"ws://127.0.0.1:{port}/ws/replays/{replay.pk}/?token={token}&batch=1"
            client = asyncio.create_task(_client(url, snap.pending_count))
            await asyncio.sleep(1.0)  # the client is connected and waiting
            await asyncio.to_thread(run_replay_task.delay, str(replay.pk))
            return await client

        result = asyncio.run(go())
        replay.refresh_from_db()
        worker_seconds = (replay.finished - replay.started).total_seconds() if replay.finished and replay.started else None
        result.update(
            {
                "nodes": nodes,
                "pods": pods,
                "status": replay.status,
                "workerSeconds": round(worker_seconds, 3) if worker_seconds else None,
                "channelLayer": "redis",
            }
        )
        return result
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
