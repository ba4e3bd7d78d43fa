"""Replay execution: a Celery task, or in-process for the embedded default and tests.

One user must not starve the others. Replays and reports of one owner run at most
``SCHEDVIZ_REPLAYS_PER_USER`` at a time (default 1; 0 lifts the limit):

- in-process ("thread" mode): a fair queue on ``SCHEDVIZ_REPLAY_THREADS`` threads (default 2): each
  owner has a queue of their own, owners are served in turn (round robin) and an owner at the limit
  waits while other owners' work runs;
- on Celery: a task whose owner is at the limit goes back to the broker for
  ``SCHEDVIZ_REPLAY_RETRY_SECONDS`` (``retry`` with a countdown) instead of holding a worker. The
  running ones hold a slot per owner in the cache (Redis in that deployment), a lease its worker
  renews: the slot of a worker that died goes at once to its task delivered again, or to anyone when
  the lease runs out.

Each cycle's work is bounded on its own (``SCHEDVIZ_CYCLE_SECONDS``, runner.py).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction

from schedviz.celery import app

from .models import Replay, Report
from .reporting import run_report
from .runner import run_replay

log = logging.getLogger(__name__)

SLOT_LEASE_SECONDS = 60  # a slot whose worker stopped renewing it is free after this long
_ACTIVE = (Replay.Status.QUEUED, Replay.Status.RUNNING)


def _retry_seconds() -> float:
    return float(getattr(settings, "SCHEDVIZ_REPLAY_RETRY_SECONDS", 3.0))


def retry_seconds() -> float:
    """How long a task whose owner is at the limit waits before it is tried again."""
    return _retry_seconds()


def _per_user() -> int:
    return int(getattr(settings, "SCHEDVIZ_REPLAYS_PER_USER", 1))


# max_retries=None: a task deferred because its owner is at the limit is retried as long as it takes
@app.task(  # type: ignore[untyped-decorator]
    name="schedviz.run_replay", bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None
)
def run_replay_task(self: Any, replay_id: str, takeover: bool = False) -> str:
    # delivered again: the worker that had it died mid-run (acks_late keeps the message until the end;
    # reject_on_worker_lost requeues it when the pool process dies; the broker's visibility timeout
    # when the whole worker does). The replay restarts as a new attempt; the dead one's cycles go.
    info = getattr(self.request, "delivery_info", None) or {}
    takeover = takeover or bool(info.get("redelivered"))
    with owner_slot(Replay, replay_id, reclaim=takeover) as granted:
        if not granted:  # the owner's other replays and reports run: back to the queue for a while
            raise self.retry(args=(replay_id,), kwargs={"takeover": takeover}, countdown=_retry_seconds())
        return run_replay(replay_id, takeover=takeover)


@app.task(  # type: ignore[untyped-decorator]
    name="schedviz.run_report", bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None
)
def run_report_task(self: Any, report_id: str) -> str:
    info = getattr(self.request, "delivery_info", None) or {}
    with owner_slot(Report, report_id, reclaim=bool(info.get("redelivered"))) as granted:
        if not granted:
            raise self.retry(countdown=_retry_seconds())
        return run_report(report_id)


# ----- per-owner slots (Celery) ------------------------------------------------------------------
def _owner_and_status(model: Any, obj_id: Any) -> tuple[str, str] | None:
    row = model.objects.filter(pk=obj_id).values_list("owner_id", "status").first()
    return None if row is None else (str(row[0]), str(row[1]))


@contextmanager
def owner_slot(model: Any, obj_id: Any, reclaim: bool = False) -> Iterator[bool]:
    """Hold one of the owner's ``SCHEDVIZ_REPLAYS_PER_USER`` slots while the block runs; yields False
    when they are all taken. Work that will not run (finished, cancelled, gone) needs no slot; a cache
    that cannot be reached lets the work run (logged). ``reclaim`` (the task was delivered again: the
    worker that had it died): a slot still held for the same replay or report is taken over at once."""
    limit = _per_user()
    found = _owner_and_status(model, obj_id) if limit > 0 else None
    if found is None or found[1] not in _ACTIVE:
        yield True
        return
    from django.core.cache import cache

    owner = found[0]
    work = f"{model._meta.label_lower}:{obj_id}"
    token = f"{uuid.uuid4().hex} {work}"
    key: str | None = None
    reachable = True
    try:
        candidates = [f"schedviz:owner-slot:{owner}:{k}" for k in range(limit)]
        for candidate in candidates:
            if cache.add(candidate, token, timeout=SLOT_LEASE_SECONDS):
                key = candidate
                break
        else:
            held_by = cache.get_many(candidates).items() if reclaim else ()
            for candidate, held in held_by:
                if isinstance(held, str) and held.endswith(f" {work}"):
                    cache.set(candidate, token, timeout=SLOT_LEASE_SECONDS)  # its worker died with it
                    key = candidate
                    break
    except Exception:
        log.warning("per-user slots: the cache failed; running without a slot", exc_info=True)
        reachable = False
    if key is None:
        yield not reachable
        return
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(SLOT_LEASE_SECONDS / 4):
            try:
                if cache.get(key) == token:
                    cache.touch(key, SLOT_LEASE_SECONDS)
            except Exception:
                log.warning("per-user slots: could not renew %s", key, exc_info=True)

    renewer = threading.Thread(target=renew, name="schedviz-slot", daemon=True)
    renewer.start()
    try:
        yield True
    finally:
        stop.set()
        try:
            if cache.get(key) == token:
                cache.delete(key)
        except Exception:
            log.warning("per-user slots: could not free %s", key, exc_info=True)


# ----- in-process: the fair queue ----------------------------------------------------------------
class FairExecutor:
    """Jobs on ``threads`` daemon threads; a FIFO per owner, owners served in turn (round robin: the
    next job is the oldest of the owner served longest ago, owners never served first, in order of
    arrival), at most ``per_owner`` jobs of one owner running at a time (0: no limit).

    Threads start as jobs come. A server that stops abandons the jobs under way (a running replay
    becomes re-runnable once stale: SCHEDVIZ_STALE_SECONDS) and those queued, as before.
    """

    def __init__(self, threads: int, per_owner: int) -> None:
        self.threads = max(1, threads)
        self.per_owner = max(0, per_owner)
        self._cv = threading.Condition()
        self._queues: dict[str, deque[tuple[Callable[[Any], Any], Any]]] = {}
        self._order: list[str] = []  # owners with queued jobs, in order of arrival
        self._served: dict[str, int] = {}  # owner -> when served last (a counter), while queued or running
        self._turn = 0
        self._running: dict[str, int] = {}
        self._workers: list[threading.Thread] = []
        self._idle = 0
        self._closed = False

    def submit(self, owner: str, fn: Callable[[Any], Any], arg: Any) -> None:
        with self._cv:
            q = self._queues.get(owner)
            if q is None:
                q = self._queues[owner] = deque()
                self._order.append(owner)
            q.append((fn, arg))
            if self._idle == 0 and len(self._workers) < self.threads:
                t = threading.Thread(
                    target=self._work, name=f"schedviz-replay-{len(self._workers)}", daemon=True
                )
                self._workers.append(t)
                t.start()
            self._cv.notify()

    def shutdown(self) -> None:
        """No more jobs: the threads end once the queued ones are done."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()

    def pending(self) -> int:
        with self._cv:
            return sum(len(q) for q in self._queues.values()) + sum(self._running.values())

    def _take(self) -> tuple[str, Callable[[Any], Any], Any] | None:
        """With the lock held: the next job of the owner whose turn it is (served longest ago, and
        below the per-owner limit), or None."""
        best: str | None = None
        for owner in self._order:
            if self.per_owner and self._running.get(owner, 0) >= self.per_owner:
                continue
            if best is None or self._served.get(owner, -1) < self._served.get(best, -1):
                best = owner
        if best is None:
            return None
        q = self._queues[best]
        fn, arg = q.popleft()
        if not q:
            del self._queues[best]
            self._order.remove(best)
        self._running[best] = self._running.get(best, 0) + 1
        self._served[best] = self._turn
        self._turn += 1
        return best, fn, arg

    def _work(self) -> None:
        while True:
            with self._cv:
                while (job := self._take()) is None:
                    if self._closed and not self._queues:
                        return
                    self._idle += 1
                    self._cv.wait()
                    self._idle -= 1
            owner, fn, arg = job
            try:
                fn(arg)
            except Exception:
                log.exception("in-process job %s failed", arg)
            finally:
                with self._cv:
                    left = self._running.get(owner, 1) - 1
                    if left:
                        self._running[owner] = left
                    else:
                        self._running.pop(owner, None)
                        if owner not in self._queues:
                            self._served.pop(owner, None)
                    self._cv.notify_all()


