"""What would make it fit, Compare and moving around on a 5000-node replay, at 1440x900 and 1024x768 in headless
Chromium.

One synthetic cluster for the module (`schedviz.tools.bench_browser.write_synthetic_snapshot`'s 5000 nodes of 32
CPU, two running pods each; one node of 36 CPU and one of 16) with nine pending pods: two of 8 CPU, the second
preferring the first one's node; one asking 40 CPU, more than any node has; one selecting a label no node has; one
of 24 CPU pinned to node-00000; four small ones. Two replays with every node evaluated: A, started from the
snapshot's page with the preemption mode chosen and followed as it runs, under the default score weights; B,
through the API, with NodeResourcesFit weighing 10 and InterPodAffinity 1, which moves the second 8 CPU pod off
its partner's node onto node-00000 and so leaves the pinned pod newly unschedulable.

Every figure on screen is checked against the API's; nothing depends on how fast the machine is (waits are
bounded, never measured). Screenshots go to test-artifacts/screenshots/ux5000-*.png.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from schedviz.tools.bench_browser import csrf_headers, sign_in, write_synthetic_snapshot

from .test_cycle_ux import SIZES, in_view
from .test_explorer import NODE_GRID, UUID, expect

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.e2e

Api = Callable[[str], Any]
Shot = Callable[..., Path]
NODES = 5000
BIG, SMALL = "node-04999", "node-04998"  # 36 and 16 CPU; every other node has 32
A_NAME = "ux 5000 default weights"
B_NAME = "ux 5000 NodeResourcesFit x10"
# score weights only: NodeResourcesFit (LeastAllocated) 10 against InterPodAffinity 1, the default being 1 and 2
WEIGHTS = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 10}, {"name": "InterPodAffinity", "weight": 1}]}
            },
        }
    ],
}
CPU_ADD = re.compile(r"add ([0-9.]+) CPU")
# Records, in window.__shown, each change of the cycle the replay page shows ("Cycle N: ...") or of its status.
SHOWN = """
(() => {
  window.__shown = [];
  const note = () => {
    const title = document.getElementById("cycle-title");
    const m = title ? /^Cycle (\\d+):/.exec(title.textContent || "") : null;
    const badge = document.querySelector(".page-head h1 + [data-status]");
    const v = { seq: m ? Number(m[1]) : null, status: badge ? badge.getAttribute("data-status") : null };
    const last = window.__shown[window.__shown.length - 1];
    if (!last || last.seq !== v.seq || last.status !== v.status) window.__shown.push(v);
  };
  new MutationObserver(note).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
})();
"""


def _pending(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    app = "web" if name.startswith("web-") else name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": app}},
        "spec": {
            "containers": [{"name": "c", "image": f"registry.example/{app}:1", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
            **spec,
        },
        "status": {"phase": "Pending"},
    }


def write_snapshot(path: Path) -> Path:
    """The module's cluster (see the module's doc), as a `kind: List` JSON."""
    write_synthetic_snapshot(path, NODES, 4)
    doc = json.loads(path.read_text())
    for item in doc["items"]:
        if item["kind"] == "Node" and item["metadata"]["name"] in (BIG, SMALL):
            item["status"]["allocatable"]["cpu"] = "36" if item["metadata"]["name"] == BIG else "16"
    near_web = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
    doc["items"] += [
        _pending("web-1", "8"),
        _pending(
            "web-2",
            "8",
            affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": near_web}]}},
        ),
        _pending("huge", "40"),
        _pending("pinned", "24", nodeSelector={"kubernetes.io/hostname": "node-00000"}),
        _pending("picky", "500m", nodeSelector={"disktype": "nvme"}),
    ]
    path.write_text(json.dumps(doc, separators=(",", ":")))
    return path


def _post(page: Page, server: str, path: str, body: dict[str, Any]) -> Any:
    r = page.request.post(
        f"{server}{path}", data=json.dumps(body), headers={**csrf_headers(page), "Content-Type": "application/json"}
    )
    assert r.status in (200, 201), f"POST {path}: {r.status} {r.text()[:300]}"
    return r.json()


def _wait_done(page: Page, server: str, rid: str) -> dict[str, Any]:
    """The replay once it has ended (polled, at most about two minutes)."""
    for _ in range(600):
        r: dict[str, Any] = page.request.get(f"{server}/api/v1/replays/{rid}/").json()
        if r["status"] not in ("queued", "running"):
            return r
        page.wait_for_timeout(200)
    raise AssertionError(f"replay {rid} still running")


@pytest.fixture(scope="module")
def cluster(browser: Browser, server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The module's snapshot, uploaded, and replay B started on it: {"snapshot", "b"}; "a" once a test started it."""
    path = write_snapshot(tmp_path_factory.mktemp("ux-5000") / "ux-5000.json")
    context = browser.new_context()
    try:
        pg = context.new_page()
        sign_in(pg, server)
        snap = _post(pg, server, "/api/v1/snapshots/", {"content": path.read_text(), "name": "ux 5000 nodes, 9 pending"})
        assert snap["status"] == "ready", snap
        b = _post(pg, server, "/api/v1/replays/", {"snapshot": snap["id"], "all_nodes": True, "config": WEIGHTS, "name": B_NAME})
        yield {"snapshot": snap["id"], "b": b["id"]}
    finally:
        context.close()


