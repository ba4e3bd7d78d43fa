"""Reading stored uploads on the worker: a Celery task, or in-process for the embedded default and tests.

As replays (``schedviz/replays/tasks.py``), by ``SCHEDVIZ_TASK_MODE``: ``celery`` (the task below, on
the worker), ``thread`` (one background thread per web process, uploads read one at a time: a large
upload holds a few hundred MiB while it is read) or ``sync`` (when the request's transaction commits).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction

from schedviz.celery import app

from .services import process_upload

log = logging.getLogger(__name__)
_pool: ThreadPoolExecutor | None = None


@app.task(name="schedviz.parse_snapshot", acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
def parse_snapshot_task(snapshot_id: str) -> str:
    return process_upload(snapshot_id)


def _in_thread(snapshot_id: str) -> None:
    close_old_connections()
    try:
        process_upload(snapshot_id)
    except Exception:
        log.exception("reading upload %s failed", snapshot_id)
    finally:
        close_old_connections()


def dispatch_upload(snapshot_id: Any) -> None:
    """Read a stored upload the way this deployment runs work, once the surrounding transaction commits."""
    global _pool
    sid = str(snapshot_id)
    mode = settings.SCHEDVIZ_TASK_MODE
    if mode == "sync":
        transaction.on_commit(lambda: process_upload(sid))
    elif mode == "thread":
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="schedviz-upload")
        pool = _pool
        transaction.on_commit(lambda: pool.submit(_in_thread, sid))
    else:
        transaction.on_commit(lambda: parse_snapshot_task.delay(sid))
