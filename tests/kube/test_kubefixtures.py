"""The pieces the kube and live tests and the live fault harness share (tests/kubefixtures.py)."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable

import pytest

from schedviz.kube.testing import TestApiServer
from tests.kubefixtures import poll, running, wait_until


def counter(answers: list[object]) -> tuple[list[int], Callable[[], object]]:
    calls: list[int] = []

    def pred() -> object:
        calls.append(1)
        return answers[min(len(calls), len(answers)) - 1]

    return calls, pred


def test_poll_answers_the_first_true_value() -> None:
    calls, pred = counter([None, 0, "ready"])
    assert poll(pred, timeout=60, interval=0) == "ready"
    assert len(calls) == 3


def test_poll_answers_the_last_false_value_once_the_time_is_up() -> None:
    calls, pred = counter([0, ""])
    assert poll(pred, timeout=0, interval=0) in (0, "")
    assert calls


def test_wait_until_names_what_it_waited_for() -> None:
    assert wait_until(lambda: 42, timeout=0) == 42
    with pytest.raises(AssertionError, match="timed out waiting for the pod"):
        wait_until(lambda: None, timeout=0, what="the pod")


def test_running_serves_then_closes_and_refuses_a_write() -> None:
    srv = TestApiServer(token="t")
    auth = {"Authorization": "Bearer t"}
    with running(srv) as served:
        assert served is srv
        with urllib.request.urlopen(urllib.request.Request(f"{srv.url}/api/v1/nodes", headers=auth), timeout=10) as r:
            assert r.status == 200
    assert srv.writes == []

    writer = TestApiServer(token="t")
    with pytest.raises(AssertionError, match="SchedViz wrote to the watched cluster"), running(writer):
        post = urllib.request.Request(f"{writer.url}/api/v1/namespaces", data=b"{}", method="POST", headers=auth)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(post, timeout=10)
        assert refused.value.code == 405
    assert len(writer.writes) == 1
