"""The writes every queued job makes (replays, CI reports, plans): claiming it, saving it.

A job is a row with a ``status``; the worker that claims it locks the row, decides whether it may run
it and marks it running, in one short transaction. Each write goes through ``writing`` (on SQLite,
one at a time in this process) and is tried again by ``retrying`` when it failed on a lock.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.db import OperationalError, connection, models, transaction

log = logging.getLogger(__name__)
T = TypeVar("T")
M = TypeVar("M", bound=models.Model)

_sqlite_writes = threading.RLock()


@contextmanager
def writing() -> Iterator[None]:
    """Around a write transaction of a replay or report: on SQLite, one at a time in this process.

    In-process replays run on several threads (tasks.py). A transaction that reads then writes,
    while another one writes, fails at once on SQLite ("database is locked": it cannot wait for a
    lock it would deadlock on), so this process's workers take turns for their (short) transactions,
    as a single worker thread did. Other databases: nothing."""
    if connection.vendor != "sqlite":
        yield
        return
    with _sqlite_writes:
        yield


# A write that could not get the database (SQLite busy past its timeout, a PostgreSQL deadlock or
# serialization failure) is tried again: a concurrent request must never fail or strand a replay.
RETRIES = 8


def _transient(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, OperationalError) and any(
        word in text for word in ("locked", "busy", "deadlock", "could not serialize")
    )


def retrying(fn: Callable[..., T]) -> Callable[..., T]:
    """Run a write transaction again (after 0.1, 0.2, ... 2 s) when it failed on a lock."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> T:
        for attempt in range(RETRIES):
            try:
                return fn(*args, **kwargs)
            except OperationalError as exc:
                if not _transient(exc) or attempt == RETRIES - 1:
                    raise
                log.warning("%s: %s; trying again", fn.__name__, exc)
                time.sleep(min(2.0, 0.1 * 2**attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    return run


@retrying
def claim(model: type[M], pk: Any, take: Callable[[M], bool]) -> M | None:
    """The job ``pk`` of ``model``, locked (``select_for_update``) for ``take`` to decide on: ``take``
    makes its changes (in the same transaction) and answers whether the job is now this worker's.
    None when the job is gone or ``take`` declined it; what ``take`` saved is kept either way."""
    with writing(), transaction.atomic():
        job = model._default_manager.select_for_update().filter(pk=pk).first()
        if job is None or not take(job):
            return None
    return job


def claim_queued(model: type[M], pk: Any) -> M | None:
    """Move a queued job to running; None if it is gone or not queued (another worker has it, or it
    ended). ``model`` has a ``status`` field and a ``Status`` choice with ``QUEUED`` and ``RUNNING``."""
    job_model: Any = model

    def take(job: Any) -> bool:
        if job.status != job_model.Status.QUEUED:
            return False
        job.status = job_model.Status.RUNNING
        job.save(update_fields=["status"])
        return True

    return claim(model, pk, take)


@retrying
def save(job: models.Model) -> None:
    """Store the whole job (its answer, its end), taking its turn on SQLite."""
    with writing():
        job.save()
