"""Cluster over time, at 1440x900 and 1024x768 in headless Chromium, on the sample replay and on 5000 nodes.

The allocation heatmap is drawn on canvas by the chart library: the rows group by zone, instance type and node
pool or sort by utilization; hovering a cell names its group, its node (or the nodes a row stands for) and the
cycle, with the share the API's figures give; a drag zooms to the nodes and cycles it covers, drawn again at full
detail, and a double-click shows the whole map again. The 5000-node run also records the page's long tasks while
the map is drawn again (a measurement, written to test-artifacts/timeline-timing.json, not a timed assertion).
Screenshots go to test-artifacts/screenshots/timeline-*.png.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from schedviz.tools.bench_browser import write_synthetic_snapshot

from .conftest import ARTIFACTS
from .test_cycle_ux import SIZES, _post
from .test_explorer import expect, sample_replay

if TYPE_CHECKING:
    from playwright.sync_api import FloatRect, Page

pytestmark = pytest.mark.e2e

Api = Callable[[str], Any]
Shot = Callable[..., Path]
MAP = "[data-testid=heatmap]"
CANVAS = "canvas[aria-label^='CPU allocation of']"
TIP = ".heatmap-tip"
# every task of the page's main thread over 50 ms (the Long Tasks API), from the page's start
LONG_TASKS = """
(() => {
  window.__longTasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(e.duration);
    }).observe({ type: "longtask", buffered: true });
  } catch (e) {}
})();
"""


def plot(page: Page) -> FloatRect:
    """The box of the map's cells (the chart's plotting area, without the axis below it)."""
    box = page.locator(f"{MAP} .u-over").bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 10, box
    return box


def hover(page: Page, fx: float, fy: float) -> str:
    """Hover the point at fractions (fx, fy) of the map's cells: the tip's text."""
    box = plot(page)
    tip = page.locator(TIP)
    # off the map first, so that the text read is the new cell's, not the last one's
    page.mouse.move(box["x"] - 8, box["y"] - 8)
    expect(tip).to_be_hidden()
    page.mouse.move(box["x"] + fx * box["width"], box["y"] + fy * box["height"])
    expect(tip).to_be_visible()
    return str(tip.inner_text())


def drag(page: Page, fx0: float, fy0: float, fx1: float, fy1: float) -> None:
    """Drag over the map from one point to another, each at fractions of the map's cells."""
    box = plot(page)

    def at(fx: float, fy: float) -> tuple[float, float]:
        return box["x"] + fx * box["width"], box["y"] + fy * box["height"]

    page.mouse.move(*at(fx0, fy0))
    page.mouse.down()
    page.mouse.move(*at((fx0 + fx1) / 2, (fy0 + fy1) / 2), steps=4)
    page.mouse.move(*at(fx1, fy1), steps=4)
    page.mouse.up()


def rows(page: Page) -> int:
    return int(page.locator(MAP).get_attribute("data-rows") or 0)


def zoom_note(page: Page) -> tuple[int, int, int, int]:
    """The zoom's own account: nodes a-b (1-based) and cycles c-d."""
    note = page.get_by_test_id("heatmap-zoom")
    expect(note).to_have_attribute("data-zoomed", "true")
    text = str(note.inner_text())
    m = re.search(r"nodes (\d+)\u2013(\d+) of \d+, (?:cycles (\d+)\u2013(\d+)|after cycle (\d+))", text)
    assert m, text
    c0 = int(m.group(3) or m.group(5))
    c1 = int(m.group(4) or m.group(5))
    return int(m.group(1)), int(m.group(2)), c0, c1


