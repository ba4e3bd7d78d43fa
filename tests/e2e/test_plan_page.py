"""The Plan page in a real browser: ask a capacity question of the sample cluster, read the answer's
charts, and open the copy that did not fit in Why here? and in the cycle view."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.e2e

POD = """apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  labels: {app: planned}
spec:
  containers:
  - name: web
    image: nginx
    resources:
      requests: {cpu: "2", memory: 2Gi}
"""


def expect(obj: Any) -> Any:
    from playwright.sync_api import expect as pw_expect

    return pw_expect(obj)


def test_capacity_plan_charts_and_opens_the_next_copy(
    page: Page, server: str, api: Callable[[str], Any], shot: Callable[..., Path]
) -> None:
    page.goto(f"{server}/plans")
    page.get_by_role("button", name="Capacity").click()
    snapshots = api("/api/v1/snapshots/?page_size=200")["results"]
    sample = next(s for s in snapshots if s["name"].startswith("Sample cluster"))
    page.get_by_label("Snapshot").select_option(sample["id"])
    page.get_by_label("Pod 1 (YAML or JSON)").fill(POD)
    page.get_by_role("button", name="Plan", exact=True).click()
    page.wait_for_url(re.compile(r"/plans/[0-9a-f-]{36}$"))
    plan_id = page.url.rsplit("/", 1)[1]
    deadline = time.monotonic() + 60
    plan = api(f"/api/v1/plans/{plan_id}/")
    while plan["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.5)
        plan = api(f"/api/v1/plans/{plan_id}/")
    assert plan["status"] == "succeeded", plan["error"]
    result = plan["result"]
    expect(page.get_by_role("heading", name=f"{result['replicas']} more copies fit")).to_be_visible(timeout=20_000)
    zones = page.get_by_role("figure", name="Copies per zone")
    for zone, count in result["perZone"].items():
        expect(zones.locator("li", has_text=zone)).to_contain_text(str(count))
    expect(page.get_by_text(result["stop"]["message"], exact=True)).to_be_visible()
    shot(page, "plan-capacity")
    ns, name = result["stop"]["pod"].split("/")
    rid = plan["replays"][0]["replay"]
    page.get_by_role("link", name="cycle", exact=True).click()
    page.wait_for_url(re.compile(rf"/replays/{rid}/cycles/\d+$"))
    expect(page.locator("#cycle-title")).to_contain_text(f"{ns}/{name}")
    page.go_back()
    page.get_by_role("link", name="Why here?").click()
    page.wait_for_url(f"**/replays/{rid}/pods/{ns}/{name}")
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Why here? {ns}/{name}")
