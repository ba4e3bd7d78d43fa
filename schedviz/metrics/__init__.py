"""Prometheus metrics at ``/metrics``: what an operator graphs and alerts on.

Per process (this web process, or this worker): HTTP request latency by route, websocket stream
clients, cycles replayed. Read from the database at each scrape, so the same from any process: replays
by state, the queue's depth (queued replays and reports), live clusters by status and their watches
by state. Set ``PROMETHEUS_MULTIPROC_DIR`` (an empty directory shared by the web processes, cleared at
start) to add up the per-process metrics of every web process behind one port.

Access: staff users (session or API token), or ``Authorization: Bearer <SCHEDVIZ_METRICS_TOKEN>`` for
a scraper; anyone else gets 401 (no credentials) or 403.
"""

from __future__ import annotations

import hmac
import os
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector

REQUEST_SECONDS = Histogram(
    "schedviz_http_request_duration_seconds",
    "HTTP requests served, by method, route and status, and how long they took",
    ["method", "route", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
STREAM_CLIENTS = Gauge(
    "schedviz_stream_clients",
    "Websocket clients connected to this process, by stream kind (replay, cluster)",
    ["kind"],
    multiprocess_mode="livesum",
)
CYCLES_REPLAYED = Counter(
    "schedviz_cycles_replayed_total", "Scheduling cycles replayed and stored by this process's runners"
)


def _route(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return "unmatched"
    return str(match.view_name or match.route or "unmatched")


class RequestMetricsMiddleware:
    """Times every request, labelled by its view name (not its path: ids do not become labels)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self._async = iscoroutinefunction(get_response)
        if self._async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self._async:
            return self._acall(request)
        start = time.perf_counter()
        response = self.get_response(request)
        self._observe(request, response, start)
        return response

    async def _acall(self, request: HttpRequest) -> Any:
        start = time.perf_counter()
        response = await self.get_response(request)
        self._observe(request, response, start)
        return response

    @staticmethod
    def _observe(request: HttpRequest, response: HttpResponse, start: float) -> None:
        REQUEST_SECONDS.labels(request.method or "", _route(request), str(response.status_code)).observe(
            time.perf_counter() - start
        )


def count_streams(app: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
    """ASGI wrapper counting the websocket connections open to ``app`` (by its URL's first segment)."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = str(scope.get("path", ""))
        kind = "cluster" if path.startswith("/ws/clusters/") else "replay" if path.startswith("/ws/replays/") else "other"
        gauge = STREAM_CLIENTS.labels(kind)
        accepted = False

        async def send_counted(message: dict[str, Any]) -> None:
            nonlocal accepted
            if message.get("type") == "websocket.accept" and not accepted:
                accepted = True
                gauge.inc()
            await send(message)

        try:
            await app(scope, receive, send_counted)
        finally:
            if accepted:
                gauge.dec()

    return wrapped


class DatabaseCollector(Collector):
    """Gauges read from the database at each scrape (the same whichever process answers)."""

    def collect(self) -> Iterable[Metric]:
        from schedviz.live.models import LiveCluster
        from schedviz.replays.models import Replay, Report

        replays = GaugeMetricFamily("schedviz_replays", "Replays by state", labels=["state"])
        counts = dict(Replay.objects.values_list("status").annotate(n=Count("id")))
        for state in Replay.Status.values:
            replays.add_metric([state], counts.get(state, 0))
        yield replays
        queued = counts.get(Replay.Status.QUEUED, 0) + Report.objects.filter(status=Report.Status.QUEUED).count()
        yield GaugeMetricFamily("schedviz_queue_depth", "Replays and reports waiting to run", value=queued)
        clusters = GaugeMetricFamily("schedviz_live_clusters", "Watched clusters by status", labels=["status"])
        watches = GaugeMetricFamily(
            "schedviz_live_watches", "Watches (one per kind and cluster) by state", labels=["state"]
        )
        errors = GaugeMetricFamily(
            "schedviz_live_watch_errors", "Errors the watches of enabled clusters reported since they started"
        )
        by_status: dict[str, int] = {}
        by_state: dict[str, int] = {}
        total_errors = 0
        for status, health in LiveCluster.objects.filter(enabled=True).values_list("status", "health"):
            by_status[status] = by_status.get(status, 0) + 1
            for stream in (health or {}).get("streams", []) if isinstance(health, dict) else []:
                if isinstance(stream, dict):
                    state = str(stream.get("state", "unknown"))
                    by_state[state] = by_state.get(state, 0) + 1
                    total_errors += int(stream.get("errors") or 0)
        for status, n in sorted(by_status.items()):
            clusters.add_metric([status], n)
        for state, n in sorted(by_state.items()):
            watches.add_metric([state], n)
        errors.add_metric([], total_errors)
        yield clusters
        yield watches
        yield errors


_database = DatabaseCollector()


def _registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        reg = CollectorRegistry()
        multiprocess.MultiProcessCollector(reg)  # type: ignore[no-untyped-call]
        reg.register(_database)
        return reg
    if _database not in getattr(REGISTRY, "_collector_to_names", {}):
        REGISTRY.register(_database)
    return REGISTRY


def _allowed(request: HttpRequest) -> int:
    """200, or 401 (no credentials) / 403 (credentials that may not read metrics)."""
    token = str(getattr(settings, "SCHEDVIZ_METRICS_TOKEN", "") or "")
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(header[7:].strip(), token):
        return 200
    user = getattr(request, "user", None)
    if header.startswith("Token "):
        from rest_framework.exceptions import AuthenticationFailed
        from rest_framework.request import Request

        from schedviz.accounts.authentication import ApiTokenAuthentication

        try:
            found = ApiTokenAuthentication().authenticate(Request(request))
        except AuthenticationFailed:
            return 401
        user = found[0] if found else None
    if user is None or not user.is_authenticated:
        return 401
    return 200 if user.is_staff else 403


def metrics_view(request: HttpRequest) -> HttpResponse:
    status = _allowed(request)
    if status != 200:
        response = HttpResponse(
            "metrics: sign in as a staff user, or send Authorization: Bearer <SCHEDVIZ_METRICS_TOKEN>\n",
            status=status,
            content_type="text/plain",
        )
        if status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="schedviz metrics"'
        return response
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)


def count_stored_cycles(replay: Any, done: int) -> None:
    """A runner's progress listener: cycles stored since its last report."""
    last = getattr(replay, "_metrics_done", 0)
    if done > last:
        CYCLES_REPLAYED.inc(done - last)
    replay._metrics_done = done
