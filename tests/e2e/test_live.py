"""Live cluster mode in the explorer, end to end: a watched cluster served to the page.

The cluster is the sample one, served by the wire-protocol test API server and watched by the live worker
(``tests/e2e/live_driver.py``, in a subprocess sharing the `server`'s database); its scripted scheduler makes a
decision each time the test says so, so the test knows when the timeline stands still and compares every
figure on the page with the API (or with the websocket frames the page received).
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .conftest import ROOT, frame_messages

if TYPE_CHECKING:
    from playwright.sync_api import Page, WebSocket

pytestmark = pytest.mark.e2e

Api = Callable[[str], Any]
Shot = Callable[..., Path]
DECISIONS = "table[aria-label='Decisions, newest first']"
# two contexts: one whose API server refuses connections (port 1), one that needs an exec plugin
KUBECONFIG = """apiVersion: v1
kind: Config
current-context: closed
clusters:
- name: closed
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: token-user
  user: {token: not-a-real-token}
- name: sso-user
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: sso-login}
contexts:
- name: closed
  context: {cluster: closed, user: token-user}
- name: sso
  context: {cluster: closed, user: sso-user}
"""
NODE_GRID = "[role=grid][aria-label='Nodes of this cycle']"


def expect(obj: Any) -> Any:
    from playwright.sync_api import expect as pw_expect

    return pw_expect(obj)


class LiveDriver:
    """The driver subprocess: `step()` makes one scheduling decision in the cluster."""

    def __init__(self, data_dir: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        env.update({"SCHEDVIZ_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1"})
        self.log = data_dir / "live-driver.log"
        self._log = open(self.log, "wb")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.live_driver"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.cluster_id = self._expect("ready ", 90).split()[1]

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def _expect(self, prefix: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(0.05, left))
            except queue.Empty:
                line = ""
            if line.startswith(prefix):
                return line
            if line.startswith("error") or self.proc.poll() is not None or left <= 0:
                tail = self.log.read_text(errors="replace")[-3000:]
                raise AssertionError(f"live driver: expected {prefix!r}, got {line!r}\n{tail}")

    def _send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def step(self) -> str:
        self._send("step")
        return self._expect("stepped ")

    def expire(self) -> None:
        self._send("expire")
        self._expect("expired")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._send("quit")
        try:
            self.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(timeout=5)
        self._log.close()


@pytest.fixture(scope="module")
def live(server: str, server_data_dir: Path) -> Iterator[LiveDriver]:
    driver = LiveDriver(server_data_dir)
    try:
        yield driver
    finally:
        driver.close()


def settle(api: Api, cid: str, timeout: float = 45) -> dict[str, Any]:
    """Wait until every decision made is stored (the queue empty, the count still for 3 s): the cluster."""
    deadline = time.monotonic() + timeout
    last, since = -1, time.monotonic()
    while True:
        cluster = api(f"/api/v1/clusters/{cid}/")
        health = api(f"/api/v1/clusters/{cid}/health/")
        n = cluster["summary"]["cycles"]
        if n != last or health["queue"]:
            last, since = n, time.monotonic()
        elif time.monotonic() - since >= 3:
            settled: dict[str, Any] = cluster
            return settled
        assert time.monotonic() < deadline, (
            f"the timeline did not settle: {n} decisions, queue {health['queue']}"
        )
        time.sleep(0.5)


def all_cycles(api: Api, cid: str) -> list[dict[str, Any]]:
    page = api(f"/api/v1/clusters/{cid}/cycles/?page_size=1000")
    assert page["next"] is None
    rows: list[dict[str, Any]] = page["results"]
    return rows


def row_of(page: Page, seq: int) -> Any:
    return page.locator(f"{DECISIONS} tr[data-seq='{seq}']")


def assert_row(page: Page, c: dict[str, Any]) -> None:
    """A decision row shows the API's row: agreement, the cluster's node (or result), the replay's."""
    row = row_of(page, c["seq"])
    expect(row).to_have_attribute("data-agreement", c["agreement"])
    expect(row.locator(".pod-cell .mono")).to_have_text(c["pod"])
    expect(row.locator("[data-side=cluster]")).to_have_text(
        c["actual_node"] or re.compile(c["actual_result"])
    )
    expect(row.locator("[data-side=replay]")).to_have_text(c["node"] or re.compile(c["result"] or "\u2013"))
    if c["explanations"]:
        expect(row.locator("td.why")).to_have_text(c["explanations"][0]["message"])


