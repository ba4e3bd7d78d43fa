"""Database reads of the websocket consumers, on their own threads.

Channels' ``database_sync_to_async`` is thread-sensitive: every call runs on the one thread that
Django's ASGI handler also runs every synchronous view on. Hundreds of streams reading cycles would
then queue the API's requests behind them. The consumers' reads are independent, short and
read-only, so they run on a small pool of their own (``SCHEDVIZ_STREAM_DB_THREADS``, default 4;
each thread holds its own database connection), and the API's thread stays free for the API.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

from channels.db import DatabaseSyncToAsync

P = ParamSpec("P")
R = TypeVar("R")

_executor = ThreadPoolExecutor(
    max_workers=max(1, int(os.environ.get("SCHEDVIZ_STREAM_DB_THREADS", "4"))),
    thread_name_prefix="stream-db",
)


def stream_db(func: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    """``database_sync_to_async`` on the streaming pool (old connections closed around each call)."""
    wrapped: Callable[P, Coroutine[Any, Any, R]] = DatabaseSyncToAsync(
        func, thread_sensitive=False, executor=_executor
    )
    return wrapped
