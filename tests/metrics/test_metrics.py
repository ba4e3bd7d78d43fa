"""/metrics (Prometheus) and LOG_FORMAT=json: who may read the metrics, what they say after real
requests, replays, streams and live clusters, and the log lines a collector parses."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from schedviz.lib.logjson import JsonFormatter
from schedviz.live.models import LiveCluster
from schedviz.metrics import STREAM_CLIENTS, count_streams
from tests.webfixtures import client_for, cluster_yaml

ROOT = Path(__file__).resolve().parents[2]


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of one sample of the exposition text, or None."""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(m.group(3))
    return None


@pytest.fixture
def staff(make_user: Any) -> User:
    user: User = make_user("ops")
    user.is_staff = True
    user.save()
    return user


def test_metrics_are_for_staff_and_the_scraper_token_only(
    api: APIClient, staff: User, settings: Any
) -> None:
    anonymous = APIClient()
    r = anonymous.get("/metrics")
    assert r.status_code == 401 and r["WWW-Authenticate"].startswith("Bearer")
    assert api.get("/metrics").status_code == 403  # an ordinary user's token
    assert client_for(staff).get("/metrics").status_code == 200
    settings.SCHEDVIZ_METRICS_TOKEN = "scrape-me-0123456789"
    assert anonymous.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me-0123456789").status_code == 200
    assert anonymous.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    settings.SCHEDVIZ_METRICS_TOKEN = ""
    assert anonymous.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 401


def test_metrics_count_requests_replays_cycles_and_the_queue(
    api: APIClient, staff: User, upload: Any
) -> None:
    ops = client_for(staff)
    before = ops.get("/metrics").content.decode()
    cycles_before = sample(before, "schedviz_cycles_replayed_total") or 0.0
    requests_before = sample(
        before, "schedviz_http_request_duration_seconds_count", method="POST", route="replay-list", status="201"
    ) or 0.0
    snap = upload(cluster_yaml(extra_pods=3))
    r = api.post("/api/v1/replays/", {"snapshot": snap["id"], "all_nodes": True}, format="json")
    assert r.status_code == 201
    replay = api.get(f"/api/v1/replays/{r.json()['id']}/").json()
    assert replay["status"] == "succeeded"
    text = ops.get("/metrics").content.decode()
    assert sample(text, "schedviz_replays", state="succeeded") == 1
    assert sample(text, "schedviz_replays", state="queued") == 0
    assert sample(text, "schedviz_queue_depth") == 0
    assert sample(text, "schedviz_cycles_replayed_total") == cycles_before + replay["cycles_done"]
    assert sample(
        text, "schedviz_http_request_duration_seconds_count", method="POST", route="replay-list", status="201"
    ) == requests_before + 1
    # routes, not paths: a replay's id is no label
    assert replay["id"] not in text


def test_live_clusters_and_their_watches(staff: User) -> None:
    health = {"streams": [{"kind": "Pod", "state": "watching", "errors": 2}, {"kind": "Node", "state": "backoff", "errors": 5}]}
    LiveCluster.objects.create(owner=staff, name="a", source="kubeconfig", server="https://a", status="watching", health=health)
    LiveCluster.objects.create(owner=staff, name="b", source="kubeconfig", server="https://b", status="error", enabled=False)
    text = client_for(staff).get("/metrics").content.decode()
    assert sample(text, "schedviz_live_clusters", status="watching") == 1
    assert sample(text, "schedviz_live_clusters", status="error") is None  # disabled: not watched
    assert sample(text, "schedviz_live_watches", state="watching") == 1
    assert sample(text, "schedviz_live_watches", state="backoff") == 1
    assert sample(text, "schedviz_live_watch_errors") == 7


def test_stream_clients_are_counted_while_connected() -> None:
    async def accept_then_wait(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "websocket.accept"})
        while (await receive())["type"] != "websocket.disconnect":
            pass

    async def refuse(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "websocket.close", "code": 4401})

    gauge = STREAM_CLIENTS.labels("replay")

    async def run() -> None:
        start = gauge._value.get()
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        task = asyncio.create_task(
            count_streams(accept_then_wait)({"type": "websocket", "path": "/ws/replays/x/"}, inbox.get, send)
        )
        while not sent:
            await asyncio.sleep(0.01)
        assert gauge._value.get() == start + 1
        await inbox.put({"type": "websocket.disconnect", "code": 1000})
        await task
        assert gauge._value.get() == start
        await count_streams(refuse)({"type": "websocket", "path": "/ws/replays/y/"}, inbox.get, send)
        assert gauge._value.get() == start  # a refused connection is no client

    asyncio.run(run())


def test_json_log_lines() -> None:
    record = logging.LogRecord("schedviz.replays", logging.WARNING, __file__, 1, "replay %s failed", ("r1",), None)
    record.replay = "r1"
    line = json.loads(JsonFormatter().format(record))
    assert line["level"] == "WARNING" and line["logger"] == "schedviz.replays"
    assert line["message"] == "replay r1 failed" and line["replay"] == "r1"
    assert line["time"].endswith("+00:00")
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "oops", None, sys.exc_info())
    assert "ValueError: boom" in json.loads(JsonFormatter().format(record))["exception"]


def test_log_format_json_applies_to_the_whole_process(tmp_path: Path) -> None:
    env = {**os.environ, "LOG_FORMAT": "json", "SCHEDVIZ_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "schedviz.settings"}
    env.pop("DATABASE_URL", None)
    code = "import django, logging; django.setup(); logging.getLogger('uvicorn.error').warning('started'); logging.getLogger('schedviz.x').error('bad %d', 3)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    lines = [json.loads(line) for line in out.stderr.splitlines() if line.startswith("{")]
    assert [(x["logger"], x["message"]) for x in lines][-2:] == [("uvicorn.error", "started"), ("schedviz.x", "bad 3")]
