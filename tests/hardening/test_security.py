"""Security settings and headers: the production checks, HSTS, CSP, cookies, CSRF, the SPA under its CSP."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from schedviz.api.middleware import content_security_policy

ROOT = Path(__file__).resolve().parents[2]
DIST_INDEX = ROOT / "schedviz" / "explorer" / "index.html"
PRODUCTION_ENV = {
    "SECRET_KEY": "x7-hardening-test-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFG",
    "SCHEDVIZ_TLS": "1",
    "ALLOWED_HOSTS": "schedviz.example.com",
    "DEBUG": "false",
}


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SCHEDVIZ_TASK_MODE")
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update({"SCHEDVIZ_DATA_DIR": str(tmp_path), **PRODUCTION_ENV, **extra})
    return env


def _policy(header: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            out[words[0]] = words[1:]
    return out


# --------------------------------------------------------------------------------------------------
# manage.py check --deploy


def test_deploy_checks_pass_with_the_production_settings(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


def test_deploy_checks_fail_without_them(tmp_path: Path) -> None:
    """The check has teeth: without TLS and with the development key it names the problems."""
    env = _env(tmp_path, SCHEDVIZ_TLS="0")
    env.pop("SECRET_KEY")
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode != 0
    for check in ("security.W004", "security.W008", "security.W009", "security.W012", "security.W016"):
        assert check in out.stderr, (check, out.stderr)


# --------------------------------------------------------------------------------------------------
# The production settings' answers (a separate process: the settings are read from its environment)

PROBE = r"""
import json, django
django.setup()
from django.core.management import call_command
call_command("migrate", interactive=False, verbosity=0)
from django.contrib.auth.models import User
from django.test import Client
User.objects.create_user("alice", password="a-long-password-for-alice")
host = "schedviz.example.com"
out = {}
plain = Client(HTTP_HOST=host)
r = plain.get("/api/v1/snapshots/")
out["http"] = {"status": r.status_code, "location": r.get("Location", "")}
c = Client(HTTP_HOST=host, HTTP_X_FORWARDED_PROTO="https", enforce_csrf_checks=True)
login = c.get("/accounts/login/")
token = login.cookies["csrftoken"].value
r = c.post("/accounts/login/", {"username": "alice", "password": "a-long-password-for-alice",
                                "csrfmiddlewaretoken": token}, HTTP_REFERER=f"https://{host}/accounts/login/")
out["login"] = {"status": r.status_code,
                "cookies": {k: {"secure": bool(m["secure"]), "httponly": bool(m["httponly"]),
                                "samesite": m["samesite"]} for k, m in r.cookies.items()}}
pages = {}
for path in ("/", "/api/v1/snapshots/", "/api/docs/", "/healthz", "/api/v1/nothing/"):
    r = c.get(path)
    pages[path] = {"status": r.status_code, "headers": dict(r.headers)}
out["pages"] = pages
r = c.post("/api/v1/tokens/", {"name": "x"}, content_type="application/json")
out["csrf"] = {"status": r.status_code, "body": r.content.decode()[:300]}
r = c.post("/api/v1/tokens/", {"name": "x"}, content_type="application/json",
           HTTP_X_CSRFTOKEN=c.cookies["csrftoken"].value, HTTP_REFERER=f"https://{host}/")
out["csrf_ok"] = {"status": r.status_code}
print("PROBE" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("prod")
    env = _env(tmp, DJANGO_SETTINGS_MODULE="schedviz.settings")
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("PROBE"))
    value: dict[str, Any] = json.loads(line[len("PROBE") :])
    return value


def test_plain_http_is_redirected_to_https(production: dict[str, Any]) -> None:
    assert production["http"]["status"] == 301
    assert production["http"]["location"] == "https://schedviz.example.com/api/v1/snapshots/"


def test_security_headers_on_every_page(production: dict[str, Any]) -> None:
    for path, page in production["pages"].items():
        h = {k.lower(): v for k, v in page["headers"].items()}
        assert page["status"] in (200, 404), (path, page["status"])
        hsts = h["strict-transport-security"]
        assert re.search(r"max-age=(\d+)", hsts) and int(re.search(r"max-age=(\d+)", hsts)[1]) >= 31536000, (
            hsts
        )
        assert "includeSubDomains" in hsts
        assert h["x-content-type-options"] == "nosniff", path
        assert h["x-frame-options"] == "DENY", path
        assert h["referrer-policy"] == "same-origin", path
        csp = _policy(h["content-security-policy"])
        assert csp["script-src"] == ["'self'"], (path, csp)
        assert csp["frame-ancestors"] == ["'none'"] and csp["object-src"] == ["'none'"], path
        # over TLS, websockets only to this host, encrypted
        assert csp["connect-src"] == ["'self'", "wss://schedviz.example.com"], path


