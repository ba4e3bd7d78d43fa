"""The explorer end to end, in headless Chromium against `schedviz serve --demo` (see conftest.py).

Every figure the page shows is checked against the API (with the page's own session) or against the websocket
frames the page received; every wait is bounded (Playwright's timeouts, or an explicit one).
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .conftest import SAMPLE, frame_messages

if TYPE_CHECKING:
    from playwright.sync_api import Page, WebSocket

pytestmark = pytest.mark.e2e

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
NODE_GRID = "[role=grid][aria-label='Nodes of this cycle']"
# extension points the stage timeline shows inside another one (frontend/src/lib/stages.ts)
GROUPED = {"PreBindPreFlight": "PreBind", "Unreserve": "Reserve", "PostBind": "Bind"}
TIMELINE_POINTS = [
    "PreFilter",
    "Filter",
    "PostFilter",
    "PreScore",
    "Score",
    "NormalizeScore",
    "Reserve",
    "Permit",
    "PreBind",
    "Bind",
]

Api = Callable[[str], Any]
Shot = Callable[..., Path]


def expect(obj: Any) -> Any:
    from playwright.sync_api import expect as pw_expect

    return pw_expect(obj)


def num(v: float | None) -> str:
    """A number as JavaScript prints it (the page shows a missing one as a dash)."""
    if v is None:
        return "\u2013"  # en dash
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def sample_snapshot(api: Api) -> dict[str, Any]:
    snaps = api("/api/v1/snapshots/?page_size=200")["results"]
    return next(s for s in snaps if s["name"].startswith("Sample cluster"))


def sample_replay(api: Api) -> dict[str, Any]:
    """The replay `serve --demo` made of the sample cluster (default profile, every node)."""
    replays = api("/api/v1/replays/?page_size=200")["results"]
    return next(
        r for r in replays if r["name"] == "Sample cluster, default profile" and r["status"] == "succeeded"
    )


# ----------------------------------------------------------------------------------------------- 1. upload


def test_upload_snapshot_then_a_broken_manifest(
    page: Page, server: str, api: Api, shot: Shot, tmp_path: Path
) -> None:
    page.goto(f"{server}/snapshots")
    expect(page.get_by_role("heading", name="Snapshots", exact=True)).to_be_visible()
    # the drop zone's own file input (what a click on the drop zone opens)
    page.set_input_files("[data-testid=file-input]", str(SAMPLE))
    page.wait_for_url(re.compile(rf"/snapshots/{UUID}$"))
    snap_id = page.url.rsplit("/", 1)[-1]
    snap = api(f"/api/v1/snapshots/{snap_id}/")
    nodes = api(f"/api/v1/snapshots/{snap_id}/nodes/?page_size=1000")["results"]
    assert snap["node_count"] >= 21 and len(nodes) == snap["node_count"]

    expect(page.get_by_role("heading", level=1)).to_have_text(snap["name"] or snap_id)
    expect(page.locator(".page-head p.muted")).to_contain_text(f"{snap['node_count']} nodes")
    # zones: one row per zone with its node count, as the API's nodes say
    zones = Counter(n["zone"] or "(no zone)" for n in nodes)
    assert len(zones) >= 3
    rows = page.locator("section[aria-labelledby=zones-title] table tbody tr")
    expect(rows).to_have_count(len(zones))
    shown = {}
    for k in range(rows.count()):
        cells = rows.nth(k).locator("td")
        shown[cells.nth(0).inner_text().strip()] = int(cells.nth(1).inner_text())
    assert shown == dict(zones)
    expect(page.get_by_role("grid", name="Nodes", exact=True)).to_have_attribute(
        "aria-rowcount", str(snap["node_count"])
    )
    expect(page.get_by_label("Pods by state")).to_contain_text(f"pending {snap['pending_count']}")
    expect(
        page.get_by_role("button", name=re.compile(rf"^Replay {snap['pending_count']} pending pods?$"))
    ).to_be_enabled()
    shot(page, "snapshot")

    # a broken manifest, dropped on the drop zone: refused, the problem next to its document, object and field
    before = api("/api/v1/snapshots/?page_size=200")["count"]
    page.goto(f"{server}/snapshots")
    broken = (
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: broken-node\nstatus:\n  allocatable:\n    cpu: '4'\n"
        "---\n"
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad-requests\n  namespace: default\nspec:\n  containers:\n"
        "  - name: app\n    image: nginx\n    resources:\n      requests:\n        cpu: two cores\n"
    )
    transfer = page.evaluate_handle(
        "([name, text]) => { const dt = new DataTransfer(); dt.items.add(new File([text], name, { type: 'application/x-yaml' })); return dt; }",
        ["broken.yaml", broken],
    )
    page.dispatch_event("[data-testid=dropzone]", "drop", {"dataTransfer": transfer})
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("The upload was refused: 1 problem in 1 document. Nothing was stored.")
    doc = alert.locator("ul[aria-label='Upload problems'] > li")
    expect(doc).to_have_count(1)
    expect(doc.locator("strong")).to_have_text("broken.yaml (document 2)")
    obj = doc.locator(":scope > ul > li")
    expect(obj.locator(":scope > div.small")).to_have_text("Pod default/bad-requests")
    problem = obj.locator("ul > li")
    expect(problem.locator(".where code")).to_have_text("spec.containers[0].resources.requests.cpu")
    expect(problem).to_contain_text("invalid quantity 'two cores'")
    assert page.url == f"{server}/snapshots"
    shot(page, "upload-problems", full_page=False)

    # a file that is not YAML at all, through the file input: the problem is the document's
    bad = tmp_path / "not-yaml.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: [unclosed\n")
    page.set_input_files("[data-testid=file-input]", str(bad))
    expect(alert.locator("ul[aria-label='Upload problems'] > li strong")).to_have_text("not-yaml.yaml")
    expect(alert).to_contain_text("invalid YAML: line 5")
    assert api("/api/v1/snapshots/?page_size=200")["count"] == before


# --------------------------------------------------------------------------------------- 2. websocket


def _frames(ws: WebSocket) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    ws.on("framereceived", lambda payload: out.extend(frame_messages(payload)))
    return out


def _wait_frames(page: Page, frames: list[dict[str, Any]], seq: int, timeout_ms: float = 10_000) -> None:
    """Playwright hands frames over asynchronously: wait until cycle `seq`'s last message is among them."""
    waited = 0.0
    while not any(f["type"] == "cycle.end" and f["pos"][0] == seq for f in frames):
        assert waited < timeout_ms, f"no cycle.end for cycle {seq} after {timeout_ms} ms"
        page.wait_for_timeout(50)
        waited += 50


