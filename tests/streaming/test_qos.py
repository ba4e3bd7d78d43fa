"""HTTP requests before bulk streaming (schedviz/streaming/qos.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from schedviz.streaming import qos

pytestmark = pytest.mark.asyncio


class _SlowApp:
    """An HTTP app that answers after ``release`` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.started.set()
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def _noop_receive() -> dict[str, Any]:
    return {"type": "http.request"}


async def test_streams_take_turns_while_a_request_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(qos, "_state", qos._State())
    monkeypatch.setattr(qos, "PAUSE", 0.05)
    sent: list[dict[str, Any]] = []

    async def send(m: Any) -> None:
        sent.append(m)

    # no request: a stream's turn comes at once
    t0 = time.perf_counter()
    await qos.turn()
    assert time.perf_counter() - t0 < 0.02

    app = _SlowApp()
    request = asyncio.create_task(qos.HttpFirst(app)({"type": "http"}, _noop_receive, send))
    await app.started.wait()
    assert qos.in_flight() == 1
    # three streams want to send while it runs: they go one at a time, each after the pause
    t0 = time.perf_counter()
    await asyncio.gather(qos.turn(), qos.turn(), qos.turn())
    waited = time.perf_counter() - t0
    assert 0.14 <= waited < 1.0, waited
    # the request ends: a waiting stream goes at once, and later ones do not wait
    waiting = asyncio.create_task(qos.turn())
    await asyncio.sleep(0.01)
    assert not waiting.done()
    app.release.set()
    await request
    await asyncio.wait_for(waiting, 0.02)
    assert qos.in_flight() == 0 and [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    t0 = time.perf_counter()
    await qos.turn()
    assert time.perf_counter() - t0 < 0.02


async def test_websockets_are_not_counted_and_errors_still_release(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(qos, "_state", qos._State())
    seen: list[int] = []

    async def ws_app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(qos.in_flight())

    async def failing(scope: Any, receive: Any, send: Any) -> None:
        seen.append(qos.in_flight())
        raise RuntimeError("boom")

    await qos.HttpFirst(ws_app)({"type": "websocket"}, _noop_receive, _noop_receive)
    with pytest.raises(RuntimeError):
        await qos.HttpFirst(failing)({"type": "http"}, _noop_receive, _noop_receive)
    assert seen == [0, 1] and qos.in_flight() == 0