def test_a_watched_cluster_streams_its_decisions(
    page: Page, server: str, api: Api, shot: Shot, live: LiveDriver
) -> None:
    cid = live.cluster_id
    for _ in range(6):
        live.step()
        time.sleep(0.2)
    live.expire()  # every watch ends with a 410 Gone: the health shows the relists
    cluster = settle(api, cid)
    deadline = time.monotonic() + 20
    while not sum(s["relists"] for s in api(f"/api/v1/clusters/{cid}/health/")["streams"]):
        assert time.monotonic() < deadline, "no relist after the watches expired"
        time.sleep(0.3)
    health = api(f"/api/v1/clusters/{cid}/health/")
    stored = all_cycles(api, cid)
    assert len(stored) == cluster["summary"]["cycles"] >= 5

    # ----- /live: the cluster, its status and worker, its counts
    page.goto(f"{server}/live")
    expect(page.get_by_role("heading", name="Live clusters", exact=True)).to_be_visible()
    row = page.locator(f"tr[data-cluster='{cid}']")
    expect(row.get_by_role("link", name=cluster["name"])).to_be_visible()
    expect(row.locator("[data-cluster-status]")).to_have_attribute("data-cluster-status", "watching")
    expect(row).to_contain_text(cluster["server"])
    expect(row).to_contain_text(f"alive {cluster['worker']['id']}")
    for key in ("match", "tie", "diverged", "skipped"):
        expect(row.locator(f"[data-count={key}] .n")).to_have_text(str(cluster["summary"][key]))
    shot(page, "live-clusters")

    # ----- the add-cluster form: a kubeconfig's contexts, an unusable one, the API's refusal shown
    page.get_by_role("button", name="Add cluster").click()
    form = page.get_by_role("form", name="Add a cluster")
    form.get_by_label("Kubeconfig text").fill(KUBECONFIG)
    form.get_by_role("button", name="Read its contexts").click()
    contexts = form.get_by_role("radiogroup", name="Context")
    expect(contexts.get_by_role("radio", name=re.compile(r"^closed"))).to_be_checked()
    exec_ctx = contexts.get_by_role("radio", name=re.compile(r"^sso"))
    expect(exec_ctx).to_be_disabled()
    expect(contexts.locator("label[data-context=sso]")).to_contain_text("cannot be used:")
    expect(contexts.locator("label[data-context=sso]")).to_contain_text("exec")
    shot(page, "live-add-cluster", full_page=False)
    form.get_by_role("button", name="Add cluster").click()
    expect(form.get_by_test_id("form-error")).to_contain_text("The cluster was not added:")
    assert api("/api/v1/clusters/")["count"] == 1
    form.get_by_role("button", name="Cancel").click()
    expect(form).to_have_count(0)

    # ----- /live/:id: stored decisions over REST, new ones over the websocket
    frames: list[dict[str, Any]] = []

    def on_ws(ws: WebSocket) -> None:
        if f"/ws/clusters/{cid}/" in ws.url:
            ws.on("framereceived", lambda payload: frames.extend(frame_messages(payload)))

    page.on("websocket", on_ws)
    row.get_by_role("link", name=cluster["name"]).click()
    page.wait_for_url(f"**/live/{cid}")
    expect(page.get_by_role("heading", level=1)).to_have_text(cluster["name"])
    expect(page.locator(f"{DECISIONS} tbody tr")).to_have_count(len(stored))
    for c in stored[-3:]:
        assert_row(page, c)
    expect(row_of(page, stored[-1]["seq"])).to_have_attribute("data-source", "rest")
    # the health: one row per stream, with the API's figures
    streams = page.get_by_role("table", name="Streams")
    expect(streams.locator("tr[data-stream]")).to_have_count(len(health["streams"]))
    for s in health["streams"]:
        r = streams.locator(f"tr[data-stream='{s['stream']}']")
        expect(r.locator("[data-stream-state]")).to_have_attribute("data-stream-state", s["state"])
        expect(r.locator("[data-col=objects]")).to_have_text(f"{s['objects']:,}")
        expect(r.locator("[data-col=relists]")).to_have_text(str(s["relists"]))
        expect(r.locator("[data-col=reconnects]")).to_have_text(str(s["reconnects"]))
        expect(r.locator("[data-col=synced]")).to_contain_text("synced" if s["synced"] else "not synced")
    nodes = next(s for s in health["streams"] if s["stream"] == "Node")
    assert nodes["objects"] >= 21 and sum(s["relists"] for s in health["streams"]) >= 1

    # the websocket: hello after the last stored decision, then decisions as they come, a divergence among them
    deadline = time.monotonic() + 20
    while not any(f["type"] == "hello" for f in frames):
        assert time.monotonic() < deadline, "no hello on the cluster's websocket"
        page.wait_for_timeout(100)
    hello = next(f for f in frames if f["type"] == "hello")
    assert hello["mode"] == "live" and hello["cluster"]["id"] == cid
    assert hello["cluster"]["cyclesDone"] == stored[-1]["seq"]

    def verdicts() -> list[dict[str, Any]]:
        return [f for f in frames if f["type"] == "live.verdict"]

    for _ in range(24):
        live.step()
        page.wait_for_timeout(400)
        if any(v["agreement"] == "diverged" for v in verdicts()):
            break
    deadline = time.monotonic() + 30
    while not any(v["agreement"] == "diverged" for v in verdicts()):
        assert time.monotonic() < deadline, f"no divergence streamed: {[v['agreement'] for v in verdicts()]}"
        page.wait_for_timeout(200)
    cluster = settle(api, cid)
    now = all_cycles(api, cid)
    page.wait_for_timeout(500)
    streamed = [v["pos"][0] for v in verdicts()]
    # every decision stored since the page opened came over the websocket, once, in order
    assert streamed == [c["seq"] for c in now if c["seq"] > stored[-1]["seq"]], streamed
    expect(page.locator(f"{DECISIONS} tbody tr")).to_have_count(len(now))
    for c in now[len(stored) :]:
        expect(row_of(page, c["seq"])).to_have_attribute("data-source", "stream")
        assert_row(page, c)
    diverged = next(c for c in now if c["agreement"] == "diverged" and c["seq"] > stored[-1]["seq"])
    verdict = next(v for v in verdicts() if v["pos"][0] == diverged["seq"])
    assert (
        verdict["actual"]["node"] == diverged["actual_node"] and verdict["replay"]["node"] == diverged["node"]
    )
    assert diverged["actual_node"] != diverged["node"]
    # the counts follow the status messages
    expect(page.get_by_test_id("summary-cycles")).to_have_text(f"{cluster['summary']['cycles']} decisions")
    for key in ("match", "tie", "diverged", "skipped"):
        expect(page.locator(f"[data-summary={key}] .n")).to_have_text(str(cluster["summary"][key]))
    for code, n in cluster["summary"]["byCode"].items():
        expect(page.locator(f"[data-code-count='{code}'] .n")).to_have_text(str(n))
    # the divergences panel lists it
    expect(
        page.get_by_role("table", name="Recent divergences").locator(f"tr[data-seq='{diverged['seq']}']")
    ).to_be_visible()
    # filtering: only the divergences, the stored and the streamed alike
    page.get_by_label("Filter by agreement").select_option("diverged")
    expect(page.locator(f"{DECISIONS} tbody tr")).to_have_count(cluster["summary"]["diverged"])
    page.get_by_label("Filter by agreement").select_option("")
    expect(page.locator(f"{DECISIONS} tbody tr")).to_have_count(len(now))
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "live-cluster", full_page=False)
    shot(page, "live-cluster-full")

    # ----- /live/:id/cycles/:seq: the replayed cycle, the cluster's node marked, the comparison
    row_of(page, diverged["seq"]).get_by_role("link").click()
    page.wait_for_url(f"**/live/{cid}/cycles/{diverged['seq']}")
    detail = api(f"/api/v1/clusters/{cid}/cycles/{diverged['seq']}/?page_size=1")
    lv = detail["live"]
    panel = page.locator(".live-comparison")
    expect(panel).to_have_attribute("data-agreement", "diverged")
    expect(panel.get_by_role("group", name="The cluster decided").get_by_test_id("side-node")).to_have_text(
        lv["actual"]["node"]
    )
    expect(panel.get_by_role("group", name="The replay decided").get_by_test_id("side-node")).to_have_text(
        lv["replay"]["node"]
    )
    expect(panel.get_by_test_id("explanation").first).to_contain_text(lv["explanations"][0]["message"])
    expect(page.locator("#cycle-title")).to_have_text(f"Cycle {diverged['seq']}: {diverged['pod']}")
    grid = page.locator(NODE_GRID)
    expect(grid).to_have_attribute("aria-rowcount", str(detail["nodes"]["count"]))
    expect(grid.locator(f"[data-node='{lv['replay']['node']}']")).to_have_class(re.compile(r"\bwinner\b"))
    marked = grid.locator(f"[data-node='{lv['actual']['node']}']")
    expect(marked).to_have_class(re.compile(r"\bmarked\b"))
    expect(marked).to_contain_text("the cluster's choice")
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "live-cycle", full_page=False)
    # the cluster's node opens its detail: how the replay judged it
    panel.get_by_role("group", name="The cluster decided").get_by_role(
        "link", name=lv["actual"]["node"]
    ).click()
    page.wait_for_url(re.compile(rf"/cycles/{diverged['seq']}\?node="))
    judged = api(
        f"/api/v1/clusters/{cid}/cycles/{diverged['seq']}/?search={lv['actual']['node']}&page_size=50"
    )["nodes"]["results"]
    judged_node = next(n for n in judged if n["name"] == lv["actual"]["node"])
    detail_panel = page.locator("[aria-labelledby=node-detail-title]")
    expect(detail_panel.locator("#node-detail-title")).to_have_text(lv["actual"]["node"])
    if judged_node["total"] is not None:
        expect(detail_panel).to_contain_text(f"total {judged_node['total']}")
    else:
        expect(detail_panel).to_contain_text(f"Rejected by {judged_node['filter']['plugin']}")

    # ----- Why here?: the replay's winner compared with the cluster's node
    panel.get_by_role("link", name="Why here?").click()
    page.wait_for_url(f"**/live/{cid}/cycles/{diverged['seq']}/why")
    explain = page.request.get(
        f"{server}/api/v1/clusters/{cid}/cycles/{diverged['seq']}/explain/?node={lv['actual']['node']}"
    )
    expect(page.locator(".live-comparison")).to_have_attribute("data-agreement", "diverged")
    if explain.ok:
        ex = explain.json()
        assert ex["winner"]["node"] == lv["replay"]["node"]
        expect(page.get_by_role("heading", name=f"Why {lv['replay']['node']}?")).to_be_visible()
        block = page.get_by_test_id("comparison").filter(has_text="The cluster's node:")
        expect(block).to_contain_text(f"{lv['replay']['node']} against {lv['actual']['node']}")
    else:
        # not there (yet), or no explanation for this decision: the page says so
        assert explain.status in (404, 409), explain.status
        expect(page.get_by_test_id("no-explanation")).to_be_visible()
    shot(page, "live-why")

    # ----- snapshot now: the mirrored state frozen into a snapshot of its own
    page.goto(f"{server}/live/{cid}")
    page.get_by_role("button", name="Snapshot now").click()
    link = page.get_by_test_id("snapshot-link")
    expect(link).to_be_visible(timeout=30_000)
    snap_id = (link.get_attribute("href") or "").rsplit("/", 1)[-1]
    snap = api(f"/api/v1/snapshots/{snap_id}/")
    assert snap["node_count"] == nodes["objects"]
    expect(page.get_by_role("status").filter(has=link)).to_contain_text(
        f"({snap['node_count']} nodes, {snap['pod_count']} pods)"
    )


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (1024, 768)], ids=["1440px", "1024px"])
def test_a_routine_relist_reads_as_routine_not_as_an_error(
    page: Page, server: str, api: Api, shot: Shot, live: LiveDriver, width: int, height: int
) -> None:
    """Every watch ends with a 410 Gone (its resourceVersion compacted away): the streams list again, and the
    health says so in a quiet note under each stream, with none of the marks of a failing stream."""
    cid = live.cluster_id
    before = sum(s["relists"] for s in api(f"/api/v1/clusters/{cid}/health/")["streams"])
    live.expire()
    deadline = time.monotonic() + 30
    while True:
        health = api(f"/api/v1/clusters/{cid}/health/")
        streams = health["streams"]
        relisted = sum(s["relists"] for s in streams) > before
        gone = [s for s in streams if s["lastError"] and "410 Gone" in s["lastError"]]
        # an API the stand-in cluster does not serve (PodGroup) stays unavailable: not a watch
        served = [s for s in streams if s["state"] != "unavailable"]
        if relisted and gone and all(s["state"] == "watching" for s in served):
            break
        assert time.monotonic() < deadline, f"the streams did not relist and watch again: {streams}"
        time.sleep(0.3)
    assert health["status"] == "watching", health
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{server}/live/{cid}")
    panel = page.locator("section.health")
    expect(panel.locator("#health-title [data-cluster-status]")).to_have_attribute(
        "data-cluster-status", "watching"
    )
    table = page.get_by_role("table", name="Streams")
    for s in gone:
        row = table.locator(f"tr[data-stream='{s['stream']}']")
        expect(row.locator("[data-stream-state]")).to_have_attribute("data-stream-state", "watching")
        expect(row).not_to_have_class(re.compile(r"\bhas-error\b"))
        expect(row.locator("[data-col=relists]")).to_have_text(str(s["relists"]))
        note = row.locator("xpath=following-sibling::tr[1]")
        expect(note).to_have_attribute("data-routine", "true")
        expect(note).to_contain_text("routine relist: the watch's resourceVersion had expired (410 Gone)")
    # no stream that relisted reads as failing: the only error rows are those of the APIs not served
    others = [s for s in streams if s["lastError"] and "410 Gone" not in s["lastError"]]
    assert all(s["state"] == "unavailable" for s in others), others
    expect(table.locator("tr.stream-error")).to_have_count(len(others))
    expect(table.locator("tr.has-error")).to_have_count(len(others))
    assert "410" not in (health["message"] or ""), health["message"]
    expect(panel.locator(".problem")).to_have_count(0)
    note = table.locator("tr[data-routine=true]").first
    note.scroll_into_view_if_needed()
    # the note fits the page at this width: not cut by the right edge
    box = note.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, box
    shot(page, f"live-routine-relist-{width}", full_page=False)
