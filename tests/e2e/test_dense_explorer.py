"""The explorer at real size in headless Chromium: the dense 5000-node cluster, 30 running pods a node, the whole
flow an operator follows.

The production-shaped dump of ``schedviz.tools.dense_cluster`` (5000 nodes, 150,000 running pods from
Deployments, 40 pending pods), gzip'd, uploaded through the Snapshots page: its progress (bytes read, objects
parsed) on screen until the snapshot opens; a replay with every node evaluated, followed as it runs; a cycle
opened from the pod queue and another from its URL; the node table sorted by a score column and by the total,
filtered by verdict and by a zone, a node's side panel; Why here? for a placed pod (and What would make it fit?
for an unschedulable one when the replay has one); Cluster over time. What the page shows is checked against
the API; nothing here depends on how fast the machine is (timings are `schedviz bench-browser
--pods-per-node 30`'s). Screenshots at 1440x900 and 1024x768 go to test-artifacts/screenshots/dense/ (or $SCHEDVIZ_DENSE_SCREENSHOTS).

The tests run in order on one snapshot and one replay: the first uploads and replays, the others use them.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from schedviz.tools.dense_cluster import DenseShape, write_dump

from .conftest import DIST_INDEX, SCREENSHOTS, _unavailable
from .test_explorer import NODE_GRID, UUID, expect

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.e2e

Api = Callable[[str], Any]
Shot = Callable[..., Path]
SHAPE = DenseShape(nodes=5000, pods_per_node=30, pending=40)  # 150,040 pods, about 420 MB of JSON, 23 MB gzip'd
SIZES = [(1440, 900), (1024, 768)]
ZONE = "topology.kubernetes.io/zone"
# the server's work on 150,000 pods: generous bounds, never a measure of speed
READ_MS = 180_000
REPLAY_MS = 180_000
PAGE_MS = 120_000
# a folder of their own: other browser tests clear the screenshots folder when they start
SHOTS = Path(os.environ.get("SCHEDVIZ_DENSE_SCREENSHOTS") or SCREENSHOTS / "dense")


def _write_dense_gz(folder: Path) -> Path:
    raw = folder / "dense.json"
    write_dump(raw, SHAPE)
    out = folder / f"dense-{SHAPE.nodes}x{SHAPE.pods_per_node}.json.gz"
    with raw.open("rb") as src, gzip.open(out, "wb", compresslevel=1) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    raw.unlink()
    return out


@pytest.fixture(scope="session", autouse=True)
def dense_gz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Future[Path]]:
    """The dense dump gzip'd, written in a thread of its own: when this module runs alone, while the server starts
    (a session fixture, autouse: set up before the server). The test that uploads it waits for it."""
    if not DIST_INDEX.exists():
        _unavailable("the explorer is not built (schedviz/explorer/index.html is missing): cd frontend && npm run build")
    folder = tmp_path_factory.mktemp("dense-explorer")
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool.submit(_write_dense_gz, folder)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def shot() -> Shot:
    """shot(page, name): save the page's viewport as <SHOTS>/<name>.png."""

    def take(pg: Page, name: str, full_page: bool = False) -> Path:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        pg.screenshot(path=str(path), full_page=full_page)
        return path

    return take


@pytest.fixture(scope="module")
def state() -> dict[str, Any]:
    """What the first test made (the snapshot's and the replay's ids) for the tests after it."""
    return {}


def _needs(state: dict[str, Any], *keys: str) -> None:
    missing = [k for k in keys if k not in state]
    if missing:
        pytest.skip(f"the upload and replay test did not get as far as {', '.join(missing)}")


def all_pages(api: Api, path: str, key: str | None = None) -> list[dict[str, Any]]:
    """Every result of a paginated API list (1000 a page); `key` names the page object inside the answer."""
    out: list[dict[str, Any]] = []
    page = 1
    sep = "&" if "?" in path else "?"
    while True:
        got = api(f"{path}{sep}page_size=1000&page={page}")
        block = got[key] if key else got
        out.extend(block["results"])
        if len(out) >= block["count"] or not block["results"]:
            return out
        page += 1


def _row(page: Page, index: int) -> Any:
    return page.locator(f"{NODE_GRID} [role=row][aria-rowindex='{index}']")


# ------------------------------------------------------------------------------------ upload, replay, follow