def _cycle(frames: list[dict[str, Any]], seq: int) -> dict[str, Any]:
    msgs = [m for m in frames if m.get("pos", [None])[0] == seq]
    by_type: dict[str, Any] = {}
    for m in msgs:
        by_type.setdefault(m["type"], []).append(m)
    return by_type


def _assert_cycle_on_screen(page: Page, frames: list[dict[str, Any]], names: list[str], seq: int) -> None:
    """The cycle view shows what the websocket sent for cycle `seq`: pod, result, stages, verdicts, winner."""
    c = _cycle(frames, seq)
    start, end = c["cycle.start"][0], c["cycle.end"][0]
    expect(page.locator("#cycle-title")).to_have_text(f"Cycle {seq}: {start['pod']}")
    expect(page.locator(f".row:has(#cycle-title) [data-result='{end['result']}']")).to_be_visible()
    # the stage timeline: every extension point with as many plugin calls as the stream reported
    calls = Counter(GROUPED.get(s["point"], s["point"]) for s in c.get("stage", []))
    timeline = page.get_by_role("list", name="Scheduling cycle stages")
    for point in TIMELINE_POINTS:
        step = timeline.locator(f"button[data-point='{point}']")
        if calls[point]:
            expect(step).to_have_attribute("aria-label", re.compile(rf", {calls[point]} plugin calls$"))
        else:
            expect(step).to_be_disabled()
    # node verdicts: every node, the Filter step's counts as the filter messages say
    codes = [code for f in c.get("filter", []) for code in f["codes"]]
    assert len(codes) == len(names)
    passed, rejected = sum(1 for x in codes if x == 0), sum(1 for x in codes if x > 0)
    expect(timeline.locator("button[data-point='Filter'] .sub")).to_have_text(
        f"{passed} passed · {rejected} rejected"
    )
    grid = page.locator(NODE_GRID)
    expect(grid).to_have_attribute("aria-rowcount", str(len(names)))
    if "selection" in c:
        sel = c["selection"][0]
        winner = page.locator(f"{NODE_GRID} [role=row][data-node='{names[sel['node']]}']")
        expect(winner).to_have_class(re.compile(r"\bwinner\b"))
        expect(winner.locator("[role=gridcell]").last).to_contain_text(num(sel["total"]))
        expect(winner.locator("[role=gridcell]").nth(2)).to_contain_text("passed")


