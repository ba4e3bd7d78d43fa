"""The cycle view answers an operator's first questions, at 1440 and 1024 px, in headless Chromium.

On the sample replay (`serve --demo`) and on a 5000-node synthetic cluster: the node table keeps Node, Verdict
and Total in view, names every plugin, explains its badges and finds nodes by label; a node's detail opens in a
side panel in view, with the numbers behind a rejection and, on demand, every filter's verdict marked as beyond
what kube-scheduler ran; the pod's spec is shown; the Filter stage's drill-down counts each plugin's rejections;
the arrow keys step cycles and a cycle past the end says so. Every figure is checked against the API.
Screenshots go to test-artifacts/screenshots/ux-*.png.
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

from .test_explorer import NODE_GRID, expect, sample_replay

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.e2e

Api = Callable[[str], Any]
Shot = Callable[..., Path]
SIZES = [(1440, 900), (1024, 768)]
ZONE = "topology.kubernetes.io/zone"


def in_view(page: Page, selector: str) -> None:
    """The element is on screen, horizontally too (not cut by the page's right edge)."""
    loc = page.locator(selector).first
    expect(loc).to_be_visible()
    box = loc.bounding_box()
    assert box is not None
    width = page.viewport_size["width"] if page.viewport_size else 0
    assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, (selector, box, width)


def cycle_of(api: Api, rid: str, pod: str) -> dict[str, Any]:
    return next(c for c in api(f"/api/v1/replays/{rid}/cycles/?page_size=1000")["results"] if c["pod"] == pod)


def cores(milli: int) -> str:
    """CPU as the side panel writes it: cores, as JavaScript prints a number."""
    v = milli / 1000
    return str(int(v)) if v.is_integer() else repr(v)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}px" for w, _ in SIZES])
