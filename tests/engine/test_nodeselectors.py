"""Node selectors over nodes (component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from schedviz.engine.errors import InputError
from schedviz.engine.nodeselectors import (
    NodeSelector,
    NodeSelectorTerm,
    PreferredSchedulingTerms,
    label_key_problems,
    label_value_problems,
    new_requirement_errors,
    parse_go_int64,
    pod_preferred_terms,
    required_node_affinity,
    required_node_affinity_mask,
)
from schedviz.engine.objects import Pod
from tests.engine.builders import all_nodes, cluster, node, pod


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def name_field(op: str, *values: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": op, "values": list(values)}


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


# one node per label set; the node's name is "n<index>"
NODE_LABELS: list[dict[str, str]] = [
    {"foo": "bar"},  # n0
    {"foo": "baz", "kernel": "0206"},  # n1
    {"GPU": "NVIDIA-GRID-K1", "kernel": "0204"},  # n2
    {"kernel": "x12"},  # n3: Gt/Lt cannot parse
    {},  # n4
]


def _cluster() -> Any:
    return cluster([node(f"n{i}", labels=lb) for i, lb in enumerate(NODE_LABELS)])


def match_names(term_list: list[dict[str, Any]]) -> list[str]:
    c = _cluster()
    sel = NodeSelector.parse({"nodeSelectorTerms": term_list})
    m = sel.mask(c, all_nodes(c))
    return [c.names[i] for i in np.flatnonzero(m)]


# (case, terms, expected matching nodes)
SELECTOR_CASES: list[tuple[str, list[dict[str, Any]], list[str]]] = [
    ("In", [{"matchExpressions": [expr("foo", "In", "bar", "value2")]}], ["n0"]),
    (
        "NotIn matches absent label too",
        [{"matchExpressions": [expr("foo", "NotIn", "bar")]}],
        ["n1", "n2", "n3", "n4"],
    ),
    ("Exists", [{"matchExpressions": [expr("GPU", "Exists")]}], ["n2"]),
    ("DoesNotExist", [{"matchExpressions": [expr("foo", "DoesNotExist")]}], ["n2", "n3", "n4"]),
    ("Gt with leading zeros", [{"matchExpressions": [expr("kernel", "Gt", "0204")]}], ["n1"]),
    ("Lt", [{"matchExpressions": [expr("kernel", "Lt", "205")]}], ["n2"]),
    (
        "Gt 0: unparsable node values never match",
        [{"matchExpressions": [expr("kernel", "Gt", "0")]}],
        ["n1", "n2"],
    ),
    (
        "requirements ANDed",
        [{"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}],
        ["n2"],
    ),
    (
        "requirements ANDed, one fails",
        [{"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]}],
        [],
    ),
    (
        "terms ORed",
        [{"matchExpressions": [expr("foo", "In", "bar")]}, {"matchExpressions": [expr("GPU", "Exists")]}],
        ["n0", "n2"],
    ),
    ("empty term matches nothing", [{"matchExpressions": []}], []),
    ("no terms match nothing", [], []),
    (
        "empty term is dropped, other terms still count",
        [{}, {"matchExpressions": [expr("foo", "In", "baz")]}],
        ["n1"],
    ),
    ("matchFields In", [{"matchFields": [name_field("In", "n3")]}], ["n3"]),
    ("matchFields NotIn", [{"matchFields": [name_field("NotIn", "n3")]}], ["n0", "n1", "n2", "n4"]),
    ("matchFields unknown node", [{"matchFields": [name_field("In", "nope")]}], []),
    (
        "matchFields ANDed with matchExpressions in one term",
        [{"matchFields": [name_field("In", "n1")], "matchExpressions": [expr("foo", "In", "bar")]}],
        [],
    ),
    (
        "two name requirements in one term conflict",
        [{"matchFields": [name_field("In", "n1"), name_field("In", "n2")]}],
        [],
    ),
    # fields other than metadata.name read as "" on a node
    (
        "other field In empty string",
        [{"matchFields": [{"key": "spec.x", "operator": "In", "values": [""]}]}],
        ["n0", "n1", "n2", "n3", "n4"],
    ),
    ("other field In value", [{"matchFields": [{"key": "spec.x", "operator": "In", "values": ["a"]}]}], []),
    # parse errors: the term never matches, the others still do
    (
        "invalid operator makes only its term fail",
        [{"matchExpressions": [expr("foo", "Equals", "bar")]}, {"matchExpressions": [expr("GPU", "Exists")]}],
        ["n2"],
    ),
    (
        "invalid label value in NotIn",
        [{"matchExpressions": [expr("foo", "NotIn", "invalid value: ___@#$%^")]}],
        [],
    ),
    ("In without values", [{"matchExpressions": [expr("foo", "In")]}], []),
    ("Exists with values", [{"matchExpressions": [expr("foo", "Exists", "bar")]}], []),
    ("Gt with two values", [{"matchExpressions": [expr("kernel", "Gt", "1", "2")]}], []),
    ("Gt non-integer bound", [{"matchExpressions": [expr("kernel", "Gt", "1.5")]}], []),
    (
        "Gt negative bound is not a valid label value",
        [{"matchExpressions": [expr("kernel", "Gt", "-1")]}],
        [],
    ),
    ("invalid label key", [{"matchExpressions": [expr("bad key", "Exists")]}], []),
    ("matchFields with two values", [{"matchFields": [name_field("In", "n0", "n1")]}], []),
    (
        "matchFields Exists is not supported",
        [{"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}],
        [],
    ),
]


@pytest.mark.parametrize(("case", "terms", "want"), SELECTOR_CASES, ids=[c[0] for c in SELECTOR_CASES])
def test_node_selector_terms(case: str, terms: list[dict[str, Any]], want: list[str]) -> None:
    assert match_names(terms) == want


def test_subset_of_nodes_is_aligned() -> None:
    c = _cluster()
    sel = NodeSelector.parse({"nodeSelectorTerms": [{"matchExpressions": [expr("kernel", "Exists")]}]})
    nodes = np.asarray([3, 0, 1], dtype=np.int64)
    assert sel.mask(c, nodes).tolist() == [True, False, True]


def test_parse_errors_are_recorded() -> None:
    sel = NodeSelector.parse({"nodeSelectorTerms": [{"matchExpressions": [expr("foo", "Bogus")]}]})
    assert sel.errors == [
        'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Bogus": supported values: '
        '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
    ]


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"nodeSelectorTerms": "x"}, "f.nodeSelectorTerms"),
        ({"nodeSelectorTerms": ["x"]}, "f.nodeSelectorTerms[0]"),
        (
            {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In", "values": "b"}]}]},
            "values",
        ),
        ({"nodeSelectorTerms": [{"matchExpressions": [{"key": 3, "operator": "Exists"}]}]}, ".key"),
    ],
)
def test_structural_errors_raise(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as ei:
        NodeSelector.parse(raw, obj="Pod default/p", field="f")
    assert field in ei.value.field
    assert ei.value.obj == "Pod default/p"


def test_go_int64_parsing() -> None:
    assert parse_go_int64("0204") == 204
    assert parse_go_int64("-5") == -5
    assert parse_go_int64("+5") == 5
    assert parse_go_int64("9223372036854775807") == 2**63 - 1
    assert parse_go_int64("9223372036854775808") is None
    for bad in ("", " 1", "1_000", "1.0", "0x10", "\u0661"):
        assert parse_go_int64(bad) is None


def test_label_validation() -> None:
    assert label_key_problems("example.com/name") == []
    assert label_key_problems("a.b-c_d") == []
    assert label_key_problems("")[0] == "name part must be non-empty"
    assert label_key_problems("Example.com/x") != []
    assert label_key_problems("/x") == ["prefix part must be non-empty"]
    assert label_key_problems("a/b/c") != []
    assert len(label_key_problems("x" * 64)) == 1
    assert label_value_problems("") == []
    assert label_value_problems("a" * 63) == []
    assert len(label_value_problems("a" * 64)) == 1
    assert label_value_problems("a\n") != []  # no trailing-newline loophole
    # upstream's exact text (filtering_test.go "invalid affinity label syntax")
    assert new_requirement_errors("service", "In", ["{{.bad-value.}}"]) == [
        'values[0][service]: Invalid value: "{{.bad-value.}}": a valid label must be an empty string or consist '
        "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ]


# ----- RequiredNodeAffinity ------------------------------------------------------------------------
# (case, pod spec fields, expected matching nodes)
REQUIRED_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("nothing: every node", {}, ["n0", "n1", "n2", "n3", "n4"]),
    ("nodeSelector", {"nodeSelector": {"foo": "bar"}}, ["n0"]),
    ("empty nodeSelector", {"nodeSelector": {}}, ["n0", "n1", "n2", "n3", "n4"]),
    ("nodeSelector subset of node labels fails", {"nodeSelector": {"foo": "bar", "kernel": "0206"}}, []),
    (
        "nodeSelector AND affinity",
        {
            "nodeSelector": {"foo": "baz"},
            "affinity": required({"matchExpressions": [expr("kernel", "Exists")]}),
        },
        ["n1"],
    ),
    (
        "affinity matches, nodeSelector does not",
        {
            "nodeSelector": {"foo": "barrrr"},
            "affinity": required({"matchExpressions": [expr("foo", "Exists")]}),
        },
        [],
    ),
    ("required with no terms matches nothing", {"affinity": required()}, []),
    (
        "null required means no constraint",
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}},
        ["n0", "n1", "n2", "n3", "n4"],
    ),
    (
        "preferred terms do not filter",
        {
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": {"matchExpressions": [expr("foo", "Exists")]}}
                    ]
                }
            }
        },
        ["n0", "n1", "n2", "n3", "n4"],
    ),
]


@pytest.mark.parametrize(("case", "spec", "want"), REQUIRED_CASES, ids=[c[0] for c in REQUIRED_CASES])
def test_required_node_affinity(case: str, spec: dict[str, Any], want: list[str]) -> None:
    c = _cluster()
    p = Pod(pod("p", **spec))
    m = required_node_affinity_mask(p, c, all_nodes(c))
    assert [c.names[i] for i in np.flatnonzero(m)] == want
    # all-node form and a cached second call agree
    assert required_node_affinity_mask(p, c).tolist() == m.tolist()
    assert required_node_affinity_mask(p, c, all_nodes(c)).tolist() == m.tolist()


def test_required_parse_is_cached_and_masks_shared_by_signature() -> None:
    c = _cluster()
    a = Pod(pod("a", nodeSelector={"foo": "bar"}))
    b = Pod(pod("b", nodeSelector={"foo": "bar"}))
    assert required_node_affinity(a) is required_node_affinity(a)
    required_node_affinity_mask(a, c)
    required_node_affinity_mask(b, c)
    masks = c.caches["nodeselectors.masks"]
    assert len(masks) == 1
    # the returned array must not alias the cache
    out = required_node_affinity_mask(a, c)
    out[:] = True
    assert required_node_affinity_mask(b, c).tolist() == [True, False, False, False, False]


def test_required_bad_structure_names_pod() -> None:
    p = Pod(pod("p", nodeSelector=["x"]))
    with pytest.raises(InputError) as ei:
        required_node_affinity(p)
    assert ei.value.obj == "Pod default/p"
    assert ei.value.field == "spec.nodeSelector"


# ----- preferred terms --------------------------------------------------------------------------------
def pref(weight: int, *exprs: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "preference": {"matchExpressions": list(exprs)}}


def test_preferred_score_sums_weights() -> None:
    # node_affinity_test.go TestNodeAffinityPriority: weights 2, 4 and 5
    c = cluster(
        [
            node("node1", labels={"foo": "bar"}),
            node("node5", labels={"foo": "bar", "key": "value", "az": "az1"}),
            node("node2", labels={"key": "value"}),
        ]
    )
    terms = PreferredSchedulingTerms.parse(
        [
            pref(2, expr("foo", "In", "bar")),
            pref(4, expr("key", "In", "value")),
            pref(5, expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")),
        ]
    )
    assert terms.errors == []
    assert terms.score(c, all_nodes(c)).tolist() == [2, 11, 4]


def test_preferred_zero_weight_and_empty_terms_dropped_before_parsing() -> None:
    terms = PreferredSchedulingTerms.parse(
        [pref(0, expr("foo", "Bogus")), {"weight": 3, "preference": {}}, pref(1, expr("foo", "Exists"))]
    )
    assert terms.errors == []
    assert [w for w, _ in terms.terms] == [1]


def test_preferred_errors_refuse_whole_list() -> None:
    terms = PreferredSchedulingTerms.parse([pref(1, expr("foo", "Bogus")), pref(2, expr("a", "In"))])
    assert len(terms.errors) == 2
    assert terms.errors[0].startswith("[0].matchExpressions[0].operator: Unsupported value")
    assert terms.error_message().startswith("[[0].matchExpressions[0]")


def test_pod_preferred_terms_none_vs_empty() -> None:
    assert pod_preferred_terms(Pod(pod("a"))) is None
    empty = pod_preferred_terms(
        Pod(pod("b", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}))
    )
    assert empty is not None and empty.terms == []


def test_term_is_empty_raw() -> None:
    assert NodeSelectorTerm.is_empty_raw(None)
    assert NodeSelectorTerm.is_empty_raw({"matchExpressions": [], "matchFields": None})
    assert not NodeSelectorTerm.is_empty_raw({"matchFields": [name_field("In", "a")]})
