"""NodeUnschedulable (framework/plugins/nodeunschedulable/node_unschedulable.go)."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.engine.framework import Code, CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.nodeunschedulable import NodeUnschedulable
from tests.engine.builders import all_nodes, cluster, node, pod

REASON = "node(s) were unschedulable"

CASES: list[tuple[str, bool, list[dict[str, Any]], bool]] = [
    # (case, node unschedulable, pod tolerations, fits)
    ("schedulable node, no tolerations", False, [], True),
    ("unschedulable node, no tolerations", True, [], False),
    (
        "tolerates the unschedulable taint",
        True,
        [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}],
        True,
    ),
    ("tolerates everything", True, [{"operator": "Exists"}], True),
    (
        "toleration for NoExecute only",
        True,
        [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}],
        False,
    ),
    (
        "Equal with an empty value matches the valueless taint",
        True,
        [{"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "effect": "NoSchedule"}],
        True,
    ),
    (
        "Equal with a value does not match",
        True,
        [{"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "value": "true"}],
        False,
    ),
    ("unrelated toleration", True, [{"key": "other", "operator": "Exists"}], False),
]


@pytest.mark.parametrize(("case", "unsched", "tolerations", "fits"), CASES, ids=[c[0] for c in CASES])
def test_filter(case: str, unsched: bool, tolerations: list[dict[str, Any]], fits: bool) -> None:
    c = cluster([node("n", unschedulable=unsched)])
    v = NodeUnschedulable({}, Handle(c)).filter(
        CycleState(c), Pod(pod("p", tolerations=tolerations)), all_nodes(c)
    )
    assert v.at(0) == ((Code.Success, ()) if fits else (Code.UnschedulableAndUnresolvable, (REASON,)))


def test_batch() -> None:
    c = cluster([node("a"), node("b", unschedulable=True), node("c"), node("d", unschedulable=True)])
    v = NodeUnschedulable({}, Handle(c)).filter(CycleState(c), Pod(pod("p")), all_nodes(c))
    assert v.passed.tolist() == [True, False, True, False]