def test_upload_with_progress_then_replay_every_node_and_follow_it(
    page: Page, server: str, api: Api, shot: Shot, dense_gz: Future[Path], state: dict[str, Any]
) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{server}/snapshots")
    expect(page.get_by_role("heading", name="Snapshots", exact=True)).to_be_visible()
    dump = dense_gz.result(timeout=600)
    page.set_input_files("[data-testid=file-input]", str(dump))
    progress = page.get_by_test_id("upload-progress")
    name = re.escape(dump.name)
    expect(progress).to_contain_text(
        re.compile(rf"Reading {name} — [\d.]+ (KB|MB) of [\d.]+ MB read, [1-9][\d,]* objects"), timeout=READ_MS
    )
    expect(progress.get_by_role("progressbar", name="upload read")).to_be_visible()
    shot(page, "upload-progress-1440")
    page.wait_for_url(re.compile(rf"/snapshots/{UUID}$"), timeout=READ_MS)
    snap_id = page.url.rsplit("/", 1)[-1]
    state["snapshot"] = snap_id
    snap = api(f"/api/v1/snapshots/{snap_id}/")
    assert snap["status"] == "ready" and snap["source_format"] == "gzip"
    assert snap["node_count"] == SHAPE.nodes and snap["pod_count"] == SHAPE.running + SHAPE.pending
    assert snap["pending_count"] == SHAPE.pending
    assert snap["progress"]["bytesRead"] == snap["progress"]["bytesTotal"] == dump.stat().st_size
    expect(page.locator(".page-head p.muted")).to_contain_text(f"{SHAPE.nodes:,} nodes", timeout=PAGE_MS)
    expect(page.get_by_role("grid", name="Nodes", exact=True)).to_have_attribute(
        "aria-rowcount", str(SHAPE.nodes), timeout=PAGE_MS
    )
    states = page.get_by_label("Pods by state")
    expect(states).to_contain_text(f"running {SHAPE.running}", timeout=PAGE_MS)
    expect(states).to_contain_text(f"pending {SHAPE.pending}")
    expect(page.get_by_role("table", name="Pending pods").locator("tbody tr")).to_have_count(SHAPE.pending)
    # zones: one row each, with the API's node count
    nodes = all_pages(api, f"/api/v1/snapshots/{snap_id}/nodes/")
    assert len(nodes) == SHAPE.nodes
    zones = Counter(n["zone"] or "(no zone)" for n in nodes)
    state["zones"] = dict(zones)
    zone_rows = page.locator("section[aria-labelledby=zones-title] table tbody tr")
    expect(zone_rows).to_have_count(len(zones))
    for k in range(zone_rows.count()):
        cells = zone_rows.nth(k).locator("td")
        assert int(cells.nth(1).inner_text().replace(",", "")) == zones[cells.nth(0).inner_text().strip()]
    shot(page, "snapshot-1440")

    # a replay with every node evaluated, followed as it runs
    page.get_by_label("Evaluate every node").check()
    page.get_by_label("Replay name").fill("dense every node")
    page.get_by_role("button", name=f"Replay {SHAPE.pending} pending pods").click()
    page.wait_for_url(re.compile(rf"/replays/{UUID}$"), timeout=PAGE_MS)
    rid = page.url.rsplit("/", 1)[-1]
    state["replay"] = rid
    expect(page.get_by_role("heading", level=1)).to_have_text("dense every node")
    expect(page.get_by_text("every node evaluated", exact=True)).to_be_visible()
    # the cycle view follows the stream: a cycle's title as soon as one is streamed (or stored)
    expect(page.locator("#cycle-title")).to_contain_text(re.compile(r"^Cycle \d+: "), timeout=REPLAY_MS)
    expect(page.locator(NODE_GRID)).to_have_attribute("aria-rowcount", str(SHAPE.nodes), timeout=PAGE_MS)
    shot(page, "following-1440")
    status = page.locator(".page-head h1 + [data-status]")
    expect(status).to_have_attribute("data-status", "succeeded", timeout=REPLAY_MS)
    replay = api(f"/api/v1/replays/{rid}/")
    assert replay["status"] == "succeeded" and replay["options"]["allNodes"] is True
    cycles = api(f"/api/v1/replays/{rid}/cycles/?page_size=1000")["results"]
    assert len(cycles) == SHAPE.pending == replay["cycles_total"]
    state["cycles"] = cycles
    results = Counter(c["result"] for c in cycles)
    for result, n in results.items():
        expect(page.locator(".page-head")).to_contain_text(f"{n} {result}")
    expect(page.locator(".page-head")).to_contain_text(f"{len(cycles)} cycles")
    queue = page.get_by_role("region", name="Pod queue")
    expect(queue.locator("h2")).to_contain_text(f"Pod queue ({len(cycles)})")
    # the cycle followed last is on screen as stored: its pod, its result, every node
    m = re.match(r"^Cycle (\d+):", page.locator("#cycle-title").inner_text())
    assert m, page.locator("#cycle-title").inner_text()
    shown = cycles[int(m.group(1)) - 1]
    expect(page.locator("#cycle-title")).to_have_text(f"Cycle {shown['seq']}: {shown['pod']}")
    expect(page.locator(f".row:has(#cycle-title) [data-result='{shown['result']}']")).to_be_visible()
    expect(page.locator(NODE_GRID)).to_have_attribute("aria-rowcount", str(SHAPE.nodes))
    shot(page, "followed-1440")


