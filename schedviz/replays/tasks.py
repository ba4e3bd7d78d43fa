"""Replay execution: a Celery task, or in-process for the embedded default and tests."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction

from schedviz.celery import app

from .reporting import run_report
from .runner import run_replay

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


@app.task(name="schedviz.run_replay", bind=True, acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
def run_replay_task(self: Any, replay_id: str) -> str:
    # delivered again: the worker that had it died mid-run (acks_late keeps the message until the end;
    # reject_on_worker_lost requeues it when the pool process dies; the broker's visibility timeout
    # when the whole worker does). The replay restarts as a new attempt; the dead one's cycles go.
    info = getattr(self.request, "delivery_info", None) or {}
    return run_replay(replay_id, takeover=bool(info.get("redelivered")))


@app.task(name="schedviz.run_report", acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
def run_report_task(report_id: str) -> str:
    return run_report(report_id)


def _in_thread(fn: Any, arg: str) -> None:
    close_old_connections()
    try:
        fn(arg)
    finally:
        close_old_connections()


def _dispatch(fn: Any, task: Any, obj_id: Any) -> None:
    oid = str(obj_id)
    mode = settings.SCHEDVIZ_TASK_MODE
    if mode == "sync":
        transaction.on_commit(lambda: fn(oid))
    elif mode == "thread":
        transaction.on_commit(lambda: _executor().submit(_in_thread, fn, oid))
    else:
        transaction.on_commit(lambda: task.delay(oid))


def dispatch(replay_id: Any) -> None:
    """Start a replay the way this deployment runs them, once the surrounding transaction commits."""
    _dispatch(run_replay, run_replay_task, replay_id)


def dispatch_report(report_id: Any) -> None:
    _dispatch(run_report, run_report_task, report_id)


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="schedviz-replay")
        return _pool
