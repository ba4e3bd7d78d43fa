"""Rate limits per user, counted in the shared cache (Redis in production: one count across every
web process), failing open when the cache is unreachable: an outage of the cache must not take the
API down with it, and its requests are still authenticated and authorised as always."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

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


class _TokenBucket:
    """A token bucket in place of DRF's list of timestamps: ``num_requests`` at once, then one more
    every ``duration / num_requests`` seconds (so ``num_requests`` per ``duration`` sustained).

    DRF keeps every request's time in one cache entry and rewrites it on each request: at 10,000
    requests an hour that is a 10,000-element list read, unpickled, pickled and written back per
    request. The bucket's whole state is one number per user, the time at which it will be full again
    (the "theoretical arrival time" of the generic cell rate algorithm); ``Retry-After`` is exactly
    when the next request fits, never more than the period.
    """

    cache: Any
    timer: Any
    rate: str | None
    num_requests: int
    duration: int
    key: str | None
    retry: float

    if TYPE_CHECKING:  # provided by the DRF class that follows in the bases

        def get_cache_key(self, request: Any, view: Any) -> str | None: ...

    def allow_request(self, request: Any, view: Any) -> bool:
        return self.count(request, view)

    def count(self, request: Any, view: Any) -> bool:
        """Takes a token for the request, or says when the next one comes (``wait``)."""
        if self.rate is None:
            return True
        try:
            self.key = self.get_cache_key(request, view)
            if self.key is None:
                return True
            now = self.timer()
            interval = self.duration / self.num_requests
            full_at = max(float(self.cache.get(self.key) or 0.0), now) + interval
            if full_at - now > self.duration * (1 + 1e-9):
                self.retry = full_at - self.duration - now
                return False
            self.cache.set(self.key, full_at, int(full_at - now) + 1)
            return True
        except Exception as exc:  # the cache's own errors (connection refused, timeout)
            return _cache_failed(exc)

    def wait(self) -> float | None:
        """Seconds until the next request fits (Retry-After)."""
        return max(self.retry, 0.001)


class UserRateThrottle(_TokenBucket, throttling.UserRateThrottle):
    """The `user` rate (SCHEDVIZ_API_RATE) for signed-in users, by IP address for anonymous ones."""


class ScopedRateThrottle(_TokenBucket, throttling.ScopedRateThrottle):
    """A view's `throttle_scope` rate (uploads: SCHEDVIZ_UPLOAD_RATE)."""

    def allow_request(self, request: Any, view: Any) -> bool:
        # the scope, hence the rate, is known only once the view calls (as in DRF's class)
        self.scope = getattr(view, self.scope_attr, None)
        if not self.scope:
            return True
        self.rate = self.get_rate()
        num, duration = self.parse_rate(self.rate)
        if num is None or duration is None:
            return True
        self.num_requests, self.duration = num, duration
        return self.count(request, view)
