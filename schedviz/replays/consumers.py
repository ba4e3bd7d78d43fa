"""The replay websocket (docs/streaming.md): live following and on-demand playback."""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from channels.generic.websocket import AsyncWebsocketConsumer

from schedviz.cycles.messages import Position, cycle_messages, encode, frames, node_messages
from schedviz.streaming import qos
from schedviz.streaming.controls import PlaybackControls
from schedviz.streaming.db import stream_db

from .publish import group

log = logging.getLogger(__name__)
R = TypeVar("R")

POLL_SECONDS = 2.0  # fallback when a wake-up is missed (and the only clock while the channel layer is away)
LAYER_RETRY_MAX_SECONDS = 5.0
BATCH_CYCLES = 50
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404


@stream_db
def _load_replay(replay_id: str, user: Any) -> Any:
    from django.core.exceptions import ValidationError

    from schedviz.accounts.ownership import visible
    from schedviz.replays.models import Replay

    try:
        return visible(Replay.objects.all(), user).filter(pk=replay_id).first()
    except (ValidationError, ValueError):
        return None


_STATE_FIELDS = ("status", "attempt", "cycles_done", "cycles_total", "reason")
FINISHED = ("succeeded", "failed", "cancelled")
STATE_TTL = 0.25  # seconds a replay's state read is shared by the consumers of a process


class _Memo:
    """Per-process reads shared by every consumer of a replay (a few hundred clients watching one
    replay ask the same questions: is it still running, which cycles are stored, what are its nodes).

    - the replay's state, for ``STATE_TTL`` seconds, and forgotten as soon as the channel layer says
      the replay moved (a wake-up), so a consumer woken by the worker always reads afresh;
    - the stored cycle numbers of a finished attempt, and the node names of an attempt: neither
      changes once known (a re-run is a new attempt).
    """

    def __init__(self, entries: int = 256) -> None:
        self.entries = entries
        self.state: OrderedDict[Any, tuple[float, tuple[Any, ...]]] = OrderedDict()
        self.seqs: OrderedDict[tuple[Any, int], list[int]] = OrderedDict()
        self.names: OrderedDict[tuple[Any, int], list[str]] = OrderedDict()

    def put(self, table: OrderedDict[Any, Any], key: Any, value: Any) -> None:
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.entries:
            table.popitem(last=False)

    def forget(self, replay_id: Any) -> None:
        self.state.pop(replay_id, None)


_memo = _Memo()


class _Gone(Exception):
    """The replay was deleted while a stream followed it."""


@stream_db
def _read_state(replay_id: Any) -> tuple[Any, ...] | None:
    from schedviz.replays.models import Replay

    return Replay.objects.filter(pk=replay_id).values_list(*_STATE_FIELDS).first()


_inflight: dict[tuple[Any, ...], asyncio.Future[Any]] = {}


async def _shared(key: tuple[Any, ...], read: Callable[[], Awaitable[R]]) -> R:
    """One read for every consumer asking the same question at the same time: when a wake-up reaches a
    few hundred consumers of a replay at once, the first one's query answers them all."""
    fut = _inflight.get(key)
    if fut is None:
        fut = asyncio.ensure_future(read())
        _inflight[key] = fut
        fut.add_done_callback(lambda _: _inflight.pop(key, None))
    result: R = await asyncio.shield(fut)
    return result


async def _refresh(replay: Any) -> Any:
    """The replay with its current state (status, attempt, progress)."""
    now = time.monotonic()
    hit = _memo.state.get(replay.pk)
    if hit is None or now - hit[0] > STATE_TTL:
        row = await _shared(("state", replay.pk), lambda: _read_state(replay.pk))
        if row is None:
            raise _Gone(replay.pk)
        hit = (now, row)
        _memo.put(_memo.state, replay.pk, hit)
    for name, value in zip(_STATE_FIELDS, hit[1], strict=True):
        setattr(replay, name, value)
    return replay


@stream_db
def _read_node_names(replay: Any) -> list[str]:
    names: list[str] = replay.node_names()
    if not names:
        names = [n["name"] for n in replay.snapshot.summary().get("nodes", [])]
    return names


async def _node_names(replay: Any) -> list[str]:
    key = (replay.pk, replay.attempt)
    names = _memo.names.get(key)
    if names is None:
        names = await _read_node_names(replay)
        _memo.put(_memo.names, key, names)
    return names


@stream_db
def _stored_seqs(replay_id: Any, attempt: int) -> list[int]:
    from schedviz.replays.models import Cycle

    return list(Cycle.objects.filter(replay_id=replay_id, attempt=attempt).order_by("seq").values_list("seq", flat=True))


