"""PrioritySort (framework/plugins/queuesort/priority_sort.go)."""

from __future__ import annotations

import pytest

from schedviz.engine.framework import Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.queuesort import PrioritySort
from tests.engine.builders import cluster, pod

T1 = "2026-01-01T00:00:00Z"
T2 = "2026-01-01T00:00:01Z"


def mk(name: str, index: int, priority: int | None, created: str | None) -> Pod:
    raw = pod(name, priority=priority)
    if created is None:
        del raw["metadata"]["creationTimestamp"]
    else:
        raw["metadata"]["creationTimestamp"] = created
    return Pod(raw, index)


CASES = [
    # (case, a, b, a before b)
    ("higher priority first", mk("a", 1, 200, T2), mk("b", 0, 100, T1), True),
    ("lower priority after", mk("a", 0, 100, T1), mk("b", 1, 200, T2), False),
    ("absent priority is 0", mk("a", 0, None, T1), mk("b", 1, 1, T2), False),
    ("absent priority above negative", mk("a", 1, None, T2), mk("b", 0, -5, T1), True),
    ("same priority, earlier timestamp first", mk("a", 1, 100, T1), mk("b", 0, 100, T2), True),
    ("same priority, later timestamp after", mk("a", 0, 100, T2), mk("b", 1, 100, T1), False),
    ("same priority and time: input order", mk("a", 0, 100, T1), mk("b", 1, 100, T1), True),
    ("same priority and time: input order reversed", mk("a", 3, 100, T1), mk("b", 1, 100, T1), False),
    ("no timestamp sorts first", mk("a", 5, 100, None), mk("b", 1, 100, T1), True),
    ("timestamp after no timestamp", mk("a", 0, 100, T1), mk("b", 1, 100, None), False),
    ("pod is not before itself", mk("a", 0, 100, T1), mk("a", 0, 100, T1), False),
]


@pytest.mark.parametrize(("case", "a", "b", "want"), CASES, ids=[c[0] for c in CASES])
def test_less(case: str, a: Pod, b: Pod, want: bool) -> None:
    pl = PrioritySort({}, Handle(cluster([])))
    assert pl.less(a, b) is want
    assert (pl.key(a) < pl.key(b)) is want


def test_sorting_a_queue() -> None:
    pl = PrioritySort({}, Handle(cluster([])))
    pods = [mk("low", 0, 1, T1), mk("late", 1, 10, T2), mk("early", 2, 10, T1), mk("bare", 3, 10, None)]
    assert [p.name for p in sorted(pods, key=pl.key)] == ["bare", "early", "late", "low"]
