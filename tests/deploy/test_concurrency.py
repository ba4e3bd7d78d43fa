"""The server under concurrent use, as a newcomer runs it (`schedviz serve`: SQLite, replays in the web
process) and on PostgreSQL: replays started together while other clients keep writing. Every replay
must succeed with every cycle stored: none failed on a lock, none stuck queued or running."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from tests.deploy.serving import free_port, serving
from tests.engine.builders import node, pod

ROOT = Path(__file__).resolve().parents[2]
PG = os.environ.get("SCHEDVIZ_TEST_PG", "postgres://postgres@127.0.0.1:5432")
REPLAYS = 12
WRITERS = 2
WRITES_EACH = 60
PODS = 20


def _env(data_dir: Path, database_url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SCHEDVIZ_TASK_MODE")}
    env.update(
        SCHEDVIZ_DATA_DIR=str(data_dir),
        SCHEDVIZ_TASK_MODE="thread",
        SCHEDVIZ_UPLOAD_RATE="100000/hour",
        SCHEDVIZ_API_RATE="1000000/hour",
        SCHEDVIZ_REPLAYS_PER_USER="0",  # one user starts them all: fairness is another test's business
        PYTHONUNBUFFERED="1",
    )
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


def _token(env: dict[str, str]) -> str:
    code = (
        "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'schedviz.settings'); django.setup()\n"
        "from django.core.management import call_command; call_command('migrate', verbosity=0)\n"
        "from django.contrib.auth.models import User; from schedviz.accounts.models import ApiToken\n"
        "u = User.objects.create_user('busy', password='x'); print(ApiToken.issue(u, 'load')[1])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def _server(env: dict[str, str], data_dir: Path) -> contextlib.AbstractContextManager[str]:
    port = free_port()
    command = [sys.executable, "-m", "schedviz", "serve", "--host", "127.0.0.1", "--port", str(port)]
    return serving(command, ROOT, env, data_dir / "server.log", port)


def _manifests() -> str:
    items: list[dict[str, Any]] = [node(f"n{i}", cpu="8", labels={"topology.kubernetes.io/zone": f"z{i % 3}"}) for i in range(6)]
    items += [pod(f"p{i}", cpu="500m", created=f"2026-01-01T00:00:{i:02d}Z") for i in range(PODS)]
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})


CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled: [{name: ImageLocality, weight: %d}]
"""


def _drive(base: str, token: str) -> None:
    s = requests.Session()
    s.headers["Authorization"] = f"Token {token}"
    r = s.post(f"{base}/api/v1/snapshots/", json={"content": _manifests(), "name": "busy"}, timeout=60)
    assert r.status_code == 201, r.text
    snapshot = r.json()["id"]
    errors: list[str] = []
    replay_ids: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(REPLAYS + WRITERS)

    def start_replay() -> None:
        c = requests.Session()
        c.headers["Authorization"] = f"Token {token}"
        start.wait()
        r = c.post(f"{base}/api/v1/replays/", json={"snapshot": snapshot, "all_nodes": True}, timeout=120)
        with lock:
            (replay_ids.append(r.json()["id"]) if r.status_code == 201 else errors.append(f"start: {r.status_code} {r.text[:200]}"))

    def write(k: int) -> None:
        c = requests.Session()
        c.headers["Authorization"] = f"Token {token}"
        start.wait()
        for i in range(WRITES_EACH):
            r = c.post(f"{base}/api/v1/configurations/", json={"name": f"w{k}-{i}", "text": CONFIG % (i % 5 + 1)}, timeout=120)
            if r.status_code != 201:
                with lock:
                    errors.append(f"write: {r.status_code} {r.text[:200]}")

    threads = [threading.Thread(target=start_replay) for _ in range(REPLAYS)]
    threads += [threading.Thread(target=write, args=(k,)) for k in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors[:5]
    assert len(replay_ids) == REPLAYS
    # every replay ends (a generous bound: the machine may be busy), and ends well
    deadline = time.monotonic() + 600
    final: dict[str, dict[str, Any]] = {}
    while len(final) < REPLAYS:
        assert time.monotonic() < deadline, {rid: s.get(f"{base}/api/v1/replays/{rid}/").json()["status"] for rid in replay_ids}
        for rid in replay_ids:
            if rid not in final:
                body = s.get(f"{base}/api/v1/replays/{rid}/", timeout=60).json()
                if body["status"] not in ("queued", "running"):
                    final[rid] = body
        time.sleep(0.5)
    for rid, body in final.items():
        assert body["status"] == "succeeded", (rid, body["status"], body["reason"])
        cycles = s.get(f"{base}/api/v1/replays/{rid}/cycles/", params={"page_size": 1000}, timeout=60).json()
        assert cycles["count"] == PODS == body["cycles_total"] == body["cycles_done"], (rid, cycles["count"], body)
        assert [c["seq"] for c in cycles["results"]] == list(range(1, PODS + 1))


def test_sqlite_embedded_default_under_concurrent_writes(tmp_path: Path) -> None:
    env = _env(tmp_path, None)
    token = _token(env)
    with _server(env, tmp_path) as base:
        _drive(base, token)
    assert "database is locked" not in (tmp_path / "server.log").read_text()


@pytest.mark.postgres
def test_postgresql_under_concurrent_writes(tmp_path: Path) -> None:
    psycopg = pytest.importorskip("psycopg")
    name = f"schedviz_concurrency_{os.getpid()}"
    try:
        with psycopg.connect(f"{PG}/postgres", autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL is not reachable: {exc}")
    try:
        env = _env(tmp_path, f"{PG}/{name}")
        token = _token(env)
        with _server(env, tmp_path) as base:
            _drive(base, token)
    finally:
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
