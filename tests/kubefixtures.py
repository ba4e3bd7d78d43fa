"""Fixtures for the tests that run the real kubernetes client against the stand-in API server
(schedviz/kube/testing.py): fast timings, the server, a small cluster, waiting for a condition.
tests/kube and tests/live re-export the ``apiserver`` fixture from their conftest.py; the live fault
harness (tests/live/faults.py) runs its servers, timing and waits on the same pieces."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from schedviz.kube.testing import TestApiServer
from schedviz.kube.watch import Timing
from tests.engine.builders import node, pod

# every delay shrunk: a test's watches reconnect in tens of milliseconds
FAST = Timing(
    page_size=2,
    watch_timeout=(30, 31),
    connect_timeout=2.0,
    read_timeout=10.0,
    list_timeout=5.0,
    backoff_initial=0.05,
    backoff_max=0.2,
    jitter=0.1,
    unavailable_retry=0.3,
    min_watch_seconds=0.0,
)


@contextmanager
def running(srv: TestApiServer) -> Iterator[TestApiServer]:
    """The stand-in API server started for the block, then closed; SchedViz must not have written to
    it (AssertionError)."""
    srv.start()
    try:
        yield srv
    finally:
        srv.close()
        if srv.writes:
            raise AssertionError(f"SchedViz wrote to the watched cluster: {srv.writes}")


@pytest.fixture
def apiserver() -> Iterator[TestApiServer]:
    with running(TestApiServer(token="s3cr3t-token-for-tests")) as srv:
        yield srv


def poll(pred: Callable[[], Any], timeout: float, interval: float = 0.01) -> Any:
    """``pred()``'s first true value, asked every ``interval`` seconds; its last (false) value once
    ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def wait_until(pred: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    """``poll``, and an AssertionError naming ``what`` when the time is up."""
    value = poll(pred, timeout)
    if not value:
        raise AssertionError(f"timed out waiting for {what}")
    return value


def namespace(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
    }


def small_cluster(srv: TestApiServer) -> None:
    """Three nodes (small 2 CPU, large and other 8 CPU) and pods: one running on small, pending ones."""
    srv.create(namespace("default"))
    srv.create(node("small", cpu="2", labels={"topology.kubernetes.io/zone": "a"}))
    srv.create(node("large", cpu="8", labels={"topology.kubernetes.io/zone": "b"}))
    srv.create(
        node(
            "tainted",
            cpu="8",
            labels={"topology.kubernetes.io/zone": "a"},
            taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
        )
    )
    srv.create(pod("running", node_name="small", cpu="1"))
    srv.create(pod("web", cpu="500m"))
    srv.create(pod("huge", cpu="16"))
