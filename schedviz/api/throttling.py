"""Rate limits per user, counted in the shared cache (Redis in production: one count across every
web process), failing open when the cache is unreachable: an outage of the cache must not take the
API down with it, and its requests are still authenticated and authorised as always."""

from __future__ import annotations

import logging
import time
from typing import Any

from rest_framework import throttling

log = logging.getLogger(__name__)
_last_warning = 0.0


def _cache_failed(exc: Exception) -> bool:
    global _last_warning
    now = time.monotonic()
    if now - _last_warning > 60:
        _last_warning = now
        log.warning(
            "rate-limit cache unavailable (%s: %s): requests are not counted", type(exc).__name__, exc
        )
    return True


class UserRateThrottle(throttling.UserRateThrottle):
    """The `user` rate (SCHEDVIZ_API_RATE) for signed-in users, by IP address for anonymous ones."""

    def allow_request(self, request: Any, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except Exception as exc:  # the cache's own errors (connection refused, timeout)
            return _cache_failed(exc)


class ScopedRateThrottle(throttling.ScopedRateThrottle):
    """A view's `throttle_scope` rate (uploads: SCHEDVIZ_UPLOAD_RATE)."""

    def allow_request(self, request: Any, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except Exception as exc:
            return _cache_failed(exc)
