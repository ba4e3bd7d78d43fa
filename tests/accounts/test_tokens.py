"""API tokens: created once with their value, listed without it, stored hashed, revocable, expiring."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from schedviz.accounts.models import ApiToken
from tests.webfixtures import error_of, generous_throttles, sync_tasks


@pytest.fixture(autouse=True)
def _web_settings(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The web fixtures' autouse settings (tests/webfixtures.py), for this module."""
    sync_tasks(settings)
    generous_throttles(monkeypatch)


def token_client(raw: str, keyword: str = "Token") -> APIClient:
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"{keyword} {raw}")
    return c


def test_create_shows_the_value_once_and_it_is_stored_hashed(api: APIClient, alice: User) -> None:
    r = api.post("/api/v1/tokens/", {"name": "ci", "ttl_days": 7}, format="json")
    assert r.status_code == 201
    body = r.json()
    raw = body["token"]
    assert raw.startswith("svz_") and len(raw) > 40 and body["prefix"] == raw[:12]
    assert body["active"] and body["revoked"] is None
    expires = datetime.fromisoformat(body["expires"])
    assert timedelta(days=6, hours=23) < expires - timezone.now() <= timedelta(days=7)
    # stored: the SHA-256 only; the value is in no column of any row
    tok = ApiToken.objects.get(pk=body["id"])
    assert tok.digest == hashlib.sha256(raw.encode()).hexdigest()
    with connection.cursor() as cur:
        cur.execute("SELECT * FROM accounts_apitoken")
        assert not any(raw in str(v) for row in cur.fetchall() for v in row)
    # listed without the value
    listed = api.get("/api/v1/tokens/").json()["results"]
    assert {t["name"] for t in listed} == {"test", "ci"}
    assert all("token" not in t and "digest" not in t for t in listed)
    assert raw not in api.get("/api/v1/tokens/").content.decode()
    # and it works, as Token or Bearer
    assert token_client(raw).get("/api/v1/snapshots/").status_code == 200
    assert token_client(raw, "Bearer").get("/api/v1/snapshots/").status_code == 200
    assert ApiToken.objects.get(pk=body["id"]).last_used is not None


def test_revoked_token_is_401_and_revoking_is_per_user(api: APIClient, other_api: APIClient) -> None:
    body = api.post("/api/v1/tokens/", {"name": "ci"}, format="json").json()
    client = token_client(body["token"])
    assert client.get("/api/v1/replays/").status_code == 200
    error_of(other_api.delete(f"/api/v1/tokens/{body['id']}/"), 404)  # bob cannot revoke alice's token
    assert client.get("/api/v1/replays/").status_code == 200
    assert api.delete(f"/api/v1/tokens/{body['id']}/").status_code == 204
    err = error_of(client.get("/api/v1/replays/"), 401)
    assert err["code"] == "authentication_failed"
    listed = {t["id"]: t for t in api.get("/api/v1/tokens/").json()["results"]}
    assert listed[body["id"]]["revoked"] is not None and not listed[body["id"]]["active"]
    assert api.delete(f"/api/v1/tokens/{body['id']}/").status_code == 204  # revoking twice is harmless


def test_expiry_is_honoured(api: APIClient) -> None:
    body = api.post("/api/v1/tokens/", {"name": "short", "ttl_days": 1}, format="json").json()
    client = token_client(body["token"])
    assert client.get("/api/v1/snapshots/").status_code == 200
    ApiToken.objects.filter(pk=body["id"]).update(expires=timezone.now() - timedelta(seconds=1))
    assert error_of(client.get("/api/v1/snapshots/"), 401)["code"] == "authentication_failed"



def test_token_lifetimes_are_capped_unless_the_server_allows_any(api: APIClient, settings: Any) -> None:
    # by default tokens live at most SCHEDVIZ_TOKEN_MAX_DAYS (365): longer, or never expiring, is a 400
    for ttl, says in ((None, "tokens expire on this server: at most 365 days"), (366, "at most 365 days on this server")):
        err = error_of(api.post("/api/v1/tokens/", {"name": "long", "ttl_days": ttl}, format="json"), 400)
        assert err["details"]["ttl_days"] == [says], err
    assert api.post("/api/v1/tokens/", {"name": "year", "ttl_days": 365}, format="json").status_code == 201
    # a server without a limit: no expiry at all when asked for
    settings.SCHEDVIZ_TOKEN_MAX_DAYS = 0
    forever = api.post("/api/v1/tokens/", {"name": "forever", "ttl_days": None}, format="json").json()
    assert forever["expires"] is None
    assert token_client(forever["token"]).get("/api/v1/snapshots/").status_code == 200


def test_inactive_user_and_malformed_headers(api: APIClient, alice: User) -> None:
    raw = api.post("/api/v1/tokens/", {"name": "x"}, format="json").json()["token"]
    for header in ("Token", "Token a b", "Token \u00e9\u00e9"):
        c = APIClient()
        c.credentials(HTTP_AUTHORIZATION=header)
        assert error_of(c.get("/api/v1/snapshots/"), 401)["code"] == "authentication_failed", header
    User.objects.filter(pk=alice.pk).update(is_active=False)
    error_of(token_client(raw).get("/api/v1/snapshots/"), 401)


def test_session_authentication_for_the_browser(alice: User) -> None:
    c = APIClient(enforce_csrf_checks=True)
    assert c.login(username="alice", password="pw-alice")
    assert c.get("/api/v1/snapshots/").status_code == 200
    # unsafe methods need the CSRF token, as for any session-authenticated form
    r = c.post("/api/v1/tokens/", {"name": "from-browser"}, format="json")
    assert r.status_code == 403 and "CSRF" in r.json()["error"]["message"]


def test_last_used_is_kept_to_the_minute_without_a_write_per_request(api: APIClient) -> None:
    from datetime import timedelta

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    body = api.post("/api/v1/tokens/", {"name": "busy"}, format="json").json()
    client = token_client(body["token"])

    def updates() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get("/api/v1/replays/").status_code == 200
        return sum(q["sql"].startswith("UPDATE") for q in ctx.captured_queries)

    assert updates() == 1  # first use
    first = ApiToken.objects.get(pk=body["id"]).last_used
    assert first is not None
    assert [updates() for _ in range(3)] == [0, 0, 0]  # the same minute
    ApiToken.objects.filter(pk=body["id"]).update(last_used=first - timedelta(seconds=61))
    assert updates() == 1
    later = ApiToken.objects.get(pk=body["id"]).last_used
    assert later is not None and later >= first