_executor_instance: FairExecutor | None = None
_lock = threading.Lock()


def _executor() -> FairExecutor:
    """The process's fair queue, (re)built when its settings change."""
    global _executor_instance
    threads = int(getattr(settings, "SCHEDVIZ_REPLAY_THREADS", 2))
    per_owner = _per_user()
    with _lock:
        ex = _executor_instance
        if ex is None or (ex.threads, ex.per_owner) != (max(1, threads), max(0, per_owner)):
            if ex is not None:
                ex.shutdown()
            ex = _executor_instance = FairExecutor(threads, per_owner)
        return ex


def _in_thread(fn: Any) -> Callable[[str], None]:
    def run(arg: str) -> None:
        close_old_connections()
        try:
            fn(arg)
        finally:
            close_old_connections()

    return run


def _dispatch(fn: Any, task: Any, model: Any, obj_id: Any) -> None:
    oid = str(obj_id)
    mode = settings.SCHEDVIZ_TASK_MODE
    if mode == "sync":
        transaction.on_commit(lambda: fn(oid))
    elif mode == "thread":

        def submit() -> None:
            owner = model.objects.filter(pk=oid).values_list("owner_id", flat=True).first()
            _executor().submit(str(owner), _in_thread(fn), oid)

        transaction.on_commit(submit)
    else:
        transaction.on_commit(lambda: task.delay(oid))


def dispatch(replay_id: Any) -> None:
    """Start a replay the way this deployment runs them, once the surrounding transaction commits."""
    _dispatch(run_replay, run_replay_task, Replay, replay_id)


def dispatch_report(report_id: Any) -> None:
    _dispatch(run_report, run_report_task, Report, report_id)


def dispatch_job(fn: Callable[[str], Any], task: Any, model: Any, obj_id: Any) -> None:
    """Start another app's job of one owned object (its function of the id, and its Celery task) as
    replays start: on commit, in this deployment's mode, in the owner's fair turn."""
    _dispatch(fn, task, model, obj_id)
