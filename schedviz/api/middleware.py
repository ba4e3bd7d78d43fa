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
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin
from whitenoise.middleware import WhiteNoiseMiddleware

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


# Every middleware of the site can run asynchronously: under ASGI a request then goes from the event
# loop to its view's thread and back once, instead of through several hand-overs between the loop
# and threads (each one a wait for a loop that may be busy streaming).


class SecurityHeadersMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        return self._headers(request, self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        return self._headers(request, await self.get_response(request))

    @staticmethod
    def _headers(request: HttpRequest, response: HttpResponse) -> HttpResponse:
        response.headers.setdefault("Content-Security-Policy", content_security_policy(request))
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        response.headers.setdefault("Cross-Origin-Resource-Policy", "same-origin")
        return response


class StaticFilesMiddleware(WhiteNoiseMiddleware):  # type: ignore[misc]
    """WhiteNoise (the built explorer and the static files), runnable asynchronously too."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any], *args: Any, **kwargs: Any) -> None:
        super().__init__(get_response, *args, **kwargs)
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        return super().__call__(request)

    def _static(self, request: HttpRequest) -> Any:
        if self.autorefresh:
            return self.find_file(request.path_info)
        return self.files.get(request.path_info)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        static_file = (
            await sync_to_async(self._static)(request) if self.autorefresh else self._static(request)
        )
        if static_file is not None:
            response: HttpResponse = await sync_to_async(self.serve)(static_file, request)
            return response
        get_response: Callable[[HttpRequest], Awaitable[HttpResponse]] = self.get_response
        return await get_response(request)


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


class DatabaseUnavailableMiddleware(MiddlewareMixin):
    """A view that failed because the database is unreachable answers 503, not 500."""

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
