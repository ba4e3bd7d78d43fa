"""A replay stood at a cycle and moved on (``Replay.run_through``, then ``run_until``) records exactly
what one uninterrupted run records: the web app keeps replays stood where a question left them and
answers the next question from there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from schedviz.engine import ReplayOptions, load_paths
from schedviz.engine.runtime.replay import Replay
from schedviz.engine.trace import SCHEDULING, CycleRecord

FIXTURES = Path(__file__).resolve().parents[1] / "conformance" / "fixtures"
SAMPLE = Path(__file__).resolve().parents[2] / "schedviz" / "samples" / "cluster.yaml"


def _cases() -> list[Path]:
    picked: list[Path] = [SAMPLE]
    for group in ("workloads", "preemption", "sampled"):
        found = sorted(p for p in (FIXTURES / group).glob("*.json") if not p.name.endswith(".expected.json"))
        picked.extend(found[:3])
    return picked


def _key(rec: CycleRecord) -> tuple[Any, ...]:
    def arr(a: Any) -> Any:
        return None if a is None else a.tolist()

    return (
        rec.seq,
        rec.pod,
        rec.kind,
        rec.attempt,
        rec.result,
        rec.selected_node,
        rec.nominated_node,
        rec.message,
        arr(rec.feasible),
        arr(rec.totals),
        arr(rec.evaluation_order),
        arr(rec.tied),
    )


def _replay(path: Path, options: ReplayOptions) -> Replay:
    return Replay(load_paths([path]), options=options)


@pytest.mark.parametrize("path", _cases(), ids=lambda p: p.stem)
@pytest.mark.parametrize("preemption", ["evict", "dry-run"])
def test_stepping_records_what_one_run_records(path: Path, preemption: str) -> None:
    options = ReplayOptions(preemption=preemption)
    whole = [_key(r) for r in _replay(path, options).cycles()]
    assert whole, "the scenario has cycles"
    rp = _replay(path, options)
    assert rp.run_through(0) is None and rp.stepped == 0  # nothing to run yet
    got: list[tuple[Any, ...]] = []
    last_seq = whole[-1][0]
    for target in (1, 2, 2, 4, last_seq // 2, last_seq + 5):
        before = len(rp.trace.cycles)
        last = rp.run_through(target)
        new = rp.trace.cycles[before:]
        got.extend(_key(r) for r in new)
        if new:
            assert last is new[-1] and rp.stepped == last.seq >= min(target, last_seq)
        else:
            assert last is None
    assert got == whole


@pytest.mark.parametrize("path", _cases(), ids=lambda p: p.stem)
def test_a_pods_cycle_after_stepping_is_the_one_of_a_whole_run(path: Path) -> None:
    options = ReplayOptions(all_nodes=True)
    whole = list(_replay(path, options).cycles())
    firsts = [r for r in whole if r.kind == SCHEDULING and r.attempt == 1 and r.seq > 1]
    for rec in firsts[:: max(1, len(firsts) // 3)]:
        fresh = _replay(path, options)
        target = fresh.run_until(rec.pod)
        expected = _key(fresh.schedule_one(target))
        assert expected == _key(rec)
        for stood in {0, rec.seq // 2, rec.seq - 1}:
            rp = _replay(path, options)
            rp.run_through(stood)
            assert rp.stepped < rec.seq
            target = rp.run_until(rec.pod)
            assert target.key == rec.pod
            assert _key(rp.schedule_one(target)) == expected, (rec.pod, stood)