def replay_a(cluster: dict[str, Any], page: Page, server: str) -> str:
    """Replay A: the one the first test started from the snapshot's page, or (that test not run) the same through the API."""
    if "a" not in cluster:
        body = {"snapshot": cluster["snapshot"], "all_nodes": True, "preemption": "dry-run", "name": A_NAME}
        cluster["a"] = _post(page, server, "/api/v1/replays/", body)["id"]
    assert _wait_done(page, server, cluster["a"])["status"] == "succeeded"
    return str(cluster["a"])


def replay_b(cluster: dict[str, Any], page: Page, server: str) -> str:
    assert _wait_done(page, server, cluster["b"])["status"] == "succeeded"
    return str(cluster["b"])


def cycle_of(api: Api, rid: str, pod: str) -> dict[str, Any]:
    return next(c for c in api(f"/api/v1/replays/{rid}/cycles/?page_size=100")["results"] if c["pod"] == pod)


def first_row(api: Api, rid: str, seq: int) -> dict[str, Any]:
    """The node the cycle's table lists first (the API's own order: the winner, then by total)."""
    row: dict[str, Any] = api(f"/api/v1/replays/{rid}/cycles/{seq}/?page_size=1")["nodes"]["results"][0]
    return row


# ------------------------------------------------------------------------------------------- 5. moving around


