"""`schedviz bench-browser`: how soon the explorer shows a 5000-node cycle, in a real headless Chromium.

Starts `schedviz serve --demo` on a fresh SQLite database (replays in a background thread), signs in
as the demo user, uploads a synthetic snapshot (``schedviz.tools.bench_engine.synthetic_cluster``)
through the Snapshots page, starts a replay with every node evaluated, and measures in the page:

- the time of the last websocket message of each cycle (``cycle.end``), taken in a ``message``
  listener that runs before the explorer's own handler, and
- the time the cycle is on screen: a MutationObserver sees the cycle view show that cycle complete
  (its result, a verdict in the node table's first row, every node counted, and the winner's total
  for a placed pod); the figure is taken after the next animation frame has been painted: in the
  first task after that frame, a ``user-blocking`` task (``scheduler.postTask``) posted from the
  frame's callback. A message posted there instead (a ``MessageChannel``, where ``postTask`` is
  missing) is handled only after the tasks already queued: while a replay streams, the websocket
  messages of the next cycles and their renders, up to hundreds of milliseconds after the paint.
  That later time is kept in the samples too (``queuedMs``).

Two figures: ``live`` (the cycles shown while the replay streams as it runs; a cycle overtaken by a
newer one before the page renders is never shown, by design, and not counted) and ``step`` (a finished replay
played back one cycle per "Step" click: every cycle is shown). The browser tests use the same helpers
(``tests/e2e/``).

Needs the Python ``playwright`` package (the dev extra) and Chromium (``/usr/bin/chromium``, or
``$SCHEDVIZ_CHROMIUM``); the frontend must be built (into ``schedviz/explorer``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedviz.engine.errors import SchedVizError

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

ROOT = Path(__file__).resolve().parents[2]  # the repository (this is schedviz/tools/)
CHROMIUM = os.environ.get("SCHEDVIZ_CHROMIUM", "/usr/bin/chromium")
# Debian's Chromium in a container: no sandbox, no GPU, and none of its background network traffic.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DEMO_USER = "demo"
DEMO_PASSWORD = "demo"
TARGET_MS = 200.0
NODE_GRID = "[role=grid][aria-label='Nodes of this cycle']"


class BrowserBenchError(SchedVizError):
    """The server, the browser or the page did not do what the measurement needs."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _log_tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@contextlib.contextmanager
def demo_server(data_dir: Path, port: int | None = None, startup_timeout: float = 120.0) -> Iterator[str]:
    """Run `schedviz serve --demo` on a fresh data directory; yield its base URL; stop it.

    SQLite under ``data_dir``, the in-memory channel layer, replays in a background thread
    (whatever DATABASE_URL / REDIS_URL the caller's environment has). The server's output goes to
    ``data_dir/server.log``.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SCHEDVIZ_TASK_MODE")
    }
    env.update(
        {
            "SCHEDVIZ_DATA_DIR": str(data_dir),
            "SCHEDVIZ_TASK_MODE": "thread",
            "SCHEDVIZ_UPLOAD_RATE": "10000/hour",
            "PYTHONUNBUFFERED": "1",
        }
    )
    log_path = data_dir / "server.log"
    base = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "schedviz", "serve", "--demo", "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + startup_timeout
            while True:
                if proc.poll() is not None:
                    raise BrowserBenchError(
                        f"schedviz serve exited with {proc.returncode} before answering /healthz:\n{_log_tail(log_path)}"
                    )
                try:
                    with urllib.request.urlopen(f"{base}/healthz", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise BrowserBenchError(
                        f"schedviz serve did not answer /healthz in {startup_timeout:.0f} s:\n{_log_tail(log_path)}"
                    )
                time.sleep(0.2)
            yield base
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=5)


def launch_chromium(pw: Playwright, executable: str = CHROMIUM) -> Browser:
    if not Path(executable).exists():
        raise BrowserBenchError(
            f"Chromium not found at {executable} (install Debian's chromium, or set $SCHEDVIZ_CHROMIUM)"
        )
    return pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)


def sign_in(page: Page, base: str, user: str = DEMO_USER, password: str = DEMO_PASSWORD) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.click("button[type=submit]")
    if "/accounts/login" in page.url:
        raise BrowserBenchError(f"could not sign in as {user}")


def csrf_headers(page: Page) -> dict[str, str]:
    """The header the API wants on unsafe requests made with the page's session (`page.request`)."""
    token = next((c.get("value", "") for c in page.context.cookies() if c.get("name") == "csrftoken"), "")
    return {"X-CSRFToken": token}