# -------------------------------------------------------------------------------- cycles and the node table


def _cycle_nodes(api: Api, rid: str, seq: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    first = api(f"/api/v1/replays/{rid}/cycles/{seq}/?page_size=1000&page=1")
    nodes = all_pages(api, f"/api/v1/replays/{rid}/cycles/{seq}/", key="nodes")
    assert len(nodes) == SHAPE.nodes
    return first, nodes


def _best_by(nodes: list[dict[str, Any]], value: Callable[[dict[str, Any]], float | None], desc: bool) -> dict[str, Any]:
    """The first row of the table sorted by `value` (best first; `desc`: worst first), ties by rank."""
    scored = [n for n in nodes if value(n) is not None]
    sign = 1 if desc else -1
    return min(scored, key=lambda n: (sign * float(value(n) or 0), n["rank"]))


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}px" for w, _ in SIZES])
def test_open_cycles_sort_and_filter_the_node_table_and_open_a_node(
    page: Page, server: str, api: Api, shot: Shot, state: dict[str, Any], width: int, height: int
) -> None:
    _needs(state, "replay", "cycles")
    page.set_viewport_size({"width": width, "height": height})
    rid, cycles = state["replay"], state["cycles"]
    # the cycle with the most nodes rejected (every node is evaluated), placed if one is: the table's; another
    # opened from the queue first
    busiest = max(cycles, key=lambda c: (c["evaluated_count"] - c["feasible_count"], c["result"] == "Scheduled", -c["seq"]))
    other = next(c for c in (cycles if width == 1440 else cycles[::-1]) if c["seq"] != busiest["seq"])
    opened, target = other, busiest

    # one cycle opened from the pod queue of the replay's page, the other from its URL
    page.goto(f"{server}/replays/{rid}")
    expect(page.locator(".page-head h1 + [data-status]")).to_have_attribute("data-status", "succeeded")
    queue = page.get_by_role("listbox", name="Scheduling cycles in queue order")
    page.get_by_role("searchbox", name="Filter the pod queue").fill(opened["pod"].split("/", 1)[1])
    queue.get_by_role("option").filter(has_text=opened["pod"]).first.click()
    page.wait_for_url(re.compile(rf"/replays/{rid}/cycles/{opened['seq']}(\?|$)"))
    expect(page.locator("#cycle-title")).to_have_text(f"Cycle {opened['seq']}: {opened['pod']}", timeout=PAGE_MS)
    expect(page.locator(NODE_GRID)).to_have_attribute("aria-rowcount", str(SHAPE.nodes), timeout=PAGE_MS)

    seq = target["seq"]
    page.goto(f"{server}/replays/{rid}/cycles/{seq}")
    expect(page.locator("#cycle-title")).to_have_text(f"Cycle {seq}: {target['pod']}", timeout=PAGE_MS)
    grid = page.locator(NODE_GRID)
    expect(grid).to_have_attribute("aria-rowcount", str(SHAPE.nodes), timeout=PAGE_MS)
    detail, nodes = _cycle_nodes(api, rid, seq)
    counts = detail["nodeCounts"]
    assert counts["passed"] + counts["failed"] == SHAPE.nodes and counts["notEvaluated"] == 0
    # the stored cycle, not a streamed one: every passed node scored, ranked as the API ranks them
    expect(page.get_by_text("scores streamed for the top-ranked nodes only")).to_have_count(0, timeout=PAGE_MS)
    expect(_row(page, 1)).to_have_attribute("data-node", nodes[0]["name"])
    if detail["selectedNode"]:
        assert nodes[0]["name"] == detail["selectedNode"]
        expect(page.locator("p").filter(has_text=re.compile(r"^Placed on ")).first).to_contain_text(
            f"Placed on {detail['selectedNode']}"
        )
    toolbar = page.get_by_role("group", name="Node table filters")
    expect(toolbar).to_contain_text(f"{SHAPE.nodes:,} nodes")
    shot(page, f"cycle-{width}")

    # sorted by a score column (best first), then by the total: best first, then worst first
    plugin = detail["scorePlugins"][0]
    sort_by = page.get_by_role("button", name=re.compile(rf"^Sort by {plugin} \("))
    # from the keyboard: the header scrolls sideways to the focused column, and the rows with it
    sort_by.focus()
    page.keyboard.press("Enter")
    expect(sort_by).to_have_attribute("data-sorted", "true")
    page.wait_for_function(
        """grid => {
          const body = document.querySelector(grid);
          return body.scrollLeft === body.parentElement.querySelector('.vhead-wrap').scrollLeft;
        }""",
        arg=NODE_GRID,
        timeout=5_000,
    )
    assert f"sort=score%3A{plugin}" in page.url or f"sort=score:{plugin}" in page.url
    best = _best_by(nodes, lambda n: (n.get("scores") or {}).get(plugin, {}).get("weighted"), desc=False)
    expect(_row(page, 1)).to_have_attribute("data-node", best["name"])
    total_sort = page.get_by_role("button", name="Sort by total score (best first)")
    total_sort.click()
    expect(_row(page, 1)).to_have_attribute("data-node", _best_by(nodes, lambda n: n.get("total"), desc=False)["name"])
    total_sort.click()
    worst = _best_by(nodes, lambda n: n.get("total"), desc=True)
    expect(_row(page, 1)).to_have_attribute("data-node", worst["name"])
    expect(_row(page, 1).locator("[role=gridcell]").last).to_contain_text(str(worst["total"]))
    assert "desc=1" in page.url

    # filtered by verdict, then by a zone as well: the counts the API's nodes give
    by_name = {n["name"]: n for n in all_pages(api, f"/api/v1/snapshots/{state['snapshot']}/nodes/")}
    verdict, verdict_text = ("failed", "Rejected") if counts["failed"] else ("passed", "Passed")
    page.get_by_label("Filter by verdict").select_option(label=verdict_text)
    matching = [
        n for n in nodes if (n["filter"] and n["filter"]["code"] != "Success") == (verdict == "failed")
    ]
    expect(grid).to_have_attribute("aria-rowcount", str(len(matching)))
    assert len(matching) == counts[verdict]
    expect(toolbar).to_contain_text(f"{len(matching):,} of {SHAPE.nodes:,} nodes")
    zone = by_name[matching[0]["name"]]["labels"][ZONE]
    page.get_by_role("searchbox", name="Search nodes by name or label").fill(zone)
    in_zone = [n for n in matching if by_name[n["name"]]["labels"].get(ZONE) == zone]
    expect(grid).to_have_attribute("aria-rowcount", str(len(in_zone)))
    expect(toolbar).to_contain_text(f"{len(in_zone):,} of {SHAPE.nodes:,} nodes")
    assert f"q={zone}" in page.url and f"verdict={verdict}" in page.url
    first = _row(page, 1)
    name = first.get_attribute("data-node")
    assert name and by_name[name]["labels"][ZONE] == zone
    shot(page, f"cycle-filtered-{width}")

    # the first node's side panel: the node as the cycle found it, as the API says
    first.click()
    drawer = page.get_by_test_id("node-drawer")
    expect(drawer.locator("#node-detail-title")).to_have_text(name)
    facts = api(f"/api/v1/replays/{rid}/cycles/{seq}/nodes/{name}/")
    cpu = drawer.locator("tr[data-resource=cpu] td")
    expect(cpu.nth(2)).to_have_text(_cores(facts["node"]["free"]["cpu"]), timeout=PAGE_MS)
    expect(cpu.nth(4)).to_have_text(_cores(facts["node"]["allocatable"]["cpu"]))
    box = drawer.locator("#node-detail-title").bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width and 0 <= box["y"] <= height
    if verdict == "failed":
        node = next(n for n in nodes if n["name"] == name)
        expect(drawer.get_by_test_id("rejection")).to_contain_text(node["filter"]["plugin"])
    shot(page, f"node-panel-{width}")
    page.keyboard.press("Escape")
    expect(drawer).to_have_count(0)