def test_replay_streams_stages_and_verdicts_over_the_websocket(
    page: Page, server: str, api: Api, shot: Shot
) -> None:
    sockets: list[WebSocket] = []
    received: dict[str, list[dict[str, Any]]] = {}

    def on_ws(ws: WebSocket) -> None:
        sockets.append(ws)
        received[ws.url] = _frames(ws)

    page.on("websocket", on_ws)
    snap = sample_snapshot(api)
    page.goto(f"{server}/snapshots/{snap['id']}")
    page.get_by_role("button", name=re.compile(r"^Replay \d+ pending pods$")).click()
    page.wait_for_url(re.compile(rf"/replays/{UUID}$"))
    replay_id = page.url.rsplit("/", 1)[-1]
    # a running replay is followed live over a websocket; this one is small and may be done before the page loads
    expect(page.locator(".page-head h1 + [data-status]")).to_have_attribute(
        "data-status", "succeeded", timeout=60_000
    )
    replay = api(f"/api/v1/replays/{replay_id}/")
    # every pending pod gets a cycle (a pod retried after an earlier one left gets another)
    total = api(f"/api/v1/replays/{replay_id}/cycles/?page_size=1")["count"]
    assert replay["options"]["allNodes"] is True and total >= snap["pending_count"] == replay["cycles_total"]
    for ws in sockets:  # a live stream, if the page caught the replay running, said hello and followed it
        assert f"/ws/replays/{replay_id}/" in ws.url and "mode=live" in ws.url
        assert all(f["type"] == "hello" for f in received[ws.url][:1])

    # a replay followed live to its end stays on the cycle the page was showing (not back to cycle 1); one that
    # ended before the page followed it opens on cycle 1
    title = page.locator("#cycle-title")
    expect(title).to_have_text(re.compile(r"^Cycle \d+: "))
    if not title.inner_text().startswith("Cycle 1:"):
        assert sockets, "only a replay the page followed live keeps the place it showed"
        expect(page).to_have_url(re.compile(rf"/replays/{replay_id}/cycles/\d+$"))
        page.get_by_role("button", name="First cycle").click()

    # playback: Step streams the next cycle, stage by stage
    expect(title).to_contain_text("Cycle 1:")
    with page.expect_websocket(predicate=lambda ws: "mode=playback" in ws.url) as ws_info:
        page.get_by_role("button", name="Step to the next cycle (streamed)").click()
    ws = ws_info.value
    assert re.search(rf"/ws/replays/{replay_id}/\?after=1&mode=playback", ws.url), ws.url
    frames = received[ws.url]
    page.wait_for_url(f"**/replays/{replay_id}/cycles/2")
    _wait_frames(page, frames, 2)
    expect(page.locator(".conn")).to_have_text("playback connected")
    assert frames[0]["type"] == "hello" and frames[0]["replay"]["cyclesTotal"] == replay["cycles_total"]
    names = [n for f in frames if f["type"] == "nodes" for n in f["names"]]
    assert len(names) == snap["node_count"]
    assert {f["pos"][0] for f in frames if "pos" in f} == {2}
    assert {"cycle.start", "stage", "filter", "cycle.end"} <= {f["type"] for f in frames}
    _assert_cycle_on_screen(page, frames, names, 2)
    shot(page, "replay-stepped")

    # open another cycle from the queue: the view stays there (it used to jump back to the streamed cycle), and
    # Step goes on from it (the stream is moved there with a seek)
    sent: list[dict[str, Any]] = []
    ws.on("framesent", lambda payload: sent.append(json.loads(payload)))
    pick = 10
    queue = page.get_by_role("option")
    queue.filter(has=page.locator("span.num", has_text=re.compile(rf"^{pick}$"))).click()
    page.wait_for_url(f"**/replays/{replay_id}/cycles/{pick}")
    expect(page.locator("#cycle-title")).to_contain_text(f"Cycle {pick}:")
    page.get_by_role("button", name="Step to the next cycle (streamed)").click()
    page.wait_for_url(f"**/replays/{replay_id}/cycles/{pick + 1}")
    _wait_frames(page, frames, pick + 1)
    assert {"action": "seek", "cycle": pick + 1} in sent
    _assert_cycle_on_screen(page, frames, names, pick + 1)
    assert page.url.endswith(f"/cycles/{pick + 1}")

    # play the rest at 25 cycles a second: every cycle arrives, once, in order, and the view ends on the last one
    page.get_by_label("Playback speed, cycles per second").select_option("25")
    with ws.expect_event("framereceived", predicate=lambda p: frame_messages(p)[-1]["type"] == "end", timeout=30_000):
        page.get_by_role("button", name="Play the replay cycle by cycle").click()
        expect(page.get_by_role("button", name="Pause playback")).to_be_visible()
    ended = [f["pos"][0] for f in frames if f["type"] == "cycle.end"]
    assert ended == [2, *range(pick + 1, total + 1)]
    page.wait_for_url(f"**/replays/{replay_id}/cycles/{total}")
    expect(page.get_by_role("button", name="Play the replay cycle by cycle")).to_be_visible()
    expect(page.locator("#cycle-title")).to_contain_text(f"Cycle {total}:")
    _assert_cycle_on_screen(page, frames, names, total)
    # the REST detail of the cycle agrees with what was streamed
    detail = api(f"/api/v1/replays/{replay_id}/cycles/{total}/?page_size=1000")
    assert detail["pod"] == _cycle(frames, total)["cycle.start"][0]["pod"]
    assert detail["result"] == _cycle(frames, total)["cycle.end"][0]["result"]
    shot(page, "replay-played")


