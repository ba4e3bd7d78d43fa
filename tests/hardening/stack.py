"""The production shape as separate processes, for the load and fault tests: a database of their own on
the machine's PostgreSQL, the ASGI server (uvicorn) and Celery workers, as docker-compose runs them
(tests/deploy/test_compose.py does the same for the compose file itself), plus helpers: a private
redis-server, a TCP proxy in front of PostgreSQL that can be cut, tokens, API calls."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PG = os.environ.get("SCHEDVIZ_TEST_PG", "postgres://postgres@127.0.0.1:5432")


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def require_postgres() -> None:
    if not reachable("127.0.0.1", 5432):
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL must run on 127.0.0.1:5432 for the hardening deploy tests")
        pytest.skip("PostgreSQL not running")


@contextlib.contextmanager
def database(name: str) -> Iterator[str]:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{PG}/{name}"
    finally:
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def base_env(data: Path, database_url: str, redis_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SCHEDVIZ_TASK_MODE", "DJANGO_SETTINGS_MODULE")}
    env.update(
        {
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "SECRET_KEY": "hardening-test-secret-key-not-for-production-0123456789",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DEBUG": "false",
            "SCHEDVIZ_DATA_DIR": str(data),
            "SCHEDVIZ_UPLOAD_RATE": "10000/hour",
            "PYTHONUNBUFFERED": "1",
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
            **extra,
        }
    )
    return env


def manage(env: dict[str, str], *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def token(env: dict[str, str], user: str = "load") -> str:
    code = (
        "from django.contrib.auth.models import User;"
        "from schedviz.accounts.models import ApiToken;"
        f"u,_=User.objects.get_or_create(username='{user}');"
        "print(ApiToken.issue(u,'hardening')[1])"
    )
    return manage(env, "shell", "-c", code).strip().splitlines()[-1]


class Proc:
    """A process in its own session (so that killing it kills its children: Celery's pool)."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], logdir: Path) -> None:
        self.name = name
        self.log_path = logdir / f"{name}.log"
        self.log = open(self.log_path, "ab")  # noqa: SIM115
        self.p = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    @property
    def pid(self) -> int:
        return self.p.pid

    def tail(self, n: int = 3000) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")[-n:]

    def kill(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.p.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.p.wait(timeout=20)
        if self.p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait(timeout=10)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)
        self.log.close()


def start_web(env: dict[str, str], port: int, logdir: Path, name: str = "web") -> Proc:
    web = Proc(
        name,
        [
            sys.executable,
            "-m",
            "uvicorn",
            "schedviz.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--ws-per-message-deflate",  # as docker-compose runs it
            env.get("WS_PER_MESSAGE_DEFLATE", "false"),
        ],
        env,
        logdir,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if web.p.poll() is not None:
            pytest.fail(f"{name} exited:\n{web.tail()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                if r.status == 200:
                    return web
        except (OSError, urllib.error.HTTPError):
            time.sleep(0.3)
    web.stop()
    pytest.fail(f"{name} never became healthy:\n{web.tail()}")


def start_worker(env: dict[str, str], logdir: Path, name: str = "worker") -> Proc:
    return Proc(
        name,
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "schedviz",
            "worker",
            "--loglevel",
            "INFO",
            "--queues",
            "schedviz",
            "--concurrency",
            "1",
            "--hostname",
            f"{name}@%h",
            "--without-gossip",
            "--without-mingle",
        ],
        env,
        logdir,
    )


def call(
    port: int, method: str, path: str, tok: str | None, body: Any = None, timeout: float = 30
) -> tuple[int, dict[str, str], Any]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if tok:
        headers["Authorization"] = f"Token {tok}"
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
            return r.status, {k.lower(): v for k, v in r.headers.items()}, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            parsed: Any = json.loads(raw)
        except ValueError:
            parsed = raw.decode(errors="replace")
        return e.code, {k.lower(): v for k, v in e.headers.items()}, parsed


def upload_synthetic(port: int, tok: str, nodes: int, pods: int) -> dict[str, Any]:
    from schedviz.tools.bench_engine import synthetic_cluster
    from schedviz.tools.loadtest import _Http, _multipart

    snap = synthetic_cluster(nodes, pods)
    payload = json.dumps({"kind": "List", "items": [n.raw for n in snap.nodes] + [p.raw for p in snap.pods]})
    body, ctype = _multipart({"name": f"{nodes}x{pods}"}, {"file": ("c.json", payload.encode())})
    status, data = _Http(f"http://127.0.0.1:{port}", tok).request("POST", "/api/v1/snapshots/", body, ctype)
    assert status in (200, 201), data[:500]
    value: dict[str, Any] = json.loads(data)
    return value


# --------------------------------------------------------------------------------------------------
# A private redis-server


class RedisServer:
    def __init__(self, port: int, logdir: Path) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.skip("redis-server is not installed")
        self.exe, self.port, self.logdir = exe, port, logdir
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                self.exe,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.logdir),
                "--logfile",
                str(self.logdir / f"redis-{self.port}.log"),
            ],
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while not reachable("127.0.0.1", self.port):
            if time.monotonic() > deadline:
                pytest.fail("the private redis-server did not start")
            time.sleep(0.1)

    def stop(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(sig)
            self.proc.wait(timeout=20)
            self.proc = None


# --------------------------------------------------------------------------------------------------
# A TCP proxy in front of PostgreSQL that can refuse, hold or cut connections


class TcpProxy:
    """Forwards 127.0.0.1:<port> to ``target``. ``mode``: "up" forwards; "down" closes every connection
    and refuses new ones (the server is gone); "hold" accepts and forwards nothing (a hung server)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self.mode = "up"
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket | None]] = []
        self._stop = threading.Event()
        self._listener: socket.socket | None = None
        self._listen()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(64)
        s.setblocking(False)
        self._listener = s

    def set_mode(self, mode: str) -> None:
        with self._lock:
            self.mode = mode
            if mode in ("down", "hold"):
                for a, b in self._pairs:
                    for sock in (a, b):
                        if sock is not None:
                            with contextlib.suppress(OSError):
                                sock.close()
                self._pairs = []
            if mode == "down" and self._listener is not None:
                self._listener.close()
                self._listener = None
            if mode != "down" and self._listener is None:
                self._listen()

    def close(self) -> None:
        self._stop.set()
        self.set_mode("down")
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                listener = self._listener
                pairs = list(self._pairs)
            sel = selectors.DefaultSelector()
            try:
                if listener is not None:
                    sel.register(listener, selectors.EVENT_READ, None)
                for a, b in pairs:
                    if b is not None:
                        sel.register(a, selectors.EVENT_READ, b)
                        sel.register(b, selectors.EVENT_READ, a)
                events = sel.select(timeout=0.05)
            except (OSError, ValueError):
                sel.close()
                continue
            for key, _ in events:
                src = key.fileobj
                if key.data is None:
                    self._accept(listener)
                    continue
                dst = key.data
                try:
                    chunk = src.recv(65536)  # type: ignore[union-attr]
                    if not chunk:
                        raise OSError("closed")
                    dst.sendall(chunk)
                except OSError:
                    self._drop(src, dst)  # type: ignore[arg-type]
            sel.close()

    def _accept(self, listener: socket.socket | None) -> None:
        if listener is None:
            return
        try:
            client, _ = listener.accept()
        except OSError:
            return
        with self._lock:
            if self.mode == "hold":
                self._pairs.append((client, None))  # accepted, never answered
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                return
            self._pairs.append((client, upstream))

    def _drop(self, a: socket.socket, b: socket.socket) -> None:
        with self._lock:
            self._pairs = [p for p in self._pairs if a not in p and b not in p]
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.close()
