"""docker-compose.yml, checked by reading it and by running its web, worker and live commands without
docker, against the machine's PostgreSQL and Redis: migrations, the ASGI server, a Celery worker that
runs a replay submitted through the API, the live worker watching a cluster (the test API server) and
stopping cleanly on SIGTERM, and every service's health check."""

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
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
PG = os.environ.get("SCHEDVIZ_TEST_PG", "postgres://postgres@127.0.0.1:5432")
REDIS = os.environ.get("SCHEDVIZ_TEST_REDIS", "redis://127.0.0.1:6379/14")
DB_NAME = f"schedviz_compose_test_{os.getpid()}"
LIVE_HEARTBEAT = "/tmp/schedviz-live.heartbeat"


def test_services_and_health_checks() -> None:
    services = COMPOSE["services"]
    assert set(services) == {"postgres", "redis", "web", "worker", "live"}
    for name, svc in services.items():
        assert "healthcheck" in svc and svc["healthcheck"]["test"], name
    for name in ("web", "worker", "live"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in env["DATABASE_URL"]
        assert env["REDIS_URL"].startswith("redis://redis:6379")
        assert "SECRET_KEY" in env and env["DEBUG"] == "false"
        # the web tier encrypts the clusters' credentials, the live worker decrypts them: one key, required
        assert env["SCHEDVIZ_ENCRYPTION_KEY"].startswith("${SCHEDVIZ_ENCRYPTION_KEY:?")
        deps = services[name]["depends_on"]
        assert deps["postgres"]["condition"] == deps["redis"]["condition"] == "service_healthy"
    web_cmd = " ".join(services["web"]["command"])
    assert web_cmd.index("migrate") < web_cmd.index("uvicorn schedviz.asgi:application")
    # websocket frames uncompressed unless asked (per-client compression dominates streaming's CPU)
    assert "--ws-per-message-deflate ${WS_PER_MESSAGE_DEFLATE:-false}" in web_cmd
    assert "celery -A schedviz worker" in " ".join(services["worker"]["command"])
    assert services["live"]["depends_on"]["web"]["condition"] == "service_healthy"  # migrated first
    assert (ROOT / "Dockerfile").exists()


def test_the_live_workers_command_and_health_check() -> None:
    from django.core.management import load_command_class

    live = COMPOSE["services"]["live"]
    python, manage, name, *args = live["command"]
    assert (python, manage, name) == ("python", "manage.py", "watch_clusters") and (ROOT / manage).exists()
    opts = load_command_class("schedviz.live", name).create_parser("manage.py", name).parse_args(args)
    assert opts.heartbeat_file == LIVE_HEARTBEAT
    assert LIVE_HEARTBEAT in " ".join(live["healthcheck"]["test"])
    # SIGTERM, then the grace period to checkpoint every cluster and release its lease
    assert float(str(live["stop_grace_period"]).rstrip("s")) >= 20


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


def _health(
    service: str, env: dict[str, str], port: int, heartbeat: str = LIVE_HEARTBEAT
) -> subprocess.CompletedProcess[str]:
    test = [t.replace(LIVE_HEARTBEAT, heartbeat) for t in COMPOSE["services"][service]["healthcheck"]["test"]]
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
        "SCHEDVIZ_ENCRYPTION_KEY": Fernet.generate_key().decode(),
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


@pytest.mark.deploy
def test_the_live_worker_watches_a_cluster_and_stops_cleanly(stack: dict[str, Any], tmp_path: Path) -> None:
    """The live service's command: it takes the lease of a cluster added through the API, replays and
    explains a decision, passes its health check, and on SIGTERM releases the lease and checkpoints."""
    from schedviz.kube.testing import TestApiServer
    from tests.engine.builders import node, pod

    def logs() -> str:
        text: str = (Path(stack["data"]) / "live.log").read_text()
        return text[-3000:]

    token = _token(stack)
    beat = str(tmp_path / "live.heartbeat")
    cmd = [c.replace(LIVE_HEARTBEAT, beat) for c in _command("live")]
    assert beat in cmd
    with TestApiServer(token="deploy-test-token") as srv, open(stack["data"] / "live.log", "w") as log:
        srv.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
        srv.create(node("small", cpu="2"))
        srv.create(node("large", cpu="8"))
        srv.create(pod("web", cpu="1"))
        cluster = _call(
            stack,
            "POST",
            "/api/v1/clusters/",
            token,
            {"source": "kubeconfig", "kubeconfig_text": yaml.safe_dump(srv.kubeconfig()), "name": "deploy"},
        )
        path = f"/api/v1/clusters/{cluster['id']}/"
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=stack["env"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                assert proc.poll() is None, logs()
                cluster = _call(stack, "GET", path, token)
                if cluster["worker"]["alive"] and cluster["status"] == "watching":
                    break
                time.sleep(0.3)
            else:
                pytest.fail(f"the live worker never watched the cluster: {cluster}\n{logs()}")
            assert cluster["worker"]["id"]
            deadline = time.monotonic() + 10
            while not os.path.exists(beat):  # touched after each tick: every second
                assert time.monotonic() < deadline, f"no heartbeat file\n{logs()}"
                time.sleep(0.1)
            out = _health("live", stack["env"], stack["port"], heartbeat=beat)
            assert out.returncode == 0, (out.stdout, out.stderr)
            srv.bind("default", "web", "small")
            deadline = time.monotonic() + 60
            while _call(stack, "GET", f"{path}cycles/", token)["count"] < 1:
                assert time.monotonic() < deadline, logs()
                time.sleep(0.3)
            ex = _call(stack, "GET", f"{path}cycles/1/explain/", token)
            assert ex["pod"] == "default/web" and ex["live"]["actual"]["node"] == "small"
            assert ex["winner"]["node"] == ex["live"]["replay"]["node"] and ex["kind"] == "Explanation"
            os.killpg(proc.pid, signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, logs()
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
    stopped = _call(stack, "GET", path, token)
    assert stopped["worker"] == {**stopped["worker"], "id": "", "alive": False}
    assert stopped["status"] == "stopped" and stopped["checkpoint_at"]
    assert "stopped" in logs()


@pytest.mark.deploy
def test_a_large_upload_is_read_by_the_celery_worker(stack: dict[str, Any]) -> None:
    """A gzip'd dense dump declaring more text than the request reads: 202, then the worker reads it."""
    import gzip

    import requests

    from schedviz.tools.dense_cluster import DenseShape, write_dump

    token = _token(stack)
    path = stack["data"] / "dense.json"
    write_dump(path, DenseShape(nodes=500, pods_per_node=30, pending=20))  # about 42 MB of JSON
    data = gzip.compress(path.read_bytes())
    r = requests.post(
        f"http://127.0.0.1:{stack['port']}/api/v1/snapshots/",
        headers={"Authorization": f"Token {token}"},
        files={"file": ("dense.json.gz", data, "application/gzip")},
        timeout=60,
    )
    assert r.status_code == 202, r.text[:500]
    snap = r.json()
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and snap["status"] in ("pending", "parsing"):
        time.sleep(0.5)
        snap = _call(stack, "GET", f"/api/v1/snapshots/{snap['id']}/", token)
    log = (stack["data"] / "worker.log").read_text()
    assert snap["status"] == "ready", (snap, log[-3000:])
    assert snap["node_count"] == 500 and snap["pod_count"] == 15_020 and snap["source_format"] == "gzip"
    assert snap["progress"]["bytesRead"] == snap["progress"]["bytesTotal"] == len(data)
    assert "schedviz.parse_snapshot" in log