def test_start_with_a_preemption_mode_follow_it_and_keep_the_place_when_it_finishes(
    page: Page, server: str, api: Api, shot: Shot, cluster: dict[str, Any]
) -> None:
    snap = api(f"/api/v1/snapshots/{cluster['snapshot']}/")
    assert snap["node_count"] == NODES and snap["pending_count"] == 9
    start = page.get_by_role("button", name=f"Replay {snap['pending_count']} pending pods")
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{server}/snapshots/{cluster['snapshot']}")
        page.get_by_label("Preemption mode").select_option("dry-run")
        expect(page.get_by_label("Evaluate every node")).to_be_checked()
        expect(page.get_by_label("Replay name")).to_have_attribute(
            "placeholder", re.compile(r", every node, preemption dry-run$")
        )
        start.scroll_into_view_if_needed()
        in_view(page, f"button:has-text('Replay {snap['pending_count']} pending pods')")
        shot(page, f"ux5000-start-replay-{width}", full_page=False)

    # started at 1024 px and followed live over the websocket; the page records each cycle it shows, and the
    # replay's status beside it, as they change (the explorer is one page: this survives its navigation)
    live: list[str] = []
    page.on("websocket", lambda ws: live.append(ws.url) if "mode=live" in ws.url else None)
    page.evaluate(SHOWN)
    page.get_by_label("Replay name").fill(A_NAME)
    start.click()
    page.wait_for_url(re.compile(rf"/replays/{UUID}$"))
    rid = page.url.rsplit("/", 1)[-1]
    cluster["a"] = rid
    expect(page.locator(".page-head h1 + [data-status]")).to_have_attribute("data-status", "succeeded", timeout=120_000)
    replay = api(f"/api/v1/replays/{rid}/")
    assert replay["name"] == A_NAME and replay["configuration"] is None and replay["config"] is None
    assert replay["options"]["preemption"] == "dry-run" and replay["options"]["allNodes"] is True
    expect(page.locator("[data-option=preemption]")).to_have_text("preemption: dry-run (recorded, nothing evicted)")
    total = api(f"/api/v1/replays/{rid}/cycles/?page_size=1")["count"]
    assert total == replay["cycles_total"] == 9

    title = page.locator("#cycle-title")
    expect(title).to_have_text(re.compile(r"^Cycle \d+: "))
    shown = int(re.match(r"Cycle (\d+):", title.inner_text()).group(1))  # type: ignore[union-attr]
    seen: list[dict[str, Any]] = page.evaluate("window.__shown")
    cycles_seen = [v["seq"] for v in seen if v["seq"] is not None]
    assert cycles_seen and cycles_seen[-1] == shown, seen
    if live:
        # followed while it ran: the view only moved forward, cycle after cycle, and the end of the replay left it
        # on the cycle it was showing, not back on the first; the address says which
        assert all(f"/ws/replays/{rid}/" in url for url in live)
        assert any(v["status"] in ("queued", "running") for v in seen), seen
        assert cycles_seen == sorted(cycles_seen) and shown == max(cycles_seen), seen
        expect(page).to_have_url(re.compile(rf"/replays/{rid}/cycles/{shown}$"))
    else:  # the replay ended before the page read it: nothing was followed, it opens on the first cycle
        assert shown == 1, seen
    expect(page.locator(NODE_GRID)).to_have_attribute("aria-rowcount", str(NODES), timeout=60_000)
    top = first_row(api, rid, shown)
    expect(page.locator(f"{NODE_GRID} [role=row][aria-rowindex='1']")).to_have_attribute("data-node", top["name"])
    shot(page, "ux5000-followed-to-the-end-1024", full_page=False)
    page.set_viewport_size({"width": 1440, "height": 900})
    in_view(page, ".vhead [role=columnheader]:has-text('Total')")
    shot(page, "ux5000-followed-to-the-end-1440", full_page=False)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}px" for w, _ in SIZES])
def test_the_arrow_keys_step_cycles_and_a_cycle_past_the_end_says_so(
    page: Page, server: str, api: Api, shot: Shot, cluster: dict[str, Any], width: int, height: int
) -> None:
    page.set_viewport_size({"width": width, "height": height})
    rid = replay_a(cluster, page, server)
    cycles = api(f"/api/v1/replays/{rid}/cycles/?page_size=100")["results"]
    total = len(cycles)
    grid = page.locator(NODE_GRID)
    first = page.locator(f"{NODE_GRID} [role=row][aria-rowindex='1']")
    title = page.locator("#cycle-title")

    def on_cycle(seq: int) -> None:
        """The page shows cycle `seq`: its pod, its 5000 nodes, the API's first one first."""
        page.wait_for_url(re.compile(rf"/replays/{rid}/cycles/{seq}(\?|$)"))
        expect(title).to_contain_text(f"Cycle {seq}: {cycles[seq - 1]['pod']}")
        expect(grid).to_have_attribute("aria-rowcount", str(NODES), timeout=60_000)
        expect(first).to_have_attribute("data-node", first_row(api, rid, seq)["name"])

    page.goto(f"{server}/replays/{rid}/cycles/2")
    on_cycle(2)
    page.locator("h1").click()  # the keys step from anywhere but a field or the table
    page.keyboard.press("ArrowRight")
    on_cycle(3)
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    on_cycle(1)
    page.keyboard.press("ArrowLeft")  # the first cycle: nowhere further back
    expect(title).to_contain_text("Cycle 1:")
    assert re.search(r"/cycles/1(\?|$)", page.url), page.url
    shot(page, f"ux5000-arrow-keys-{width}", full_page=False)

    # a cycle past the end says so, with the ways back
    page.goto(f"{server}/replays/{rid}/cycles/{total + 50}")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text(f"There is no cycle {total + 50}: this replay has {total} cycles.")
    in_view(page, "[role=alert]")
    shot(page, f"ux5000-past-the-end-{width}", full_page=False)
    alert.get_by_role("link", name="Show the last one").click()
    on_cycle(total)