def test_the_node_table_and_the_side_panel_on_the_sample(
    page: Page, server: str, api: Api, shot: Shot, width: int, height: int
) -> None:
    page.set_viewport_size({"width": width, "height": height})
    rid = sample_replay(api)["id"]
    snap = sample_replay(api)["snapshot"]
    c3 = cycle_of(api, rid, "default/ssd-only")
    detail = api(f"/api/v1/replays/{rid}/cycles/{c3['seq']}/?page_size=1000")
    nodes = detail["nodes"]["results"]
    page.goto(f"{server}/replays/{rid}/cycles/{c3['seq']}")
    expect(page.locator("#cycle-title")).to_contain_text("default/ssd-only")

    # the pod as the scheduler reads it
    pod = api(f"/api/v1/replays/{rid}/cycles/{c3['seq']}/pod/")
    spec = page.get_by_label("The pod's scheduling spec")
    expect(spec.locator("[data-field=requests]")).to_contain_text(f"{cores(pod['requests']['cpu'])} CPU")
    for k, v in pod["nodeSelector"].items():
        expect(spec.locator("[data-field=nodeSelector]")).to_contain_text(f"{k}={v}")

    # the Filter stage's drill-down counts what each filter plugin rejected (not the plugin calls' "Success")
    rejected_by = Counter(n["filter"]["plugin"] for n in nodes if n["filter"] and n["filter"]["code"] != "Success")
    assert rejected_by["NodeAffinity"] >= 2
    page.click("button[data-point='Filter']")
    details = page.locator(".stage-details")
    for plugin in ("NodeAffinity", "TaintToleration", "NodeName"):
        n = rejected_by.get(plugin, 0)
        cell = details.locator(f"tr[data-plugin='{plugin}'] [data-rejected]")
        expect(cell).to_have_attribute("data-rejected", str(n))
        expect(cell).to_have_text(re.compile(rf"rejected {n} nodes?" if n else "rejected none"))
    page.click("button[data-point='Filter']")

    # pinned columns: Node, Verdict and the Total stay on screen; every score plugin is named in full
    grid = page.locator(NODE_GRID)
    expect(grid).to_have_attribute("aria-rowcount", str(len(nodes)))
    page.locator(f"{NODE_GRID} [role=row][aria-rowindex='1']").scroll_into_view_if_needed()
    in_view(page, ".vhead [role=columnheader]:has-text('Total')")
    in_view(page, ".vhead [role=columnheader]:has-text('Verdict')")
    winner = page.locator(f"{NODE_GRID} [role=row][data-node='{detail['selectedNode']}']")
    in_view(page, f"{NODE_GRID} [role=row][data-node='{detail['selectedNode']}'] [role=gridcell]:last-child")
    expect(winner.locator("[role=gridcell]").last).to_contain_text(str(nodes[0]["total"]))
    legend = page.get_by_label("Score plugins and weights")
    for plugin in detail["scorePlugins"]:
        expect(legend).to_contain_text(f"{plugin} \u00d7{detail['scoreWeights'][plugin]}")
    # what the badges mean
    verdicts = page.get_by_role("list", name="Verdicts")
    expect(verdicts).to_contain_text("UnschedulableAndUnresolvable: rejected; preempting pods cannot help")
    shot(page, f"ux-cycle-{width}", full_page=False)

    # search finds labels: a zone value, and key=value
    labels = {n["name"]: n["labels"] for n in api(f"/api/v1/snapshots/{snap}/nodes/?page_size=1000")["results"]}
    zone = sorted({v[ZONE] for v in labels.values() if ZONE in v})[1]
    search = page.get_by_role("searchbox", name="Search nodes by name or label")
    search.fill(zone)
    expect(grid).to_have_attribute("aria-rowcount", str(sum(1 for v in labels.values() if zone in v.values())))
    search.fill(f"disktype={labels[detail['selectedNode']]['disktype']}")
    want = sum(1 for v in labels.values() if v.get("disktype") == labels[detail["selectedNode"]]["disktype"])
    expect(grid).to_have_attribute("aria-rowcount", str(want))
    search.fill("")

    # a node rejected by NodeAffinity: the side panel, in view, says which requirement fails and why
    rejected = next(n for n in nodes if n["filter"] and n["filter"]["plugin"] == "NodeAffinity")
    page.locator(f"{NODE_GRID} [role=row][data-node='{rejected['name']}']").click()
    drawer = page.get_by_test_id("node-drawer")
    expect(drawer.locator("#node-detail-title")).to_have_text(rejected["name"])
    in_view(page, "[data-testid=node-drawer] #node-detail-title")
    facts = api(f"/api/v1/replays/{rid}/cycles/{c3['seq']}/nodes/{rejected['name']}/")
    sel = drawer.get_by_label("Node selector and affinity against the node's labels")
    key, value = next(iter(pod["nodeSelector"].items()))
    expect(sel.locator("li[data-ok=false]").first).to_contain_text(f"{key}={value}: the node has {key}={facts['node']['labels'][key]}")
    cpu = drawer.locator("tr[data-resource=cpu] td")
    expect(cpu.nth(2)).to_have_text(cores(facts["node"]["free"]["cpu"]))
    expect(cpu.nth(4)).to_have_text(cores(facts["node"]["allocatable"]["cpu"]))
    # every filter, on demand, marked as beyond what kube-scheduler ran
    expect(drawer.get_by_role("region", name="Every filter on this node")).to_have_count(0)
    drawer.get_by_role("button", name=re.compile("if every filter ran")).click()
    region = drawer.get_by_role("region", name="Every filter on this node")
    expect(region).to_contain_text("Beyond what kube-scheduler ran")
    for f in facts["allFilters"]["filters"]:
        row = region.locator(f"tr[data-plugin='{f['plugin']}']")
        expect(row).to_have_attribute("data-ran", "true" if f["ranByScheduler"] else "false")
        if f["code"]:
            expect(row).to_contain_text(f["code"])
    shot(page, f"ux-node-panel-{width}", full_page=False)
    page.keyboard.press("Escape")
    expect(drawer).to_have_count(0)


