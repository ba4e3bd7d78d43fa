"""SchedulingGates (framework/plugins/schedulinggates/scheduling_gates.go)."""

from __future__ import annotations

import pytest

from schedviz.engine.framework import Code, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.schedulinggates import SchedulingGates
from tests.engine.builders import cluster, pod

CASES = [
    ("no gates", None, Code.Success, ""),
    ("empty list", [], Code.Success, ""),
    ("one gate", ["foo"], Code.UnschedulableAndUnresolvable, "waiting for scheduling gates: [foo]"),
    (
        "two gates in order",
        ["foo", "bar"],
        Code.UnschedulableAndUnresolvable,
        "waiting for scheduling gates: [foo bar]",
    ),
]


@pytest.mark.parametrize(("case", "gates", "code", "msg"), CASES, ids=[c[0] for c in CASES])
def test_pre_enqueue(case: str, gates: list[str] | None, code: Code, msg: str) -> None:
    raw = pod("p") if gates is None else pod("p", schedulingGates=[{"name": g} for g in gates])
    s = SchedulingGates({}, Handle(cluster([]))).pre_enqueue(Pod(raw))
    assert s.code == code
    assert s.message() == msg