# -------------------------------------------------------------------------------------------- 3. why here?


def _comparison_lines(winner: str, c: dict[str, Any]) -> list[str]:
    """What the page must say of a comparison, built from the API's numbers."""
    lines = []
    w_total = c["total"] + c["margin"]
    if c.get("tied"):
        lines.append(f"{winner} and {c['node']} have the same total score ({num(w_total)})")
    else:
        pts = "point" if c["margin"] == 1 else "points"
        lines.append(
            f"{winner} scored {num(w_total)} and {c['node']} {num(c['total'])}: {winner} is ahead by {num(c['margin'])} {pts}."
        )
    for p, d in c["plugins"].items():
        if d["difference"] > 0:
            lines.append(
                f"{p} gave {winner} {num(d['difference'])} more ({num(d['winner'])} against {num(d['other'])}, "
                f"weight {num(d['weight'])}; raw {num(d['winnerRaw'])} against {num(d['otherRaw'])})."
            )
        elif d["difference"] < 0:
            lines.append(
                f"{p} favoured {c['node']} by {num(-d['difference'])} ({num(d['other'])} against {num(d['winner'])}, "
                f"weight {num(d['weight'])}; raw {num(d['otherRaw'])} against {num(d['winnerRaw'])})."
            )
    return lines


def test_why_here_shows_the_api_numbers(page: Page, server: str, api: Api, shot: Shot) -> None:
    replay = sample_replay(api)
    rid = replay["id"]
    cycles = api(f"/api/v1/replays/{rid}/cycles/?page_size=1000")["results"]
    # a pod placed on a clear winner, with others feasible to compare with
    cyc = next(
        c for c in cycles if c["result"] == "Scheduled" and c["tied_count"] == 1 and c["feasible_count"] >= 3
    )
    pod, winner = cyc["pod"], cyc["node"]
    page.goto(f"{server}/replays/{rid}/cycles/{cyc['seq']}")
    expect(page.locator("#cycle-title")).to_have_text(f"Cycle {cyc['seq']}: {pod}")
    page.locator(".panel:has(#cycle-title)").get_by_role("link", name="Why here?").click()
    ns, name = pod.split("/")
    page.wait_for_url(f"**/replays/{rid}/pods/{ns}/{name}")

    ex = api(f"/api/v1/replays/{rid}/explain/?pod={pod}")
    assert ex["winner"]["node"] == winner and ex["seq"] == cyc["seq"]
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Why here? {pod}")
    expect(page.get_by_role("heading", name=f"Why {winner}?")).to_be_visible()
    expect(page.locator("section[aria-labelledby=why-here] > p").first).to_contain_text(
        f"{winner} had the best total score ({num(ex['winner']['total'])}) of the {ex['nodes']['feasible']} feasible nodes"
    )
    assert ex["winner"]["total"] == cyc["winner_total"]
    expect(page.locator("#ex-title ~ .small")).to_contain_text(
        f"{ex['nodes']['feasible']} of {ex['nodes']['total']} nodes feasible, {ex['nodes']['rejected']} rejected"
    )
    runner = ex["winner"]["runnerUp"]
    assert runner and runner["plugins"], "the sample's winner has a runner-up with per-plugin scores"
    block = page.locator("[data-testid=comparison][aria-label='Runner-up']")
    expect(block.locator("h3")).to_have_text(f"Runner-up: {winner} against {runner['node']}")
    words = block.locator("ul.explain-words > li")
    for line in _comparison_lines(winner, runner):
        expect(words.filter(has_text=line)).to_have_count(1)
    # the per-plugin differences add up to the margin
    assert sum(d["difference"] for d in runner["plugins"].values()) == runner["margin"]
    # rejected nodes, grouped as the API groups them
    groups = page.locator("[data-testid=rejected-group]")
    expect(groups).to_have_count(len(ex["rejected"]))
    for k, g in enumerate(ex["rejected"]):
        expect(groups.nth(k).locator("td").first).to_have_text(str(g["count"]))
    shot(page, "explain")

    # compare with a node of our choosing: another feasible node
    other = next(
        n
        for n in api(f"/api/v1/replays/{rid}/cycles/{cyc['seq']}/?page_size=1000")["nodes"]["results"]
        if n["name"] not in (winner, runner["node"]) and n["total"] is not None
    )
    page.get_by_label("Compare with a node").fill(other["name"])
    page.get_by_role("button", name="Add", exact=True).click()
    page.wait_for_url(re.compile(rf"\?node={re.escape(other['name'])}$"))
    ex2 = api(f"/api/v1/replays/{rid}/explain/?pod={pod}&node={other['name']}")
    c = ex2["compared"][0]
    assert c["node"] == other["name"] and c["total"] == other["total"]
    block = page.locator("[data-testid=comparison][aria-label='Compared']")
    expect(block.locator("h3")).to_have_text(f"Compared: {winner} against {other['name']}")
    for line in _comparison_lines(winner, c):
        expect(block.locator("ul.explain-words > li").filter(has_text=line)).to_have_count(1)


