from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

os.environ.setdefault("SCHEDVIZ_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "var", "test"))
# The stand-in API servers of the live-cluster tests listen on loopback, which the outbound guard
# refuses unless an operator allows it (tests of the guard itself unset this).
os.environ.setdefault("SCHEDVIZ_CLUSTER_HOSTS", "127.0.0.1,localhost,::1")


@pytest.fixture(autouse=True)
def _stream_db_connections() -> Iterator[None]:
    """The websocket consumers' database threads keep their connections: close them after each test,
    so that no test sees another's connection and the test database can be dropped."""
    yield
    module = sys.modules.get("schedviz.streaming.db")
    if module is not None:
        module.close_connections()
