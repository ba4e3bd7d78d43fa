"""The process's readings of stored snapshots (``ingestion.enginecache``): one reading per snapshot
however many ask at once, least recently used out past the budget, readings too large for it made
for one use, and what is frozen out of the collector's sight handed back when it leaves."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from schedviz.engine.loader import Snapshot
from schedviz.ingestion.enginecache import EngineSnapshots, snapshots


@pytest.fixture(autouse=True)
def _thawed() -> Iterator[None]:
    snapshots.clear()  # the process's own cache may hold (frozen) readings of earlier tests
    gc.unfreeze()
    yield
    gc.unfreeze()


def _reader(name: str, calls: list[str], pause: float = 0.0) -> object:
    def read() -> Snapshot:
        calls.append(name)
        if pause:
            time.sleep(pause)
        return Snapshot(name=name)

    return read


def test_one_reading_for_requests_that_ask_at_once() -> None:
    cache = EngineSnapshots(lambda: 100)
    calls: list[str] = []
    read = _reader("a", calls, pause=0.2)
    got: list[Snapshot | None] = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("a", 10, read))) for _ in range(4)]  # type: ignore[arg-type]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["a"] and cache.readings == 1
    assert len(got) == 4 and all(g is got[0] for g in got) and got[0] is not None


def test_a_failed_reading_lets_the_next_request_read_again() -> None:
    cache = EngineSnapshots(lambda: 100)
    attempts: list[int] = []

    def broken() -> Snapshot:
        attempts.append(1)
        raise ValueError("bad blob")

    with pytest.raises(ValueError):
        cache.get("a", 10, broken)
    with pytest.raises(ValueError):
        cache.get("a", 10, broken)
    assert len(attempts) == 2 and len(cache) == 0


def test_least_recently_used_out_past_the_budget() -> None:
    cache = EngineSnapshots(lambda: 25)
    calls: list[str] = []
    a = cache.get("a", 10, _reader("a", calls))  # type: ignore[arg-type]
    cache.get("b", 10, _reader("b", calls))  # type: ignore[arg-type]
    assert cache.get("a", 10, _reader("a", calls)) is a  # type: ignore[arg-type]  # kept, and now the most recent
    cache.get("c", 10, _reader("c", calls))  # type: ignore[arg-type]  # 30 > 25: "b" goes
    assert calls == ["a", "b", "c"]
    assert cache.get("a", 10, _reader("a", calls)) is a  # type: ignore[arg-type]
    cache.get("b", 10, _reader("b", calls))  # type: ignore[arg-type]
    assert calls == ["a", "b", "c", "b"]


def test_too_large_for_the_budget_is_read_for_one_use_only() -> None:
    cache = EngineSnapshots(lambda: 5, freeze_from=1)
    calls: list[str] = []
    assert cache.get("big", 10, _reader("big", calls)) is None and calls == []  # type: ignore[arg-type]
    with cache.use("big", 10, _reader("big", calls)) as snap:  # type: ignore[arg-type]
        assert snap.name == "big"
        assert gc.get_freeze_count() > 0  # frozen out of the collector's sight while used
    assert gc.get_freeze_count() == 0  # handed back after
    assert snap.pods == [] and len(cache) == 0 and calls == ["big"]


def test_kept_readings_stay_frozen_and_an_evicted_one_is_handed_back() -> None:
    cache = EngineSnapshots(lambda: 15, freeze_from=10)
    calls: list[str] = []
    cache.get("small", 5, _reader("small", calls))  # type: ignore[arg-type]
    assert gc.get_freeze_count() == 0  # small readings are left to the collector
    cache.get("a", 10, _reader("a", calls))  # type: ignore[arg-type]
    assert gc.get_freeze_count() > 0
    cache.get("b", 10, _reader("b", calls))  # type: ignore[arg-type]  # "small" and "a" go, "b" stays frozen
    assert len(cache) == 1 and gc.get_freeze_count() > 0
    # a reading too large for the budget, used and handed back, leaves the kept one frozen
    with cache.use("huge", 99, _reader("huge", calls)):  # type: ignore[arg-type]
        pass
    assert gc.get_freeze_count() > 0
    cache.clear()
    assert gc.get_freeze_count() == 0 and len(cache) == 0


def test_a_budget_of_zero_keeps_nothing() -> None:
    cache = EngineSnapshots(lambda: 0)
    calls: list[str] = []
    with cache.use("a", 3, _reader("a", calls)):  # type: ignore[arg-type]
        pass
    with cache.use("a", 3, _reader("a", calls)):  # type: ignore[arg-type]
        pass
    assert calls == ["a", "a"] and len(cache) == 0


def test_at_most_so_many_readings_however_small() -> None:
    cache = EngineSnapshots(lambda: 1000, max_entries=2)
    calls: list[str] = []
    for name in ("a", "b", "c"):
        cache.get(name, 1, _reader(name, calls))  # type: ignore[arg-type]
    assert len(cache) == 2
    cache.get("a", 1, _reader("a", calls))  # type: ignore[arg-type]  # the oldest went
    assert calls == ["a", "b", "c", "a"]


def test_an_engine_reading_holds_no_reference_cycle(tmp_path: Path) -> None:
    """What lets a frozen reading that leaves the cache be freed without a collection: reading a
    production-shaped cluster (templates, owner references, volumes, affinity) leaves no garbage
    only the cyclic collector could free."""
    from schedviz.engine.loader import load_paths
    from schedviz.tools.dense_cluster import DenseShape, write_dump

    dump = tmp_path / "dense.json"
    write_dump(dump, DenseShape(nodes=40, pods_per_node=30, pending=30))
    load_paths([dump])  # whatever the first reading builds once for the process (parsers, tables)
    gc.collect()
    gc.disable()
    try:
        snap = load_paths([dump])
        assert len(snap.pods) == 40 * 30 + 30
        del snap
        assert gc.collect() == 0
    finally:
        gc.enable()
