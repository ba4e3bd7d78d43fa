"""NodeName (framework/plugins/nodename/node_name.go)."""

from __future__ import annotations

import numpy as np
import pytest

from schedviz.engine.framework import Code, CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.nodename import NodeName
from tests.engine.builders import all_nodes, cluster, node, pod

REASON = "node(s) didn't match the requested node name"

CASES = [
    # (case, pod spec.nodeName, fits per node a, b, c)
    ("no nodeName fits every node", "", [True, True, True]),
    ("nodeName picks its node", "b", [False, True, False]),
    ("nodeName of a node that does not exist", "zzz", [False, False, False]),
]


@pytest.mark.parametrize(("case", "node_name", "want"), CASES, ids=[c[0] for c in CASES])
def test_filter(case: str, node_name: str, want: list[bool]) -> None:
    c = cluster([node("a"), node("b"), node("c")])
    p = Pod(pod("p", nodeName=node_name) if node_name else pod("p"))
    v = NodeName({}, Handle(c)).filter(CycleState(c), p, all_nodes(c))
    assert v.passed.tolist() == want
    for k, ok in enumerate(want):
        if not ok:
            assert v.at(k) == (Code.UnschedulableAndUnresolvable, (REASON,))


def test_subset_order() -> None:
    c = cluster([node("a"), node("b"), node("c")])
    v = NodeName({}, Handle(c)).filter(CycleState(c), Pod(pod("p", nodeName="c")), np.asarray([2, 0]))
    assert v.passed.tolist() == [True, False]
