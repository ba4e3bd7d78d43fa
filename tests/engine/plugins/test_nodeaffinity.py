"""NodeAffinity (framework/plugins/nodeaffinity/node_affinity.go), cases after node_affinity_test.go."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from schedviz.engine.errors import ConfigError
from schedviz.engine.framework import Code, CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
    parse_added_affinity,
)
from tests.engine.builders import all_nodes, cluster, node, pod

UU = Code.UnschedulableAndUnresolvable


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def names(op: str, *values: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": op, "values": list(values)}


def req(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


def me(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(exprs)}


def mf(*fields: dict[str, Any]) -> dict[str, Any]:
    return {"matchFields": list(fields)}


def added_required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
        }
    }


# (case, pod spec, node name, node labels, args, prefilter (code, reason), prefilter names, filter (code, reason))
FILTER_CASES: list[tuple[str, dict[str, Any], str, dict[str, str], dict[str, Any], Any, Any, Any]] = [
    ("missing labels", {"nodeSelector": {"foo": "bar"}}, "node1", {}, {}, None, None, (UU, ERR_REASON_POD)),
    ("same labels", {"nodeSelector": {"foo": "bar"}}, "node1", {"foo": "bar"}, {}, None, None, None),
    (
        "node labels are superset",
        {"nodeSelector": {"foo": "bar"}},
        "node1",
        {"foo": "bar", "baz": "blah"},
        {},
        None,
        None,
        None,
    ),
    (
        "node labels are subset",
        {"nodeSelector": {"foo": "bar", "baz": "blah"}},
        "node1",
        {"foo": "bar"},
        {},
        None,
        None,
        (UU, ERR_REASON_POD),
    ),
    (
        "In matches",
        {"affinity": req(me(expr("foo", "In", "bar", "value2")))},
        "node1",
        {"foo": "bar"},
        {},
        None,
        None,
        None,
    ),
    (
        "Gt matches",
        {"affinity": req(me(expr("kernel-version", "Gt", "0204")))},
        "node1",
        {"kernel-version": "0206"},
        {},
        None,
        None,
        None,
    ),
    (
        "NotIn matches",
        {"affinity": req(me(expr("mem-type", "NotIn", "DDR", "DDR2")))},
        "node1",
        {"mem-type": "DDR3"},
        {},
        None,
        None,
        None,
    ),
    (
        "Exists matches",
        {"affinity": req(me(expr("GPU", "Exists")))},
        "node1",
        {"GPU": "NVIDIA-GRID-K1"},
        {},
        None,
        None,
        None,
    ),
    (
        "affinity does not match labels",
        {"affinity": req(me(expr("foo", "In", "value1", "value2")))},
        "node1",
        {"foo": "bar"},
        {},
        None,
        None,
        (UU, ERR_REASON_POD),
    ),
    (
        "empty matchExpressions match nothing",
        {"affinity": req(me())},
        "node1",
        {"foo": "bar"},
        {},
        None,
        None,
        (UU, ERR_REASON_POD),
    ),
    ("no affinity: PreFilter skips", {}, "node1", {"foo": "bar"}, {}, (Code.Skip, ""), None, None),
    (
        "nil required selector: PreFilter skips",
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}},
        "node1",
        {"foo": "bar"},
        {},
        (Code.Skip, ""),
        None,
        None,
    ),
    (
        "empty nodeSelector map still runs Filter",
        {"nodeSelector": {}},
        "node1",
        {},
        {},
        None,
        None,
        None,
    ),
    (
        "matchExpressions ANDed",
        {"affinity": req(me(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")))},
        "node1",
        {"GPU": "NVIDIA-GRID-K1"},
        {},
        None,
        None,
        None,
    ),
    (
        "matchExpressions ANDed, one fails",
        {"affinity": req(me(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")))},
        "node1",
        {"GPU": "NVIDIA-GRID-K1"},
        {},
        None,
        None,
        (UU, ERR_REASON_POD),
    ),
    (
        "terms ORed",
        {
            "affinity": req(
                me(expr("foo", "In", "bar", "value2")), me(expr("diffkey", "In", "wrong", "value2"))
            )
        },
        "node1",
        {"foo": "bar"},
        {},
        None,
        None,
        None,
    ),
    (
        "affinity and nodeSelector both satisfied",
        {"nodeSelector": {"foo": "bar"}, "affinity": req(me(expr("foo", "Exists")))},
        "node1",
        {"foo": "bar"},
        {},
        None,
        None,
        None,
    ),
    (
        "affinity matches but nodeSelector does not",
        {"nodeSelector": {"foo": "bar"}, "affinity": req(me(expr("foo", "Exists")))},
        "node1",
        {"foo": "barrrrrr"},
        {},
        None,
        None,
        (UU, ERR_REASON_POD),
    ),
    (
        "invalid value in a term: the term never matches",
        {"affinity": req(me(expr("foo", "NotIn", "invalid value: ___@#$%^")))},
        "node1",
        {"foo": "bar"},
        {},
        None,
        None,
        (UU, ERR_REASON_POD),
    ),
    (
        "invalid operator: the term never matches, no error",
        {"affinity": req(me(expr("foo", "Bogus", "bar")))},
        "node1",
        {"foo": "bar"},
        {},
        None,
        None,
        (UU, ERR_REASON_POD),
    ),
    (
        "matchFields In matches",
        {"affinity": req(mf(names("In", "node1")))},
        "node1",
        {},
        {},
        None,
        {"node1"},
        None,
    ),
    (
        "matchFields In does not match",
        {"affinity": req(mf(names("In", "node1")))},
        "node2",
        {},
        {},
        None,
        {"node1"},
        (UU, ERR_REASON_POD),
    ),
    (
        "two terms: matchFields fails, matchExpressions matches (no subset)",
        {"affinity": req(mf(names("In", "node1"), names("In", "node2")), me(expr("foo", "In", "bar")))},
        "node2",
        {"foo": "bar"},
        {},
        None,
        None,
        None,
    ),
    (
        "one term: matchFields fails, matchExpressions matches",
        {"affinity": req({**mf(names("In", "node1")), **me(expr("foo", "In", "bar"))})},
        "node2",
        {"foo": "bar"},
        {},
        None,
        {"node1"},
        (UU, ERR_REASON_POD),
    ),
    (
        "one term: both match",
        {"affinity": req({**mf(names("In", "node1")), **me(expr("foo", "In", "bar"))})},
        "node1",
        {"foo": "bar"},
        {},
        None,
        {"node1"},
        None,
    ),
    (
        "two terms: neither matches",
        {"affinity": req(mf(names("In", "node1")), me(expr("foo", "In", "not-match-to-bar")))},
        "node2",
        {"foo": "bar"},
        {},
        None,
        None,
        (UU, ERR_REASON_POD),
    ),
    (
        "two terms of node.Name affinity: union",
        {"affinity": req(mf(names("In", "node1")), mf(names("In", "node2")))},
        "node2",
        {},
        {},
        None,
        {"node1", "node2"},
        None,
    ),
    (
        "two conflicting name requirements",
        {"affinity": req(mf(names("In", "node1"), names("In", "node2")))},
        "node2",
        {"foo": "bar"},
        {},
        (UU, ERR_REASON_CONFLICT),
        None,
        (UU, ERR_REASON_POD),
    ),
    (
        "name requirements intersect within a term",
        {"affinity": req(mf(names("In", "node1", "node2"), names("In", "node2", "node3")))},
        "node2",
        {},
        {},
        None,
        {"node2"},
        (UU, ERR_REASON_POD),  # "In" on fields needs exactly one value: the term is unparsable
    ),
    (
        "NotIn name requirement does not narrow",
        {"affinity": req(mf(names("NotIn", "node1")))},
        "node2",
        {},
        {},
        None,
        None,
        None,
    ),
    (
        "empty required terms list: no subset, nothing matches",
        {"affinity": req()},
        "node1",
        {},
        {},
        None,
        None,
        (UU, ERR_REASON_POD),
    ),
    (
        "matches added affinity and pod's node affinity",
        {"affinity": req(me(expr("zone", "In", "foo")))},
        "node2",
        {"zone": "foo"},
        added_required(mf(names("In", "node2"))),
        None,
        None,
        None,
    ),
    (
        "matches added affinity but not pod's",
        {"affinity": req(me(expr("zone", "In", "bar")))},
        "node2",
        {"zone": "foo"},
        added_required(mf(names("In", "node2"))),
        None,
        None,
        (UU, ERR_REASON_POD),
    ),
    (
        "doesn't match added affinity",
        {},
        "node2",
        {"zone": "foo"},
        added_required(me(expr("zone", "In", "bar"))),
        None,
        None,
        (UU, ERR_REASON_ENFORCED),
    ),
    (
        "added affinity checked before the pod's",
        {"nodeSelector": {"zone": "x"}},
        "node2",
        {"zone": "foo"},
        added_required(me(expr("zone", "In", "bar"))),
        None,
        None,
        (UU, ERR_REASON_ENFORCED),
    ),
]


@pytest.mark.parametrize(
    ("case", "spec", "node_name", "labels", "args", "want_pre", "want_names", "want_filter"),
    FILTER_CASES,
    ids=[c[0] for c in FILTER_CASES],
)
def test_prefilter_and_filter(
    case: str,
    spec: dict[str, Any],
    node_name: str,
    labels: dict[str, str],
    args: dict[str, Any],
    want_pre: Any,
    want_names: Any,
    want_filter: Any,
) -> None:
    c = cluster([node(node_name, labels=labels)])
    p = Pod(pod("p", **spec))
    pl = NodeAffinity(args, Handle(c))
    state = CycleState(c)
    result, status = pl.pre_filter(state, p)
    got_pre = None if status.is_success() else (status.code, status.message())
    assert got_pre == want_pre
    assert (None if result is None else result.node_names) == want_names
    # Filter runs even when PreFilter skipped or rejected (upstream's test does too)
    v = pl.filter(state, p, all_nodes(c))
    code, reasons = v.at(0)
    got = None if code == Code.Success else (code, reasons[0])
    assert got == want_filter
    # without PreFilter (the plugin parses the pod itself)
    v2 = pl.filter(CycleState(c), p, all_nodes(c))
    assert v2.at(0) == v.at(0)


def test_filter_vectorised_over_nodes() -> None:
    c = cluster(
        [
            node("a", labels={"zone": "z1", "disk": "ssd"}),
            node("b", labels={"zone": "z2", "disk": "ssd"}),
            node("c", labels={"zone": "z1"}),
            node("d", labels={"zone": "z3", "disk": "ssd"}),
        ]
    )
    p = Pod(pod("p", nodeSelector={"disk": "ssd"}, affinity=req(me(expr("zone", "In", "z1", "z3")))))
    pl = NodeAffinity(added_required(me(expr("zone", "NotIn", "z3"))), Handle(c))
    state = CycleState(c)
    pl.pre_filter(state, p)
    nodes = np.asarray([3, 2, 1, 0], dtype=np.int64)
    v = pl.filter(state, p, nodes)
    assert [v.at(k) for k in range(4)] == [
        (UU, (ERR_REASON_ENFORCED,)),
        (UU, (ERR_REASON_POD,)),
        (UU, (ERR_REASON_POD,)),
        (Code.Success, ()),
    ]


def pref(weight: int, *exprs: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "preference": {"matchExpressions": list(exprs)}}


def preferred(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}}


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = preferred(pref(2, expr("foo", "In", "bar")))
AFFINITY2 = preferred(
    pref(2, expr("foo", "In", "bar")),
    pref(4, expr("key", "In", "value")),
    pref(5, expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")),
)

# (case, pod spec, nodes (name, labels), args, raw scores, normalized scores); None raw = PreScore skips
SCORE_CASES: list[tuple[str, dict[str, Any], list[tuple[str, dict[str, str]]], dict[str, Any], Any, Any]] = [
    ("no node affinity: skip", {}, [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], {}, None, None),
    (
        "no node matches preferred terms",
        {"affinity": AFFINITY1},
        [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
        {},
        [0, 0, 0],
        [0, 0, 0],
    ),
    (
        "only node1 matches",
        {"affinity": AFFINITY1},
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
        {},
        [2, 0, 0],
        [100, 0, 0],
    ),
    (
        "different priorities",
        {"affinity": AFFINITY2},
        [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
        {},
        [2, 11, 4],
        [18, 100, 36],
    ),
    (
        "added affinity only",
        {},
        [("node1", LABEL1), ("node2", LABEL2)],
        {"addedAffinity": AFFINITY1["nodeAffinity"]},
        [2, 0],
        [100, 0],
    ),
    (
        "added affinity and pod's",
        {"affinity": AFFINITY1},
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [pref(3, expr("key", "In", "value"))]
            }
        },
        [2, 3, 5],
        [40, 60, 100],
    ),
    (
        "added affinity with an empty preferred list: Skip",
        {},
        [("node1", LABEL1)],
        {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
        None,
        None,
    ),
    (
        "empty preferred list still scores (no Skip)",
        {"affinity": preferred()},
        [("node1", LABEL1), ("node2", LABEL2)],
        {},
        [0, 0],
        [0, 0],
    ),
    (
        "zero-weight term ignored",
        {"affinity": preferred(pref(0, expr("foo", "In", "bar")), pref(1, expr("key", "Exists")))},
        [("node1", LABEL1), ("node2", LABEL2)],
        {},
        [0, 1],
        [0, 100],
    ),
    (
        "integer division truncates",
        {"affinity": preferred(pref(3, expr("foo", "Exists")), pref(4, expr("key", "Exists")))},
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
        {},
        [3, 4, 7],
        [42, 57, 100],
    ),
]


@pytest.mark.parametrize(
    ("case", "spec", "nodes", "args", "want_raw", "want_norm"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES]
)
def test_score(
    case: str,
    spec: dict[str, Any],
    nodes: list[tuple[str, dict[str, str]]],
    args: dict[str, Any],
    want_raw: Any,
    want_norm: Any,
) -> None:
    c = cluster([node(n, labels=lb) for n, lb in nodes])
    p = Pod(pod("p", **spec))
    pl = NodeAffinity(args, Handle(c))
    state = CycleState(c)
    st = pl.pre_score(state, p, all_nodes(c))
    if want_raw is None:
        assert st.code == Code.Skip
        return
    assert st.is_success()
    raw = pl.score(state, p, all_nodes(c))
    assert raw.tolist() == want_raw
    assert pl.normalize_score(state, p, all_nodes(c), raw.copy()).tolist() == want_norm
    # Score without PreScore falls back to parsing the pod
    assert pl.score(CycleState(c), p, all_nodes(c)).tolist() == want_raw


def test_prescore_error_on_unparsable_preferred_term() -> None:
    c = cluster([node("n1")])
    p = Pod(pod("p", affinity=preferred(pref(1, expr("foo", "Bogus")))))
    st = NodeAffinity({}, Handle(c)).pre_score(CycleState(c), p, all_nodes(c))
    assert st.code == Code.Error
    assert st.message() == (
        '[0].matchExpressions[0].operator: Unsupported value: "Bogus": supported values: '
        '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
    )


def test_added_affinity_must_parse() -> None:
    with pytest.raises(ConfigError):
        NodeAffinity(added_required(me(expr("foo", "Bogus"))), Handle(cluster([node("n")])))
    _, _, errs = parse_added_affinity(
        {"preferredDuringSchedulingIgnoredDuringExecution": [pref(1, expr("a", "In"))]}, "args.addedAffinity"
    )
    assert errs and errs[0].startswith(
        "args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
    )


def test_added_required_with_no_terms_rejects_every_node() -> None:
    c = cluster([node("a"), node("b")])
    pl = NodeAffinity({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}, Handle(c))
    p = Pod(pod("p"))
    state = CycleState(c)
    _, st = pl.pre_filter(state, p)
    assert st.is_success()  # an added selector means Filter has work to do
    v = pl.filter(state, p, all_nodes(c))
    assert v.codes.tolist() == [UU, UU]
    assert v.at(1)[1] == (ERR_REASON_ENFORCED,)
