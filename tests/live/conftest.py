"""Live mode tests: the real kubernetes client against the test API server (schedviz/kube/testing.py),
the worker, the live clusters API and websocket."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.fernet import Fernet

from tests.kubefixtures import apiserver  # noqa: F401  (re-exported for this directory)

# the web application's fixtures (users, authenticated clients, fast tasks and throttles)
from tests.webfixtures import (  # noqa: F401
    _sync_tasks,
    alice,
    api,
    bob,
    carol,
    carol_api,
    make_user,
    other_api,
    team,
    throttle_rates,
)


@pytest.fixture(autouse=True)
def _sqlite_readers_do_not_wait() -> Iterator[None]:
    """The test database on SQLite is a shared-cache in-memory database, where a reader meeting a
    write in progress on another thread's connection fails ("table is locked") instead of waiting
    as with the file the application uses; the worker tests read while the worker writes."""
    from django.db import connection
    from django.db.backends.signals import connection_created

    def pragma(sender: Any, connection: Any, **kw: Any) -> None:
        if connection.vendor == "sqlite":
            connection.connection.execute("PRAGMA read_uncommitted = 1")

    if connection.vendor == "sqlite" and connection.connection is not None:
        connection.connection.execute("PRAGMA read_uncommitted = 1")
    connection_created.connect(pragma)
    yield
    connection_created.disconnect(pragma)


@pytest.fixture(autouse=True)
def encryption_key(monkeypatch: pytest.MonkeyPatch) -> str:
    key = Fernet.generate_key().decode()
    monkeypatch.setenv("SCHEDVIZ_ENCRYPTION_KEY", key)
    return key
