"""The client controls every stream understands (docs/streaming.md): ping, play, pause, step, seek."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from schedviz.cycles.messages import TOP_K_DEFAULT, TOP_K_MAX, Position, parse_position

AFTER_CYCLE = 10**9  # part index meaning "after all of that cycle"
CLOSE_BAD_REQUEST = 4400


class PlaybackControls:
    """Mixed into a websocket consumer: parses controls and updates the playback state.

    The consumer owns ``mode``, ``after`` (the last position sent), ``wake`` (set to make its
    sending loop look again), ``speed``, ``playing`` and ``step_budget``.
    """

    mode: str
    after: Position
    topk: int
    batch: bool
    scope: dict[str, Any]
    wake: asyncio.Event
    speed: float
    playing: bool
    step_budget: int

    if TYPE_CHECKING:  # provided by AsyncWebsocketConsumer, which follows this class in the bases

        async def send(self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False) -> None: ...

        async def close(self, code: int | None = None, reason: str | None = None) -> None: ...

    async def send_json(self, msg: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(msg, separators=(",", ":")))

    async def _stream_options(self) -> bool:
        """``after``, ``topk``, ``mode`` and ``batch`` from the query string; on a bad one, an error and
        the close."""
        qs = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        try:
            self.after = parse_position((qs.get("after") or [""])[0])
            self.topk = max(1, min(int((qs.get("topk") or [TOP_K_DEFAULT])[0]), TOP_K_MAX))
            self.mode = (qs.get("mode") or ["live"])[0]
            if self.mode not in ("live", "playback"):
                raise ValueError("mode: live or playback")
            batch = (qs.get("batch") or ["0"])[0]
            if batch not in ("0", "1"):
                raise ValueError("batch: 0 or 1")
            self.batch = batch == "1"
        except ValueError as exc:
            await self._bad(str(exc))
            await self.close(code=CLOSE_BAD_REQUEST)
            return False
        return True

    async def _play(self, send_next: Callable[[], Awaitable[bool]]) -> None:
        """The playback loop: waits for Step or Play, paces Play at ``speed`` cycles per second, and
        calls ``send_next`` for each cycle (False when there is none after ``after``: then ``end``)."""
        loop = asyncio.get_running_loop()
        last = 0.0
        while True:
            if not (self.playing or self.step_budget):
                self.wake.clear()
                await self.wake.wait()
                continue
            if self.playing:
                wait = last + 1.0 / self.speed - loop.time()
                if wait > 0:
                    self.wake.clear()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.wake.wait(), timeout=wait)
                    continue
            if not await send_next():
                self.playing = False
                self.step_budget = 0
                await self.send_json({"type": "end", "after": f"{self.after[0]}.{self.after[1]}"})
                continue
            last = loop.time()
            if self.step_budget:
                self.step_budget -= 1

    async def _bad(self, message: str) -> None:
        await self.send_json({"type": "error", "code": "bad_request", "message": message})

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            msg = json.loads(text_data or "")
            action = msg["action"]
        except (ValueError, KeyError, TypeError):
            await self._bad('expected {"action": ...}')
            return
        if action == "ping":
            await self.send_json({"type": "pong"})
            return
        if self.mode != "playback":
            await self._bad(f"{action}: only in playback mode")
            return
        if action == "play":
            try:
                speed = float(msg.get("speed", self.speed))
            except (TypeError, ValueError):
                speed = -1
            if not 0.1 <= speed <= 1000:
                await self._bad("speed: 0.1 to 1000 cycles/s")
                return
            self.speed, self.playing = speed, True
        elif action == "pause":
            self.playing = False
        elif action == "step":
            self.step_budget += 1
        elif action == "seek":
            cycle = msg.get("cycle")
            if not isinstance(cycle, int) or isinstance(cycle, bool) or cycle < 1:
                await self._bad("cycle: a positive integer")
                return
            self.after = (cycle - 1, AFTER_CYCLE)
        else:
            await self._bad(f"unknown action {action!r}")
            return
        self.wake.set()
