"""Browser tests of the explorer: `schedviz serve --demo` in a subprocess, driven in a real headless Chromium.

The frontend must be built already (``cd frontend && npm ci && npm run build``); nothing is built here. Without
the build, the ``playwright`` package or Chromium the tests are skipped, unless ``$CI`` is set: then they fail.
Screenshots go to ``test-artifacts/screenshots/`` (a failing test leaves ``FAILED-<test>.png`` there).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from schedviz.tools.bench_browser import CHROMIUM, BrowserBenchError, demo_server, launch_chromium, sign_in

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parents[2]
DIST_INDEX = ROOT / "schedviz" / "explorer" / "index.html"
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
SAMPLE = ROOT / "schedviz" / "samples" / "cluster.yaml"
REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


def frame_messages(payload: str | bytes) -> list[dict[str, Any]]:
    """The messages of one websocket frame: the explorer asks for batched frames (docs/streaming.md),
    where a frame is one message or a JSON array of a cycle's messages."""
    data = json.loads(payload)
    return data if isinstance(data, list) else [data]


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{why} (the browser tests are required in CI: $CI is set)", pytrace=False)
    pytest.skip(why)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    rep = yield
    item.stash.setdefault(REPORTS, {})[rep.when] = rep
    return rep


@pytest.fixture(scope="session")
def server_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `server`'s SCHEDVIZ_DATA_DIR: its SQLite database and its encryption key."""
    return tmp_path_factory.mktemp("schedviz-e2e")


@pytest.fixture(scope="session")
def server(server_data_dir: Path) -> Iterator[str]:
    """`schedviz serve --demo` on a free port, a fresh SQLite database, replays in a thread: the base URL."""
    if not DIST_INDEX.exists():
        _unavailable(
            "the explorer is not built (schedviz/explorer/index.html is missing): cd frontend && npm ci && npm run build"
        )
    cm = demo_server(server_data_dir)
    try:
        base = cm.__enter__()
    except BrowserBenchError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield base
    finally:
        cm.__exit__(None, None, None)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium (Debian's /usr/bin/chromium, or $SCHEDVIZ_CHROMIUM), one per test module."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed: pip install -e '.[dev]'")
    if not Path(CHROMIUM).exists():
        _unavailable(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as pw:
        b = launch_chromium(pw)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser: Browser, server: str, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh browser context signed in as demo / demo. The test fails if the page throws or logs an error."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    context.set_default_timeout(20_000)
    context.set_default_navigation_timeout(30_000)
    pg = context.new_page()
    problems: list[str] = []
    pg.on("pageerror", lambda exc: problems.append(f"uncaught exception on {pg.url}: {exc}"))

    def on_console(msg: Any) -> None:
        # Chromium's own notes: a refused request (400 on a bad upload, ...), which the tests check, and a
        # websocket the page closed while it was connecting (a replay that finished as the page opened)
        benign = (
            msg.text.startswith("Failed to load resource")
            or "closed before the connection is established" in msg.text
        )
        if msg.type == "error" and not benign:
            problems.append(f"console.error on {pg.url}: {msg.text}")

    pg.on("console", on_console)
    sign_in(pg, server)
    yield pg
    reports = request.node.stash.get(REPORTS, {})
    failed = "call" in reports and reports["call"].failed
    if failed:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
        with contextlib.suppress(Exception):  # the page may be gone; the failure itself is what matters
            pg.screenshot(path=str(SCREENSHOTS / f"FAILED-{name}.png"), full_page=True)
    context.close()
    if problems and not failed:
        pytest.fail("the page reported errors:\n" + "\n".join(problems), pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def _fresh_screenshots() -> None:
    """Each run's screenshots only: none left over from an earlier run (a stale FAILED- among them)."""
    if SCREENSHOTS.is_dir():
        for old in SCREENSHOTS.glob("*.png"):
            old.unlink()


@pytest.fixture
def shot() -> Callable[..., Path]:
    """shot(page, name, full_page=True): save test-artifacts/screenshots/<name>.png."""

    def take(pg: Page, name: str, full_page: bool = True) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        pg.screenshot(path=str(path), full_page=full_page)
        return path

    return take


@pytest.fixture
def api(page: Page, server: str) -> Callable[[str], Any]:
    """api(path): GET an API path with the signed-in page's session; the JSON."""

    def get(path: str) -> Any:
        r = page.request.get(f"{server}{path}")
        assert r.ok, f"GET {path}: {r.status} {r.text()[:300]}"
        return r.json()

    return get
