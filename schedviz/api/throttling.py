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


class _SlidingWindow:
    """A sliding-window counter in place of DRF's list of timestamps.

    DRF keeps every request's time in one cache entry and rewrites it on each request: at 10,000
    requests an hour that is a 10,000-element list read, unpickled, pickled and written back per
    request, and two processes serving the same user at once lose each other's entries. Here each
    window of ``duration`` seconds has a counter, bumped with the cache's atomic increment, and the
    rate is the current window's count plus the previous window's, weighted by how much of it still
    falls within the last ``duration`` seconds (the usual two-window estimate of a sliding log).
    """

    cache: Any
    timer: Any
    rate: str | None
    num_requests: int
    duration: int
    key: str | None
    estimate: float
    counts: tuple[int, int]
    elapsed: float

    if TYPE_CHECKING:  # provided by the DRF class that follows in the bases

        def get_cache_key(self, request: Any, view: Any) -> str | None: ...

    def window_keys(self, key: str, now: float) -> tuple[str, str]:
        window = int(now // self.duration)
        return f"{key}:{window - 1}", f"{key}:{window}"

    def allow_request(self, request: Any, view: Any) -> bool:
        return self.count(request, view)

    def count(self, request: Any, view: Any) -> bool:
        """Counts the request and says whether it is within the rate."""
        if self.rate is None:
            return True
        try:
            self.key = self.get_cache_key(request, view)
            if self.key is None:
                return True
            now = self.timer()
            prev_key, cur_key = self.window_keys(self.key, now)
            got = self.cache.get_many([prev_key, cur_key])
            prev, cur = int(got.get(prev_key, 0)), int(got.get(cur_key, 0))
            self.elapsed = (now % self.duration) / self.duration
            self.counts = (prev, cur)
            self.estimate = prev * (1 - self.elapsed) + cur
            if self.estimate + 1 > self.num_requests:
                return False
            if not self.cache.add(cur_key, 1, 2 * self.duration):
                try:
                    self.cache.incr(cur_key)
                except ValueError:  # expired between the two calls
                    self.cache.add(cur_key, 1, 2 * self.duration)
            return True
        except Exception as exc:  # the cache's own errors (connection refused, timeout)
            return _cache_failed(exc)

    def wait(self) -> float | None:
        """Seconds until one more request fits, if no other is allowed meanwhile (Retry-After)."""
        prev, cur = self.counts
        room = self.num_requests - 1
        d = self.duration
        if cur <= room:  # within this window, once enough of the previous one has slid out
            if prev == 0:
                return 1.0
            return max(1.0, d * (1 - self.elapsed - (room - cur) / prev))
        # in the next window, where this one is the previous
        return (1 - self.elapsed) * d + d * max(0.0, 1 - room / cur)


class UserRateThrottle(_SlidingWindow, throttling.UserRateThrottle):
    """The `user` rate (SCHEDVIZ_API_RATE) for signed-in users, by IP address for anonymous ones."""


class ScopedRateThrottle(_SlidingWindow, throttling.ScopedRateThrottle):
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
