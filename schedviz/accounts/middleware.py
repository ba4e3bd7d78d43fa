"""A sign-in the throttle refused (``signin_throttle``) answers 429 with ``Retry-After``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse, JsonResponse

from . import signin_throttle


def _wants_json(request: HttpRequest, response: HttpResponse) -> bool:
    return (
        request.path.startswith("/api/")
        or "application/json" in request.headers.get("Accept", "")
        or response.get("Content-Type", "").startswith("application/json")
    )


def lockout_response(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """``response`` to a request during which the throttle refused a password check, as a 429: the
    page itself (the form, with the lockout's message) for browsers, the API's error shape for JSON
    clients; ``Retry-After`` either way."""
    lockout = signin_throttle.lockout_of(request)
    if lockout is None:
        return response
    if _wants_json(request, response):
        response = JsonResponse(
            {
                "error": {
                    "code": "throttled",
                    "message": lockout.message,
                    "details": {"retry_after": lockout.retry_after},
                }
            },
            status=429,
        )
    else:
        response.status_code = 429
    response["Retry-After"] = str(lockout.retry_after)
    response["Cache-Control"] = "no-store"
    return response


class SigninLockoutMiddleware:
    """Runs synchronously or asynchronously, as the rest of the stack (``schedviz.api.middleware``)."""

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
        return lockout_response(request, self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        return lockout_response(request, await self.get_response(request))