async def _next_cycles(replay: Any, after_cycle: int, limit: int, topk: int) -> list[tuple[int, bytes | None]]:
    """``_cycles`` for a replay, without asking the database for a finished attempt whose cycles are
    all known and encoded in this process."""
    if replay.status in FINISHED:
        attempt = (replay.pk, replay.attempt)
        seqs = _memo.seqs.get(attempt)
        if seqs is None:
            seqs = await _shared(("seqs", *attempt), lambda: _stored_seqs(replay.pk, replay.attempt))
            _memo.put(_memo.seqs, attempt, seqs)
        todo = seqs[bisect.bisect_right(seqs, after_cycle) :][:limit]
        if all((replay.pk, replay.attempt, q, topk) in _cache for q in todo):
            return [(q, None) for q in todo]
    return await _shared(
        ("cycles", replay.pk, replay.attempt, after_cycle, limit, topk),
        lambda: _cycles(replay.pk, replay.attempt, after_cycle, None, limit, topk),
    )


class _MessageCache:
    """A cycle's messages, encoded, shared by every consumer of the process (LRU, bounded in bytes).

    A stored cycle never changes (a re-run is a new attempt), and its messages are a pure function of
    it and ``topk``: with many clients watching one replay, each cycle is read, decoded and encoded
    once instead of once per client.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.size = 0
        self.items: OrderedDict[tuple[Any, ...], list[tuple[Position, str]]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> list[tuple[Position, str]] | None:
        with self.lock:
            value = self.items.get(key)
            if value is not None:
                self.items.move_to_end(key)
            return value

    def __contains__(self, key: tuple[Any, ...]) -> bool:
        with self.lock:
            return key in self.items

    def put(self, key: tuple[Any, ...], value: list[tuple[Position, str]]) -> None:
        cost = sum(len(text) for _, text in value) + 200
        if cost > self.budget // 4:
            return
        with self.lock:
            if key in self.items:
                return
            self.items[key] = value
            self.size += cost
            while self.size > self.budget and self.items:
                _, old = self.items.popitem(last=False)
                self.size -= sum(len(text) for _, text in old) + 200


_cache = _MessageCache(int(os.environ.get("SCHEDVIZ_STREAM_CACHE_BYTES", str(64 * 1024 * 1024))))


@stream_db
def _cycles(
    replay_id: Any, attempt: int, after_cycle: int, upto: int | None, limit: int, topk: int
) -> list[tuple[int, bytes | None]]:
    """(seq, payload) of the next stored cycles; the payload is None for cycles already in the cache."""
    from schedviz.replays.models import Cycle

    qs = Cycle.objects.filter(replay_id=replay_id, attempt=attempt, seq__gt=after_cycle).order_by("seq")
    if upto is not None:
        qs = qs.filter(seq__lte=upto)
    seqs = list(qs.values_list("seq", flat=True)[:limit])
    missing = [q for q in seqs if (replay_id, attempt, q, topk) not in _cache]
    payloads: dict[int, bytes] = {}
    if missing:
        rows = Cycle.objects.filter(replay_id=replay_id, attempt=attempt, seq__in=missing).only(
            "seq", "payload"
        )
        payloads = {row.seq: bytes(row.payload) for row in rows}
    return [(q, payloads.get(q)) for q in seqs]


@stream_db
def _payload(replay_id: Any, attempt: int, seq: int) -> bytes:
    from schedviz.replays.models import Cycle

    row = Cycle.objects.filter(replay_id=replay_id, attempt=attempt, seq=seq).only("payload").first()
    return bytes(row.payload) if row is not None else b""


def _messages(payload: bytes, topk: int) -> list[dict[str, Any]]:
    from schedviz.cycles.codec import decode_cycle

    rec, reasons = decode_cycle(payload)
    return cycle_messages(rec, reasons, topk)


def _encoded(payload: bytes, topk: int) -> list[tuple[Position, str]]:
    return encode(_messages(payload, topk))


class ReplayConsumer(PlaybackControls, AsyncWebsocketConsumer):
    """One websocket per replay."""

    replay: Any
    topk: int
    mode: str
    after: Position
    attempt: int

    # ----- the channel layer, best effort ---------------------------------------------------------
    # The database is the source of truth and the layer only carries wake-ups, so a layer that fails
    # (Redis restarting, a timeout under load) must not end the websocket: the consumer keeps sending
    # what it reads by polling, and rejoins the group when the layer is back.

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Channels' consumer loop, with ``_layer_receive`` in place of the layer's own receive."""
        from channels.exceptions import StopConsumer
        from channels.layers import get_channel_layer
        from channels.utils import await_many_dispatch

        self.scope = scope
        self.in_group = False
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        self.base_send = send
        try:
            if self.channel_layer is not None:
                self.channel_name = await self.channel_layer.new_channel()
                await await_many_dispatch([receive, self._layer_receive], self.dispatch)
            else:
                await await_many_dispatch([receive], self.dispatch)
        except StopConsumer:
            pass

    async def _join(self) -> bool:
        if self.in_group or getattr(self, "replay", None) is None or self.channel_layer is None:
            return self.in_group
        try:
            await self.channel_layer.group_add(group(self.replay.pk), self.channel_name)
        except Exception as exc:
            log.warning(
                "channel layer unavailable (%s: %s): following replay %s by polling",
                type(exc).__name__,
                exc,
                self.replay.pk,
            )
            return False
        self.in_group = True
        if hasattr(self, "wake"):
            self.wake.set()  # read what was stored while the wake-ups were missed
        return True

    async def _layer_receive(self) -> dict[str, Any]:
        delay = 0.5
        while True:
            try:
                if getattr(self, "replay", None) is not None and not self.in_group and not await self._join():
                    raise ConnectionError("not in the replay's group")
                message: dict[str, Any] = await self.channel_layer.receive(self.channel_name)
                return message
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self.in_group:
                    log.warning("channel layer receive failed (%s: %s): rejoining", type(exc).__name__, exc)
                self.in_group = False
                await asyncio.sleep(delay)
                delay = min(delay * 2, LAYER_RETRY_MAX_SECONDS)

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
        if not await self._stream_options():
            return
        await self._join()
        try:
            await self._hello()
        except _Gone:
            await self.close(code=CLOSE_NOT_FOUND)
            return
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
        if getattr(self, "replay", None) is not None and self.in_group:
            with contextlib.suppress(Exception):  # a layer that is away forgets the group anyway
                await self.channel_layer.group_discard(group(self.replay.pk), self.channel_name)

    # ----- events from the channel layer ---------------------------------------------------------
    async def replay_progress(self, event: dict[str, Any]) -> None:
        _memo.forget(self.replay.pk)
        self.wake.set()

    async def replay_status(self, event: dict[str, Any]) -> None:
        _memo.forget(self.replay.pk)
        self.wake.set()

    # ----- the sending loop --------------------------------------------------------------------
    async def _run(self) -> None:
        try:
            if self.mode == "live":
                await self._live()
            else:
                await self._playback()
        except _Gone:
            await self.send_json({"type": "error", "code": "gone", "message": "the replay was deleted"})
            await self.close(code=CLOSE_NOT_FOUND)

    async def _send_cycle(self, seq: int, payload: bytes | None, attempt: int) -> None:
        key = (self.replay.pk, attempt, seq, self.topk)
        encoded = _cache.get(key)
        if encoded is None:
            if payload is None:  # evicted since it was looked up
                payload = await _payload(self.replay.pk, attempt, seq)
            encoded = _encoded(payload, self.topk)
            _cache.put(key, encoded)
        await qos.turn()
        start = self.after
        for pos, text in frames(encoded, start, self.batch):
            if self.after != start:
                return  # a seek arrived while this cycle was being sent: it decides where to go next
            await self.send(text_data=text)
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
            finished = r.status in FINISHED
            rows = await _next_cycles(r, self.after[0] - (1 if self.after[1] < 10**9 else 0), BATCH_CYCLES, self.topk)
            for seq, payload in rows:
                await self._send_cycle(seq, payload, r.attempt)
            if rows:
                continue
            if finished and not ended:
                await self.send_json(
                    {
                        "type": "status",
                        "status": r.status,
                        "cyclesDone": r.cycles_done,
                        "cyclesTotal": r.cycles_total,
                        "reason": r.reason,
                    }
                )
                await self.send_json({"type": "end", "after": f"{self.after[0]}.{self.after[1]}"})
                ended = True
            elif not finished:
                await self.send_json(
                    {
                        "type": "status",
                        "status": r.status,
                        "cyclesDone": r.cycles_done,
                        "cyclesTotal": r.cycles_total,
                        "reason": r.reason,
                    }
                )
                ended = False
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.wake.wait(), timeout=POLL_SECONDS)
            if not self.in_group:
                await self._join()

    async def _playback(self) -> None:
        async def send_next() -> bool:
            r = await _refresh(self.replay)
            start = self.after[0] - (1 if self.after[1] < 10**9 else 0)
            rows = await _next_cycles(r, start, 1, self.topk)
            if rows:
                await self._send_cycle(*rows[0], r.attempt)
            return bool(rows)

        await self._play(send_next)