def test_deep_links_to_a_preemption_and_to_what_would_make_a_pod_fit(
    page: Page, server: str, api: Api, shot: Shot
) -> None:
    replay = sample_replay(api)
    rid = replay["id"]
    timeline = api(f"/api/v1/replays/{rid}/timeline/")["cycles"]

    # a cycle whose preemption evicted pods, opened from its URL: the message and the victims
    pre = next(c for c in timeline if c["evictions"])
    detail = api(f"/api/v1/replays/{rid}/cycles/{pre['seq']}/?page_size=1")
    page.goto(f"{server}/replays/{rid}/cycles/{pre['seq']}")
    expect(page.locator("#cycle-title")).to_have_text(f"Cycle {pre['seq']}: {pre['pod']}")
    panel = page.locator(".panel:has(#cycle-title)")
    expect(panel.locator(".message").first).to_have_text(detail["message"])
    victims = panel.get_by_role("list", name="Preemption victims").locator("li")
    expect(victims).to_have_text([e["pod"] for e in pre["evictions"]])
    expect(panel).to_contain_text(f"Preemption nominated {pre['nominatedNode']}")

    # a pod that never fit, opened from its URL: what would make it fit, as the explain API says
    final: dict[str, str] = {}
    for c in timeline:
        final[c["pod"]] = c["result"]
    pod = next(p for p, r in final.items() if r == "Unschedulable")
    ex = api(f"/api/v1/replays/{rid}/explain/?pod={pod}")
    assert ex["result"] == "Unschedulable" and ex["fixes"], ex
    ns, name = pod.split("/")
    page.goto(f"{server}/replays/{rid}/pods/{ns}/{name}")
    # the single changes first (under that title), then the node-by-node diagnoses
    expect(page.get_by_role("heading", name="What would make it fit: single changes")).to_be_visible()
    expect(page.get_by_role("heading", name="Node by node")).to_be_visible()
    rows = page.locator("[data-testid=suggestion]")
    expect(rows).to_have_count(len(ex["suggestions"]))
    for k, sug in enumerate(ex["suggestions"][:3]):
        expect(rows.nth(k).locator("td").first).to_have_text(str(sug["feasibleNodes"]))
        expect(rows.nth(k).locator("td").nth(1)).to_contain_text(sug["change"]["description"])
    shot(page, "what-would-make-it-fit")

    # a comparison with a chosen node, opened from its URL (?node=)
    cyc = next(c for c in timeline if c["result"] == "Scheduled" and c["kind"] == "Scheduling")
    nodes = api(f"/api/v1/replays/{rid}/cycles/{cyc['seq']}/?page_size=1000")["nodes"]["results"]
    other = next(n for n in nodes if n["name"] != cyc["node"])
    ns, name = cyc["pod"].split("/")
    page.goto(f"{server}/replays/{rid}/pods/{ns}/{name}?node={other['name']}")
    block = page.locator("[data-testid=comparison][aria-label='Compared']")
    expect(block.locator("h3")).to_have_text(f"Compared: {cyc['node']} against {other['name']}")