# ---------------------------------------------------------------------------------- 2. what would make it fit


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}px" for w, _ in SIZES])
def test_what_would_make_it_fit_and_why_not_the_runner_up_at_5000_nodes(
    page: Page, server: str, api: Api, shot: Shot, cluster: dict[str, Any], width: int, height: int
) -> None:
    page.set_viewport_size({"width": width, "height": height})
    rid = replay_a(cluster, page, server)

    # more CPU than any node has: one line first, asking for less first, node changes as numbers in one unit
    ex = api(f"/api/v1/replays/{rid}/explain/?pod=default/huge")
    assert ex["result"] == "Unschedulable" and ex["nodes"] == {"total": NODES, "feasible": 0, "rejected": NODES}
    assert ex["summary"].startswith("no node has 40 CPU free; the most is ")
    page.goto(f"{server}/replays/{rid}/pods/default/huge")
    expect(page.get_by_role("heading", level=1)).to_have_text("Why is it not scheduled? default/huge")
    summary = page.get_by_test_id("summary")
    expect(summary).to_have_text(ex["summary"])
    box = summary.bounding_box()
    assert box is not None and box["height"] < 30, box  # one line, even at 1024 px
    rows = page.get_by_test_id("suggestion")
    expect(rows).to_have_count(len(ex["suggestions"]))
    for k, s in enumerate(ex["suggestions"]):
        expect(rows.nth(k).locator("td").first).to_have_text(str(s["feasibleNodes"]))
        expect(rows.nth(k)).to_contain_text(s["change"]["description"])
    expect(rows.first).to_contain_text("request at most")
    expect(rows.first.locator(".badge")).to_have_text("pod")
    texts = rows.all_inner_texts()
    added = [float(m.group(1)) for t in texts if (m := CPU_ADD.search(t))]
    # one node of 36 CPU, 4998 of 32, one of 16: three sizes of change, smallest first, compared as numbers
    assert len(added) == 3 and added == sorted(added) and added[0] < 10 < added[-1], texts
    assert not re.search(r"\d+m CPU", page.locator("main").inner_text())
    # every node named once, not 5000 times: the rejected group folds its names away
    group = page.get_by_test_id("rejected-group")
    expect(group).to_have_count(1)
    expect(group.locator("td").first).to_have_text(str(NODES))
    expect(group.locator("details summary")).to_have_text(f"{NODES} nodes")
    expect(group.locator("details")).not_to_have_attribute("open", "")
    sugg = page.locator("#sugg-title").bounding_box()
    fixes = page.locator("#fixes-title").bounding_box()
    assert sugg and fixes and sugg["y"] < fixes["y"]
    shot(page, f"ux5000-make-it-fit-{width}", full_page=False)
    page.locator("section[aria-labelledby=sugg-title]").evaluate("e => e.scrollIntoView({ block: 'start' })")
    shot(page, f"ux5000-make-it-fit-suggestions-{width}", full_page=False)

    # a node selector no node matches: the selector named, on every node
    ex = api(f"/api/v1/replays/{rid}/explain/?pod=default/picky")
    assert ex["result"] == "Unschedulable"
    page.goto(f"{server}/replays/{rid}/pods/default/picky")
    expect(page.get_by_test_id("summary")).to_have_text(ex["summary"])
    expect(page.get_by_test_id("summary")).to_contain_text(f"{NODES} of {NODES} nodes rejected by NodeAffinity")
    rows = page.get_by_test_id("suggestion")
    expect(rows).to_have_count(len(ex["suggestions"]))
    expect(rows.first).to_contain_text("nodeSelector disktype=nvme")
    expect(page.get_by_label("The pod's scheduling spec").locator("[data-field=nodeSelector]")).to_contain_text("disktype=nvme")
    shot(page, f"ux5000-selector-matches-nothing-{width}", full_page=False)

    # a placed pod: why not the runner-up, by how much and which plugin
    ex = api(f"/api/v1/replays/{rid}/explain/?pod=default/web-2")
    winner, runner = ex["winner"]["node"], ex["winner"]["runnerUp"]
    assert runner and not runner["tied"] and runner["margin"] > 0
    page.goto(f"{server}/replays/{rid}/pods/default/web-2")
    expect(page.get_by_role("heading", level=1)).to_have_text("Why here? default/web-2")
    expect(page.get_by_test_id("summary")).to_have_text(ex["summary"])
    expect(page.get_by_test_id("summary")).to_contain_text(f"ahead of the runner-up {runner['node']}")
    expect(page.get_by_test_id("summary")).to_contain_text("to tie")
    block = page.get_by_test_id("comparison").filter(has=page.get_by_role("heading", name=f"Runner-up: {winner} against {runner['node']}"))
    wtotal = runner["total"] + runner["margin"]
    expect(block).to_contain_text(
        f"{winner} scored {wtotal} and {runner['node']} {runner['total']}: {winner} is ahead by {runner['margin']} points."
    )
    lead = max(runner["plugins"].items(), key=lambda kv: kv[1]["difference"])
    expect(block).to_contain_text(f"{lead[0]} gave {winner} {lead[1]['difference']} more")
    shot(page, f"ux5000-why-here-{width}", full_page=False)

    # and against any node of the 5000, by name: one past the first thousand too
    picker = page.get_by_label("Compare with a node")
    other = SMALL if winner != SMALL else BIG
    picker.fill(other)
    expect(page.get_by_text(f"no node of this cycle is called {other}")).to_have_count(0)
    page.get_by_role("button", name="Add", exact=True).click()
    page.wait_for_url(re.compile(rf"node={other}"))
    compared = api(f"/api/v1/replays/{rid}/explain/?pod=default/web-2&node={other}")["compared"][0]
    block = page.get_by_test_id("comparison").filter(has=page.get_by_role("heading", name=f"Compared: {winner} against {other}"))
    expect(block).to_contain_text(f"{winner} scored {compared['total'] + compared['margin']} and {other} {compared['total']}")
    picker.fill("node-99999")
    expect(page.get_by_text("no node of this cycle is called node-99999")).to_be_visible()
    block.scroll_into_view_if_needed()
    shot(page, f"ux5000-why-not-{other}-{width}", full_page=False)


