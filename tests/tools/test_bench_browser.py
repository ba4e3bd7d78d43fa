"""The figures `schedviz bench-browser` reports from its samples (no browser needed)."""

from __future__ import annotations

from typing import Any

from schedviz.tools.bench_browser import TARGET_MS, _figures, summary


def sample(latency: float, queued: float | None) -> dict[str, Any]:
    return {"seq": 1, "result": "Scheduled", "latencyMs": latency, "domMs": 1.0, "frameMs": 2.0, "queuedMs": queued, "firstRow": ""}


def test_median_p95_and_the_count_within_the_target() -> None:
    lat = [float(v) for v in range(10, 210, 10)]  # 20 samples: 10 .. 200
    f = _figures([sample(v, None) for v in reversed(lat)])
    assert f["cycles"] == 20
    assert f["medianMs"] == 105.0
    assert f["p95Ms"] == 190.0  # the 19th of 20
    assert (f["minMs"], f["maxMs"]) == (10.0, 200.0)
    assert f["withinTarget"] == sum(1 for v in lat if v <= TARGET_MS)
    assert "queuedMedianMs" not in f
    assert _figures([]) == {"cycles": 0}


def test_the_time_a_posted_message_ran_is_reported_beside_when_known() -> None:
    f = _figures([sample(50.0, 300.0), sample(60.0, None), sample(70.0, 500.0)])
    assert f["medianMs"] == 60.0
    assert f["queuedMedianMs"] == 400.0
    assert f["queuedP95Ms"] == 500.0
    text = summary(
        {"nodes": 5000, "chromium": "x", "targetMs": TARGET_MS, "step": f, "live": {"cycles": 0}}
    )
    assert "median 60.0 ms" in text and "a message posted from that frame: median 400.0 ms" in text
    assert "live (while the replay runs): no cycle shown" in text
