"""List-then-watch, one loop per stream (what client-go's Reflector does), with the official client.

``Reflector.run`` keeps one stream of the mirror up to date:

1. **list** page by page (``limit``/``continue``) and hand the whole list to ``Mirror.replace`` with
   the list's ``resourceVersion`` (the mirror diffs it against what it had: nothing is lost or
   repeated across a relist);
2. **watch** from that resourceVersion with ``allowWatchBookmarks=true`` and a server-side
   ``timeoutSeconds`` (random within ``Timing.watch_timeout``, as client-go spreads them), reading
   the chunked stream of JSON events through the low-level call
   (``watch=True, _preload_content=False``): every event goes to ``Mirror.apply``, a ``BOOKMARK``
   only advances the resourceVersion;
3. when the stream ends (the server's timeout) or goes quiet for ``Timing.read_timeout``: watch
   again from the last resourceVersion at once; on a network error (refused, reset, cut mid-stream,
   TLS) or a 5xx/429: watch again from the last resourceVersion after an exponential backoff with
   jitter, which an API-server restart is to the client (the backoff starts afresh as soon as a
   watch delivers an event again); on ``410 Gone`` (an ``ERROR`` event with a ``Status`` of code
   410, or HTTP 410, also for an expired ``continue``): list again;
4. a 401 (bad credentials) or a 403/404 of a required kind is an error that is retried with the
   longest backoff and shown in the health; an optional kind that the cluster does not serve (a CRD
   not installed) or the credentials may not read is ``unavailable`` and checked again now and then.

``WatchHealth`` is what the API shows for each stream; ``Reflector.quiet_for`` says how long the
watch has waited on the server with everything received handed to the mirror (a quiet kind's
resourceVersion does not move on: being that quiet is how it shows it has caught up), and a list
passes the server's clock (its ``Date`` header) to the mirror. Nothing here writes to the cluster:
list and watch are the only calls.
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import json
import logging
import random
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from schedviz.outbound.connect import Refused
from schedviz.outbound.connect import describe as outbound_describe

from .kinds import Stream
from .mirror import Mirror

log = logging.getLogger(__name__)

# Reflector states
STARTING, LISTING, WATCHING, BACKOFF, ERROR, UNAVAILABLE, STOPPED = (
    "starting",
    "listing",
    "watching",
    "backoff",
    "error",
    "unavailable",
    "stopped",
)


@dataclass(frozen=True)
class Timing:
    """Every delay of the loop (tests shrink them)."""

    page_size: int = 500
    watch_timeout: tuple[int, int] = (300, 600)  # server-side timeoutSeconds, chosen at random
    connect_timeout: float = 10.0
    read_timeout: float = 150.0  # nothing read for this long (not even a bookmark): watch again
    list_timeout: float = 120.0
    backoff_initial: float = 0.8
    backoff_max: float = 30.0
    backoff_factor: float = 2.0
    jitter: float = 0.2
    unavailable_retry: float = 300.0  # how often an optional kind not served is checked again
    min_watch_seconds: float = 1.0  # a watch ending sooner, without an event, counts as a failure


@dataclass
class WatchHealth:
    stream: str
    kind: str
    state: str = STARTING
    since: float = field(default_factory=time.time)
    resource_version: str = ""
    synced: bool = False  # listed (or restored) at least once
    objects: int = 0
    lists: int = 0
    relists: int = 0  # lists after the first: 410 Gone, or a new start
    expired: int = 0  # 410 Gone received
    events: int = 0
    bookmarks: int = 0
    reconnects: int = 0  # watches started again from the last resourceVersion
    errors: int = 0
    last_error: str = ""
    last_error_at: float | None = None
    last_event_at: float | None = None
    last_list_at: float | None = None
    retry_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {
            "stream": d["stream"],
            "kind": d["kind"],
            "state": d["state"],
            "since": d["since"],
            "resourceVersion": d["resource_version"],
            "synced": d["synced"],
            "objects": d["objects"],
            "lists": d["lists"],
            "relists": d["relists"],
            "expired": d["expired"],
            "events": d["events"],
            "bookmarks": d["bookmarks"],
            "reconnects": d["reconnects"],
            "errors": d["errors"],
            "lastError": d["last_error"] or None,
            "lastErrorAt": d["last_error_at"],
            "lastEventAt": d["last_event_at"],
            "lastListAt": d["last_list_at"],
            "retryAt": d["retry_at"],
        }


class Expired(Exception):
    """410 Gone: the resourceVersion (or continue token) is too old; list again."""


class WatchFailure(Exception):
    """A failure of one list or watch call, described for people; ``kind`` says how to go on."""

    def __init__(self, kind: str, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.kind = kind  # network, unauthorized, forbidden, not-found, server, protocol
        self.status = status


def api_client_host(api_client: Any) -> str:
    return str(getattr(api_client.configuration, "host", "") or "")


def describe_exception(exc: BaseException, host: str, doing: str) -> WatchFailure:
    """A WatchFailure for any error a client call can raise."""
    where = urlsplit(host).netloc or host
    if isinstance(exc, WatchFailure):
        return exc
    if isinstance(exc, ApiException):
        code = int(exc.status or 0)
        detail = _status_message(exc)
        if code == 0:  # the REST layer's wrapper of TLS errors
            reason = str(exc.reason or "")
            words = (
                "unreachable: the server's TLS certificate could not be verified"
                if "CERTIFICATE_VERIFY_FAILED" in reason or "certificate verify failed" in reason
                else "unreachable: the TLS handshake failed"
            )
            return WatchFailure("network", f"cannot connect to {where}: {words}")
        if code == 401:
            return WatchFailure(
                "unauthorized",
                f"{where} refused the credentials (HTTP 401 Unauthorized) while {doing}: "
                "the token or client certificate is wrong or expired",
                code,
            )
        if code == 403:
            return WatchFailure("forbidden", f"{where}: forbidden while {doing} (HTTP 403){detail}", code)
        if code == 404:
            return WatchFailure(
                "not-found", f"{where}: not served by this cluster while {doing} (HTTP 404){detail}", code
            )
        if code == 410:
            return WatchFailure("expired", f"{where}: 410 Gone while {doing}{detail}", code)
        return WatchFailure(
            "server",
            f"{where}: HTTP {code} {exc.reason or ''} while {doing}{detail}".replace("  ", " "),
            code,
        )
    if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason is not None:
        exc = exc.reason
    # network failures in three words (outbound.connect.describe): never the errno or socket text,
    # which would let a user probe what the server can reach
    if isinstance(
        exc,
        urllib3.exceptions.NewConnectionError
        | urllib3.exceptions.ConnectTimeoutError
        | ConnectionRefusedError,
    ):
        return WatchFailure("network", f"cannot connect to {where}: {_network_words(exc)}")
    if isinstance(exc, urllib3.exceptions.SSLError):
        return WatchFailure("network", f"cannot connect to {where}: {_network_words(exc)}")
    if isinstance(exc, urllib3.exceptions.HTTPError | OSError):
        return WatchFailure("network", f"connection to {where} failed while {doing}: {_network_words(exc)}")
    if isinstance(exc, ValueError):
        return WatchFailure("protocol", f"{where}: unreadable answer while {doing}: {exc}")
    return WatchFailure("protocol", f"{where}: {type(exc).__name__} while {doing}: {exc}")


def _network_words(exc: BaseException) -> str:
    """refused / unreachable / timed out (the guard's own refusal says why), from the exception and
    what caused it."""
    cur: BaseException | None = exc
    seen: set[int] = set()
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, Refused):
            return str(cur)
        if isinstance(cur, ssl.SSLError) or (
            isinstance(cur, TimeoutError) and not isinstance(cur, urllib3.exceptions.HTTPError)
        ):
            return outbound_describe(cur)
        inner = getattr(cur, "reason", None)
        cur = inner if isinstance(inner, BaseException) else (cur.__cause__ or cur.__context__)
    if isinstance(exc, urllib3.exceptions.NewConnectionError):
        return "unreachable"
    if isinstance(exc, urllib3.exceptions.TimeoutError):
        return "timed out"
    if isinstance(exc, urllib3.exceptions.SSLError):
        return "unreachable: the TLS handshake failed"
    return outbound_describe(exc)


def _status_message(exc: ApiException) -> str:
    for raw in (getattr(exc, "body", None), getattr(exc, "data", None)):
        if not raw:
            continue
        try:
            st = json.loads(raw)
        except (ValueError, TypeError):
            return f": {str(raw)[:200]}"
        if isinstance(st, dict) and st.get("message"):
            return f": {st['message']}"
    return ""


def _date_header(resp: Any) -> float | None:
    """The server's clock when it answered (the HTTP ``Date`` header), as Unix seconds."""
    value = (getattr(resp, "headers", None) or {}).get("Date")
    if not value:
        return None
    try:
        return email.utils.parsedate_to_datetime(str(value)).timestamp()
    except (TypeError, ValueError, IndexError):
        return None


class Backoff:
    def __init__(self, timing: Timing, rng: random.Random) -> None:
        self.timing = timing
        self.rng = rng
        self.delay = 0.0

    def next(self) -> float:
        t = self.timing
        self.delay = (
            t.backoff_initial if self.delay == 0 else min(self.delay * t.backoff_factor, t.backoff_max)
        )
        return self.delay * (1 + t.jitter * self.rng.random())

    def longest(self) -> float:
        self.delay = self.timing.backoff_max
        return self.delay * (1 + self.timing.jitter * self.rng.random())

    def reset(self) -> None:
        self.delay = 0.0


def list_call(api_client: Any, stream: Stream) -> Callable[..., Any]:
    """The client's list method for ``stream`` (watch=True makes it a watch)."""
    api = getattr(client, stream.api)(api_client)
    method = getattr(api, stream.method)
    if stream.custom:
        method = functools.partial(method, stream.group, stream.version, stream.plural)
    if stream.field_selector:
        method = functools.partial(method, field_selector=stream.field_selector)
    return method  # type: ignore[no-any-return]


def iter_lines(resp: Any, waiting: Callable[[bool], None] | None = None) -> Iterator[bytes]:
    """The lines of a chunked watch response, as they arrive. ``waiting(True)`` is called before
    each read of the socket (every line received so far was handed on), ``waiting(False)`` after."""
    buf = b""
    chunks = resp.stream(amt=None, decode_content=True)
    while True:
        if waiting is not None:
            waiting(True)
        try:
            chunk = next(chunks, None)
        finally:
            if waiting is not None:
                waiting(False)
        if chunk is None:
            break
        buf += chunk
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                break
            line, buf = buf[:nl], buf[nl + 1 :]
            if line.strip():
                yield line
    if buf.strip():
        yield buf


class Reflector:
    """Keeps ``stream`` of ``mirror`` in step with the cluster until ``stop`` is set."""

    def __init__(
        self,
        api_client: Any,
        stream: Stream,
        mirror: Mirror,
        stop: threading.Event,
        *,
        timing: Timing | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.api_client = api_client
        self.stream = stream
        self.mirror = mirror
        self.stop_event = stop
        self.timing = timing or Timing()
        self.rng = rng or random.Random()
        self.host = api_client_host(api_client)
        self.health = WatchHealth(stream.name, stream.kind)
        self._resp: Any = None
        self._lock = threading.Lock()
        self._call = list_call(api_client, stream)
        self.backoff = Backoff(self.timing, self.rng)
        # while the watch waits on the socket with everything received handed to the mirror: since when
        self._idle_since: float | None = None

    # ----- health -------------------------------------------------------------------------------
    def _state(self, state: str, retry_in: float | None = None) -> None:
        h = self.health
        if h.state != state:
            h.state, h.since = state, time.time()
        h.retry_at = time.time() + retry_in if retry_in is not None else None

    def _failed(self, f: WatchFailure) -> None:
        h = self.health
        h.errors += 1
        h.last_error = str(f)
        h.last_error_at = time.time()

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            self.health.objects = self.mirror.counts().get(self.stream.name, 0)
            self.health.resource_version = self.mirror.resource_version(self.stream.name) or ""
            out = self.health.to_dict()
        if self.stop_event.is_set():  # stopping, or stopped: the stream no longer watches
            out["state"], out["retryAt"] = STOPPED, None
        return out

    def quiet_for(self) -> float:
        """Seconds the watch has been connected and waiting on the server with nothing left to hand
        to the mirror (0 when not watching): a watch quiet that long has delivered every change the
        server had when it connected."""
        since = self._idle_since
        if since is None or self.health.state != WATCHING:
            return 0.0
        return max(0.0, time.monotonic() - since)

    def _waiting(self, idle: bool) -> None:
        self._idle_since = time.monotonic() if idle else None

    # ----- the loop -----------------------------------------------------------------------------
    def stop(self) -> None:
        self.stop_event.set()
        resp = self._resp
        if resp is not None:
            with contextlib.suppress(Exception):
                resp.shutdown()  # unblocks a read in progress

    def run(self) -> None:
        need_list = not self.mirror.has_state(self.stream.name) or not self.mirror.resource_version(
            self.stream.name
        )
        if not need_list:
            self.health.synced = True  # restored from a checkpoint: watch on from its resourceVersion
        backoff = self.backoff
        backoff.reset()
        expired_in_a_row = 0
        while not self.stop_event.is_set():
            delay: float | None = None
            try:
                if need_list:
                    if expired_in_a_row > 1:  # the list itself keeps expiring: slow down
                        delay = backoff.next()
                        self._state(BACKOFF, delay)
                        if self.stop_event.wait(delay):
                            break
                    self._list()
                    need_list = False
                    backoff.reset()
                progressed = self._watch()
                expired_in_a_row = 0
                if progressed:
                    backoff.reset()
                else:  # ended at once without an event: do not spin
                    delay = backoff.next()
            except Expired as exc:
                self.health.expired += 1
                self.health.last_error = str(exc)
                self.health.last_error_at = time.time()
                expired_in_a_row += 1
                need_list = True
                continue
            except Exception as exc:  # every failure is described and retried
                if self.stop_event.is_set():
                    break
                f = describe_exception(exc, self.host, self._doing(need_list))
                if f.kind == "expired":
                    self.health.expired += 1
                    expired_in_a_row += 1
                    need_list = True
                    continue
                self._failed(f)
                if f.kind in ("forbidden", "not-found") and not self.stream.required:
                    delay = self.timing.unavailable_retry
                    self._state(UNAVAILABLE, delay)
                    need_list = True
                elif f.kind in ("unauthorized", "forbidden", "not-found"):
                    delay = backoff.longest()
                    self._state(ERROR, delay)
                else:
                    delay = backoff.next()
                    self._state(BACKOFF, delay)
                if f.kind not in ("forbidden", "not-found") or self.stream.required:
                    log.warning("%s: %s (retrying in %.1fs)", self.stream.name, f, delay)
            if delay is not None and self.stop_event.wait(delay):
                break
            if not need_list:
                self.health.reconnects += 1
        self._state(STOPPED)

    def _doing(self, need_list: bool) -> str:
        what = f"{self.stream.plural}{'.' + self.stream.group if self.stream.group else ''}"
        return f"listing {what}" if need_list else f"watching {what}"

    def _list(self) -> None:
        self._state(LISTING)
        t = self.timing
        items: list[Any] = []
        token: str | None = None
        rv = ""
        server_time: float | None = None
        while True:
            kwargs: dict[str, Any] = {
                "limit": t.page_size,
                "_preload_content": False,
                "_request_timeout": (t.connect_timeout, t.list_timeout),
            }
            if token:
                kwargs["_continue"] = token
            resp = self._call(**kwargs)
            try:
                body = json.loads(resp.data)
                if not token:
                    server_time = _date_header(resp)
            finally:
                resp.release_conn()
            if not isinstance(body, dict) or not isinstance(body.get("items", []), list):
                raise ValueError("the list is not a list object")
            items.extend(body.get("items") or [])
            meta = body.get("metadata") or {}
            if not token:
                rv = str(meta.get("resourceVersion") or "")
            token = meta.get("continue") or None
            if not token:
                break
            if self.stop_event.is_set():
                return
        self.mirror.replace(self.stream.name, items, rv, server_time=server_time)
        h = self.health
        h.lists += 1
        if h.synced:
            h.relists += 1
        h.synced = True
        h.last_list_at = time.time()

    def _watch(self) -> bool:
        """One watch request until the stream ends; True when it delivered something or lasted."""
        t = self.timing
        rv = self.mirror.resource_version(self.stream.name) or ""
        lo, hi = t.watch_timeout
        started = time.monotonic()
        resp = self._call(
            watch=True,
            resource_version=rv,
            allow_watch_bookmarks=True,
            timeout_seconds=self.rng.randint(lo, hi),
            _preload_content=False,
            _request_timeout=(t.connect_timeout, t.read_timeout),
        )
        self._resp = resp
        self._state(WATCHING)
        delivered = False
        try:
            if self.stop_event.is_set():
                return True
            for line in iter_lines(resp, self._waiting):
                event = json.loads(line)
                if not isinstance(event, dict) or not isinstance(event.get("object"), dict):
                    raise ValueError(f"not a watch event: {line[:120]!r}")
                type_, obj = event.get("type"), event["object"]
                if type_ == "ERROR":
                    code = obj.get("code")
                    message = str(obj.get("message") or obj.get("reason") or "watch error")
                    if code == 410:
                        raise Expired(f"410 Gone while watching {self.stream.plural}: {message}")
                    raise WatchFailure(
                        "server" if code != 403 else "forbidden",
                        f"{urlsplit(self.host).netloc}: watch error {code} on {self.stream.plural}: {message}",
                        int(code or 0),
                    )
                if type_ == "BOOKMARK":
                    self.mirror.bookmark(
                        self.stream.name, str((obj.get("metadata") or {}).get("resourceVersion") or "")
                    )
                    self.health.bookmarks += 1
                else:
                    self.mirror.apply(self.stream.name, str(type_), obj)
                    self.health.events += 1
                    self.health.last_event_at = time.time()
                if not delivered:  # the watch works again: the next fault starts the backoff afresh
                    self.backoff.reset()
                delivered = True
                if self.stop_event.is_set():
                    break
        except urllib3.exceptions.ReadTimeoutError:
            return True  # quiet for read_timeout: watch again from the last resourceVersion
        except urllib3.exceptions.ProtocolError as exc:
            if isinstance(getattr(exc, "__context__", None), TimeoutError) or "timed out" in str(exc):
                return True
            raise
        finally:
            self._resp = None
            self._idle_since = None
            # close first: a stream left before its last chunk must not go back to the pool
            with contextlib.suppress(Exception):
                resp.close()
                resp.release_conn()
        return delivered or time.monotonic() - started >= t.min_watch_seconds