# -------------------------------------------------------------------------------------------------- 3. compare


def _end_state(api: Api, rid: str, nodes: dict[str, dict[str, Any]]) -> tuple[dict[str, float], dict[str, float], Counter[str]]:
    """Per node, CPU and memory requested at the end of the replay; pods the replay placed per zone."""
    cpu = {n: float(v["requested"].get("cpu", 0)) for n, v in nodes.items()}
    mem = {n: float(v["requested"].get("memory", 0)) for n, v in nodes.items()}
    zones: Counter[str] = Counter()
    for c in api(f"/api/v1/replays/{rid}/timeline/")["cycles"]:
        assert not c["evictions"]  # nothing evicted here: no pod has a lower priority than another
        if c["result"] == "Scheduled" and c["node"]:
            cpu[c["node"]] += c["requests"].get("cpu", 0)
            mem[c["node"]] += c["requests"].get("memory", 0)
            zones[nodes[c["node"]]["zone"] or "(no zone)"] += 1
    return cpu, mem, zones


def _deciles(used: dict[str, float], nodes: dict[str, dict[str, Any]], resource: str) -> list[int]:
    out = [0] * 10
    for n, v in nodes.items():
        alloc = v["allocatable"].get(resource, 0)
        if alloc > 0:
            out[min(9, max(0, int(used[n] / alloc * 10)))] += 1
    return out


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}px" for w, _ in SIZES])
def test_compare_two_5000_node_replays(
    page: Page, server: str, api: Api, shot: Shot, cluster: dict[str, Any], width: int, height: int
) -> None:
    page.set_viewport_size({"width": width, "height": height})
    a, b = replay_a(cluster, page, server), replay_b(cluster, page, server)
    ra, rb = api(f"/api/v1/replays/{a}/"), api(f"/api/v1/replays/{b}/")

    # the pickers tell the replays of this snapshot apart: name, configuration, options
    page.goto(f"{server}/compare?a={a}")
    picked = page.locator("label:has-text('A: the reference') select option:checked")
    expect(picked).to_contain_text(f"{A_NAME} · snapshot's or default configuration · every node, preemption dry-run")
    option = page.locator(f"label:has-text('B: the candidate') select option[value='{b}']")
    expect(option).to_contain_text(f"{B_NAME} · inline configuration · every node")
    assert "dry-run" not in option.inner_text()
    page.locator("label:has-text('B: the candidate') select").select_option(b)
    shot(page, f"ux5000-compare-pickers-{width}", full_page=False)
    page.get_by_role("button", name="Compare", exact=True).click()
    page.wait_for_url(re.compile(rf"/compare/{a}/{b}$"))

    comparison = api(f"/api/v1/replays/{a}/compare/{b}/")
    counts = comparison["counts"]
    assert counts["moved"] >= 1 and counts["newlyUnschedulable"] >= 1, counts
    nodes: dict[str, dict[str, Any]] = {}
    for p in range(1, NODES // 1000 + 1):
        for n in api(f"/api/v1/snapshots/{ra['snapshot']}/nodes/?page_size=1000&page={p}")["results"]:
            nodes[n["name"]] = n
    assert len(nodes) == NODES
    cpu_a, mem_a, zones_a = _end_state(api, a, nodes)
    cpu_b, mem_b, zones_b = _end_state(api, b, nodes)

    summary = page.get_by_role("region", name="Summary")
    expect(summary).to_contain_text(f"{counts['moved']} moved")
    expect(summary).to_contain_text(f"{counts['newlyUnschedulable']} newly unschedulable")
    expect(summary).to_contain_text(f"A = {ra['name']}, B = {rb['name']}.")

    effect = page.locator("section[aria-labelledby=effect-title]")
    # every node already runs pods: all 5000 are used in both
    used = sum(1 for v in nodes.values() if v["podCount"] > 0)
    expect(effect.locator("tr[data-row=nodes-used] td").nth(1)).to_have_text(str(used), timeout=60_000)
    expect(effect.locator("tr[data-row=nodes-used] td").nth(2)).to_have_text(str(used))
    expect(effect.locator("tr[data-row=newly-unschedulable] td").nth(2)).to_have_text(str(counts["newlyUnschedulable"]))
    for resource, title, (ua, ub) in (("cpu", "CPU", (cpu_a, cpu_b)), ("memory", "Memory", (mem_a, mem_b))):
        da, db = _deciles(ua, nodes, resource), _deciles(ub, nodes, resource)
        assert sum(da) == sum(db) == NODES
        label = ", ".join(f"{k * 10}% A {da[k]} B {db[k]}" for k in range(10))
        chart = effect.get_by_role("img", name=f"Nodes by {title} utilization: {label}")
        expect(chart).to_be_visible()
        # a decile holding a node or two of the 5000 still shows a bar under its count, for A and for B
        for k in range(10):
            bars = chart.locator(f"g[data-bucket='{k * 10}%'] rect")
            for side, count in ((0, da[k]), (1, db[k])):
                drawn = float(bars.nth(side).get_attribute("height") or 0)
                assert (drawn >= 3) if count else (drawn == 0), (resource, k, side, count, drawn)
    # the stranded CPU: free CPU on the nodes neither empty nor full, in cores
    stranded_a = sum(max(0.0, v["allocatable"]["cpu"] - cpu_a[n]) for n, v in nodes.items() if 0 < cpu_a[n] < v["allocatable"]["cpu"])
    free_a = sum(max(0.0, v["allocatable"]["cpu"] - cpu_a[n]) for n, v in nodes.items())
    row = effect.locator("tr[data-row=stranded-cpu] td")

    def cores(milli: float) -> str:  # thousands grouped from 1000 cores
        v = milli / 1000
        return (f"{v:,.2f}" if abs(v) >= 1000 else f"{v:.2f}").rstrip("0").rstrip(".")

    expect(row.nth(1)).to_have_text(f"{cores(stranded_a)} of {cores(free_a)} free")
    label = ", ".join(f"{z} A {zones_a.get(z, 0)} B {zones_b.get(z, 0)}" for z in sorted(set(zones_a) | set(zones_b)))
    expect(effect.get_by_role("img", name=f"Pods placed per zone: {label}")).to_be_visible()
    effect.scroll_into_view_if_needed()
    shot(page, f"ux5000-compare-effect-{width}", full_page=False)

    # the newly unschedulable pod, with kube-scheduler's message in B
    nu = comparison["newlyUnschedulable"][0]
    nu_row = page.locator("section[aria-labelledby=nu-title] tr", has=page.get_by_role("link", name=nu["pod"]))
    expect(nu_row).to_contain_text(nu["message"])

    # why the moved pod moved: both configurations' per-plugin scores for both nodes, as the cycles stored them
    moved = comparison["moved"][0]
    page.get_by_role("button", name=f"Why did {moved['pod']} move?").click()
    why = page.get_by_test_id("why-moved")
    expect(why).to_contain_text(f"In A, {moved['from']} led {moved['to']} by")

    def stored(rid: str, node: str) -> dict[str, Any]:
        seq = cycle_of(api, rid, moved["pod"])["seq"]
        detail = api(f"/api/v1/replays/{rid}/cycles/{seq}/?search={node}&page_size=200")
        row: dict[str, Any] = next(n for n in detail["nodes"]["results"] if n["name"] == node)
        return row

    cells = {
        2: stored(a, moved["from"]),
        3: stored(a, moved["to"]),
        5: stored(b, moved["from"]),
        6: stored(b, moved["to"]),
    }
    for plugin in ("NodeResourcesFit", "InterPodAffinity"):
        tds = why.locator(f"tr[data-plugin={plugin}] td")
        for k, node_row in cells.items():
            expect(tds.nth(k)).to_have_text(str(node_row["scores"][plugin]["weighted"]))
    expect(why.locator("tr[data-plugin=NodeResourcesFit] td").nth(1)).to_have_text("1")
    expect(why.locator("tr[data-plugin=NodeResourcesFit] td").nth(4)).to_have_text("10")
    totals = why.locator("tr[data-plugin=total] th")
    for k, node_row in cells.items():
        expect(totals.nth(k)).to_have_text(str(node_row["total"]))
    why.scroll_into_view_if_needed()
    shot(page, f"ux5000-compare-why-moved-{width}", full_page=False)
