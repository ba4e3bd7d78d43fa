"""A `schedviz serve` process for the deployment tests: started, waited for on /healthz, stopped."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(command: list[str], cwd: Path, env: dict[str, str], log_path: Path, port: int) -> Iterator[str]:
    """Run ``command`` (a `schedviz serve ... --port port`) and yield its base URL once /healthz answers
    (up to 120 s); its output goes to ``log_path``, whose tail any failure shows."""
    log = open(log_path, "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log_path.read_text()[-3000:]
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{base}/healthz", timeout=2) as r:
                if r.status == 200:
                    break
            assert time.monotonic() < deadline, log_path.read_text()[-3000:]
            time.sleep(0.2)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        log.close()