def write_synthetic_snapshot(path: Path, nodes: int, pods: int) -> Path:
    """A `kind: List` JSON of the synthetic cluster of `schedviz bench` (nodes, their running pods, `pods` pending)."""
    from schedviz.tools.bench_engine import synthetic_cluster

    snap = synthetic_cluster(nodes, pods)
    items = [n.raw for n in snap.nodes] + [p.raw for p in snap.pods]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, separators=(",", ":")))
    return path


# Installed before the explorer's scripts: records each cycle's last message and when it is on screen.
HOOKS = r"""
(() => {
  if (window.__svBench) return;
  const B = { pending: {}, shown: [], messages: 0, sockets: 0, expectNodes: 0, longTasks: [] };
  window.__svBench = B;
  // every task of the page's main thread over 50 ms (the Long Tasks API)
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) B.longTasks.push({ start: e.startTime, ms: e.duration });
    }).observe({ type: "longtask", buffered: true });
  } catch (e) {}
  const Native = window.WebSocket;
  function Hooked(url, protocols) {
    const ws = protocols === undefined ? new Native(url) : new Native(url, protocols);
    B.sockets++;
    // registered before the explorer sets onmessage, so it runs first for every message
    ws.addEventListener("message", (ev) => {
      const t = performance.now();
      B.messages++;
      const d = ev.data;
      // a cycle.end is the last message of its cycle, alone or at the end of a batched frame:
      // read from the frame's tail, without parsing the whole frame on the page's main thread
      if (typeof d === "string" && d.lastIndexOf('{"type":"cycle.end"') >= 0) {
        const m = /"pos":\[(\d+),\d+\]\}\]?$/.exec(d.slice(-48));
        if (m) B.pending[Number(m[1])] = t;
      }
    });
    return ws;
  }
  Hooked.prototype = Native.prototype;
  for (const k of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) Hooked[k] = Native[k];
  window.WebSocket = Hooked;

  const check = () => {
    const title = document.getElementById("cycle-title");
    if (!title) return;
    const m = /^Cycle (\d+):/.exec(title.textContent || "");
    if (!m) return;
    const seq = Number(m[1]);
    const endAt = B.pending[seq];
    if (endAt === undefined) return;
    const badge = title.parentElement && title.parentElement.querySelector("[data-result]");
    if (!badge) return; // still streaming
    const grid = document.querySelector('[role=grid][aria-label="Nodes of this cycle"]');
    if (!grid || (B.expectNodes && grid.getAttribute("aria-rowcount") !== String(B.expectNodes))) return;
    const first = grid.querySelector('[role=row][aria-rowindex="1"]');
    if (!first) return;
    const cells = first.querySelectorAll("[role=gridcell]");
    if (cells.length < 3 || !(cells[2].textContent || "").trim()) return;
    const result = badge.getAttribute("data-result");
    const total = (cells[cells.length - 1].textContent || "").trim();
    if (result === "Scheduled" && !/\d/.test(total)) return; // the winner's total score
    // this one is on screen; an earlier one not shown yet was overtaken and never will be (from the stream)
    for (const k of Object.keys(B.pending)) if (Number(k) <= seq) delete B.pending[k];
    const domAt = performance.now();
    requestAnimationFrame(() => {
      const frameAt = performance.now();
      const sample = { seq, result, endAt, domAt, frameAt, paintedAt: null, queuedAt: null, firstRow: (cells[1].textContent || "").trim(), total };
      // a task posted from the frame's callback runs after that frame was painted: a user-blocking one runs
      // first, a posted message after every task already queued (kept, as queuedAt)
      const painted = () => {
        if (sample.paintedAt !== null) return;
        sample.paintedAt = performance.now();
        B.shown.push(sample);
      };
      if (window.scheduler && typeof window.scheduler.postTask === "function") {
        window.scheduler.postTask(painted, { priority: "user-blocking" });
      }
      const ch = new MessageChannel();
      ch.port1.onmessage = () => {
        sample.queuedAt = performance.now();
        painted();
      };
      ch.port2.postMessage(0);
    });
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
})();
"""


