"""An uploaded configuration whose extender this server may not call (SCHEDVIZ_EXTENDER_URLS is empty
here): the explorer shows the refusal, offers to replay without it, and names it on the replay."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from schedviz.tools.bench_browser import csrf_headers

if TYPE_CHECKING:
    from playwright.sync_api import Page

URL = "http://127.0.0.1:9/internal"


def test_a_refused_extender_can_be_skipped_and_is_named(
    page: Page, server: str, api: Callable[[str], Any], shot: Callable[..., Path]
) -> None:
    from playwright.sync_api import expect

    name = f"extender-{uuid.uuid4().hex[:6]}"
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
    }
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "extenders": [{"urlPrefix": URL, "filterVerb": "filter"}],
    }
    r = page.request.post(
        f"{server}/api/v1/snapshots/",
        data=json.dumps({"content": yaml.safe_dump_all([node, pod, config]), "name": name}),
        headers={**csrf_headers(page), "Content-Type": "application/json"},
    )
    assert r.ok, r.text()
    page.goto(f"{server}/snapshots/{r.json()['id']}")
    page.get_by_role("button", name="Replay 1 pending pod").click()
    expect(page.get_by_text("extenders[0].urlPrefix")).to_be_visible()
    expect(page.get_by_text("SCHEDVIZ_EXTENDER_URLS")).to_be_visible()
    shot(page, "extender-refused")
    page.get_by_role("button", name="Replay without the extenders this server may not call").click()
    page.wait_for_url("**/replays/**")
    badge = page.get_by_text(f"extenders not called: {URL}")
    expect(badge).to_be_visible()
    replay_id = page.url.rstrip("/").rsplit("/", 1)[1].split("?")[0]
    assert api(f"/api/v1/replays/{replay_id}/")["options"]["extendersNotCalled"] == [URL]
    shot(page, "extender-not-called")
