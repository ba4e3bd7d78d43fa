"""Taint/toleration matching (api/core/v1 toleration.go, component-helpers corev1 helpers.go)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from schedviz.engine.errors import InputError
from schedviz.engine.objects import Pod
from schedviz.engine.taints import (
    DO_NOT_SCHEDULE,
    PREFER_NOT,
    Taint,
    Toleration,
    find_matching_untolerated_taint,
    parse_tolerations,
    pod_tolerations,
    taint_groups,
    tolerations_tolerate_taint,
    untolerated_count,
    untolerated_mask,
)
from tests.engine.builders import all_nodes, cluster, node, pod


def tol(key: str = "", op: str = "", value: str = "", effect: str = "") -> Toleration:
    return Toleration(key, op, value, effect)


T_FOO_BAR_NS = Taint("foo", "bar", "NoSchedule")

# (case, toleration, taint, comparison ops enabled, tolerated)
TOLERATES = [
    ("equal key value effect", tol("foo", "Equal", "bar", "NoSchedule"), T_FOO_BAR_NS, False, True),
    ("empty operator means Equal", tol("foo", "", "bar", "NoSchedule"), T_FOO_BAR_NS, False, True),
    ("Equal with other value", tol("foo", "Equal", "baz", "NoSchedule"), T_FOO_BAR_NS, False, False),
    (
        "Equal with empty value vs valued taint",
        tol("foo", "Equal", "", "NoSchedule"),
        T_FOO_BAR_NS,
        False,
        False,
    ),
    (
        "Equal empty value, taint without value",
        tol("foo", "Equal"),
        Taint("foo", "", "NoSchedule"),
        False,
        True,
    ),
    ("Exists ignores value", tol("foo", "Exists", "", "NoSchedule"), T_FOO_BAR_NS, False, True),
    ("other key", tol("other", "Exists"), T_FOO_BAR_NS, False, False),
    ("empty key + Exists matches every key", tol("", "Exists"), T_FOO_BAR_NS, False, True),
    ("empty key + Exists with effect", tol("", "Exists", "", "NoExecute"), T_FOO_BAR_NS, False, False),
    (
        "empty effect matches all effects",
        tol("foo", "Equal", "bar"),
        Taint("foo", "bar", "NoExecute"),
        False,
        True,
    ),
    ("effect mismatch", tol("foo", "Equal", "bar", "PreferNoSchedule"), T_FOO_BAR_NS, False, False),
    # Lt/Gt: taint value compared to the toleration's, gate-controlled
    ("Gt gate off never tolerates", tol("sla", "Gt", "750"), Taint("sla", "950", "NoSchedule"), False, False),
    ("Gt taint higher", tol("sla", "Gt", "750"), Taint("sla", "950", "NoSchedule"), True, True),
    ("Gt taint lower", tol("sla", "Gt", "950"), Taint("sla", "800", "NoSchedule"), True, False),
    ("Gt equal is not greater", tol("sla", "Gt", "800"), Taint("sla", "800", "NoSchedule"), True, False),
    ("Lt taint lower", tol("sla", "Lt", "950"), Taint("sla", "800", "NoSchedule"), True, True),
    ("Lt taint higher", tol("sla", "Lt", "800"), Taint("sla", "950", "NoSchedule"), True, False),
    ("Lt gate off", tol("sla", "Lt", "950"), Taint("sla", "800", "NoSchedule"), False, False),
    ("Gt non-numeric taint", tol("sla", "Gt", "950"), Taint("sla", "high", "NoSchedule"), True, False),
    (
        "Gt leading zero is not canonical",
        tol("sla", "Gt", "1"),
        Taint("sla", "0700", "NoSchedule"),
        True,
        False,
    ),
    ("Gt '-0' is not canonical", tol("sla", "Lt", "5"), Taint("sla", "-0", "NoSchedule"), True, False),
    ("Gt '+5' is not canonical", tol("sla", "Gt", "1"), Taint("sla", "+5", "NoSchedule"), True, False),
    ("Lt negative values", tol("sla", "Lt", "-3"), Taint("sla", "-10", "NoSchedule"), True, True),
    ("Gt zero", tol("sla", "Gt", "-1"), Taint("sla", "0", "NoSchedule"), True, True),
    (
        "Gt out of int64 range",
        tol("sla", "Gt", "1"),
        Taint("sla", "9223372036854775808", "NoSchedule"),
        True,
        False,
    ),
    ("Gt max int64", tol("sla", "Gt", "1"), Taint("sla", "9223372036854775807", "NoSchedule"), True, True),
]


@pytest.mark.parametrize(("case", "t", "taint", "ops", "want"), TOLERATES, ids=[c[0] for c in TOLERATES])
def test_tolerates(case: str, t: Toleration, taint: Taint, ops: bool, want: bool) -> None:
    assert t.tolerates(taint, ops) is want


def test_find_matching_untolerated_taint_returns_first_in_filter() -> None:
    taints = [
        Taint("soft", "", "PreferNoSchedule"),
        Taint("a", "1", "NoSchedule"),
        Taint("b", "2", "NoExecute"),
    ]
    # PreferNoSchedule is ignored by the do-not-schedule filter
    assert find_matching_untolerated_taint(taints, [], DO_NOT_SCHEDULE) == Taint("a", "1", "NoSchedule")
    assert find_matching_untolerated_taint(taints, [tol("a", "Exists")], DO_NOT_SCHEDULE) == taints[2]
    assert (
        find_matching_untolerated_taint(taints, [tol("a", "Exists"), tol("b", "Equal", "2")], DO_NOT_SCHEDULE)
        is None
    )
    # no filter: every taint counts
    assert find_matching_untolerated_taint(taints, [tol("a", "Exists")]) == taints[0]
    assert tolerations_tolerate_taint([tol("x", "Exists"), tol("soft", "Exists")], taints[0])


BAD_TOLERATIONS: list[tuple[str, Any, str]] = [
    ("unknown operator", [{"key": "k", "operator": "In"}], "spec.tolerations[0].operator"),
    ("unknown effect", [{"key": "k", "operator": "Exists", "effect": "NoWay"}], "spec.tolerations[0].effect"),
    ("empty key with Equal", [{"operator": "Equal", "value": "v"}], "spec.tolerations[0].operator"),
    ("empty key, empty operator", [{"effect": "NoSchedule"}], "spec.tolerations[0].operator"),
    ("Exists with a value", [{"key": "k", "operator": "Exists", "value": "v"}], "spec.tolerations[0].value"),
    ("not a list", {"key": "k"}, "spec.tolerations"),
    ("not an object", ["k"], "spec.tolerations[0]"),
    (
        "second entry bad seconds",
        [{"key": "a", "operator": "Exists"}, {"key": "k", "operator": "Exists", "tolerationSeconds": "9"}],
        "spec.tolerations[1].tolerationSeconds",
    ),
]


@pytest.mark.parametrize(("case", "raw", "field"), BAD_TOLERATIONS, ids=[c[0] for c in BAD_TOLERATIONS])
def test_bad_tolerations_name_the_field(case: str, raw: Any, field: str) -> None:
    p = Pod(pod("bad", tolerations=raw))
    with pytest.raises(InputError) as err:
        pod_tolerations(p)
    assert err.value.field == field
    assert err.value.obj == "Pod default/bad"


def test_parse_tolerations_accepts_valid_forms() -> None:
    got = parse_tolerations(
        [
            {"operator": "Exists"},
            {"key": "k", "value": "v"},
            {"key": "k", "operator": "Gt", "value": "5", "effect": "NoExecute", "tolerationSeconds": 30},
        ],
        "Pod x",
    )
    assert got == (tol("", "Exists"), tol("k", "", "v"), tol("k", "Gt", "5", "NoExecute"))
    assert got[2].seconds == 30


def test_pod_tolerations_parsed_once() -> None:
    p = Pod(pod("p", tolerations=[{"key": "k", "operator": "Exists"}]))
    first = pod_tolerations(p)
    p.raw["spec"]["tolerations"] = [{"key": "other", "operator": "Exists"}]
    assert pod_tolerations(p) is first


def _cluster() -> Any:
    return cluster(
        [
            node("n0"),
            node("n1", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
            node("n2", taints=[{"key": "soft", "effect": "PreferNoSchedule"}]),
            node("n3", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
            node(
                "n4",
                taints=[
                    {"key": "soft", "effect": "PreferNoSchedule"},
                    {"key": "soft2", "value": "x", "effect": "PreferNoSchedule"},
                    {"key": "evict", "effect": "NoExecute"},
                ],
            ),
        ]
    )


MASKS: list[tuple[str, list[dict[str, Any]], frozenset[str], list[bool]]] = [
    ("no tolerations, hard effects", [], DO_NOT_SCHEDULE, [False, True, False, True, True]),
    ("no tolerations, soft effect", [], PREFER_NOT, [False, False, True, False, True]),
    (
        "gpu tolerated",
        [{"key": "gpu", "operator": "Equal", "value": "true"}],
        DO_NOT_SCHEDULE,
        [False, False, False, False, True],
    ),
    ("tolerate everything", [{"operator": "Exists"}], DO_NOT_SCHEDULE, [False] * 5),
    (
        "NoExecute only",
        [{"key": "evict", "operator": "Exists", "effect": "NoExecute"}],
        frozenset({"NoExecute"}),
        [False] * 5,
    ),
]


@pytest.mark.parametrize(("case", "tols", "effects", "want"), MASKS, ids=[c[0] for c in MASKS])
def test_untolerated_mask(
    case: str, tols: list[dict[str, Any]], effects: frozenset[str], want: list[bool]
) -> None:
    c = _cluster()
    p = Pod(pod("p", tolerations=tols))
    nodes = all_nodes(c)
    assert untolerated_mask(c, nodes, p, effects).tolist() == want
    # the same with an explicit toleration list, and on a subset in another order
    assert untolerated_mask(c, nodes, pod_tolerations(p), effects).tolist() == want
    sub = np.asarray([4, 0, 3], dtype=np.int64)
    assert untolerated_mask(c, sub, p, effects).tolist() == [want[4], want[0], want[3]]


def test_untolerated_count() -> None:
    c = _cluster()
    p = Pod(pod("p", tolerations=[{"key": "soft", "operator": "Exists", "effect": "PreferNoSchedule"}]))
    assert untolerated_count(c, all_nodes(c), p, PREFER_NOT).tolist() == [0, 0, 0, 0, 1]
    q = Pod(pod("q"))
    assert untolerated_count(c, all_nodes(c), q, PREFER_NOT).tolist() == [0, 0, 1, 0, 2]
    assert untolerated_count(c, all_nodes(c), q, DO_NOT_SCHEDULE).tolist() == [0, 1, 0, 1, 1]


def test_taint_groups_share_identical_taint_lists() -> None:
    c = _cluster()
    g = taint_groups(c)
    assert g.ids[1] == g.ids[3]
    assert g.ids[0] == 0 and g.sets[0] == ()
    assert len(g.sets) == 4
    assert taint_groups(c) is g


def test_comparison_operators_through_mask() -> None:
    c = cluster(
        [
            node("low", taints=[{"key": "sla", "value": "800", "effect": "NoSchedule"}]),
            node("high", taints=[{"key": "sla", "value": "999", "effect": "NoSchedule"}]),
        ]
    )
    p = Pod(pod("p", tolerations=[{"key": "sla", "operator": "Gt", "value": "950"}]))
    assert untolerated_mask(c, all_nodes(c), p, DO_NOT_SCHEDULE).tolist() == [True, True]
    assert untolerated_mask(c, all_nodes(c), p, DO_NOT_SCHEDULE, comparison_ops=True).tolist() == [
        True,
        False,
    ]