def write_dense_snapshot(path: Path, nodes: int, pods_per_node: int, pending: int) -> Path:
    """The dense, production-shaped cluster of `schedviz bench --pods-per-node`, gzip'd as an operator
    would upload a kubectl dump of that size."""
    import gzip
    import shutil

    from schedviz.tools.dense_cluster import DenseShape, write_dump

    raw = path.with_suffix("")
    write_dump(raw, DenseShape(nodes=nodes, pods_per_node=pods_per_node, pending=pending), "json")
    with raw.open("rb") as src, gzip.open(path, "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    raw.unlink()
    return path


def _long_tasks(page: Page, since: float, until: float | None = None) -> dict[str, Any]:
    """The page's long tasks (over 50 ms) that started in [since, until] (page time, ms)."""
    tasks: list[dict[str, float]] = page.evaluate("() => window.__svBench ? window.__svBench.longTasks : []")
    inside = [t["ms"] for t in tasks if t["start"] >= since and (until is None or t["start"] <= until)]
    return {
        "count": len(inside),
        "over200ms": sum(1 for ms in inside if ms > TARGET_MS),
        "maxMs": round(max(inside), 1) if inside else 0.0,
    }


def _page_time(page: Page) -> float:
    return float(page.evaluate("() => performance.now()"))


def _p95(values: list[float]) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, max(0, math.ceil(0.95 * len(v)) - 1))]


def _figures(samples: list[dict[str, Any]]) -> dict[str, Any]:
    lat = sorted(s["latencyMs"] for s in samples)
    if not lat:
        return {"cycles": 0}
    out: dict[str, Any] = {
        "cycles": len(lat),
        "medianMs": round(statistics.median(lat), 1),
        "p95Ms": round(_p95(lat), 1),
        "maxMs": round(lat[-1], 1),
        "minMs": round(lat[0], 1),
        "withinTarget": sum(1 for v in lat if v <= TARGET_MS),
    }
    queued = [s["queuedMs"] for s in samples if s.get("queuedMs") is not None]
    if queued:
        # when a message posted from the same frame was handled (see the module doc)
        out["queuedMedianMs"] = round(statistics.median(queued), 1)
        out["queuedP95Ms"] = round(_p95(queued), 1)
    return out


def _collect(page: Page) -> list[dict[str, Any]]:
    raw: list[dict[str, Any]] = page.evaluate("() => window.__svBench ? window.__svBench.shown : []")
    out = []
    for s in raw:
        out.append(
            {
                "seq": s["seq"],
                "result": s["result"],
                "latencyMs": round(s["paintedAt"] - s["endAt"], 1),
                "domMs": round(s["domAt"] - s["endAt"], 1),
                "frameMs": round(s["frameAt"] - s["endAt"], 1),
                "queuedMs": round(s["queuedAt"] - s["endAt"], 1) if s.get("queuedAt") is not None else None,
                "firstRow": s["firstRow"],
            }
        )
    return out


def upload_snapshot(page: Page, base: str, path: Path, timeout_ms: float = 600_000) -> str:
    """Upload a file through the Snapshots page's file input; return the new snapshot's id."""
    page.goto(f"{base}/snapshots")
    page.set_input_files("[data-testid=file-input]", str(path))
    page.wait_for_url(f"{base}/snapshots/*", timeout=timeout_ms)
    return page.url.rstrip("/").rsplit("/", 1)[-1].split("?")[0]