def test_session_and_csrf_cookies_are_secure(production: dict[str, Any]) -> None:
    login = production["login"]
    assert login["status"] == 302
    cookies = login["cookies"]
    assert cookies["sessionid"] == {"secure": True, "httponly": True, "samesite": "Lax"}
    assert cookies["csrftoken"]["secure"] is True  # readable by the explorer's script, but only over TLS


def test_session_api_needs_the_csrf_token(production: dict[str, Any]) -> None:
    assert production["csrf"]["status"] == 403 and "CSRF" in production["csrf"]["body"]
    assert production["csrf_ok"]["status"] == 201


# --------------------------------------------------------------------------------------------------
# In-process: the development settings carry the same policy (without HSTS)


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inline: list[str] = []
        self.handlers: list[str] = []
        self.sources: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.handlers += [k for k in a if k.startswith("on")]
        if tag == "script":
            self._in_script = "src" not in a
            if "src" in a:
                self.sources.append(str(a["src"]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline.append(data.strip()[:80])


@pytest.mark.django_db
def test_the_spa_and_docs_have_no_inline_script(client: Client, django_user_model: type[User]) -> None:
    user = django_user_model.objects.create_user("u", password="pw-u")
    client.force_login(user)
    pages = ["/api/docs/", "/api/redoc/", "/accounts/login/"]
    if DIST_INDEX.exists():
        pages.append("/")
    for path in pages:
        r = client.get(path)
        assert r.status_code == 200, path
        parsed = _Scripts()
        parsed.feed(r.content.decode())
        assert parsed.inline == [] and parsed.handlers == [], (path, parsed.inline, parsed.handlers)
        assert all(s.startswith("/") for s in parsed.sources), (path, parsed.sources)  # same origin only
        assert "Content-Security-Policy" in r.headers


@pytest.mark.django_db
def test_api_answers_carry_the_headers_in_development(client: Client) -> None:
    r = client.get("/api/v1/snapshots/")
    assert r.status_code == 401
    assert r["X-Content-Type-Options"] == "nosniff" and r["X-Frame-Options"] == "DENY"
    assert "Strict-Transport-Security" not in r  # HSTS only when TLS is declared
    csp = _policy(r["Content-Security-Policy"])
    assert csp["connect-src"] == ["'self'", "ws://testserver", "wss://testserver"]


def test_csp_without_a_valid_host_still_answers() -> None:
    from django.test import RequestFactory

    req = RequestFactory().get("/", HTTP_HOST="evil.example.org")
    policy = _policy(content_security_policy(req))
    assert policy["connect-src"] == ["'self'"]


@pytest.mark.django_db
def test_tokens_are_stored_hashed(api: APIClient) -> None:
    from django.db import connection

    raw = api.post("/api/v1/tokens/", {"name": "h", "ttl_days": 1}, format="json").json()["token"]
    with connection.cursor() as cur:
        cur.execute("SELECT * FROM accounts_apitoken")
        rows = cur.fetchall()
    assert rows and not any(raw in str(v) for row in rows for v in row)


# --------------------------------------------------------------------------------------------------
# The built explorer in a real browser, under its policy


@pytest.fixture(scope="module")
def explorer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not DIST_INDEX.exists():
        pytest.skip("the explorer is not built (schedviz/explorer)")
    try:
        from playwright.sync_api import sync_playwright  # noqa: F401

        from schedviz.tools.bench_browser import CHROMIUM, demo_server
    except ImportError:
        pytest.skip("playwright is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed")
    with demo_server(tmp_path_factory.mktemp("csp")) as base:
        yield base


@pytest.mark.e2e
def test_the_built_explorer_runs_under_its_csp(explorer: str) -> None:
    from playwright.sync_api import sync_playwright

    from schedviz.tools.bench_browser import launch_chromium, sign_in

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page()
            violations: list[str] = []
            page.on(
                "console",
                lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
            )
            page.add_init_script(
                "window.__csp=[];document.addEventListener('securitypolicyviolation',"
                "e=>window.__csp.push(e.violatedDirective+' '+e.blockedURI))"
            )
            sign_in(page, explorer)
            page.goto(f"{explorer}/")
            page.wait_for_load_state("networkidle")
            replays = page.request.get(f"{explorer}/api/v1/replays/").json()["results"]
            assert replays, "the demo has a replay"
            page.goto(f"{explorer}/replays/{replays[0]['id']}")
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(1000)  # the websocket stream
            assert page.eval_on_selector("#root", "e => e.children.length") > 0
            assert page.evaluate("window.__csp") == [] and violations == [], violations
            page.goto(f"{explorer}/api/docs/")
            page.wait_for_selector(".swagger-ui .info", timeout=20_000)
            assert page.evaluate("window.__csp") == [] and violations == [], violations
        finally:
            browser.close()
