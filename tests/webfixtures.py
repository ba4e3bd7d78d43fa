"""Fixtures for the web application's tests: users, authenticated clients, a small cluster.

A package of web tests re-exports them from its conftest.py (tests/api, tests/replays, tests/live,
tests/hardening, tests/ingestion), the autouse ones (``_sync_tasks``, ``throttle_rates``) included.
Where other tests share the directory and must not get those (tests/accounts), the conftest re-exports
the others, and the web test modules call ``sync_tasks`` and ``generous_throttles`` themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from schedviz.accounts.models import ApiToken, Team
from tests.engine.builders import node, pod


def sync_tasks(settings: Any) -> None:
    """Replays and reports run in the request's thread; test users' passwords hash fast."""
    settings.SCHEDVIZ_TASK_MODE = "sync"
    # test users' passwords: a fast hasher (the default's iterations cost most of a test's setup)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def generous_throttles(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Generous rates, and no history from other tests.

    DRF's throttles read their rates from a class attribute bound when DRF is imported, so overriding
    the REST_FRAMEWORK setting alone does not change them: the attribute is replaced here. Tests may
    change the returned dict.
    """
    from django.core.cache import cache
    from rest_framework.throttling import SimpleRateThrottle

    rates = {"uploads": "1000/hour", "user": "100000/hour"}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)
    cache.clear()
    return rates


@pytest.fixture(autouse=True)
def _sync_tasks(settings: Any) -> None:
    sync_tasks(settings)


@pytest.fixture(autouse=True)
def throttle_rates(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """``generous_throttles``: the rates, which a test may change."""
    return generous_throttles(monkeypatch)


@pytest.fixture
def make_user(transactional_db: None) -> Callable[[str], User]:
    def make(name: str) -> User:
        return User.objects.create_user(name, password="pw-" + name)

    return make


@pytest.fixture
def alice(make_user: Callable[[str], User]) -> User:
    return make_user("alice")


@pytest.fixture
def bob(make_user: Callable[[str], User]) -> User:
    return make_user("bob")


def client_for(user: User) -> APIClient:
    _, raw = ApiToken.issue(user, "test")
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    return c


@pytest.fixture
def carol(make_user: Callable[[str], User]) -> User:
    return make_user("carol")


@pytest.fixture
def team(alice: User, bob: User) -> Team:
    """A team of alice and bob (not carol)."""
    t = Team.objects.create(name="platform")
    t.members.add(alice, bob)
    return t


@pytest.fixture
def api(alice: User) -> APIClient:
    return client_for(alice)


@pytest.fixture
def other_api(bob: User) -> APIClient:
    return client_for(bob)


@pytest.fixture
def carol_api(carol: User) -> APIClient:
    return client_for(carol)


def error_of(response: Any, status: int) -> dict[str, Any]:
    """The ``error`` object of an answer, after checking its status and the stable error shape."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert isinstance(body["error"]["code"], str) and isinstance(body["error"]["message"], str)
    err: dict[str, Any] = body["error"]
    return err


def cluster_yaml(extra_pods: int = 0) -> str:
    items: list[dict[str, Any]] = [
        node("small", cpu="2", labels={"topology.kubernetes.io/zone": "a"}),
        node("large", cpu="8", labels={"topology.kubernetes.io/zone": "b"}),
        node(
            "tainted",
            cpu="8",
            labels={"topology.kubernetes.io/zone": "a"},
            taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
        ),
        pod("running", node_name="small", cpu="1"),
        pod("web", cpu="500m", created="2026-01-01T00:00:01Z"),
        pod("huge", cpu="16", created="2026-01-01T00:00:02Z"),
    ]
    items += [pod(f"extra-{i}", cpu="100m", created=f"2026-01-02T00:00:{i:02d}Z") for i in range(extra_pods)]
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})


@pytest.fixture
def upload(api: APIClient) -> Callable[..., dict[str, Any]]:
    def do(text: str | None = None, **extra: Any) -> dict[str, Any]:
        r = api.post("/api/v1/snapshots/", {"content": text or cluster_yaml(), **extra}, format="json")
        assert r.status_code in (200, 201), r.content
        body: dict[str, Any] = r.json()
        return body

    return do
