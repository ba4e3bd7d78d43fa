"""The live timeline websocket (``/ws/clusters/<id>/``): the replay protocol of docs/streaming.md,
over a cluster's live cycles.

Differences from a replay's stream (docs/live.md):

- ``hello`` carries ``cluster`` (id, name, status, message, cyclesDone = the last cycle's seq, the
  agreement summary, whether a worker watches it) instead of ``replay``;
- the node set changes over time: a ``nodes`` message (with ``nodeSet``, its id) comes before the
  first message of any cycle whose node set differs from the last one sent on the connection, so
  node indices always refer to the latest ``nodes`` received (also after a resume mid-cycle);
- every cycle ends with a ``live.verdict`` message (its own position, after ``cycle.end``): what
  the cluster did (``actual``), the ``agreement`` (match, tie, diverged, skipped), the main
  ``divergence`` and the ``explanations``. A decision that could not be replayed is that message
  alone;
- ``status`` messages (status, message, cyclesDone, summary, workerAlive) come whenever they change;
  a live stream never ends (no ``end``), except in playback at the last stored cycle.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from datetime import datetime
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer

from schedviz.cycles.messages import (
    Position,
    cycle_messages,
    encode,
    frames,
    node_messages,
)
from schedviz.streaming import qos
from schedviz.streaming.controls import PlaybackControls
from schedviz.streaming.db import stream_db

POLL_SECONDS = 2.0
BATCH_CYCLES = 50
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
END = 10**9


def _json_safe(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


@stream_db
def _load_cluster(cluster_id: str, user: Any) -> Any:
    from django.core.exceptions import ValidationError

    from schedviz.accounts.ownership import visible

    from .models import LiveCluster

    try:
        return (
            visible(LiveCluster.objects.defer("credentials", "checkpoint_blob"), user)
            .filter(pk=cluster_id)
            .first()
        )
    except (ValidationError, ValueError):
        return None


@stream_db
def _state(cluster_id: Any) -> dict[str, Any] | None:
    from . import services
    from .models import LiveCluster

    c = LiveCluster.objects.defer("credentials", "checkpoint_blob", "health").filter(pk=cluster_id).first()
    if c is None:
        return None
    state: dict[str, Any] = _json_safe(
        {
            "id": str(c.pk),
            "name": c.name,
            "status": c.status,
            "message": c.status_message,
            "cyclesDone": c.last_seq,
            "summary": services.summary(c),
            "workerAlive": c.worker_alive,
        }
    )
    return state


@stream_db
def _rows(
    cluster_id: Any, after_cycle: int, limit: int
) -> list[tuple[int, bytes | None, int | None, dict[str, Any]]]:
    from . import services
    from .models import LiveCycle

    rows = LiveCycle.objects.filter(cluster_id=cluster_id, seq__gt=after_cycle).order_by("seq")[:limit]
    return [
        (
            r.seq,
            bytes(r.payload) if r.payload is not None else None,
            r.nodeset_id,
            _json_safe(services.cycle_detail(r)),
        )
        for r in rows
    ]


@stream_db
def _names(nodeset_id: int) -> list[str]:
    from .models import LiveNodeSet

    ns = LiveNodeSet.objects.filter(pk=nodeset_id).first()
    return ns.names() if ns is not None else []


def live_messages(seq: int, payload: bytes | None, live: dict[str, Any], topk: int) -> list[dict[str, Any]]:
    """Every message of one live cycle, in order, with stable positions."""
    from schedviz.cycles.codec import decode_cycle

    out: list[dict[str, Any]] = []
    if payload is not None:
        rec, reasons = decode_cycle(payload)
        out = cycle_messages(rec, reasons, topk)
    verdict = {
        "type": "live.verdict",
        "pos": [seq, len(out)],
        "pod": live["pod"],
        "trigger": live["trigger"],
        "triggerSource": live["triggerSource"],
        "observed": live["observed"],
        "resourceVersion": live.get("resourceVersion"),
        "actual": live["actual"],
        "replay": live["replay"],
        "agreement": live["agreement"],
        "divergence": live["divergence"],
        "explanations": live["explanations"],
        "notes": live["notes"],
        "exact": live["exact"],
        "gap": live["gap"],
        "error": live["error"],
    }
    return [*out, verdict]


class LiveClusterConsumer(PlaybackControls, AsyncWebsocketConsumer):
    """One websocket per watched cluster."""

    cluster_id: Any
    topk: int
    mode: str
    after: Position

    async def connect(self) -> None:
        self.wake = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.playing = False
        self.speed = 5.0
        self.step_budget = 0
        self.nodeset: int | None = -1
        self.cluster_id = None
        self._names: dict[int, list[str]] = {}
        user = self.scope.get("token_user") if self.scope.get("token_given") else self.scope.get("user")
        await self.accept()
        if user is None or not getattr(user, "is_authenticated", False):
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        cluster = await _load_cluster(self.scope["url_route"]["kwargs"]["cluster_id"], user)
        if cluster is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.cluster_id = cluster.pk
        if not await self._stream_options():
            return
        from .services import group

        await self.channel_layer.group_add(group(self.cluster_id), self.channel_name)
        state = await _state(self.cluster_id)
        self.last_status: tuple[Any, ...] | None = None
        await self.send_json(
            {
                "type": "hello",
                "cluster": state,
                "mode": self.mode,
                "resumeAfter": f"{self.after[0]}.{self.after[1]}",
            }
        )
        self.task = asyncio.create_task(self._run())

    async def disconnect(self, code: int) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        if getattr(self, "cluster_id", None) is not None:
            from .services import group

            await self.channel_layer.group_discard(group(self.cluster_id), self.channel_name)

    # ----- events from the channel layer ---------------------------------------------------------
    async def cluster_progress(self, event: dict[str, Any]) -> None:
        self.wake.set()

    async def cluster_status(self, event: dict[str, Any]) -> None:
        self.wake.set()

    # ----- sending -------------------------------------------------------------------------------
    async def _run(self) -> None:
        if self.mode == "live":
            await self._live()
        else:
            await self._playback()

    def _from(self) -> int:
        return self.after[0] - (1 if self.after[1] < END else 0)

    async def _send_cycle(
        self, seq: int, payload: bytes | None, nodeset: int | None, live: dict[str, Any]
    ) -> None:
        await qos.turn()
        start = self.after
        for pos, text in frames(encode(live_messages(seq, payload, live, self.topk)), start, self.batch):
            if self.after != start:
                return  # a seek arrived meanwhile
            if nodeset is not None and nodeset != self.nodeset:
                if nodeset not in self._names:
                    self._names[nodeset] = await _names(nodeset)
                for m in node_messages(self._names[nodeset]):
                    await self.send_json({**m, "nodeSet": nodeset})
                self.nodeset = nodeset
            await self.send(text_data=text)
            start = self.after = pos
        if self.after == start:
            self.after = (seq, END)

    async def _status(self) -> bool:
        state = await _state(self.cluster_id)
        if state is None:
            await self.send_json({"type": "error", "code": "gone", "message": "the cluster was deleted"})
            await self.close(code=CLOSE_NOT_FOUND)
            return False
        key = (
            state["status"],
            state["message"],
            state["cyclesDone"],
            state["workerAlive"],
            json.dumps(state["summary"], sort_keys=True),
        )
        if key != self.last_status:
            self.last_status = key
            await self.send_json(
                {
                    "type": "status",
                    "status": state["status"],
                    "message": state["message"],
                    "cyclesDone": state["cyclesDone"],
                    "summary": state["summary"],
                    "workerAlive": state["workerAlive"],
                }
            )
        return True

    async def _live(self) -> None:
        while True:
            self.wake.clear()
            rows = await _rows(self.cluster_id, self._from(), BATCH_CYCLES)
            for seq, payload, nodeset, live in rows:
                await self._send_cycle(seq, payload, nodeset, live)
            if rows:
                continue
            if not await self._status():
                return
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.wake.wait(), timeout=POLL_SECONDS)

    async def _playback(self) -> None:
        async def send_next() -> bool:
            rows = await _rows(self.cluster_id, self._from(), 1)
            if rows:
                await self._send_cycle(*rows[0])
            return bool(rows)

        await self._play(send_next)
