"""Sign-in throttling (schedviz/accounts/signin_throttle.py): failed password checks counted per account
and per client address in a sliding window; past the limit, attempts are refused without the password
being checked, 429 with Retry-After, until the window passes. Time is a patched clock: no sleeping."""

from __future__ import annotations

import base64
import logging
import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import AsyncClient, Client
from django.urls import include, path
from rest_framework.authentication import BasicAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from schedviz.accounts import signin_throttle

LOGIN = "/accounts/login/"
ADMIN_LOGIN = "/admin/login/"
LOCKED_TEXT = b"Too many failed sign-in attempts"


class _Whoami(APIView):
    """An API view that takes a username and password (HTTP Basic): none exists in SchedViz today,
    but any that is added gets the throttle through the authentication backend."""

    authentication_classes = [BasicAuthentication]
    permission_classes = [IsAuthenticated]

    def get(self, request: Request) -> Response:
        return Response({"username": request.user.get_username()})


# the URL configuration of the tests marked @pytest.mark.urls(__name__): the site's, and the Basic-auth view
urlpatterns = [path("basic/whoami/", _Whoami.as_view()), path("", include("schedviz.urls"))]


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_017.0  # not on a bucket's edge

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(autouse=True)
def _no_counts() -> Iterator[None]:
    """No counts from other tests, and none left for them (torn down after the settings are restored)."""
    cache.clear()
    signin_throttle._fallback.clear()
    yield
    cache.clear()
    signin_throttle._fallback.clear()


@pytest.fixture(autouse=True)
def clock(_no_counts: None, monkeypatch: pytest.MonkeyPatch, settings: Any) -> Clock:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.SCHEDVIZ_LOGIN_FAILURES_PER_ACCOUNT = 5
    settings.SCHEDVIZ_LOGIN_FAILURES_PER_ADDRESS = 20
    settings.SCHEDVIZ_LOGIN_WINDOW_SECONDS = 900
    fake = Clock()
    monkeypatch.setattr(signin_throttle, "clock", fake)
    monkeypatch.setattr(signin_throttle, "_primary_down_until", 0.0)
    return fake


@pytest.fixture
def alice(db: None) -> User:
    return User.objects.create_user("alice", password="pw-alice")