def test_numbers_for_a_resource_rejection_and_moving_around(page: Page, server: str, api: Api, shot: Shot) -> None:
    page.set_viewport_size({"width": 1024, "height": 768})
    rid = sample_replay(api)["id"]
    total = len(api(f"/api/v1/replays/{rid}/cycles/?page_size=1000")["results"])
    huge = cycle_of(api, rid, "default/huge")
    nodes = api(f"/api/v1/replays/{rid}/cycles/{huge['seq']}/?page_size=1000")["nodes"]["results"]
    short = next(n for n in nodes if n["filter"] and n["filter"]["reasons"] == ["Insufficient cpu"])
    facts = api(f"/api/v1/replays/{rid}/cycles/{huge['seq']}/nodes/{short['name']}/")
    page.goto(f"{server}/replays/{rid}/cycles/{huge['seq']}?node={short['name']}")
    drawer = page.get_by_test_id("node-drawer")
    want = f"needs {cores(facts['pod']['requests']['cpu'])} CPU, {cores(max(0, facts['node']['free']['cpu']))} CPU free"
    expect(drawer.locator("caption")).to_contain_text(want)
    expect(drawer.locator("tr[data-resource=cpu]")).to_have_attribute("data-short", "true")
    shot(page, "ux-resource-rejection-1024", full_page=False)

    # ← / → step through the cycles (Escape first: the side panel closes)
    page.keyboard.press("Escape")
    page.locator("h1").click()
    page.keyboard.press("ArrowRight")
    page.wait_for_url(re.compile(rf"/cycles/{huge['seq'] + 1}(\?|$)"))
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.wait_for_url(re.compile(rf"/cycles/{huge['seq'] - 1}(\?|$)"))
    expect(page.locator("#cycle-title")).to_contain_text(f"Cycle {huge['seq'] - 1}:")
    # a cycle past the end says so, with the way back
    page.goto(f"{server}/replays/{rid}/cycles/{total + 50}")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text(f"There is no cycle {total + 50}: this replay has {total} cycles.")
    alert.get_by_role("link", name="Show the last one").click()
    expect(page.locator("#cycle-title")).to_contain_text(f"Cycle {total}:")
    shot(page, "ux-moving-around-1024", full_page=False)


def _post(page: Page, path: str, body: dict[str, Any]) -> Any:
    """POST JSON with the page's session (its CSRF cookie), from the page."""
    got = page.evaluate(
        """async ([path, body]) => {
          const token = (document.cookie.split('; ').find((c) => c.startsWith('csrftoken=')) || '').slice(10);
          const r = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRFToken': token}, body});
          return {status: r.status, body: await r.text()};
        }""",
        [path, json.dumps(body)],
    )
    assert got["status"] in (200, 201), got["body"][:300]
    return json.loads(got["body"])


