"""The replay websocket (docs/streaming.md): live following and on-demand playback."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from .protocol import TOP_K_DEFAULT, TOP_K_MAX, Position, cycle_messages, node_messages, parse_position
from .publish import group

POLL_SECONDS = 2.0  # fallback when a wake-up is missed
BATCH_CYCLES = 50
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
CLOSE_BAD_REQUEST = 4400


@database_sync_to_async
def _load_replay(replay_id: str, user: Any) -> Any:
    from django.core.exceptions import ValidationError

    from schedviz.accounts.ownership import visible
    from schedviz.replays.models import Replay

    try:
        return visible(Replay.objects.all(), user).filter(pk=replay_id).first()
    except (ValidationError, ValueError):
        return None


@database_sync_to_async
def _refresh(replay: Any) -> Any:
    replay.refresh_from_db(fields=["status", "attempt", "cycles_done", "cycles_total", "reason"])
    return replay


@database_sync_to_async
def _node_names(replay: Any) -> list[str]:
    names: list[str] = replay.node_names()
    if not names:
        names = [n["name"] for n in replay.snapshot.summary().get("nodes", [])]
    return names


@database_sync_to_async
def _cycles(replay_id: Any, attempt: int, after_cycle: int, upto: int | None, limit: int) -> list[Any]:
    from schedviz.replays.models import Cycle

    qs = Cycle.objects.filter(replay_id=replay_id, attempt=attempt, seq__gt=after_cycle).order_by("seq")
    if upto is not None:
        qs = qs.filter(seq__lte=upto)
    return [(row.seq, bytes(row.payload)) for row in qs.only("seq", "payload")[:limit]]


def _messages(payload: bytes, topk: int) -> list[dict[str, Any]]:
    from schedviz.replays.storage import decode_cycle

    rec, reasons = decode_cycle(payload)
    return cycle_messages(rec, reasons, topk)


class ReplayConsumer(AsyncWebsocketConsumer):
    """One websocket per replay."""

    replay: Any
    topk: int
    mode: str
    after: Position
    attempt: int

    async def connect(self) -> None:
        self.wake = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.playing = False
        self.speed = 5.0
        self.step_budget = 0
        user = self.scope.get("token_user") if self.scope.get("token_given") else self.scope.get("user")
        await self.accept()
        if user is None or not getattr(user, "is_authenticated", False):
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        replay_id = self.scope["url_route"]["kwargs"]["replay_id"]
        self.replay = await _load_replay(replay_id, user)
        if self.replay is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        qs = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        try:
            self.after = parse_position((qs.get("after") or [""])[0])
            self.topk = max(1, min(int((qs.get("topk") or [TOP_K_DEFAULT])[0]), TOP_K_MAX))
        except ValueError as exc:
            await self.send_json({"type": "error", "code": "bad_request", "message": str(exc)})
            await self.close(code=CLOSE_BAD_REQUEST)
            return
        self.mode = (qs.get("mode") or ["live"])[0]
        if self.mode not in ("live", "playback"):
            await self.send_json({"type": "error", "code": "bad_request", "message": "mode: live or playback"})
            await self.close(code=CLOSE_BAD_REQUEST)
            return
        await self.channel_layer.group_add(group(self.replay.pk), self.channel_name)
        await self._hello()
        self.task = asyncio.create_task(self._run())

    async def _hello(self) -> None:
        r = await _refresh(self.replay)
        names = await _node_names(r)
        self.attempt = r.attempt
        await self.send_json(
            {
                "type": "hello",
                "replay": {
                    "id": str(r.pk),
                    "status": r.status,
                    "attempt": r.attempt,
                    "cyclesTotal": r.cycles_total,
                    "cyclesDone": r.cycles_done,
                    "nodeCount": len(names),
                },
                "mode": self.mode,
                "resumeAfter": f"{self.after[0]}.{self.after[1]}",
            }
        )
        for msg in node_messages(names):
            await self.send_json(msg)

    async def disconnect(self, code: int) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        if getattr(self, "replay", None) is not None:
            await self.channel_layer.group_discard(group(self.replay.pk), self.channel_name)

    async def send_json(self, msg: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(msg, separators=(",", ":")))

    # ----- events from the channel layer ---------------------------------------------------------
    async def replay_progress(self, event: dict[str, Any]) -> None:
        self.wake.set()

    async def replay_status(self, event: dict[str, Any]) -> None:
        self.wake.set()

    # ----- controls from the client ------------------------------------------------------------
    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            msg = json.loads(text_data or "")
            action = msg["action"]
        except (ValueError, KeyError, TypeError):
            await self.send_json({"type": "error", "code": "bad_request", "message": "expected {\"action\": ...}"})
            return
        if action == "ping":
            await self.send_json({"type": "pong"})
            return
        if self.mode != "playback":
            await self.send_json({"type": "error", "code": "bad_request", "message": f"{action}: only in playback mode"})
            return
        if action == "play":
            try:
                speed = float(msg.get("speed", self.speed))
            except (TypeError, ValueError):
                speed = -1
            if not 0.1 <= speed <= 1000:
                await self.send_json({"type": "error", "code": "bad_request", "message": "speed: 0.1 to 1000 cycles/s"})
                return
            self.speed, self.playing = speed, True
        elif action == "pause":
            self.playing = False
        elif action == "step":
            self.step_budget += 1
        elif action == "seek":
            cycle = msg.get("cycle")
            if not isinstance(cycle, int) or cycle < 1:
                await self.send_json({"type": "error", "code": "bad_request", "message": "cycle: a positive integer"})
                return
            self.after = (cycle - 1, 10**9)
        else:
            await self.send_json({"type": "error", "code": "bad_request", "message": f"unknown action {action!r}"})
            return
        self.wake.set()

    # ----- the sending loop --------------------------------------------------------------------
    async def _run(self) -> None:
        try:
            if self.mode == "live":
                await self._live()
            else:
                await self._playback()
        except asyncio.CancelledError:
            raise

    async def _send_cycle(self, seq: int, payload: bytes) -> None:
        start = self.after
        for msg in _messages(payload, self.topk):
            pos = (msg["pos"][0], msg["pos"][1])
            if pos <= start:
                continue
            if self.after != start:
                return  # a seek arrived while this cycle was being sent: it decides where to go next
            await self.send_json(msg)
            start = self.after = pos
        if self.after == start:
            self.after = (seq, 10**9)

    async def _restart_if_new_attempt(self, r: Any) -> bool:
        if r.attempt != self.attempt:
            self.after = (0, -1)
            await self._hello()
            return True
        return False

    async def _live(self) -> None:
        ended = False
        while True:
            self.wake.clear()
            r = await _refresh(self.replay)
            await self._restart_if_new_attempt(r)
            finished = r.status in ("succeeded", "failed", "cancelled")
            rows = await _cycles(r.pk, r.attempt, self.after[0] - (1 if self.after[1] < 10**9 else 0), None, BATCH_CYCLES)
            for seq, payload in rows:
                await self._send_cycle(seq, payload)
            if rows:
                continue
            if finished and not ended:
                await self.send_json(
                    {"type": "status", "status": r.status, "cyclesDone": r.cycles_done, "cyclesTotal": r.cycles_total, "reason": r.reason}
                )
                await self.send_json({"type": "end", "after": f"{self.after[0]}.{self.after[1]}"})
                ended = True
            elif not finished:
                await self.send_json(
                    {"type": "status", "status": r.status, "cyclesDone": r.cycles_done, "cyclesTotal": r.cycles_total, "reason": r.reason}
                )
                ended = False
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.wake.wait(), timeout=POLL_SECONDS)

    async def _playback(self) -> None:
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
            r = await _refresh(self.replay)
            start = self.after[0] - (1 if self.after[1] < 10**9 else 0)
            rows = await _cycles(r.pk, r.attempt, start, None, 1)
            if not rows:
                self.playing = False
                self.step_budget = 0
                await self.send_json({"type": "end", "after": f"{self.after[0]}.{self.after[1]}"})
                continue
            seq, payload = rows[0]
            await self._send_cycle(seq, payload)
            last = loop.time()
            if self.step_budget:
                self.step_budget -= 1