def percent(tip: str) -> float:
    m = re.search(r": (\d+)%$", tip)
    assert m, tip
    return float(m.group(1))


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}px" for w, _ in SIZES])
def test_the_sample_grouped_hovered_and_zoomed(
    page: Page, server: str, api: Api, shot: Shot, width: int, height: int
) -> None:
    page.set_viewport_size({"width": width, "height": height})
    replay = sample_replay(api)
    rid = replay["id"]
    nodes = api(f"/api/v1/snapshots/{replay['snapshot']}/nodes/?page_size=1000")["results"]
    cycles = api(f"/api/v1/replays/{rid}/timeline/")["cycles"]
    zones = Counter(n["zone"] or "(no zone)" for n in nodes)
    by_zone = sorted(nodes, key=lambda n: n["zone"] or "(no zone)")  # stable: snapshot order within a zone
    page.goto(f"{server}/replays/{rid}/timeline?group=zone")
    expect(page.locator(CANVAS)).to_be_visible()
    expect(page.locator(MAP)).to_have_attribute("data-rows", str(len(nodes)))
    groups = page.get_by_role("list", name="Node groups").get_by_role("listitem")
    expect(groups).to_have_count(len(zones))
    for k, (zone, count) in enumerate(sorted(zones.items())):
        expect(groups.nth(k)).to_have_text(f"{zone} ({count})")

    # hover: the top-left cell is the first node of the first zone as uploaded, with its share of CPU
    first = by_zone[0]
    tip = hover(page, 0.002, 0.5 / len(nodes))
    assert tip.startswith(f"{first['zone']} · {first['name']} · after cycle 0: "), tip
    want = 100 * first["requested"].get("cpu", 0) / first["allocatable"]["cpu"]
    assert abs(percent(tip) - want) <= 0.5, (tip, want)
    # the last row at the right: the last node of the last zone, after the last cycle
    tip = hover(page, 0.998, 1 - 0.5 / len(nodes))
    assert tip.startswith(f"{by_zone[-1]['zone']} · {by_zone[-1]['name']} · after cycle {len(cycles)}: "), tip
    shot(page, f"timeline-sample-hover-{width}", full_page=False)

    # a drag over the second zone's rows and the middle of the cycles zooms to them
    second = sorted(zones)[1]
    start = sum(zones[z] for z in sorted(zones)[:1])
    end = start + zones[second]
    drag(page, 0.3, (start + 0.3) / len(nodes), 0.7, (end - 0.3) / len(nodes))
    a, b, c0, c1 = zoom_note(page)
    assert (a, b) == (start + 1, end), (a, b, start, end)
    assert 0 < c0 < c1 < len(cycles), (c0, c1)
    expect(page.locator(MAP)).to_have_attribute("data-rows", str(end - start))
    expect(page.locator(MAP)).to_have_attribute("data-cols", str(c1 - c0 + 1))
    # one zone in view: each row is named by its node, and hovering reads the zoomed cells
    in_zone = by_zone[start:end]
    tip = hover(page, 0.002, 0.5 / len(in_zone))
    assert tip.startswith(f"{second} · {in_zone[0]['name']} · after cycle {c0}: "), tip
    tip = hover(page, 0.998, 1 - 0.5 / len(in_zone))
    assert tip.startswith(f"{second} · {in_zone[-1]['name']} · after cycle {c1}: "), tip
    labels = page.locator("[data-testid=heatmap-scroll] .ellipsis")
    expect(labels).to_have_count(len(in_zone))
    expect(labels.first).to_have_text(in_zone[0]["name"])
    page.mouse.move(0, 0)
    shot(page, f"timeline-sample-zoomed-{width}", full_page=False)

    # a double-click on the map: the whole of it again
    box = plot(page)
    page.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.get_by_test_id("heatmap-zoom")).to_have_attribute("data-zoomed", "false")
    expect(page.locator(MAP)).to_have_attribute("data-rows", str(len(nodes)))
    expect(groups).to_have_count(len(zones))

    # from the keyboard: the arrow keys read cells, + zooms to half the map around the cell, - shows it all
    page.locator(CANVAS).focus()
    page.keyboard.press("ArrowDown")
    expect(page.locator(TIP)).to_contain_text(f"{by_zone[1]['zone']} · {by_zone[1]['name']} · after cycle ")
    page.keyboard.press("+")
    a, b, c0, c1 = zoom_note(page)
    assert (a, b) == (1, (len(nodes) + 1) // 2), (a, b)
    page.keyboard.press("-")
    expect(page.get_by_test_id("heatmap-zoom")).to_have_attribute("data-zoomed", "false")

    # sorted by utilization: the busiest node at the end of the replay on top
    page.get_by_label("Group or sort the nodes").select_option("utilization")
    tip = hover(page, 0.998, 0.5 / len(nodes))
    top = max(percent(hover(page, 0.998, (k + 0.5) / len(nodes))) for k in range(3))
    assert percent(tip) == top, (tip, top)


def test_5000_nodes_grouped_hovered_and_zoomed_at_both_sizes(
    page: Page, server: str, api: Api, shot: Shot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    total = 5000
    path = write_synthetic_snapshot(tmp_path / "timeline-5000.json", total, 12)
    snap = _post(page, "/api/v1/snapshots/", {"content": path.read_text(), "name": "timeline 5000 nodes"})
    rid = _post(page, "/api/v1/replays/", {"snapshot": snap["id"], "name": "timeline 5000 nodes"})["id"]
    for _ in range(600):
        if api(f"/api/v1/replays/{rid}/")["status"] in ("succeeded", "failed"):
            break
        page.wait_for_timeout(200)
    assert api(f"/api/v1/replays/{rid}/")["status"] == "succeeded"
    nodes = [
        n
        for p in range(1, total // 1000 + 1)
        for n in api(f"/api/v1/snapshots/{snap['id']}/nodes/?page_size=1000&page={p}")["results"]
    ]
    assert len(nodes) == total
    zones = Counter(n["zone"] for n in nodes)
    cycles = len(api(f"/api/v1/replays/{rid}/timeline/")["cycles"])
    pools = Counter(n["labels"]["pool"] for n in nodes)
    page.add_init_script(LONG_TASKS)
    measured: dict[str, Any] = {"nodes": total, "sizes": {}}
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{server}/replays/{rid}/timeline?group=zone")
        groups = page.get_by_role("list", name="Node groups").get_by_role("listitem")
        expect(groups).to_have_count(len(zones), timeout=60_000)
        for k, (z, count) in enumerate(sorted(zones.items())):
            expect(groups.nth(k)).to_have_text(f"{z} ({count})")
        expect(page.locator(CANVAS)).to_be_visible()
        # a row stands for the busiest of several nodes of one zone: the tip says which
        tip = hover(page, 0.5, 0.001)
        first_zone = sorted(zones)[0]
        assert re.match(
            rf"^{re.escape(first_zone)} · \S+ … \S+ \(\d+ nodes, busiest\) · after cycle \d+: \d+%$", tip
        ), tip
        page.mouse.move(0, 0)
        shot(page, f"timeline-5000-zone-{width}", full_page=False)
        page.evaluate("window.__longTasks = []")

        # by node pool label: three pools
        page.get_by_label("Group or sort the nodes").select_option("pool")
        expect(groups).to_have_count(len(pools))
        for k, (pool, count) in enumerate(sorted(pools.items())):
            expect(groups.nth(k)).to_have_text(f"{pool} ({count})")
        # by instance type: one type, so no bands
        page.get_by_label("Group or sort the nodes").select_option("instance-type")
        expect(page.get_by_role("list", name="Node groups")).to_have_count(0)
        # sorted by utilization, zoomed x8: more rows, in a scrolling box
        page.get_by_label("Group or sort the nodes").select_option("utilization")
        before = rows(page)
        page.get_by_label("Vertical zoom").select_option("8")
        expect(page.locator(MAP)).not_to_have_attribute("data-rows", str(before))
        assert rows(page) > before
        page.get_by_label("Vertical zoom").select_option("1")
        expect(page.locator(MAP)).to_have_attribute("data-rows", str(before))

        # zoom in by dragging until the rows are single nodes, named
        page.get_by_label("Group or sort the nodes").select_option("zone")
        expect(groups).to_have_count(len(zones))
        drag(page, 0.0, 0.0005, 0.999, 0.05)
        a, b, c0, c1 = zoom_note(page)
        assert a == 1 and 1 < b < total // 10, (a, b)
        assert (c0, c1) == (0, cycles), (c0, c1)  # the drag spanned the map's width: every cycle
        drag(page, 0.0, 0.001, 0.999, 0.1)
        a2, b2, _, _ = zoom_note(page)
        assert a2 == 1 and b2 < b, (a2, b2, b)
        if b2 > 30:
            drag(page, 0.0, 0.001, 0.999, 0.1)
            a2, b2, _, _ = zoom_note(page)
        assert b2 <= 30, b2
        expect(page.locator(MAP)).to_have_attribute("data-rows", str(b2 - a2 + 1))
        zone_nodes = [n for n in nodes if n["zone"] == first_zone]
        tip = hover(page, 0.5, 0.5 / (b2 - a2 + 1))
        assert tip.startswith(f"{first_zone} · {zone_nodes[0]['name']} · after cycle "), tip
        labels = page.locator("[data-testid=heatmap-scroll] .ellipsis")
        expect(labels.first).to_have_text(zone_nodes[0]["name"])
        page.mouse.move(0, 0)
        shot(page, f"timeline-5000-zoomed-{width}", full_page=False)
        page.get_by_role("button", name="Show all").click()
        expect(page.get_by_test_id("heatmap-zoom")).to_have_attribute("data-zoomed", "false")
        expect(groups).to_have_count(len(zones))
        tasks = page.evaluate("window.__longTasks")
        measured["sizes"][f"{width}x{height}"] = {
            "longTasks": len(tasks),
            "longestMs": round(max(tasks, default=0), 1),
        }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "timeline-timing.json").write_text(json.dumps(measured, indent=2))
    with capsys.disabled():
        print(
            f"\ncluster over time, 5000 nodes, long tasks while regrouping, zooming and redrawing: {json.dumps(measured['sizes'])}"
        )