def test_a_5000_node_cycle_at_both_sizes(page: Page, server: str, api: Api, shot: Shot, tmp_path: Path) -> None:
    nodes = 5000
    path = write_synthetic_snapshot(tmp_path / "ux-5000.json", nodes, 3)
    snap = _post(page, "/api/v1/snapshots/", {"content": path.read_text(), "name": "ux 5000 nodes"})
    replay = _post(page, "/api/v1/replays/", {"snapshot": snap["id"], "all_nodes": True, "name": "ux 5000 every node"})
    rid = replay["id"]
    for _ in range(600):
        if api(f"/api/v1/replays/{rid}/")["status"] in ("succeeded", "failed"):
            break
        page.wait_for_timeout(200)
    assert api(f"/api/v1/replays/{rid}/")["status"] == "succeeded"
    labels = {n["name"]: n["labels"] for n in api(f"/api/v1/snapshots/{snap['id']}/nodes/?page_size=1000&page=1")["results"]}
    zone = next(iter(labels.values()))[ZONE]
    zones = Counter(
        n["zone"]
        for p in range(1, nodes // 1000 + 1)
        for n in api(f"/api/v1/snapshots/{snap['id']}/nodes/?page_size=1000&page={p}")["results"]
    )
    in_zone = zones[zone]
    first = api(f"/api/v1/replays/{rid}/cycles/1/?page_size=5")
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{server}/replays/{rid}/cycles/1")
        grid = page.locator(NODE_GRID)
        expect(grid).to_have_attribute("aria-rowcount", str(nodes), timeout=60_000)
        in_view(page, ".vhead [role=columnheader]:has-text('Total')")
        top = first["nodes"]["results"][0]
        row = page.locator(f"{NODE_GRID} [role=row][aria-rowindex='1']")
        expect(row).to_have_attribute("data-node", top["name"])
        expect(row.locator("[role=gridcell]").last).to_contain_text(str(top["total"]))
        page.get_by_role("searchbox", name="Search nodes by name or label").fill(zone)
        expect(grid).to_have_attribute("aria-rowcount", str(in_zone))
        row.click()
        drawer = page.get_by_test_id("node-drawer")
        expect(drawer.locator("tr[data-resource=cpu]")).to_be_visible(timeout=60_000)
        in_view(page, "[data-testid=node-drawer] tr[data-resource=cpu]")
        shot(page, f"ux-5000-nodes-{width}", full_page=False)
        # the cluster over time: 5000 rows as labelled zone bands
        page.goto(f"{server}/replays/{rid}/timeline?group=zone")
        groups = page.get_by_role("list", name="Node groups").get_by_role("listitem")
        expect(groups).to_have_count(len(zones), timeout=60_000)
        for k, (z, count) in enumerate(sorted(zones.items())):
            expect(groups.nth(k)).to_have_text(f"{z} ({count})")
        shot(page, f"ux-5000-timeline-{width}", full_page=False)


def test_start_a_replay_with_a_name_and_a_preemption_mode_then_pick_it_to_compare(
    page: Page, server: str, api: Api, shot: Shot
) -> None:
    page.set_viewport_size({"width": 1024, "height": 768})
    snap = sample_replay(api)["snapshot"]
    page.goto(f"{server}/snapshots/{snap}")
    page.get_by_label("Preemption mode").select_option("dry-run")
    page.get_by_label("Evaluate every node").uncheck()
    expect(page.get_by_label("Replay name")).to_have_attribute("placeholder", re.compile(r", sampled, preemption dry-run$"))
    page.get_by_label("Replay name").fill("dry-run what-if")
    shot(page, "ux-start-replay-1024", full_page=False)
    page.get_by_role("button", name=re.compile(r"^Replay \d+ pending pods$")).click()
    page.wait_for_url(re.compile(r"/replays/[0-9a-f-]{36}$"))
    rid = page.url.rsplit("/", 1)[-1]
    replay = api(f"/api/v1/replays/{rid}/")
    assert replay["name"] == "dry-run what-if"
    assert replay["options"]["preemption"] == "dry-run" and replay["options"]["allNodes"] is False
    expect(page.locator("[data-option=preemption]")).to_have_text("preemption: dry-run (recorded, nothing evicted)")
    expect(page.locator(".page-head h1 + [data-status]")).to_have_attribute("data-status", "succeeded", timeout=60_000)

    # the compare pickers tell replays of one snapshot apart: name, configuration, options
    page.goto(f"{server}/compare?a={sample_replay(api)['id']}")
    b = page.locator("label:has-text('B: the candidate') select")
    option = b.locator(f"option[value='{rid}']")
    expect(option).to_contain_text("dry-run what-if · snapshot's or default configuration · sampled, preemption dry-run")
    a_text = page.locator("label:has-text('A: the reference') select option:checked").inner_text()
    assert "every node" in a_text and "preemption dry-run" not in a_text


def test_the_sign_in_page_says_what_schedviz_is_and_offers_the_demo(browser: Any, server: str, shot: Shot) -> None:
    for width, height in SIZES:
        context = browser.new_context(viewport={"width": width, "height": height})
        try:
            pg = context.new_page()
            pg.goto(f"{server}/accounts/login/?next=/replays")
            expect(pg.locator("p.about")).to_contain_text("why a pod landed where it did, why another is still Pending")
            demo = pg.get_by_role("form", name="Try the demo")
            expect(demo).to_contain_text("sign in as demo / demo")
            shot(pg, f"ux-sign-in-{width}", full_page=False)
            with pg.expect_navigation():
                demo.get_by_role("button", name="Try the demo").click()
            assert pg.url.endswith("/replays"), pg.url
            expect(pg.get_by_role("heading", level=1)).to_have_text("Replays")
        finally:
            context.close()


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}px" for w, _ in SIZES])
def test_what_would_make_it_fit_starts_with_one_line_and_keeps_the_pods_intent_first(
    page: Page, server: str, api: Api, shot: Shot, width: int, height: int
) -> None:
    page.set_viewport_size({"width": width, "height": height})
    rid = sample_replay(api)["id"]
    ex = api(f"/api/v1/replays/{rid}/explain/?pod=default/huge")
    assert ex["summary"].startswith("no node has 40 CPU free; the most is ")
    page.goto(f"{server}/replays/{rid}/pods/default/huge")
    expect(page.get_by_role("heading", level=1)).to_have_text("Why is it not scheduled? default/huge")
    expect(page.get_by_test_id("summary")).to_have_text(ex["summary"])
    # the pod's own spec, as on the cycle
    expect(page.get_by_label("The pod's scheduling spec").locator("[data-field=requests]")).to_contain_text("40 CPU")
    rows = page.get_by_test_id("suggestion")
    expect(rows).to_have_count(len(ex["suggestions"]))
    expect(rows.first).to_contain_text("request at most")
    # node changes in one unit, smallest first, as numbers
    texts = [rows.nth(k).inner_text() for k in range(rows.count())]
    added = [float(m.group(1)) for t in texts if (m := re.search(r"add ([0-9.]+) CPU", t))]
    assert added == sorted(added) and len(added) >= 3, texts
    assert not re.search(r"\d+m CPU", page.locator("main").inner_text())
    # the suggestions come before the node-by-node diagnoses
    sugg = page.locator("#sugg-title").bounding_box()
    fixes = page.locator("#fixes-title").bounding_box()
    assert sugg and fixes and sugg["y"] < fixes["y"]
    shot(page, f"ux-make-it-fit-{width}", full_page=False)

    # a placed pod: why not the runner-up, and what it would take to move it
    c3 = cycle_of(api, rid, "default/ssd-only")
    placed = api(f"/api/v1/replays/{rid}/explain/?pod={c3['pod']}")
    page.goto(f"{server}/replays/{rid}/pods/default/ssd-only")
    expect(page.get_by_role("heading", level=1)).to_have_text("Why here? default/ssd-only")
    runner = placed["winner"]["runnerUp"]
    expect(page.get_by_test_id("summary")).to_contain_text(f"ahead of the runner-up {runner['node']}")
    expect(page.get_by_test_id("summary")).to_contain_text("to tie")
    shot(page, f"ux-why-here-{width}", full_page=False)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}px" for w, _ in SIZES])
