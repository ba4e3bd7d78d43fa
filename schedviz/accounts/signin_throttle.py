"""Sign-in throttling: failed password checks counted per account and per client address.

Every password check goes through ``begin()`` (the authentication backend's sign-ins, the old
password of a password change). Failures are counted in a sliding window of
``SCHEDVIZ_LOGIN_WINDOW_SECONDS``, per account (the normalised username, whether or not it exists)
and per client address; once an account has ``SCHEDVIZ_LOGIN_FAILURES_PER_ACCOUNT`` failures in
the window, or an address ``SCHEDVIZ_LOGIN_FAILURES_PER_ADDRESS``, further attempts are refused
*without checking the password* until enough of those failures are older than the window. A
successful check clears the account's count. ``SigninLockoutMiddleware`` turns a refusal into a
429 with ``Retry-After``.

The counts live in the default cache: Redis when one is configured, so every web process counts
the same attempts; the embedded default's in-process cache otherwise. The window is cut into about
15 buckets, one cache key per bucket holding an integer: a failure is an atomic ``incr`` of the
current bucket, and the count is the sum of the window's buckets (one ``get_many``). An attempt
takes its place in the count *before* the password is checked and gives it back if the password
was right, so concurrent attempts cannot overshoot the limit: at most N checks per window,
however many requests arrive at once. A failure counts for at least the window and at most one
bucket more.

The client address is ``REMOTE_ADDR``: behind a proxy, uvicorn sets it from ``X-Forwarded-For``
for the proxies it trusts (``FORWARDED_ALLOW_IPS``); headers are not read here, as a client could
forge them. IPv6 addresses count by their /64, which one client usually holds whole.

Should the cache be unreachable, the counts move to a cache in this process for a while (logged),
so sign-in keeps working and keeps being throttled, per process.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import logging
import math
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import BaseCache, cache
from django.core.cache.backends.locmem import LocMemCache
from django.http import HttpRequest

log = logging.getLogger(__name__)

#: the clock (seconds since the epoch: the buckets must agree across processes); tests replace it
clock: Callable[[], float] = time.time

BUCKETS_PER_WINDOW = 15
REQUEST_ATTRIBUTE = "signin_lockout"
FALLBACK_SECONDS = 30.0  # how long to keep to the in-process counts after the cache failed

_fallback = LocMemCache("schedviz-signin-fallback", {"MAX_ENTRIES": 100_000})
_primary_down_until = 0.0
T = TypeVar("T")


@dataclass(frozen=True)
class Lockout:
    """A refused attempt: sign-in is paused for ``retry_after`` seconds."""

    retry_after: int

    @property
    def message(self) -> str:
        minutes = max(1, math.ceil(self.retry_after / 60))
        unit = "minute" if minutes == 1 else "minutes"
        return f"Too many failed sign-in attempts: signing in is paused. Try again in {minutes} {unit}."


@dataclass
class _Subject:
    kind: str  # "account" or "address"
    label: str  # for the log
    limit: int
    digest: str
    counts: list[int] = field(default_factory=list)  # the window's buckets, oldest first
    reserved: str | None = None  # the bucket key this attempt incremented

    def key(self, bucket: int, size: int) -> str:
        return f"signin:{self.kind}:{self.digest}:{size}:{bucket}"


def window() -> tuple[int, int, int]:
    """(the window, a bucket's length, buckets per window), in seconds and buckets."""
    seconds = max(1, int(getattr(settings, "SCHEDVIZ_LOGIN_WINDOW_SECONDS", 900)))
    size = max(1, seconds // BUCKETS_PER_WINDOW)
    return seconds, size, math.ceil(seconds / size)


def normalise_username(username: str) -> str:
    """One counter for every spelling of a name: Unicode-normalised, trimmed, case-folded."""
    return unicodedata.normalize("NFKC", username).strip().casefold()


def client_address(request: HttpRequest | None) -> str | None:
    """The address to count a request's failures under (None: not known, not counted)."""
    if request is None:
        return None
    raw = str(request.META.get("REMOTE_ADDR") or "").strip()
    if not raw:
        return None
    try:
        ip = ipaddress.ip_address(raw)
    except ValueError:
        return raw[:100]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _subjects(username: str, request: HttpRequest | None) -> list[_Subject]:
    subjects = []
    per_account = int(getattr(settings, "SCHEDVIZ_LOGIN_FAILURES_PER_ACCOUNT", 5))
    if per_account > 0:
        name = normalise_username(username)
        subjects.append(_Subject("account", name, per_account, _digest(name)))
    per_address = int(getattr(settings, "SCHEDVIZ_LOGIN_FAILURES_PER_ADDRESS", 20))
    address = client_address(request)
    if per_address > 0 and address is not None:
        subjects.append(_Subject("address", address, per_address, _digest(address)))
    return subjects


def _retry_after(counts: list[int], limit: int, first: int, now: float) -> int:
    """Seconds until fewer than ``limit`` failures remain: bucket ``i`` leaves the window at
    ``(i + buckets + 1) * size``, and no failure is added while the lock holds."""
    seconds, size, buckets = window()
    remaining = sum(counts)
    for offset, count in enumerate(counts):
        remaining -= count
        if remaining < limit:
            return max(1, math.ceil((first + offset + buckets + 1) * size - now))
    return seconds


def _cached(operation: Callable[[BaseCache], T]) -> tuple[T, BaseCache]:
    """Runs ``operation`` on the shared cache, or on this process's when that one is unreachable."""
    global _primary_down_until
    if time.monotonic() >= _primary_down_until:
        try:
            return operation(cache), cache
        except Exception as exc:  # the cache's own errors: connection refused, timeout
            _primary_down_until = time.monotonic() + FALLBACK_SECONDS
            log.warning(
                "sign-in throttle: cache unavailable (%s: %s); counting in this process for %ds",
                type(exc).__name__,
                exc,
                FALLBACK_SECONDS,
            )
    return operation(_fallback), _fallback


def _incr(store: BaseCache, key: str, timeout: int) -> int:
    store.add(key, 0, timeout)
    try:
        return int(store.incr(key))
    except ValueError:  # expired between add and incr
        store.set(key, 1, timeout)
        return 1


def _decr(store: BaseCache, key: str) -> None:
    with contextlib.suppress(ValueError):  # gone already
        store.decr(key)


def _ignore_errors(operation: Callable[..., Any], *args: Any) -> None:
    try:
        operation(*args)
    except Exception as exc:  # the outcome of an attempt already decided must not fail the request
        log.warning("sign-in throttle: cache unavailable (%s: %s)", type(exc).__name__, exc)


class Attempt:
    """A password check the throttle let through: report its outcome with ``succeeded()``,
    ``failed()`` or, when the check could not be made (an error), ``abandon()``."""

    def __init__(self, subjects: list[_Subject], store: BaseCache | None, first: int, now: float) -> None:
        self._subjects = subjects
        self._store = store
        self._first = first
        self._now = now
        self._done = False

    def succeeded(self) -> None:
        """The password was right: the account's count starts again; the address's attempt is given back."""
        if self._done or self._store is None:
            return
        self._done = True
        store = self._store
        _seconds, size, _buckets = window()
        for s in self._subjects:
            if s.kind == "account":
                keys = [s.key(self._first + i, size) for i in range(len(s.counts))]
                _ignore_errors(store.delete_many, keys)
            elif s.reserved is not None:
                _ignore_errors(_decr, store, s.reserved)

    def failed(self) -> None:
        """The password was wrong (or the account cannot sign in): the attempt stays counted."""
        if self._done:
            return
        self._done = True
        for s in self._subjects:
            if sum(s.counts) == s.limit:  # this failure is the one that locks
                retry = _retry_after(s.counts, s.limit, self._first, self._now)
                log.warning(
                    "sign-in locked for %s %r: %d failed attempts in %ds; attempts refused for %ds",
                    s.kind,
                    s.label,
                    s.limit,
                    window()[0],
                    retry,
                )

    def abandon(self) -> None:
        """The password could not be checked (an error): the attempt is given back."""
        if self._done or self._store is None:
            return
        self._done = True
        store = self._store
        for s in self._subjects:
            if s.reserved is not None:
                _ignore_errors(_decr, store, s.reserved)


def begin(username: str, request: HttpRequest | None) -> Attempt | Lockout:
    """Asks to check a password for ``username`` from ``request``'s client.

    A ``Lockout`` means: refuse without checking the password (``request`` is marked, for the
    middleware's 429). An ``Attempt`` means: check it, then report the outcome on the attempt.
    """
    subjects = _subjects(username, request)
    now = clock()
    _seconds, size, buckets = window()
    current = int(now // size)
    first = current - buckets
    if not subjects:
        return Attempt([], None, first, now)
    timeout = (buckets + 2) * size

    def reserve(store: BaseCache) -> Lockout | None:
        keys = [s.key(first + i, size) for s in subjects for i in range(buckets + 1)]
        values = store.get_many(keys)
        for s in subjects:
            s.counts = [int(values.get(s.key(first + i, size)) or 0) for i in range(buckets + 1)]
            s.reserved = None
        locked = [_retry_after(s.counts, s.limit, first, now) for s in subjects if sum(s.counts) >= s.limit]
        if locked:
            return Lockout(max(locked))
        for s in subjects:
            # the other buckets are in the past: only this one moves, so this sum is exact
            s.reserved = s.key(current, size)
            s.counts[-1] = _incr(store, s.reserved, timeout)
        over = [s for s in subjects if sum(s.counts) > s.limit]
        if over:  # concurrent attempts took the last places: give this one's back
            for s in subjects:
                if s.reserved is not None:
                    _decr(store, s.reserved)
                    s.reserved = None
                    s.counts[-1] -= 1
            return Lockout(max(_retry_after(s.counts, s.limit, first, now) for s in over))
        return None

    lockout, store = _cached(reserve)
    if lockout is not None:
        mark(request, lockout)
        # (django.request logs the 429 itself)
        log.debug(
            "sign-in refused without a password check for %r from %s: locked for %ds",
            normalise_username(username),
            client_address(request) or "an unknown address",
            lockout.retry_after,
        )
        return lockout
    return Attempt(subjects, store, first, now)


def _http_request(request: Any) -> Any:
    """The Django request under a REST framework one (whose attributes are its own)."""
    return getattr(request, "_request", request)


def mark(request: HttpRequest | None, lockout: Lockout) -> None:
    if request is not None:
        setattr(_http_request(request), REQUEST_ATTRIBUTE, lockout)


def lockout_of(request: HttpRequest | None) -> Lockout | None:
    """The lockout that refused an attempt made during ``request``, if one did."""
    if request is None:
        return None
    found = getattr(_http_request(request), REQUEST_ATTRIBUTE, None)
    return found if isinstance(found, Lockout) else None