def wait_replay_done(page: Page, base: str, replay_id: str, timeout_s: float = 180.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        r: dict[str, Any] = page.request.get(f"{base}/api/v1/replays/{replay_id}/").json()
        if r["status"] not in ("queued", "running"):
            return r
        if time.monotonic() > deadline:
            raise BrowserBenchError(f"replay {replay_id} still {r['status']} after {timeout_s:.0f} s")
        page.wait_for_timeout(250)


def measure(page: Page, base: str, snapshot_file: Path, nodes: int, steps: int = 10) -> dict[str, Any]:
    """Upload `snapshot_file` (a `nodes`-node cluster), replay it with every node, and measure (see the module doc).

    `page` must be signed in. Returns the figures (milliseconds) and every sample.
    """
    page.add_init_script(HOOKS)
    t_upload = time.monotonic()
    snapshot_id = upload_snapshot(page, base, snapshot_file)
    page.evaluate("n => { window.__svBench.expectNodes = n; }", nodes)
    # the replay page follows the replay live while it runs (a large upload is read on the worker
    # first: the button comes when the snapshot is ready)
    page.get_by_role("button", name=re.compile(r"^Replay [\d,]+ pending pods?$")).click(timeout=900_000)
    ready_s = time.monotonic() - t_upload
    page.wait_for_url(f"{base}/replays/*", timeout=30_000)
    replay_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    page.evaluate("n => { window.__svBench.expectNodes = n; }", nodes)
    following_from = _page_time(page)
    replay = wait_replay_done(page, base, replay_id, timeout_s=1800.0)
    if replay["status"] != "succeeded":
        raise BrowserBenchError(f"replay {replay_id} {replay['status']}: {replay.get('reason', '')}")
    # the last cycle may still be on its way to the screen
    with contextlib.suppress(Exception):
        page.wait_for_function("() => Object.keys(window.__svBench.pending).length === 0", timeout=3000)
    following = _long_tasks(page, following_from)
    live = _collect(page)
    live_messages = page.evaluate("() => window.__svBench.messages")

    # playback, one cycle per Step: each cycle is streamed (stage, filter, score, ... cycle.end) on demand
    page.goto(f"{base}/replays/{replay_id}/cycles/1")
    page.evaluate("n => { window.__svBench.expectNodes = n; }", nodes)
    page.locator(NODE_GRID).wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    step_button = page.get_by_role("button", name="Step to the next cycle (streamed)")
    total = max(
        int(replay["cycles_total"]),
        int(page.request.get(f"{base}/api/v1/replays/{replay_id}/cycles/?page_size=1").json()["count"]),
    )
    streamed_only = page.get_by_text("scores streamed for the top-ranked nodes only")
    for k in range(min(steps, total - 1)):
        step_button.click()
        page.wait_for_function("n => window.__svBench.shown.length > n", arg=k, timeout=30_000)
        page.wait_for_url(f"**/cycles/{k + 2}*", timeout=30_000)
        # the cycle's full REST detail replaces the streamed one (top scores only) next: let it load before the
        # next step, so that it does not compete with the next measurement
        streamed_only.wait_for(state="hidden", timeout=60_000)
        page.wait_for_function(
            "() => !document.querySelector('[aria-label^=\"Step to the next\"]').disabled", timeout=30_000
        )
    stepped = _collect(page)
    views = _open_views(page, base, replay_id, total)
    version = page.context.browser.version if page.context.browser else ""
    return {
        "metric": "time from a cycle's last websocket message (cycle.end) to its verdicts and top scores on screen",
        "targetMs": TARGET_MS,
        "nodes": nodes,
        "pendingPods": int(
            page.request.get(f"{base}/api/v1/snapshots/{snapshot_id}/").json()["pending_count"]
        ),
        "cycles": total,
        "snapshot": snapshot_id,
        "replay": replay_id,
        "chromium": version,
        "step": _figures(stepped),
        "live": {**_figures(live), "messages": live_messages, "longTasks": following},
        "uploadToReadySeconds": round(ready_s, 1),
        "views": views,
        "samples": {"step": stepped, "live": live},
    }


def _open_views(page: Page, base: str, replay_id: str, total: int) -> dict[str, Any]:
    """The finished replay's pages opened from their URLs: the time until each shows its content,
    and the long tasks while it loads (a cycle page: its node grid; the cluster over time)."""
    out: dict[str, Any] = {}
    first = page.request.get(f"{base}/api/v1/replays/{replay_id}/cycles/?page_size=1").json()["results"][0]
    ns, _, name = str(first["pod"]).partition("/")
    targets = [
        ("cycle", f"{base}/replays/{replay_id}/cycles/{max(1, total // 2)}", NODE_GRID),
        ("lastCycle", f"{base}/replays/{replay_id}/cycles/{total}", NODE_GRID),
        ("whyHere", f"{base}/replays/{replay_id}/pods/{ns}/{name}", "h1"),
        ("clusterOverTime", f"{base}/replays/{replay_id}/timeline", "svg, canvas"),
    ]
    for name, url, selector in targets:
        t0 = time.monotonic()
        page.goto(url)
        try:
            page.locator(selector).first.wait_for(timeout=60_000)
            page.wait_for_load_state("networkidle", timeout=60_000)
        except Exception as exc:  # a view that does not come is reported, not fatal to the figures
            out[name] = {"error": str(exc).splitlines()[0]}
            continue
        out[name] = {"seconds": round(time.monotonic() - t0, 2), "longTasks": _long_tasks(page, 0.0)}
    return out


def run(
    nodes: int = 5000, pods: int = 30, steps: int = 10, chromium: str = CHROMIUM, pods_per_node: int = 0
) -> dict[str, Any]:
    """Everything: a server of its own, Chromium, the measurement."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise BrowserBenchError(
            "bench-browser needs the playwright package: pip install -e '.[dev]'"
        ) from None

    with tempfile.TemporaryDirectory(prefix="schedviz-bench-browser-") as tmp:
        tmp_path = Path(tmp)
        if not (ROOT / "schedviz" / "explorer" / "index.html").exists():
            raise BrowserBenchError("the explorer is not built: cd frontend && npm ci && npm run build")
        if pods_per_node:
            snapshot = write_dense_snapshot(
                tmp_path / f"dense-{nodes}x{pods_per_node}.json.gz", nodes, pods_per_node, pods
            )
        else:
            snapshot = write_synthetic_snapshot(tmp_path / f"synthetic-{nodes}.json", nodes, pods)
        with demo_server(tmp_path / "data") as base, sync_playwright() as pw:
            browser = launch_chromium(pw, chromium)
            try:
                context = browser.new_context(viewport={"width": 1366, "height": 768})
                context.set_default_timeout(60_000)
                page = context.new_page()
                sign_in(page, base)
                return measure(page, base, snapshot, nodes, steps)
            finally:
                browser.close()


def summary(r: dict[str, Any]) -> str:
    def line(name: str, f: dict[str, Any]) -> str:
        if not f.get("cycles"):
            return f"  {name}: no cycle shown"
        queued = (
            f"; a message posted from that frame: median {f['queuedMedianMs']} ms, p95 {f['queuedP95Ms']} ms"
            if "queuedMedianMs" in f
            else ""
        )
        return (
            f"  {name}: {f['cycles']} cycles, median {f['medianMs']} ms, p95 {f['p95Ms']} ms, max {f['maxMs']} ms "
            f"({f['withinTarget']}/{f['cycles']} within {r['targetMs']:.0f} ms){queued}"
        )

    return "\n".join(
        [
            f"{r['nodes']}-node cycles in Chromium {r['chromium']}: last websocket message -> verdicts and top scores on screen",
            line("step (playback, one cycle per click)", r["step"]),
            line("live (while the replay runs)", r["live"]),
            *_dense_lines(r),
        ]
    )


def _dense_lines(r: dict[str, Any]) -> list[str]:
    out = []
    lt = r["live"].get("longTasks")
    if lt is not None:
        out.append(
            f"  while following: {lt['count']} long tasks, {lt['over200ms']} over {r['targetMs']:.0f} ms, "
            f"the longest {lt['maxMs']} ms"
        )
    if "uploadToReadySeconds" in r:
        out.append(f"  upload to ready (read on the worker): {r['uploadToReadySeconds']} s")
    for name, v in (r.get("views") or {}).items():
        if "error" in v:
            out.append(f"  {name}: {v['error']}")
        else:
            t = v["longTasks"]
            out.append(f"  {name}: {v['seconds']} s to show; longest task {t['maxMs']} ms ({t['over200ms']} over 200 ms)")
    return out