def test_cluster_over_time_groups_sorts_and_zooms(page: Page, server: str, api: Api, shot: Shot, width: int, height: int) -> None:
    page.set_viewport_size({"width": width, "height": height})
    replay = sample_replay(api)
    rid = replay["id"]
    nodes = api(f"/api/v1/snapshots/{replay['snapshot']}/nodes/?page_size=1000")["results"]
    zones = Counter(n["zone"] or "(no zone)" for n in nodes)
    page.goto(f"{server}/replays/{rid}/timeline")
    expect(page.locator("canvas[aria-label^='CPU allocation of']")).to_be_visible()
    page.get_by_label("Group or sort the nodes").select_option("zone")
    assert "group=zone" in page.url
    groups = page.get_by_role("list", name="Node groups").get_by_role("listitem")
    expect(groups).to_have_count(len(zones))
    for k, (zone, count) in enumerate(sorted(zones.items())):
        expect(groups.nth(k)).to_have_text(f"{zone} ({count})")
    # hovering a row names its group and node
    canvas = page.locator("canvas[aria-label^='CPU allocation of']")
    box = canvas.bounding_box()
    assert box
    page.mouse.move(box["x"] + box["width"] - 5, box["y"] + 3)
    expect(page.locator(".heatmap-tip")).to_contain_text(f"{sorted(zones)[0]} · ")
    # the latency view says what it measures
    expect(page.get_by_test_id("latency-note")).to_contain_text("SchedViz's own engine")
    expect(page.get_by_test_id("latency-note")).to_contain_text("first cycle")
    assert api(f"/api/v1/replays/{rid}/latency/")["warmupCycles"] == 1
    shot(page, f"ux-timeline-by-zone-{width}", full_page=False)
    # sorted by utilization, zoomed: the map grows and scrolls
    page.get_by_label("Group or sort the nodes").select_option("utilization")
    before = canvas.bounding_box()
    page.get_by_label("Vertical zoom").select_option("4")
    assert "zoom=4" in page.url
    after = canvas.bounding_box()
    assert before and after and after["height"] >= before["height"]