# -------------------------------------------------------------------------------- 4. configuration, what-if


def test_edit_validate_save_and_compare_a_configuration(
    page: Page, server: str, api: Api, shot: Shot
) -> None:
    page.goto(f"{server}/configurations")
    editor = page.get_by_label("KubeSchedulerConfiguration (YAML or JSON)")
    text = editor.input_value()
    assert "type: MostAllocated" in text  # the editor's starting point: bin packing
    # a typo in the scoring strategy: the problem names the field and the line it is on
    editor.fill(text.replace("type: MostAllocated", "type: MostAlocated"))
    problems = page.get_by_role("list", name="Configuration problems")
    expect(problems).to_contain_text("profiles[0].pluginConfig[0].args.scoringStrategy.type")
    expect(problems).to_contain_text('Unsupported value: "MostAlocated"')
    go = problems.get_by_role("button", name=re.compile(r"^Go to line \d+$"))
    line = int(go.inner_text().split()[-1])
    assert editor.input_value().split("\n")[line - 1].strip() == "type: MostAlocated"
    expect(page.locator(".editor .gutter .bad")).to_have_text(str(line))
    go.click()
    assert (
        page.evaluate(
            "() => { const t = document.activeElement; return t.value.slice(t.selectionStart, t.selectionEnd); }"
        ).strip()
        == "type: MostAlocated"
    )
    shot(page, "config-problems", full_page=False)

    # fixed: NodeResourcesFit scores with MostAllocated; valid, saved
    editor.fill(text)
    expect(page.locator(".notice[role=status]")).to_contain_text("Valid.")
    expect(page.locator(".notice[role=status] summary")).to_contain_text(
        "NodeResourcesBalancedAllocation\u00d72"
    )
    name = f"e2e bin packing {uuid.uuid4().hex[:6]}"
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(rf"/configurations/{UUID}$"))
    config_id = page.url.rsplit("/", 1)[-1]
    saved = api(f"/api/v1/configurations/{config_id}/")
    assert saved["name"] == name and "type: MostAllocated" in saved["text"]
    expect(
        page.get_by_role("navigation", name="Saved configurations").get_by_role("link", name=name)
    ).to_be_visible()

    # what if the sample cluster were scheduled with it? against the demo replay (default profile)
    snap = sample_snapshot(api)
    baseline = sample_replay(api)
    # (a select inside its label is named by the label and its chosen option)
    page.get_by_role("combobox", name=re.compile(r"^Snapshot\b")).select_option(snap["id"])
    choose = page.get_by_role("combobox", name=re.compile(r"^Compare with \(baseline\)"))
    expect(choose.locator(f"option[value='{baseline['id']}']")).to_have_count(1)
    choose.select_option(baseline["id"])
    page.get_by_role("button", name="Run what-if replay").click()
    page.wait_for_url(re.compile(rf"/compare/{baseline['id']}/{UUID}$"))
    candidate = page.url.rsplit("/", 1)[-1]
    expect(page.get_by_role("heading", name="Placement changes")).to_be_visible(timeout=60_000)
    b = api(f"/api/v1/replays/{candidate}/")
    assert b["configuration"] == config_id and b["status"] == "succeeded" and b["options"]["allNodes"] is True

    cmp = api(f"/api/v1/replays/{baseline['id']}/compare/{candidate}/")
    moved = cmp["moved"]
    assert moved, "bin packing moves pods of the sample cluster"
    expect(page.get_by_label("Summary")).to_contain_text(f"{cmp['counts']['moved']} moved")
    rows = page.locator("section[aria-labelledby=moved-title] tbody tr")
    expect(rows).to_have_count(len(moved))
    for k, m in enumerate(moved):
        cells = rows.nth(k).locator("td")
        expect(cells.nth(0)).to_have_text(m["pod"])
        expect(cells.nth(1)).to_have_text(f"{m['from']} ({num(m['fromTotal'])})")
        expect(cells.nth(2)).to_have_text(f"→ {m['to']} ({num(m['toTotal'])})")
    shot(page, "compare")


