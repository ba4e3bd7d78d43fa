"""The `uploads` throttle scope: snapshot uploads and CI reports, 429 with Retry-After past the rate."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from typing import Any

import pytest
from rest_framework.test import APIClient

from schedviz.ingestion.models import Snapshot
from tests.webfixtures import cluster_yaml, error_of


def test_uploads_are_throttled_with_retry_after(
    api: APIClient, other_api: APIClient, throttle_rates: dict[str, str]
) -> None:
    throttle_rates["uploads"] = "3/hour"
    for i in range(3):
        r = api.post("/api/v1/snapshots/", {"content": cluster_yaml(extra_pods=i)}, format="json")
        assert r.status_code == 201, r.content
    r = api.post("/api/v1/snapshots/", {"content": cluster_yaml(extra_pods=9)}, format="json")
    err = error_of(r, 429)
    assert err["code"] == "throttled"
    retry = int(r["Retry-After"])
    assert 0 < retry <= 3600
    assert Snapshot.objects.count() == 3
    # reports upload too, in the same scope
    first = Snapshot.objects.first()
    assert first is not None
    error_of(api.post("/api/v1/reports/", {"snapshot_id": str(first.pk)}, format="json"), 429)
    # reading is not an upload, and the scope counts per user
    assert api.get("/api/v1/snapshots/").status_code == 200
    assert other_api.post("/api/v1/snapshots/", {"content": cluster_yaml()}, format="json").status_code == 201


def test_the_general_rate_applies_to_everything_else(api: APIClient, throttle_rates: dict[str, Any]) -> None:
    throttle_rates["user"] = "2/minute"
    assert api.get("/api/v1/snapshots/").status_code == 200
    assert api.get("/api/v1/replays/").status_code == 200
    r = api.get("/api/v1/tokens/")
    assert error_of(r, 429)["code"] == "throttled" and int(r["Retry-After"]) <= 60


REDIS_TEST_URL = os.environ.get("SCHEDVIZ_TEST_REDIS_CACHE", "redis://127.0.0.1:6379/14")


def _redis_cache(url: str) -> dict[str, Any]:
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "schedviz-test",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }


def test_counts_are_shared_by_every_process_through_redis(
    api: APIClient, alice: Any, throttle_rates: dict[str, Any], settings: Any
) -> None:
    import redis

    client = redis.Redis.from_url(REDIS_TEST_URL)
    try:
        client.ping()
    except redis.ConnectionError:
        if os.environ.get("CI"):
            raise
        pytest.skip("Redis not running")
    client.flushdb()
    settings.CACHES = _redis_cache(REDIS_TEST_URL)
    throttle_rates["user"] = "3/minute"
    assert api.get("/api/v1/snapshots/").status_code == 200
    assert api.get("/api/v1/replays/").status_code == 200
    # the bucket is in Redis, where another web process reads and takes from it ...
    keys = [k for k in client.keys("*") if b"throttle_user_" in k]
    assert len(keys) == 1 and str(alice.pk).encode() in keys[0]
    from django.core.cache import cache

    key = keys[0].decode().split(":", 2)[-1]
    full_at = float(cache.get(key))
    assert 0 < full_at - time.time() <= 2 * 20  # two requests of three a minute: 20 s each
    cache.set(key, full_at + 20, 60)  # ... a request served by another process
    r = api.get("/api/v1/tokens/")
    assert error_of(r, 429)["code"] == "throttled"
    client.flushdb()


def test_a_burst_of_the_rate_then_one_request_per_share_of_the_period(
    api: APIClient, throttle_rates: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from schedviz.api.throttling import UserRateThrottle

    clock = [1_000_000.0]
    monkeypatch.setattr(UserRateThrottle, "timer", lambda self: clock[0])
    throttle_rates["user"] = "4/minute"
    for _ in range(4):
        assert api.get("/api/v1/snapshots/").status_code == 200
    r = api.get("/api/v1/snapshots/")
    # the bucket is empty; a token comes back every 60 / 4 = 15 s
    assert error_of(r, 429)["code"] == "throttled" and r["Retry-After"] == "15"
    clock[0] += 14
    r = api.get("/api/v1/snapshots/")
    assert r.status_code == 429 and r["Retry-After"] == "1"
    clock[0] += 1
    assert api.get("/api/v1/snapshots/").status_code == 200
    assert api.get("/api/v1/snapshots/").status_code == 429  # refused requests take nothing
    clock[0] += 60  # a full period on: the whole burst again, and no more
    for _ in range(4):
        assert api.get("/api/v1/snapshots/").status_code == 200
    assert api.get("/api/v1/snapshots/").status_code == 429


def test_an_unreachable_cache_lets_requests_through(
    api: APIClient, throttle_rates: dict[str, Any], settings: Any
) -> None:
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.CACHES = _redis_cache(f"redis://127.0.0.1:{port}/0")
    throttle_rates["user"] = "1/minute"
    t0 = time.monotonic()
    for _ in range(3):
        assert api.get("/api/v1/snapshots/").status_code == 200
    assert time.monotonic() - t0 < 10


def test_the_cache_is_redis_when_there_is_one() -> None:
    code = "from django.conf import settings; import django; django.setup(); print(settings.CACHES['default']['BACKEND'])"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "schedviz.settings"}
    env.pop("SCHEDVIZ_CACHE_URL", None)
    with_redis = {**env, "REDIS_URL": "redis://127.0.0.1:6379/3"}
    without = {k: v for k, v in env.items() if k != "REDIS_URL"}
    run = [sys.executable, "-c", code]
    assert subprocess.run(run, env=with_redis, capture_output=True, text=True, check=True).stdout.strip() == (
        "django.core.cache.backends.redis.RedisCache"
    )
    assert subprocess.run(run, env=without, capture_output=True, text=True, check=True).stdout.strip() == (
        "django.core.cache.backends.locmem.LocMemCache"
    )