@pytest.fixture
def root(db: None) -> User:
    return User.objects.create_superuser("root", password="pw-root")


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The passwords actually checked against an account."""
    seen: list[str] = []
    original = User.check_password

    def check_password(self: User, raw: str) -> bool:
        seen.append(raw)
        return original(self, raw)

    monkeypatch.setattr(User, "check_password", check_password)
    return seen


def sign_in(c: Client, username: str, password: str, url: str = LOGIN, **extra: Any) -> Any:
    return c.post(url, {"username": username, "password": password}, **extra)


def signed_in(c: Client) -> bool:
    return "_auth_user_id" in c.session


def assert_locked(r: Any) -> int:
    assert r.status_code == 429, (r.status_code, r.content[:300])
    retry = int(r["Retry-After"])
    assert retry > 0
    return retry


def test_25_wrong_passwords_lock_the_account_and_the_right_one_waits_for_the_window(
    alice: User, checks: list[str], clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="schedviz.accounts.signin_throttle")
    c = Client()
    answers = [sign_in(c, "alice", f"wrong-{i}") for i in range(25)]
    assert [r.status_code for r in answers[:5]] == [200] * 5
    assert all(b"didn't match" in r.content for r in answers[:5])
    for r in answers[5:]:
        retry = assert_locked(r)
        # the window (15 minutes) from the fifth failure, to the bucket: at least 900 s, at most a minute more
        assert 900 <= retry <= 960
        assert LOCKED_TEXT in r.content and b"didn't match" not in r.content
        assert r["Content-Type"].startswith("text/html")
    assert checks == [f"wrong-{i}" for i in range(5)]  # the 20 refused were never checked

    # during the lockout the right password is refused, unchecked
    r = sign_in(c, "alice", "pw-alice")
    retry = assert_locked(r)
    assert LOCKED_TEXT in r.content and not signed_in(c)
    assert len(checks) == 5
    clock.advance(retry - 1)
    r = sign_in(c, "alice", "pw-alice")
    assert assert_locked(r) == 1 and not signed_in(c)
    # once the window has passed, it is accepted
    clock.advance(1)
    r = sign_in(c, "alice", "pw-alice")
    assert r.status_code == 302 and signed_in(c)
    assert checks[5:] == ["pw-alice"]

    # one WARNING for the lockout, naming the account and never a password
    ours = [rec for rec in caplog.records if rec.name == "schedviz.accounts.signin_throttle"]
    warnings = [rec for rec in ours if rec.levelno == logging.WARNING]
    assert len(warnings) == 1
    text = warnings[0].getMessage()
    assert "account" in text and "'alice'" in text
    logged = " ".join(rec.getMessage() for rec in ours)
    assert "wrong-" not in logged and "pw-alice" not in logged


def test_json_clients_get_429_with_retry_after_in_the_api_error_shape(alice: User) -> None:
    c = Client()
    for i in range(5):
        assert sign_in(c, "alice", f"wrong-{i}").status_code == 200
    r = sign_in(c, "alice", "pw-alice", headers={"Accept": "application/json"})
    retry = assert_locked(r)
    assert r.json() == {
        "error": {
            "code": "throttled",
            "message": signin_throttle.Lockout(retry).message,
            "details": {"retry_after": retry},
        }
    }
    assert r["Cache-Control"] == "no-store"


def test_the_address_limit_counts_failures_across_usernames(alice: User, checks: list[str]) -> None:
    c = Client()
    for i in range(20):  # 20 different names, none of them locked on its own
        r = sign_in(c, f"user-{i}", "guess", REMOTE_ADDR="198.51.100.7")
        assert r.status_code == 200, i
    # the address is locked, for every account: the right password too, unchecked
    r = sign_in(c, "alice", "pw-alice", REMOTE_ADDR="198.51.100.7")
    assert_locked(r)
    assert LOCKED_TEXT in r.content and not signed_in(c) and checks == []
    # another address is not
    other = Client()
    assert sign_in(other, "alice", "pw-alice", REMOTE_ADDR="198.51.100.8").status_code == 302
    assert signed_in(other)


def test_successful_sign_ins_do_not_count_against_the_address(alice: User) -> None:
    for _ in range(25):  # an office behind one address signs in all day
        c = Client()
        assert sign_in(c, "alice", "pw-alice", REMOTE_ADDR="198.51.100.9").status_code == 302


def test_a_successful_sign_in_resets_the_account_count(alice: User) -> None:
    c = Client()
    for i in range(4):
        assert sign_in(c, "alice", f"wrong-{i}").status_code == 200
    assert sign_in(c, "alice", "pw-alice").status_code == 302
    c = Client()
    # counting starts again: five more failures are checked (without the reset the second would lock) ...
    for i in range(5):
        assert sign_in(c, "alice", f"again-{i}").status_code == 200, i
    # ... and the sixth attempt is refused
    assert_locked(sign_in(c, "alice", "pw-alice"))


def test_spellings_of_a_username_share_its_count(alice: User) -> None:
    c = Client()
    for name in (
        "alice",
        "Alice",
        " ALICE",
        "alice ",
        "\uff41\uff4c\uff49\uff43\uff45",
    ):  # the last in full-width letters
        assert sign_in(c, name, "guess").status_code == 200
    assert_locked(sign_in(c, "alice", "pw-alice"))


def test_the_admin_sign_in_is_throttled_too(root: User, checks: list[str], clock: Clock) -> None:
    c = Client()
    for i in range(5):
        r = sign_in(c, "root", f"wrong-{i}", ADMIN_LOGIN)
        assert r.status_code == 200 and b"Please enter the correct" in r.content
    r = sign_in(c, "root", "pw-root", ADMIN_LOGIN)
    retry = assert_locked(r)
    assert LOCKED_TEXT in r.content and not signed_in(c)
    assert len(checks) == 5
    # one count per account, whichever page: the site's sign-in is refused too
    assert_locked(sign_in(c, "root", "pw-root"))
    clock.advance(retry)
    r = sign_in(c, "root", "pw-root", ADMIN_LOGIN)
    assert r.status_code == 302 and signed_in(c)


def test_failures_on_the_site_lock_the_admin_sign_in(root: User) -> None:
    c = Client()
    for i in range(5):
        assert sign_in(c, "root", f"wrong-{i}").status_code == 200
    assert_locked(sign_in(c, "root", "pw-root", ADMIN_LOGIN))


def test_the_old_password_of_a_password_change_is_throttled(alice: User, root: User, clock: Clock) -> None:
    c = Client()
    c.force_login(alice)
    change = {"new_password1": "a-new-long-password-1", "new_password2": "a-new-long-password-1"}
    for i in range(5):
        r = c.post("/accounts/password_change/", {"old_password": f"wrong-{i}", **change})
        assert r.status_code == 200 and b"old password was entered incorrectly" in r.content
    r = c.post("/accounts/password_change/", {"old_password": "pw-alice", **change})
    retry = assert_locked(r)
    assert LOCKED_TEXT in r.content
    alice.refresh_from_db()
    assert alice.check_password("pw-alice")
    clock.advance(retry)
    r = c.post("/accounts/password_change/", {"old_password": "pw-alice", **change})
    assert r.status_code == 302
    alice.refresh_from_db()
    assert alice.check_password("a-new-long-password-1")

    # the admin's own password change page too
    a = Client()
    a.force_login(root)
    assert a.get("/admin/password_change/").status_code == 200
    for i in range(5):
        r = a.post("/admin/password_change/", {"old_password": f"wrong-{i}", **change})
        assert r.status_code == 200, i
    assert_locked(a.post("/admin/password_change/", {"old_password": "pw-root", **change}))
    root.refresh_from_db()
    assert root.check_password("pw-root")


@pytest.mark.urls(__name__)
def test_an_api_view_taking_a_password_answers_429_json(alice: User) -> None:
    def basic(password: str) -> dict[str, str]:
        raw = base64.b64encode(f"alice:{password}".encode()).decode()
        return {"HTTP_AUTHORIZATION": f"Basic {raw}"}

    c = Client()
    assert c.get("/basic/whoami/", **basic("pw-alice")).json() == {"username": "alice"}
    for i in range(5):
        assert c.get("/basic/whoami/", **basic(f"wrong-{i}")).status_code == 401
    r = c.get("/basic/whoami/", **basic("pw-alice"))
    retry = assert_locked(r)
    assert r.json()["error"]["code"] == "throttled" and r.json()["error"]["details"] == {"retry_after": retry}


def test_attempts_in_flight_count_so_concurrent_ones_cannot_overshoot(alice: User) -> None:
    # five checks under way (not yet answered): a sixth is refused before its password is looked at
    attempts = [signin_throttle.begin("alice", None) for _ in range(5)]
    assert all(isinstance(a, signin_throttle.Attempt) for a in attempts)
    assert isinstance(signin_throttle.begin("alice", None), signin_throttle.Lockout)
    # one of them turns out right: the account's count starts again
    first = attempts[0]
    assert isinstance(first, signin_throttle.Attempt)
    first.succeeded()
    assert isinstance(signin_throttle.begin("alice", None), signin_throttle.Attempt)


def test_failures_leave_the_window_one_by_one(alice: User, clock: Clock) -> None:
    c = Client()
    for i in range(5):
        assert sign_in(c, "alice", f"wrong-{i}").status_code == 200
        clock.advance(120)  # one failure every two minutes
    retry = assert_locked(sign_in(c, "alice", "pw-alice"))
    # the first failure (10 minutes ago) leaves the window 15 minutes after it, to the minute
    assert 300 <= retry <= 300 + 60
    clock.advance(retry)
    assert sign_in(c, "alice", "wrong-5").status_code == 200  # one place, taken again at once
    assert_locked(sign_in(c, "alice", "pw-alice"))


def test_client_addresses() -> None:
    from django.test import RequestFactory

    rf = RequestFactory()
    assert signin_throttle.client_address(rf.get("/", REMOTE_ADDR="198.51.100.7")) == "198.51.100.7"
    # a client holds a whole IPv6 /64: it counts as one address
    assert (
        signin_throttle.client_address(rf.get("/", REMOTE_ADDR="2001:db8:1:2:aaaa::1")) == "2001:db8:1:2::/64"
    )
    assert (
        signin_throttle.client_address(rf.get("/", REMOTE_ADDR="2001:db8:1:2:bbbb::9")) == "2001:db8:1:2::/64"
    )
    assert signin_throttle.client_address(rf.get("/", REMOTE_ADDR="::ffff:198.51.100.7")) == "198.51.100.7"
    # a forwarded header is not believed (uvicorn sets REMOTE_ADDR from it for trusted proxies only)
    forged = rf.get("/", REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR="203.0.113.1")
    assert signin_throttle.client_address(forged) == "198.51.100.7"
    assert signin_throttle.client_address(rf.get("/", REMOTE_ADDR="")) is None


def test_limits_can_be_turned_off(alice: User, settings: Any) -> None:
    settings.SCHEDVIZ_LOGIN_FAILURES_PER_ACCOUNT = 0
    c = Client()
    for i in range(19):
        assert sign_in(c, "alice", f"wrong-{i}").status_code == 200
    assert sign_in(c, "alice", "pw-alice").status_code == 302  # the address's 20th attempt, a success


@pytest.fixture
def committed_alice(transactional_db: None) -> User:
    """alice, seen from the threads the asynchronous handler runs the views on."""
    return User.objects.create_user("alice", password="pw-alice")


@pytest.mark.asyncio
async def test_the_asynchronous_stack_answers_429_too(committed_alice: User) -> None:
    from asgiref.sync import sync_to_async
    from django.db import connections

    c = AsyncClient()
    try:
        for i in range(5):
            r = await c.post(LOGIN, {"username": "alice", "password": f"wrong-{i}"})
            assert r.status_code == 200
        r = await c.post(LOGIN, {"username": "alice", "password": "pw-alice"})
        assert_locked(r)
        assert LOCKED_TEXT in r.content
    finally:
        # the views ran on asgiref's thread for synchronous code, whose connection the test client keeps open
        await sync_to_async(connections.close_all)()


def _dead_redis(settings: Any) -> None:
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }


def test_an_unreachable_cache_still_throttles_in_process(
    alice: User, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _dead_redis(settings)
    c = Client()
    for i in range(5):
        assert sign_in(c, "alice", f"wrong-{i}").status_code == 200
    assert_locked(sign_in(c, "alice", "pw-alice"))
    assert any("cache unavailable" in rec.getMessage() for rec in caplog.records)


REDIS_TEST_URL = os.environ.get("SCHEDVIZ_TEST_REDIS_CACHE", "redis://127.0.0.1:6379/14")


def test_the_counts_are_in_redis_for_every_web_process(alice: User, settings: Any) -> None:
    import redis

    client = redis.Redis.from_url(REDIS_TEST_URL)
    try:
        client.ping()
    except redis.ConnectionError:
        if os.environ.get("CI"):
            raise
        pytest.skip("Redis not running")
    client.flushdb()
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_TEST_URL,
            "KEY_PREFIX": "schedviz-test",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    try:
        c = Client()
        for i in range(5):
            assert sign_in(c, "alice", f"wrong-{i}").status_code == 200
        assert_locked(sign_in(c, "alice", "pw-alice"))
        # the count is in Redis, not in this process: per account and per address, one key per minute
        keys = client.keys("*signin:*")
        assert sorted({k.split(b":")[3] for k in keys}) == [b"account", b"address"]
        assert sum(int(v or 0) for v in client.mget([k for k in keys if b":account:" in k])) == 5
        # another process clearing it (here: Redis forgetting it) is seen by this one at once
        client.flushdb()
        assert sign_in(c, "alice", "pw-alice").status_code == 302
    finally:
        client.flushdb()