MOST_ALLOCATED = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                        }
                    },
                }
            ],
        }
    ],
}


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}px" for w, _ in SIZES])
def test_compare_says_why_pods_moved_and_what_it_does_to_the_cluster(
    page: Page, server: str, api: Api, shot: Shot, width: int, height: int
) -> None:
    page.set_viewport_size({"width": width, "height": height})
    a = sample_replay(api)
    b = _post(page, "/api/v1/replays/", {"snapshot": a["snapshot"], "all_nodes": True, "config": MOST_ALLOCATED, "name": f"packed {width}"})
    for _ in range(300):
        if api(f"/api/v1/replays/{b['id']}/")["status"] == "succeeded":
            break
        page.wait_for_timeout(200)
    comparison = api(f"/api/v1/replays/{a['id']}/compare/{b['id']}/")
    assert comparison["moved"], "packing moves some of the sample's pods"
    nodes = {n["name"]: n for n in api(f"/api/v1/snapshots/{a['snapshot']}/nodes/?page_size=1000")["results"]}

    def placed_per_zone(rid: str) -> dict[str, int]:
        net: Counter[str] = Counter()
        for c in api(f"/api/v1/replays/{rid}/timeline/")["cycles"]:
            if c["result"] == "Scheduled" and c["node"]:
                net[c["node"]] += 1
            for e in c["evictions"]:
                net[e["node"]] -= 1
        zones: Counter[str] = Counter()
        for node, k in net.items():
            if k > 0:
                zones[nodes[node]["zone"] or "(no zone)"] += k
        return dict(zones)

    za, zb = placed_per_zone(a["id"]), placed_per_zone(b["id"])
    page.goto(f"{server}/compare/{a['id']}/{b['id']}")
    effect = page.locator("section[aria-labelledby=effect-title]")
    expect(effect.locator("tr[data-row=newly-unschedulable] td").nth(2)).to_have_text(
        str(comparison["counts"]["newlyUnschedulable"])
    )
    label = ", ".join(f"{z} A {za.get(z, 0)} B {zb.get(z, 0)}" for z in sorted(set(za) | set(zb)))
    expect(effect.get_by_role("img", name=f"Pods placed per zone: {label}")).to_be_visible()
    expect(effect.get_by_role("img", name=re.compile(r"^Nodes by CPU utilization: "))).to_be_visible()
    shot(page, f"ux-compare-effect-{width}", full_page=False)

    # why the first moved pod moved: both configurations' scores for both nodes, the totals as stored
    moved = comparison["moved"][0]
    page.get_by_role("button", name=f"Why did {moved['pod']} move?").click()
    why = page.get_by_test_id("why-moved")
    totals = why.locator("tr[data-plugin=total] th")

    def stored_total(rid: str, node: str) -> str:
        seq = next(c["seq"] for c in api(f"/api/v1/replays/{rid}/cycles/?pod={moved['pod']}")["results"] if c["result"] == "Scheduled")
        rows = api(f"/api/v1/replays/{rid}/cycles/{seq}/?page_size=1000")["nodes"]["results"]
        total = next(n for n in rows if n["name"] == node)["total"]
        return "\u2013" if total is None else str(total)

    expect(totals.nth(2)).to_have_text(stored_total(a["id"], moved["from"]))
    expect(totals.nth(3)).to_have_text(stored_total(a["id"], moved["to"]))
    expect(totals.nth(5)).to_have_text(stored_total(b["id"], moved["from"]))
    expect(totals.nth(6)).to_have_text(stored_total(b["id"], moved["to"]))
    expect(why).to_contain_text(f"In A, {moved['from']} led {moved['to']} by")
    why.scroll_into_view_if_needed()
    shot(page, f"ux-compare-why-moved-{width}", full_page=False)


def test_the_add_cluster_forms_checkboxes_sit_on_their_first_line(page: Page, server: str, shot: Shot) -> None:
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(f"{server}/live")
    page.get_by_role("button", name="Add cluster").click()
    choices = page.locator("form[aria-label='Add a cluster'] label.choice")
    expect(choices.first).to_be_visible()
    assert choices.count() >= 4
    for k in range(choices.count()):
        label = choices.nth(k)
        box = label.locator("> input").bounding_box()
        text = label.locator("> span").first.bounding_box()
        assert box and text
        # the box is centred on the first line of its text (20 px lines), not above or below it
        first_line_middle = text["y"] + 10
        assert abs((box["y"] + box["height"] / 2) - first_line_middle) <= 3, (k, box, text)
        assert box["x"] + box["width"] <= text["x"]
    choices.last.scroll_into_view_if_needed()
    shot(page, "ux-add-cluster-1024", full_page=False)
