"""Uploading a cluster of real density in the explorer: a gzip'd kubectl JSON dump the server stores as
received and reads on its worker (202), the upload's progress on screen until the snapshot opens; and a
truncated one, refused with the problem named."""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from schedviz.tools.dense_cluster import DenseShape, write_dump

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.e2e

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
Api = Callable[[str], Any]
Shot = Callable[..., Path]
SHAPE = DenseShape(nodes=600, pods_per_node=30, pending=50)  # 18,050 pods, about 50 MB of JSON


def expect(obj: Any) -> Any:
    from playwright.sync_api import expect as pw_expect

    return pw_expect(obj)


@pytest.fixture(scope="module")
def dense_gz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dense dump gzip'd: it declares more text than the server reads in the request (32 MiB)."""
    folder = tmp_path_factory.mktemp("dense")
    raw = folder / "dense.json"
    write_dump(raw, SHAPE)
    out = folder / "dense-600x30.json.gz"
    out.write_bytes(gzip.compress(raw.read_bytes(), 6))
    raw.unlink()
    return out


def test_a_dense_cluster_uploads_with_progress(
    page: Page, server: str, api: Api, shot: Shot, dense_gz: Path
) -> None:
    page.goto(f"{server}/snapshots")
    expect(page.get_by_role("heading", name="Snapshots", exact=True)).to_be_visible()
    page.set_input_files("[data-testid=file-input]", str(dense_gz))
    progress = page.get_by_test_id("upload-progress")
    # the server reads it on its worker: the bytes read and the objects parsed so far, as they grow
    expect(progress).to_contain_text(
        re.compile(r"Reading dense-600x30\.json\.gz — [\d.]+ (KB|MB) of [\d.]+ MB read, [1-9][\d,]* objects"),
        timeout=60_000,
    )
    expect(progress.get_by_role("progressbar", name="upload read")).to_be_visible()
    shot(page, "large-upload-progress", full_page=False)
    page.wait_for_url(re.compile(rf"/snapshots/{UUID}$"), timeout=180_000)
    snap_id = page.url.rsplit("/", 1)[-1]
    snap = api(f"/api/v1/snapshots/{snap_id}/")
    assert snap["status"] == "ready" and snap["source_format"] == "gzip"
    assert snap["node_count"] == SHAPE.nodes and snap["pod_count"] == SHAPE.running + SHAPE.pending
    assert snap["progress"]["bytesRead"] == snap["progress"]["bytesTotal"] == dense_gz.stat().st_size
    expect(page.locator(".page-head p.muted")).to_contain_text(f"{SHAPE.nodes} nodes")
    expect(page.get_by_role("grid", name="Nodes", exact=True)).to_have_attribute("aria-rowcount", str(SHAPE.nodes))
    expect(page.get_by_label("Pods by state")).to_contain_text(f"pending {SHAPE.pending}")
    shot(page, "large-upload-ready", full_page=False)


def test_a_truncated_dump_is_refused_with_the_problem_named(
    page: Page, server: str, api: Api, shot: Shot, dense_gz: Path, tmp_path: Path
) -> None:
    data = dense_gz.read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(data[: len(data) // 3])
    before = api("/api/v1/snapshots/?page_size=200")["count"]
    page.goto(f"{server}/snapshots")
    page.set_input_files("[data-testid=file-input]", str(cut))
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("The upload was refused: 1 problem in 1 document. Nothing was stored.", timeout=60_000)
    expect(alert).to_contain_text("truncated gzip stream")
    expect(alert).to_contain_text("the upload is cut short")
    assert page.url == f"{server}/snapshots"
    shot(page, "large-upload-truncated", full_page=False)
    # the server marked the snapshot failed (holding nothing); the explorer, having shown why, deleted it
    assert api("/api/v1/snapshots/?page_size=200")["count"] == before
