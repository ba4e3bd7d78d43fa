"""Database reads of the websocket consumers, on a pool of their own.

Channels' ``database_sync_to_async`` is thread-sensitive: outside an HTTP request (Django gives each
request its own thread-sensitive context) every such call of the process runs on one shared thread.
Hundreds of streams reading cycles would queue behind one another there, one connection opened and
closed per read. The consumers' reads are independent, short and read-only, so they run on a small
pool (``SCHEDVIZ_STREAM_DB_THREADS``, default 4). Each thread keeps its connection between reads
(opening one costs more than most reads) for at most ``SCHEDVIZ_STREAM_DB_CONN_SECONDS`` (default 60),
and drops it after any database error, so a restarted or moved server is reconnected to.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

from asgiref.sync import SyncToAsync

P = ParamSpec("P")
R = TypeVar("R")

_executor = ThreadPoolExecutor(
    max_workers=max(1, int(os.environ.get("SCHEDVIZ_STREAM_DB_THREADS", "4"))),
    thread_name_prefix="stream-db",
)


MAX_AGE = float(os.environ.get("SCHEDVIZ_STREAM_DB_CONN_SECONDS", "60"))
_opened = threading.local()


def _call(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    from django.db import DatabaseError, connection

    if connection.connection is not None and time.monotonic() - getattr(_opened, "at", 0.0) > MAX_AGE:
        connection.close()
    if connection.connection is None:
        _opened.at = time.monotonic()
    try:
        return func(*args, **kwargs)
    except DatabaseError:
        connection.close()
        raise
    finally:
        if connection.in_atomic_block:  # never keep a transaction open between reads
            connection.close()


def stream_db(func: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    """Like ``database_sync_to_async``, on the streaming pool, with the connection kept for reuse."""

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        result: R = _call(func, *args, **kwargs)
        return result

    wrapped: Callable[P, Coroutine[Any, Any, R]] = SyncToAsync(run, thread_sensitive=False, executor=_executor)
    return wrapped


def close_connections(timeout: float = 10.0) -> None:
    """Close the connections the pool's threads hold, each thread its own (at shutdown, between tests)."""
    threads = len(getattr(_executor, "_threads", ()))
    if not threads:
        return
    barrier = threading.Barrier(threads)

    def close() -> None:
        from django.db import connections

        connections.close_all()
        # every thread of the pool takes exactly one of these: none returns before all have closed
        barrier.wait(timeout=timeout)

    for future in [_executor.submit(close) for _ in range(threads)]:
        future.result(timeout=timeout + 1)
