"""HTTP requests before bulk streaming, within one web process.

A process serves the API and the websockets on one event loop, and Python runs one thread at a
time: a few hundred clients catching up on a stored replay can keep the process busy sending, and
the API's requests (run on threads) then wait for their turn. The API is interactive, a catch-up is
bulk, so while HTTP requests are in progress the streams take turns: one cycle at a time for the
whole process, each after a pause of up to ``PAUSE`` seconds (less when the requests finish sooner).
With no request in progress streams run at full speed. Nothing is dropped or reordered: a stream
only waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

PAUSE = float(os.environ.get("SCHEDVIZ_STREAM_YIELD_SECONDS", "0.01"))


class _State:
    def __init__(self) -> None:
        self.in_flight = 0
        self.idle: asyncio.Event | None = None
        self.gate: asyncio.Lock | None = None

    def events(self) -> tuple[asyncio.Event, asyncio.Lock]:
        # created on first use, on the running loop
        if self.idle is None or self.gate is None:
            self.idle = asyncio.Event()
            self.gate = asyncio.Lock()
            if self.in_flight == 0:
                self.idle.set()
        return self.idle, self.gate


_state = _State()


def in_flight() -> int:
    return _state.in_flight


async def turn() -> None:
    """Wait for the stream's turn to send its next cycle (at once when no HTTP request is running)."""
    if _state.in_flight == 0 or PAUSE <= 0:
        return
    idle, gate = _state.events()
    async with gate:
        if _state.in_flight:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(idle.wait(), timeout=PAUSE)


Receive = Callable[[], Awaitable[Mapping[str, Any]]]
Send = Callable[[Mapping[str, Any]], Awaitable[None]]


class HttpFirst:
    """ASGI middleware around the HTTP application: counts the requests in progress."""

    def __init__(self, app: Callable[[dict[str, Any], Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        idle, _ = _state.events()
        _state.in_flight += 1
        idle.clear()
        try:
            await self.app(scope, receive, send)
        finally:
            _state.in_flight -= 1
            if _state.in_flight == 0:
                idle.set()
