"""Response hardening for the whole site: security headers, and clean answers when the database is away.

- ``SecurityHeadersMiddleware`` sets a Content Security Policy (scripts and styles from this origin
  only, no inline script, no plugins, no framing, websockets to this host), a Permissions-Policy
  that turns off the browser features SchedViz never uses, and ``Cross-Origin-Resource-Policy``.
  Django's ``SecurityMiddleware`` adds HSTS (with ``SCHEDVIZ_TLS``), ``nosniff``, the referrer
  policy and COOP; ``XFrameOptionsMiddleware`` adds ``X-Frame-Options: DENY``.
- ``DatabaseUnavailableMiddleware`` and ``server_error`` (the ``handler500``) turn a database that
  cannot be reached (PostgreSQL restarting, a network blip, a full connection table) into a 503 with
  ``Retry-After`` -- JSON in the API's error shape under ``/api/``, a short page elsewhere -- instead of
  Django's 500 page; any other unexpected error under ``/api/`` is a JSON 500 in the same shape.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
UNAVAILABLE_MESSAGE = "the database is unavailable; try again shortly"

CSP = (
    "default-src 'self'",
    "script-src 'self'",
    # style attributes and the server-rendered pages' <style> blocks; no script can run from a style
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self' {ws}",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)
PERMISSIONS_POLICY = (
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), "
    "payment=(), usb=(), interest-cohort=()"
)


def content_security_policy(request: HttpRequest) -> str:
    """The policy for a response to ``request``: websockets only to the host the page came from."""
    try:
        host = request.get_host()
    except Exception:  # a disallowed Host: Django answers 400 anyway
        host = ""
    ws = f"wss://{host}" if request.is_secure() else f"ws://{host} wss://{host}"
    return "; ".join(CSP).replace("{ws}", ws if host else "").replace("'self' ;", "'self';")


class SecurityHeadersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", content_security_policy(request))
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        response.headers.setdefault("Cross-Origin-Resource-Policy", "same-origin")
        return response


def is_unavailable(exc: BaseException | None) -> bool:
    """A database that cannot be reached (not a bad query: those are bugs, and 500s)."""
    if isinstance(exc, (OperationalError, InterfaceError)):
        return True
    # psycopg's own connection errors, when they escape Django's wrapper
    return isinstance(exc, DatabaseError) and type(exc).__name__ in ("ConnectionTimeout", "ConnectionFailure")


def _wants_json(request: HttpRequest) -> bool:
    return request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", "")


def unavailable_response(request: HttpRequest) -> HttpResponse:
    if _wants_json(request):
        response: HttpResponse = JsonResponse(
            {"error": {"code": "unavailable", "message": UNAVAILABLE_MESSAGE, "details": None}}, status=503
        )
    else:
        response = HttpResponse(
            "<!doctype html><title>SchedViz: unavailable</title><h1>SchedViz is briefly unavailable</h1>"
            "<p>The database cannot be reached. Try again in a few seconds.</p>",
            status=503,
            content_type="text/html; charset=utf-8",
        )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


class DatabaseUnavailableMiddleware:
    """A view that failed because the database is unreachable answers 503, not 500."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if is_unavailable(exception):
            log.warning("database unavailable: %s %s: %s", request.method, request.path, exception)
            return unavailable_response(request)
        return None


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: errors raised outside views (middleware, e.g. the session store) end here."""
    exc = sys.exc_info()[1]
    if is_unavailable(exc):
        return unavailable_response(request)
    if _wants_json(request):
        return JsonResponse(
            {"error": {"code": "server_error", "message": "internal server error", "details": None}},
            status=500,
        )
    from django.views.defaults import server_error as default

    return default(request)