# ------------------------------------------------------------------------------ 5. cluster over time, links


def test_cluster_over_time_and_a_deep_link_to_a_cycle(page: Page, server: str, api: Api, shot: Shot) -> None:
    replay = sample_replay(api)
    rid = replay["id"]
    cycles = api(f"/api/v1/replays/{rid}/cycles/?page_size=1000")["results"]
    total, node_count = max(replay["cycles_total"], len(cycles)), replay["summary"]["nodes"]

    page.goto(f"{server}/replays/{rid}/timeline?cycle=12")
    heat = page.locator(f"canvas[aria-label^='CPU allocation of {node_count} nodes over {total} cycles']")
    expect(heat).to_be_visible()
    # drawn: many pixels, several colours (allocation differs between nodes and over time)
    drawn = heat.evaluate(
        """c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; const colours = new Set();
                   let painted = 0; for (let i = 0; i < d.length; i += 4) { if (d[i + 3]) { painted++; colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]); } }
                   return { painted, colours: colours.size, pixels: d.length / 4 }; }"""
    )
    assert drawn["painted"] > 0.9 * drawn["pixels"] and drawn["colours"] >= 3, drawn
    strip = page.locator("canvas[aria-label^='Scheduling queue:']")
    timeline = api(f"/api/v1/replays/{rid}/timeline/")["cycles"]
    records = Counter(c["result"] for c in timeline if c["kind"] == "Scheduling")
    for result, n in records.items():  # one mark per cycle; the bindings that end Permit waits apart
        expect(strip).to_have_attribute("aria-label", re.compile(rf"\b{n} {result}\b"))
    preempting = [c for c in timeline if c["evictions"]]
    evicted = sum(len(c["evictions"]) for c in preempting)
    expect(strip).to_have_attribute("data-preemptions", str(len(preempting)))
    expect(strip).to_have_attribute("data-retries", str(sum(1 for c in timeline if c["attempt"] > 1)))
    expect(strip).to_have_attribute(
        "aria-label", re.compile(rf"{len(preempting)} preemptions? evicting {evicted} pods?, ")
    )
    # the per-plugin latency: the plugins that took longest, as the API counts them
    latency = sorted(api(f"/api/v1/replays/{rid}/latency/")["plugins"], key=lambda p: -p["totalMicros"])
    chart = page.get_by_role("img", name=re.compile("^Per-plugin latency"))
    for p in latency[:3]:
        expect(chart).to_contain_text(f"{p['plugin']} ({p['point']})")
    c12 = next(c for c in cycles if c["seq"] == 12)
    panel = page.locator("section[aria-labelledby=cur-title]")
    expect(panel.locator("h2")).to_have_text("Cycle 12")
    expect(panel.get_by_role("link", name=c12["pod"])).to_be_visible()
    # the resource switch redraws the map for memory
    page.get_by_role("group", name="Resource").get_by_role("button", name="Memory").click()
    expect(page.locator(f"canvas[aria-label^='Memory allocation of {node_count} nodes']")).to_be_visible()
    assert "resource=memory" in page.url
    shot(page, "timeline")
    # from the timeline to the cycle
    panel.get_by_role("link", name=c12["pod"]).click()
    page.wait_for_url(f"**/replays/{rid}/cycles/12")
    expect(page.locator("#cycle-title")).to_have_text(f"Cycle 12: {c12['pod']}")

    # a deep link opens that cycle directly, with the node table query from the URL
    c7 = next(c for c in cycles if c["seq"] == 7)
    page.goto(f"{server}/replays/{rid}/cycles/7?verdict=failed")
    expect(page.locator("#cycle-title")).to_have_text(f"Cycle 7: {c7['pod']}")
    expect(page.locator(".playback")).to_contain_text(f"cycle 7 / {total}")
    expect(page.locator(".qrow.current")).to_contain_text(c7["pod"])
    expect(page.get_by_label("Filter by verdict")).to_have_value("failed")
    rejected = c7["evaluated_count"] - c7["feasible_count"]
    expect(page.locator(NODE_GRID)).to_have_attribute("aria-rowcount", str(rejected))
    shot(page, "cycle-deep-link")