def _cores(milli: int) -> str:
    v = milli / 1000
    return str(int(v)) if v.is_integer() else repr(v)


# ------------------------------------------------------------------------- Why here? and Cluster over time


def _explain_on_screen(page: Page, server: str, rid: str, cycle: dict[str, Any], heading: str) -> dict[str, Any]:
    """Open the pod's page from its cycle's link; the explanation the page was given (read once, by the page)."""
    page.goto(f"{server}/replays/{rid}/cycles/{cycle['seq']}")
    expect(page.locator("#cycle-title")).to_have_text(f"Cycle {cycle['seq']}: {cycle['pod']}", timeout=PAGE_MS)
    link = "Why here?" if cycle["result"] == "Scheduled" else "What would make it fit?"
    with page.expect_response(lambda r: "/explain/" in r.url and r.request.method == "GET", timeout=PAGE_MS) as got:
        page.get_by_role("link", name=link, exact=True).click()
    resp = got.value
    assert resp.ok, f"{resp.status} {resp.text()[:300]}"
    ex: dict[str, Any] = resp.json()
    ns, _, pod = cycle["pod"].partition("/")
    page.wait_for_url(re.compile(rf"/replays/{rid}/pods/{re.escape(ns)}/{re.escape(pod)}$"))
    expect(page.get_by_role("heading", level=1)).to_have_text(f"{heading} {cycle['pod']}")
    assert ex["pod"] == cycle["pod"] and ex["seq"] == cycle["seq"] and ex["result"] == cycle["result"]
    summary = page.get_by_test_id("summary")
    expect(summary).to_have_text(ex["summary"], timeout=PAGE_MS)
    expect(page.locator("section[aria-labelledby=ex-title]")).to_contain_text(
        f"{ex['nodes']['feasible']} of {ex['nodes']['total']} nodes feasible, {ex['nodes']['rejected']} rejected"
    )
    assert ex["nodes"]["total"] == SHAPE.nodes
    assert ex["nodes"]["feasible"] == cycle["feasible_count"]
    return ex


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}px" for w, _ in SIZES])
def test_why_here_and_cluster_over_time(
    page: Page, server: str, api: Api, shot: Shot, state: dict[str, Any], width: int, height: int
) -> None:
    _needs(state, "replay", "cycles", "zones")
    page.set_viewport_size({"width": width, "height": height})
    rid, cycles = state["replay"], state["cycles"]
    placed = [c for c in cycles if c["result"] == "Scheduled"]
    assert placed, "the dense cluster's pending pods fit"
    cycle = placed[0] if width == 1440 else placed[-1]
    ex = _explain_on_screen(page, server, rid, cycle, "Why here?")
    assert ex["winner"]["node"] == cycle["node"]
    expect(page.get_by_role("heading", name=f"Why {cycle['node']}?")).to_be_visible()
    runner = ex["winner"].get("runnerUp")
    if runner:
        expect(page.get_by_test_id("summary")).to_contain_text(runner["node"])
    shot(page, f"why-here-{width}")

    unschedulable = [c for c in cycles if c["result"] == "Unschedulable"]
    if unschedulable:
        ex = _explain_on_screen(page, server, rid, unschedulable[0], "Why is it not scheduled?")
        assert ex["winner"] is None
        shot(page, f"why-not-{width}")

    # Cluster over time, from the replay's page: every node, grouped by zone
    page.goto(f"{server}/replays/{rid}")
    page.get_by_role("link", name="Cluster over time").click()
    page.wait_for_url(re.compile(rf"/replays/{rid}/timeline"))
    canvas = page.locator("canvas[aria-label^='CPU allocation of']")
    expect(canvas).to_be_visible(timeout=PAGE_MS)
    label = f"CPU allocation of {SHAPE.nodes} nodes over {len(cycles)} cycles"
    expect(canvas).to_have_attribute("aria-label", re.compile(rf"^{label}\."))
    page.get_by_label("Group or sort the nodes").select_option("zone")
    groups = page.get_by_role("list", name="Node groups").get_by_role("listitem")
    zones = state["zones"]
    expect(groups).to_have_count(len(zones), timeout=PAGE_MS)
    for k, (z, count) in enumerate(sorted(zones.items())):
        expect(groups.nth(k)).to_have_text(f"{z} ({count})")
    shot(page, f"timeline-{width}")
