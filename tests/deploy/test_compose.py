"""docker-compose.yml, checked by reading it and by running its web and worker commands without docker,
against the machine's PostgreSQL and Redis: migrations, the ASGI server, a Celery worker that runs a
replay submitted through the API, and every service's health check."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
PG = os.environ.get("SCHEDVIZ_TEST_PG", "postgres://postgres@127.0.0.1:5432")
REDIS = os.environ.get("SCHEDVIZ_TEST_REDIS", "redis://127.0.0.1:6379/14")
DB_NAME = f"schedviz_compose_test_{os.getpid()}"


def test_services_and_health_checks() -> None:
    services = COMPOSE["services"]
    assert set(services) == {"postgres", "redis", "web", "worker"}
    for name, svc in services.items():
        assert "healthcheck" in svc and svc["healthcheck"]["test"], name
    for name in ("web", "worker"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in env["DATABASE_URL"]
        assert env["REDIS_URL"].startswith("redis://redis:6379")
        assert "SECRET_KEY" in env and env["DEBUG"] == "false"
        deps = services[name]["depends_on"]
        assert deps["postgres"]["condition"] == deps["redis"]["condition"] == "service_healthy"
    web_cmd = " ".join(services["web"]["command"])
    assert web_cmd.index("migrate") < web_cmd.index("uvicorn schedviz.asgi:application")
    assert "celery -A schedviz worker" in " ".join(services["worker"]["command"])
    assert (ROOT / "Dockerfile").exists()


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _command(service: str, port: int | None = None) -> list[str]:
    cmd = [str(part) for part in COMPOSE["services"][service]["command"]]
    text = " ".join(shlex.quote(c) for c in cmd)
    if port is not None:
        cmd = [c.replace("--host 0.0.0.0 --port 8000", f"--host 127.0.0.1 --port {port}") for c in cmd]
        assert any(str(port) in c for c in cmd), text
    return cmd


def _health(service: str, env: dict[str, str], port: int) -> subprocess.CompletedProcess[str]:
    test = COMPOSE["services"][service]["healthcheck"]["test"]
    kind, *rest = test
    if kind == "CMD-SHELL":
        argv = ["sh", "-c", rest[0].replace("127.0.0.1:8000", f"127.0.0.1:{port}")]
    else:
        argv = [a.replace("127.0.0.1:8000", f"127.0.0.1:{port}") for a in rest]
    if service == "postgres":
        argv = ["pg_isready", "-h", "127.0.0.1", "-p", "5432"]
    if service == "redis":
        argv = [*argv, "-h", "127.0.0.1", "-p", "6379"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    if not (_reachable("127.0.0.1", 5432) and _reachable("127.0.0.1", 6379)):
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL and Redis must run on 127.0.0.1 for the deployment test")
        pytest.skip("PostgreSQL or Redis not running")
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')
    import redis as redis_lib

    redis_lib.Redis.from_url(REDIS).flushdb()
    port = _free_port()
    data = tmp_path_factory.mktemp("compose")
    env = {
        **os.environ,
        "DATABASE_URL": f"{PG}/{DB_NAME}",
        "REDIS_URL": REDIS,
        "SECRET_KEY": "compose-test-secret-key-not-for-production-0123456789",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DEBUG": "false",
        "SCHEDVIZ_DATA_DIR": str(data),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    env.pop("SCHEDVIZ_TASK_MODE", None)
    logs = {name: open(data / f"{name}.log", "w") for name in ("web", "worker")}  # noqa: SIM115
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        procs["web"] = subprocess.Popen(_command("web", port), cwd=ROOT, env=env, stdout=logs["web"], stderr=subprocess.STDOUT, start_new_session=True)
        procs["worker"] = subprocess.Popen(_command("worker"), cwd=ROOT, env=env, stdout=logs["worker"], stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if procs["web"].poll() is not None:
                pytest.fail("web exited:\n" + (data / "web.log").read_text()[-3000:])
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("web never became healthy:\n" + (data / "web.log").read_text()[-3000:])
        yield {"port": port, "env": env, "data": data, "procs": procs}
    finally:
        for p in procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs.values():
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        for f in logs.values():
            f.close()
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')


def _token(stack: dict[str, Any]) -> str:
    code = (
        "from django.contrib.auth.models import User;"
        "from schedviz.accounts.models import ApiToken;"
        "u,_=User.objects.get_or_create(username='ci');"
        "print(ApiToken.issue(u,'compose')[1])"
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=stack["env"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def _call(stack: dict[str, Any], method: str, path: str, token: str, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        f"http://127.0.0.1:{stack['port']}{path}",
        data=data,
        method=method,
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


@pytest.mark.deploy
def test_web_and_worker_run_a_replay(stack: dict[str, Any]) -> None:
    token = _token(stack)
    sample = (ROOT / "schedviz" / "samples" / "cluster.yaml").read_text()
    snap = _call(stack, "POST", "/api/v1/snapshots/", token, {"content": sample, "name": "sample"})
    rep = _call(stack, "POST", "/api/v1/replays/", token, {"snapshot": snap["id"]})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        rep = _call(stack, "GET", f"/api/v1/replays/{rep['id']}/", token)
        if rep["status"] in ("succeeded", "failed"):
            break
        time.sleep(0.5)
    assert rep["status"] == "succeeded", (rep, (stack["data"] / "worker.log").read_text()[-3000:])
    assert rep["cycles_done"] == rep["cycles_total"] == snap["pending_count"]
    assert "schedviz.run_replay" in (stack["data"] / "worker.log").read_text()


@pytest.mark.deploy
@pytest.mark.parametrize("service", ["postgres", "redis", "web", "worker"])
def test_health_checks_pass(stack: dict[str, Any], service: str) -> None:
    out = _health(service, stack["env"], stack["port"])
    assert out.returncode == 0, (service, out.stdout, out.stderr)