# ------------------------------------------------------------------------------------------------ 6. keyboard


def test_keyboard_moves_through_the_node_table(page: Page, server: str, api: Api, shot: Shot) -> None:
    replay = sample_replay(api)
    rid = replay["id"]
    cycles = api(f"/api/v1/replays/{rid}/cycles/?page_size=1000")["results"]
    cyc = next(c for c in cycles if c["result"] == "Scheduled")
    detail = api(f"/api/v1/replays/{rid}/cycles/{cyc['seq']}/?page_size=1000")
    by_rank = [n["name"] for n in sorted(detail["nodes"]["results"], key=lambda n: n["rank"])]
    page.goto(f"{server}/replays/{rid}/cycles/{cyc['seq']}")
    grid = page.locator(NODE_GRID)
    expect(grid.locator("[role=row][aria-rowindex='1']")).to_have_attribute("data-node", by_rank[0])

    # Tab from the top of the page until the node table has the focus
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement?.getAttribute('aria-label')") == "Nodes of this cycle":
            break
    else:
        pytest.fail("Tab never reached the node table")

    def active() -> Any:
        return grid.locator("[role=row].active")

    expect(active()).to_have_attribute("aria-rowindex", "1")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(active()).to_have_attribute("aria-rowindex", "3")
    expect(grid).to_have_attribute("aria-activedescendant", active().get_attribute("id") or "")
    page.keyboard.press("ArrowUp")
    expect(active()).to_have_attribute("data-node", by_rank[1])
    page.keyboard.press("End")
    expect(active()).to_have_attribute("data-node", by_rank[-1])
    expect(active()).to_be_in_viewport()
    page.keyboard.press("Home")
    expect(active()).to_have_attribute("data-node", by_rank[0])
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    # Enter selects the row: in the URL, marked, and its details shown; the focus stays in the table
    picked = by_rank[1]
    page.wait_for_url(re.compile(rf"[?&]node={re.escape(picked)}$"))
    expect(grid.locator(f"[role=row][data-node='{picked}']")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#node-detail-title")).to_have_text(picked)
    assert page.evaluate("() => document.activeElement?.getAttribute('aria-label')") == "Nodes of this cycle"
    shot(page, "keyboard", full_page=False)
    page.keyboard.press(" ")
    expect(page.locator("#node-detail-title")).to_have_count(0)
    assert "node=" not in page.url
