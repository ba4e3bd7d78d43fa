"""Running a replay and storing its cycles: what the Celery task and the in-process runner call.

Crash safety: each run is a new ``attempt``; cycles are written under that attempt and only the
replay's current attempt is ever read. The replay becomes ``succeeded`` in one transaction after its
last cycle is written, so a worker that dies mid-run never leaves a partial trace that looks complete.

Bounds (schedviz/engine/budget.py): every cycle may take ``SCHEDVIZ_CYCLE_SECONDS``; a cycle past it
is stored as an Error ("the cycle was stopped after 10 s (SCHEDVIZ_CYCLE_SECONDS)") and the replay
goes on. Reading the snapshot and the configuration, and building the scheduler (its profiles, the
cluster), may each take ``SCHEDVIZ_SETUP_SECONDS``; past it the replay fails with the reason. The
budget's watchdog thread reads the replay's ``cancel_requested`` and ``attempt`` every
``SCHEDVIZ_CANCEL_POLL_SECONDS`` (a read, no lock held): a cancel, or another worker taking the replay
over, stops the engine mid-cycle. A cancelled replay keeps the batches stored before (whole batches of
its current attempt) and ends ``cancelled``.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from schedviz.cycles.codec import encode_cycle
from schedviz.engine import ConfigError, InputError, SchedVizError
from schedviz.engine.budget import Budget, ReplayStopped
from schedviz.engine.config import load_config
from schedviz.engine.runtime.replay import Replay as EngineReplay
from schedviz.engine.runtime.replay import ReplayOptions
from schedviz.engine.trace import SCHEDULING, CycleRecord
from schedviz.ingestion.models import Snapshot, pack
from schedviz.outbound import extenders as outbound_extenders

from .jobs import claim, retrying, writing
from .models import Cycle, Replay

log = logging.getLogger(__name__)

BATCH = 25
CANCELLED = "cancelled by request"
STALE_AFTER = timedelta(seconds=120)  # default; settings.SCHEDVIZ_STALE_SECONDS overrides it

# Streaming hooks: progress listeners are called with (replay, cycles stored so far) after each stored
# batch, status listeners with the replay whenever its status changes.
ProgressListener = Callable[[Replay, int], None]
progress_listeners: list[ProgressListener] = []
StatusListener = Callable[[Replay], None]
status_listeners: list[StatusListener] = []


def _notify_status(replay: Replay) -> None:
    for fn in status_listeners:
        try:
            fn(replay)
        except Exception:  # a broken listener must not fail the replay
            log.exception("status listener failed")


def stale_after() -> timedelta:
    from django.conf import settings

    seconds = getattr(settings, "SCHEDVIZ_STALE_SECONDS", None)
    return STALE_AFTER if seconds is None else timedelta(seconds=seconds)


def is_stale(replay: Replay) -> bool:
    """A running replay whose worker stopped reporting: it may be re-run."""
    if replay.status != Replay.Status.RUNNING:
        return False
    beat = replay.heartbeat or replay.started
    return beat is None or timezone.now() - beat > stale_after()


def budget_for(poll: Any = None) -> Budget:
    """The bounds of a replay or report run by this deployment (settings SCHEDVIZ_CYCLE_SECONDS,
    SCHEDVIZ_SETUP_SECONDS, SCHEDVIZ_CANCEL_POLL_SECONDS); ``poll`` returns a reason to stop, read in
    the watchdog thread."""
    from django.conf import settings
    from django.db import connections

    return Budget(
        getattr(settings, "SCHEDVIZ_CYCLE_SECONDS", 10.0),
        setting="SCHEDVIZ_CYCLE_SECONDS",
        setup_seconds=getattr(settings, "SCHEDVIZ_SETUP_SECONDS", 120.0),
        setup_setting="SCHEDVIZ_SETUP_SECONDS",
        poll=poll,
        poll_seconds=getattr(settings, "SCHEDVIZ_CANCEL_POLL_SECONDS", 0.4),
        on_thread_exit=connections.close_all,  # the watchdog thread's own connection
    )


def _stop_poll(replay: Replay) -> Any:
    """What the watchdog asks: was the replay cancelled, or taken over by another worker?"""
    from django.conf import settings

    if settings.SCHEDVIZ_TASK_MODE == "sync":
        return None  # inside the request (tests): nothing can cancel it meanwhile
    pk, attempt = replay.pk, replay.attempt

    def poll() -> str | None:
        row = Replay.objects.filter(pk=pk).values_list("cancel_requested", "attempt").first()
        if row is None:
            return None  # gone: the next batch finds out
        if row[0]:
            return CANCELLED
        if row[1] != attempt:
            return "taken over by another worker"
        return None

    return poll


def engine_options(options: dict[str, Any], budget: Budget | None = None) -> ReplayOptions:
    return ReplayOptions(
        all_nodes=bool(options.get("allNodes", False)),
        preemption=str(options.get("preemption", "evict")),
        extender_transport=outbound_extenders.transport(),
        budget=budget,
    )


def _claim(replay_id: Any, takeover: bool = False) -> Replay | None:
    """Move a queued (or stale running) replay to running under a new attempt; None if not runnable.

    ``takeover``: the task was delivered again because the worker that ran it died (Celery's
    ``reject_on_worker_lost``, or the broker's visibility timeout): a running replay is claimed
    at once, without waiting for its heartbeat to go stale. Should the first worker still be alive
    (a replay longer than the visibility timeout), it stops at its next batch: the attempt changed.
    """

    def take(replay: Replay) -> bool:
        if replay.status == Replay.Status.RUNNING and not (takeover or is_stale(replay)):
            return False
        if replay.status in (Replay.Status.SUCCEEDED, Replay.Status.CANCELLED, Replay.Status.FAILED):
            return False
        if replay.cancel_requested:
            replay.status = Replay.Status.CANCELLED
            replay.finished = timezone.now()
            replay.save(update_fields=["status", "finished"])
            return False
        replay.attempt += 1
        replay.status = Replay.Status.RUNNING
        replay.started = replay.heartbeat = timezone.now()
        replay.finished = None
        replay.reason = ""
        replay.cycles_done = 0
        replay.save()
        Cycle.objects.filter(replay=replay).exclude(attempt=replay.attempt).delete()
        return True

    return claim(Replay, replay_id, take)


def run_replay(replay_id: Any, takeover: bool = False) -> str:
    """Run one replay to the end; returns its final status (``takeover``: see ``_claim``).

    Never leaves it stuck: whatever the runner raises ends the replay ``failed`` with the reason
    (logged); a claim that cannot be made at all is logged and raised for the caller to retry."""
    try:
        replay = _claim(replay_id, takeover)
    except Exception:
        log.error("replay %s could not be claimed:\n%s", replay_id, traceback.format_exc())
        raise
    if replay is None:
        current = Replay.objects.filter(pk=replay_id).values_list("status", flat=True).first()
        return str(current or "missing")
    _notify_status(replay)
    try:
        status = _run(replay)
    except (InputError, ConfigError, SchedVizError) as exc:
        status = _finish(replay, Replay.Status.FAILED, str(exc))
    except Exception as exc:
        log.error("replay %s failed:\n%s", replay.pk, traceback.format_exc())
        status = _finish(replay, Replay.Status.FAILED, f"internal error: {type(exc).__name__}: {exc}")
    return status


def _store_total(replay: Replay, total: int, names: list[str]) -> None:
    with writing():
        _update_total(replay.pk, total, names)


@retrying
def _update_total(pk: Any, total: int, names: list[str]) -> None:
    Replay.objects.filter(pk=pk).update(cycles_total=total, node_names_blob=pack(names))


def _run(replay: Replay) -> str:
    budget = budget_for(_stop_poll(replay))
    try:
        return _run_bounded(replay, budget)
    except ReplayStopped:
        # cancelled (or taken over: then _finish leaves the replay to the other worker)
        return _finish(replay, Replay.Status.CANCELLED, CANCELLED)
    finally:
        budget.close()


def _run_bounded(replay: Replay, budget: Budget) -> str:
    # The engine's reading of the snapshot (150,000 pods in a production cluster) is the process's
    # kept one when it fits its budget, else read for this replay only, frozen out of the collector's
    # sight meanwhile and handed back when it ends (ingestion.enginecache).
    snap = Snapshot.without_bulk(replay.snapshot_id)
    raw_config = replay.config if replay.config is not None else snap.config
    with ExitStack() as using:
        with budget.phase("reading the snapshot and the configuration"):  # engine work only: no database
            snapshot = using.enter_context(snap.engine_snapshot_in_use())
            config = load_config(raw_config)
        engine = EngineReplay(snapshot, config, engine_options(replay.options, budget))
        try:
            return _replay_records(replay, engine, budget)
        finally:
            # the framework's objects refer to each other: released, what the replay held is freed
            # now, not by a full collection (seconds for a dense cluster) in whichever request comes next
            engine.release()


def _replay_records(replay: Replay, engine: EngineReplay, budget: Budget) -> str:
    total = len(engine.queue())
    names = engine.cluster.names
    _store_total(replay, total, names)
    replay.cycles_total = total
    final: dict[str, str] = {}  # pod -> result of its last record (a Binding record ends a Permit wait)
    batch: list[Cycle] = []
    done = records = 0
    for rec in engine.cycles():
        final[rec.pod] = rec.result
        batch.append(_row(replay, rec, engine.reasons.items))
        records += 1
        if rec.kind == SCHEDULING and rec.attempt == 1:
            done += 1  # progress counts pods' first scheduling cycles, not retries or Binding records
        if budget.stopped is not None:
            raise ReplayStopped(budget.stopped)
        if len(batch) >= BATCH:
            if not _flush(replay, batch, done):
                return _finish(replay, Replay.Status.CANCELLED, CANCELLED)
            batch = []
    if batch and not _flush(replay, batch, done):
        return _finish(replay, Replay.Status.CANCELLED, CANCELLED)
    counts: dict[str, int] = {}
    for result in final.values():
        counts[result] = counts.get(result, 0) + 1
    replay.summary = {"results": counts, "cycles": done, "records": records, "nodes": len(names)}
    return _finish(replay, Replay.Status.SUCCEEDED, "")


def _row(replay: Replay, rec: CycleRecord, reasons: list[tuple[str, ...]]) -> Cycle:
    ns, _, _name = rec.pod.partition("/")
    winner = None
    if rec.selected_node is not None and rec.totals is not None and rec.feasible is not None and rec.scored:
        winner = int(rec.totals.max()) if len(rec.totals) else None
    return Cycle(
        replay=replay,
        attempt=replay.attempt,
        seq=rec.seq,
        pod=rec.pod,
        namespace=ns,
        profile=rec.profile,
        result=rec.result,
        node=rec.selected_node or "",
        message=rec.message or rec.error or "",
        nominated_node=rec.nominated_node or "",
        feasible_count=0 if rec.feasible is None else len(rec.feasible),
        evaluated_count=0 if rec.evaluation_order is None else len(rec.evaluation_order),
        tied_count=0 if rec.tied is None else len(rec.tied),
        winner_total=winner,
        duration_micros=sum(s.duration_micros for s in rec.stages),
        timings=_timings(rec),
        payload=encode_cycle(rec, reasons),
    )


def _timings(rec: CycleRecord) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in rec.stages:
        key = f"{s.point}/{s.plugin}"
        out[key] = out.get(key, 0) + s.duration_micros
    return out


@retrying
def _flush(replay: Replay, batch: list[Cycle], done: int) -> bool:
    """Store a batch and report progress; False when the replay was cancelled meanwhile."""
    with writing(), transaction.atomic():
        current = Replay.objects.select_for_update().only("cancel_requested", "attempt").get(pk=replay.pk)
        if current.attempt != replay.attempt:
            return False  # another worker took the replay over
        if current.cancel_requested:
            return False
        Cycle.objects.bulk_create(batch)
        Replay.objects.filter(pk=replay.pk).update(cycles_done=done, heartbeat=timezone.now())
    replay.cycles_done = done
    for fn in progress_listeners:
        try:
            fn(replay, done)
        except Exception:  # a broken listener must not fail the replay
            log.exception("progress listener failed")
    return True


@retrying
def _finish(replay: Replay, status: str, reason: str) -> str:
    with writing(), transaction.atomic():
        current = Replay.objects.select_for_update().get(pk=replay.pk)
        if current.attempt != replay.attempt:
            return str(current.status)
        current.status = status
        current.reason = reason
        current.finished = timezone.now()
        current.heartbeat = timezone.now()
        if status == Replay.Status.SUCCEEDED:
            current.summary = replay.summary
            current.cycles_done = replay.cycles_done
        current.save()
    replay.status = status
    replay.reason = reason
    _notify_status(current)
    return status
