"""InterPodAffinity (framework/plugins/interpodaffinity), cases after filtering_test.go and scoring_test.go.

Upstream's tests use the namespace "" for "default"; here pods without a namespace are in "default".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from schedviz.engine.framework import Code, CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
    PRE_FILTER_STATE_KEY,
    InterPodAffinity,
)
from tests.engine.builders import all_nodes, cluster, node, pod

UU = Code.UnschedulableAndUnresolvable
U = Code.Unschedulable
AFF = (UU, ERR_REASON_AFFINITY)
ANTI = (U, ERR_REASON_ANTI_AFFINITY)
EXIST = (U, ERR_REASON_EXISTING_ANTI_AFFINITY)

NAMESPACES = [
    {"kind": "Namespace", "metadata": {"name": "subteam1.team1", "labels": {"team": "team1"}}},
    {"kind": "Namespace", "metadata": {"name": "subteam2.team1", "labels": {"team": "team1"}}},
    {"kind": "Namespace", "metadata": {"name": "subteam1.team2", "labels": {"team": "team2"}}},
    {"kind": "Namespace", "metadata": {"name": "subteam2.team2", "labels": {"team": "team2"}}},
]


def sel(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return {"matchExpressions": [e]}


def term(
    selector: dict[str, Any] | None,
    tk: str,
    namespaces: list[str] | None = None,
    ns_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    t: dict[str, Any] = {"labelSelector": selector, "topologyKey": tk}
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


def weighted(w: int, t: dict[str, Any]) -> dict[str, Any]:
    return {"weight": w, "podAffinityTerm": t}


REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


def affinity(
    req: list[Any] | None = None,
    anti: list[Any] | None = None,
    pref: list[Any] | None = None,
    anti_pref: list[Any] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if req is not None or pref is not None:
        out["podAffinity"] = {k: v for k, v in ((REQ, req), (PREF, pref)) if v is not None}
    if anti is not None or anti_pref is not None:
        out["podAntiAffinity"] = {k: v for k, v in ((REQ, anti), (PREF, anti_pref)) if v is not None}
    return out


def mk(
    name: str,
    labels: dict[str, str] | None = None,
    node_name: str | None = None,
    aff: dict[str, Any] | None = None,
    namespace: str = "default",
    **extra: Any,
) -> dict[str, Any]:
    spec: dict[str, Any] = dict(extra)
    if aff is not None:
        spec["affinity"] = aff
    return pod(name, labels=labels, node_name=node_name, namespace=namespace, **spec)


S1 = {"service": "securityscan"}
S2 = {"security": "S1"}
LABELS1 = {"region": "r1", "zone": "z11"}

# ----- Filter ---------------------------------------------------------------------------------------
# (case, incoming pod, existing pods, nodes, prefilter (code, message) or None, filter verdict per node)
FilterCase = tuple[
    str, dict[str, Any], list[dict[str, Any]], list[tuple[str, dict[str, str]]], Any, list[Any]
]
N1 = [("node1", LABELS1)]

SINGLE_NODE: list[FilterCase] = [
    ("no required terms, no existing pods", mk("p"), [], N1, (Code.Skip, ""), [None]),
    (
        "affinity In matches an existing pod",
        mk("p", S2, aff=affinity(req=[term(sel("service", "In", "securityscan", "value2"), "region")])),
        [mk("e", S1, "node1")],
        N1,
        None,
        [None],
    ),
    (
        "affinity NotIn matches an existing pod",
        mk("p", S2, aff=affinity(req=[term(sel("service", "NotIn", "securityscan3", "value3"), "region")])),
        [mk("e", S1, "node1")],
        N1,
        None,
        [None],
    ),
    (
        "affinity in another namespace",
        mk(
            "p",
            S2,
            aff=affinity(req=[term(sel("service", "In", "securityscan", "value2"), "", ["DiffNameSpace"])]),
        ),
        [mk("e", S1, "node1", namespace="ns")],
        N1,
        None,
        [AFF],
    ),
    (
        "affinity selector does not match the existing pod",
        mk("p", S1, aff=affinity(req=[term(sel("service", "In", "antivirusscan", "value2"), "")])),
        [mk("e", S1, "node1")],
        N1,
        None,
        [AFF],
    ),
    (
        "several affinity terms, all matched by the same pod",
        mk(
            "p",
            S2,
            aff=affinity(
                req=[
                    term(
                        {
                            "matchExpressions": [
                                {"key": "service", "operator": "Exists"},
                                {"key": "wrongkey", "operator": "DoesNotExist"},
                            ]
                        },
                        "region",
                    ),
                    term(
                        {
                            "matchExpressions": [
                                {"key": "service", "operator": "In", "values": ["securityscan"]},
                                {"key": "service", "operator": "NotIn", "values": ["WrongValue"]},
                            ]
                        },
                        "region",
                    ),
                ]
            ),
        ),
        [mk("e", S1, "node1")],
        N1,
        None,
        [None],
    ),
    (
        "requirements ANDed: one fails",
        mk(
            "p",
            S2,
            aff=affinity(
                req=[
                    term(sel("service", "Exists"), "region"),
                    term(
                        {
                            "matchExpressions": [
                                {"key": "service", "operator": "In", "values": ["securityscan2"]},
                                {"key": "service", "operator": "NotIn", "values": ["WrongValue"]},
                            ]
                        },
                        "region",
                    ),
                ]
            ),
        ),
        [mk("e", S1, "node1")],
        N1,
        None,
        [AFF],
    ),
    (
        "affinity and anti-affinity satisfied",
        mk(
            "p",
            S2,
            aff=affinity(
                req=[term(sel("service", "In", "securityscan", "value2"), "region")],
                anti=[term(sel("service", "In", "antivirusscan", "value2"), "node")],
            ),
        ),
        [mk("e", S1, "node1")],
        N1,
        None,
        [None],
    ),
    (
        "affinity, anti-affinity and symmetry satisfied",
        mk(
            "p",
            S2,
            aff=affinity(
                req=[term(sel("service", "In", "securityscan", "value2"), "region")],
                anti=[term(sel("service", "In", "antivirusscan", "value2"), "node")],
            ),
        ),
        [
            mk(
                "e",
                S1,
                "node1",
                aff=affinity(anti=[term(sel("service", "In", "antivirusscan", "value2"), "node")]),
            )
        ],
        N1,
        None,
        [None],
    ),
    (
        "affinity satisfied, anti-affinity not",
        mk(
            "p",
            S2,
            aff=affinity(
                req=[term(sel("service", "In", "securityscan", "value2"), "region")],
                anti=[term(sel("service", "In", "securityscan", "value2"), "zone")],
            ),
        ),
        [mk("e", S1, "node1")],
        N1,
        None,
        [ANTI],
    ),
    (
        "existing pod's anti-affinity (symmetry) not satisfied",
        mk(
            "p",
            S1,
            aff=affinity(
                req=[term(sel("service", "In", "securityscan", "value2"), "region")],
                anti=[term(sel("service", "In", "antivirusscan", "value2"), "node")],
            ),
        ),
        [
            mk(
                "e",
                S1,
                "node1",
                aff=affinity(anti=[term(sel("service", "In", "securityscan", "value2"), "zone")]),
            )
        ],
        N1,
        None,
        [EXIST],
    ),
    (
        "pod matches its own NotIn term and an existing pod elsewhere: no self exemption",
        mk("p", S1, aff=affinity(req=[term(sel("service", "NotIn", "securityscan", "value2"), "region")])),
        [mk("e", S1, "node2")],
        [*N1, ("node2", {})],
        None,
        [AFF, AFF],
    ),
    (
        "existing pod's anti-affinity respected without incoming constraints",
        mk("p", S1),
        [
            mk(
                "e",
                S1,
                "node1",
                aff=affinity(anti=[term(sel("service", "In", "securityscan", "value2"), "zone")]),
            )
        ],
        N1,
        None,
        [EXIST],
    ),
    (
        "existing pod's anti-affinity does not match: Skip",
        mk("p", S1),
        [
            mk(
                "e",
                S1,
                "node1",
                aff=affinity(anti=[term(sel("service", "NotIn", "securityscan", "value2"), "zone")]),
            )
        ],
        N1,
        (Code.Skip, ""),
        [None],
    ),
    (
        "incoming anti-affinity hit by the existing pod",
        mk(
            "p",
            S1,
            aff=affinity(
                anti=[term(sel("service", "Exists"), "region"), term(sel("security", "Exists"), "region")]
            ),
        ),
        [mk("e", S2, "node1", aff=affinity(anti=[term(sel("security", "Exists"), "zone")]))],
        N1,
        None,
        [ANTI],
    ),
    (
        "symmetry a2: existing pod's term hits",
        mk("p", S2, aff=affinity(anti=[term(sel("security", "Exists"), "zone")])),
        [
            mk(
                "e",
                S1,
                "node1",
                aff=affinity(
                    anti=[term(sel("service", "Exists"), "zone"), term(sel("security", "Exists"), "zone")]
                ),
            )
        ],
        N1,
        None,
        [EXIST],
    ),
    (
        "symmetry b1",
        mk(
            "p",
            {"abc": "", "xyz": ""},
            aff=affinity(anti=[term(sel("abc", "Exists"), "zone"), term(sel("def", "Exists"), "zone")]),
        ),
        [
            mk(
                "e",
                {"def": "", "xyz": ""},
                "node1",
                aff=affinity(anti=[term(sel("abc", "Exists"), "zone"), term(sel("def", "Exists"), "zone")]),
            )
        ],
        N1,
        None,
        [ANTI],
    ),
    (
        "invalid label value fails PreFilter",
        mk(
            "p",
            S1,
            aff=affinity(
                req=[
                    term(sel("service", "In", "{{.bad-value.}}"), "region"),
                    term(sel("service", "In", "antivirusscan", "value2"), "node"),
                ]
            ),
        ),
        [],
        N1,
        (
            UU,
            'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": a valid '
            "label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
            "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
            "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        [],
    ),
    (
        "invalid operator fails PreFilter",
        mk("p", S1, aff=affinity(anti=[term(sel("service", "Gt", "1"), "region")])),
        [],
        N1,
        (UU, 'parsing pod: requiredAntiAffinityTerms: "Gt" is not a valid label selector operator'),
        [],
    ),
    (
        "affinity with matching NamespaceSelector",
        mk(
            "p",
            S2,
            aff=affinity(
                req=[
                    term(
                        sel("service", "In", "securityscan", "value2"),
                        "region",
                        ns_selector=sel("team", "In", "team1"),
                    )
                ]
            ),
        ),
        [mk("e", S1, "node1", namespace="subteam1.team1")],
        N1,
        None,
        [None],
    ),
    (
        "affinity with non-matching NamespaceSelector",
        mk(
            "p",
            S2,
            aff=affinity(
                req=[
                    term(
                        sel("service", "In", "securityscan", "value2"),
                        "region",
                        ns_selector=sel("team", "In", "team1"),
                    )
                ]
            ),
        ),
        [mk("e", S1, "node1", namespace="subteam1.team2")],
        N1,
        None,
        [AFF],
    ),
    (
        "anti-affinity with matching NamespaceSelector",
        mk(
            "p",
            S2,
            namespace="subteam1.team1",
            aff=affinity(
                anti=[
                    term(
                        sel("service", "In", "securityscan", "value2"),
                        "zone",
                        ns_selector=sel("team", "In", "team1"),
                    )
                ]
            ),
        ),
        [mk("e", S1, "node1", namespace="subteam2.team1")],
        N1,
        None,
        [ANTI],
    ),
    (
        "anti-affinity with match-all NamespaceSelector",
        mk(
            "p",
            S2,
            namespace="subteam1.team1",
            aff=affinity(anti=[term(sel("service", "In", "securityscan", "value2"), "zone", ns_selector={})]),
        ),
        [mk("e", S1, "node1", namespace="subteam2.team1")],
        N1,
        None,
        [ANTI],
    ),
    (
        "anti-affinity with non-matching NamespaceSelector",
        mk(
            "p",
            S2,
            namespace="subteam1.team1",
            aff=affinity(
                anti=[
                    term(
                        sel("service", "In", "securityscan", "value2"),
                        "zone",
                        ns_selector=sel("team", "In", "team1"),
                    )
                ]
            ),
        ),
        [mk("e", S1, "node1", namespace="subteam1.team2")],
        N1,
        None,
        [None],
    ),
]

CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def hosts(*zones: tuple[str, str, str]) -> list[tuple[str, dict[str, str]]]:
    return [(n, {"region": r, "zone": z, "hostname": n}) for n, r, z in zones]


MULTI_NODE: list[FilterCase] = [
    (
        "nodes in the region of a matching pod pass",
        mk("p", aff=affinity(req=[term(sel("foo", "In", "bar"), "region")])),
        [mk("p1", {"foo": "bar"}, "node1")],
        [("node1", CHINA), ("node2", CHINA_AZ1), ("node3", INDIA)],
        None,
        [None, None, AFF],
    ),
    (
        "first pod of a self-affine collection goes anywhere with the topology key",
        mk(
            "p",
            {"foo": "bar", "service": "securityscan"},
            aff=affinity(
                req=[
                    term(sel("foo", "In", "bar"), "zone"),
                    term(sel("service", "In", "securityscan"), "zone"),
                ]
            ),
        ),
        [mk("p1", {"foo": "bar"}, "nodeA")],
        [("nodeA", {"zone": "az1", "hostname": "h1"}), ("nodeB", {"zone": "az2", "hostname": "h2"})],
        None,
        [None, None],
    ),
    (
        "first pod of a collection still needs the topology labels",
        mk(
            "p",
            {"foo": "bar", "service": "securityscan"},
            aff=affinity(
                req=[
                    term(sel("foo", "In", "bar"), "zone"),
                    term(sel("service", "In", "securityscan"), "zone"),
                ]
            ),
        ),
        [mk("p1", {"foo": "bar"}, "nodeA")],
        [
            ("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
            ("nodeB", {"zoneLabel": "az2", "hostname": "h2"}),
        ],
        None,
        [AFF, AFF],
    ),
    (
        "anti-affinity covers the whole region",
        mk("p", aff=affinity(anti=[term(sel("foo", "In", "abc"), "region")])),
        [mk("e", {"foo": "abc"}, "nodeA")],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
        None,
        [ANTI, ANTI],
    ),
    (
        "any anti-affinity term matching is enough",
        mk(
            "p",
            aff=affinity(
                anti=[
                    term(sel("foo", "In", "abc"), "region"),
                    term(sel("service", "In", "securityscan"), "zone"),
                ]
            ),
        ),
        [mk("e", {"foo": "abc", "service": "securityscan"}, "nodeA")],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
        None,
        [ANTI, ANTI],
    ),
    (
        "anti-affinity region: other region passes",
        mk("p", aff=affinity(anti=[term(sel("foo", "In", "abc"), "region")])),
        [mk("e", {"foo": "abc"}, "nodeA")],
        [("nodeA", CHINA), ("nodeB", CHINA_AZ1), ("nodeC", INDIA)],
        None,
        [ANTI, ANTI, None],
    ),
    (
        "existing anti-affinity in another namespace does not apply",
        mk(
            "p", {"foo": "123"}, namespace="NS1", aff=affinity(anti=[term(sel("foo", "In", "bar"), "region")])
        ),
        [
            mk("e1", {"foo": "bar"}, "nodeA", namespace="NS1"),
            mk(
                "e2",
                None,
                "nodeC",
                namespace="NS2",
                aff=affinity(anti=[term(sel("foo", "In", "123"), "region")]),
            ),
        ],
        [("nodeA", CHINA), ("nodeB", CHINA_AZ1), ("nodeC", INDIA)],
        None,
        [ANTI, ANTI, None],
    ),
    (
        "existing term with a topology key no node has: Skip",
        mk("p", {"foo": ""}),
        [mk("e", None, "nodeA", aff=affinity(anti=[term(sel("foo", "Exists"), "invalid-node-label")]))],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z1")),
        (Code.Skip, ""),
        [None, None],
    ),
    (
        "incoming term with a topology key no node has",
        mk("p", aff=affinity(anti=[term(sel("foo", "Exists"), "invalid-node-label")])),
        [mk("e", {"foo": ""}, "nodeA")],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z1")),
        None,
        [None, None],
    ),
    (
        "each existing pod's anti-affinity blocks its domain",
        mk("p", {"foo": "", "bar": ""}),
        [
            mk("e1", None, "nodeA", aff=affinity(anti=[term(sel("foo", "Exists"), "zone")])),
            mk("e2", None, "nodeA", aff=affinity(anti=[term(sel("bar", "Exists"), "region")])),
        ],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
        None,
        [EXIST, EXIST],
    ),
    (
        "incoming anti-affinity terms hit different pods",
        mk(
            "p", aff=affinity(anti=[term(sel("foo", "Exists"), "zone"), term(sel("bar", "Exists"), "region")])
        ),
        [mk("e1", {"foo": ""}, "nodeA"), mk("e2", {"bar": ""}, "nodeB")],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
        None,
        [ANTI, ANTI],
    ),
    (
        "existing anti-affinity: only terms whose topology key exists count",
        mk("p", {"foo": "", "bar": ""}),
        [
            mk(
                "e",
                None,
                "nodeA",
                aff=affinity(
                    anti=[
                        term(sel("foo", "Exists"), "invalid-node-label"),
                        term(sel("bar", "Exists"), "zone"),
                    ]
                ),
            )
        ],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
        None,
        [EXIST, None],
    ),
    (
        "incoming anti-affinity: only terms whose topology key exists count",
        mk(
            "p",
            aff=affinity(
                anti=[term(sel("foo", "Exists"), "invalid-node-label"), term(sel("bar", "Exists"), "zone")]
            ),
        ),
        [mk("podA", {"foo": "", "bar": ""}, "nodeA")],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
        None,
        [ANTI, None],
    ),
    (
        "existing pods on two nodes each block their zone",
        mk("p", {"foo": "", "bar": ""}),
        [
            mk(
                "e1",
                None,
                "nodeA",
                aff=affinity(
                    anti=[term(sel("foo", "Exists"), "zone"), term(sel("labelA", "Exists"), "zone")]
                ),
            ),
            mk(
                "e2",
                None,
                "nodeB",
                aff=affinity(
                    anti=[term(sel("bar", "Exists"), "zone"), term(sel("labelB", "Exists"), "zone")]
                ),
            ),
        ],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2"), ("nodeC", "r1", "z3")),
        None,
        [EXIST, EXIST, None],
    ),
    (
        "all affinity terms matched by one pod, every node in its domains",
        mk("p", aff=affinity(req=[term(sel("foo", "Exists"), "region"), term(sel("bar", "Exists"), "zone")])),
        [mk("pod1", {"foo": "", "bar": ""}, "nodeA")],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z1")),
        None,
        [None, None],
    ),
    (
        "affinity terms must be matched by the same pod",
        mk("p", aff=affinity(req=[term(sel("foo", "Exists"), "region"), term(sel("bar", "Exists"), "zone")])),
        [mk("pod1", {"foo": ""}, "nodeA"), mk("pod2", {"bar": ""}, "nodeB")],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
        None,
        [AFF, AFF],
    ),
    # beyond upstream's tables
    (
        "affinity fails first: code UnschedulableAndUnresolvable wins over anti-affinity",
        mk(
            "p",
            {"app": "x"},
            aff=affinity(req=[term(sel("db", "Exists"), "zone")], anti=[term(sel("app", "In", "x"), "zone")]),
        ),
        [mk("db", {"db": "1"}, "nodeA"), mk("x", {"app": "x"}, "nodeB")],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2"), ("nodeC", "r1", "z1")),
        None,
        [None, AFF, None],
    ),
    (
        "terminating pods still count",
        mk("p", aff=affinity(anti=[term(sel("app", "In", "x"), "zone")])),
        [
            {
                **mk("x", {"app": "x"}, "nodeA"),
                "metadata": {
                    **mk("x", {"app": "x"}, "nodeA")["metadata"],
                    "deletionTimestamp": "2026-01-01T00:00:01Z",
                },
            }
        ],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
        None,
        [ANTI, None],
    ),
    (
        "finished pods do not count",
        mk("p", aff=affinity(anti=[term(sel("app", "In", "x"), "zone")])),
        [mk("x", {"app": "x"}, "nodeA", phase="Succeeded")],
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
        None,
        [None, None],
    ),
    (
        "matching pod on a node without the topology label: first-pod exemption applies",
        mk("p", {"app": "x"}, aff=affinity(req=[term(sel("app", "In", "x"), "zone")])),
        [mk("x", {"app": "x"}, "nodeA")],
        [("nodeA", {"hostname": "a"}), ("nodeB", {"zone": "z1"})],
        None,
        [AFF, None],
    ),
    (
        "self-affine pod: no exemption once a matching pod is counted somewhere",
        mk("p", {"app": "x"}, aff=affinity(req=[term(sel("app", "In", "x"), "zone")])),
        [mk("x", {"app": "x"}, "nodeA")],
        [("nodeA", {"zone": "z1"}), ("nodeB", {"zone": "z2"})],
        None,
        [None, AFF],
    ),
    (
        "affinity to pods that do not exist and pod does not match itself",
        mk("p", {"app": "y"}, aff=affinity(req=[term(sel("app", "In", "x"), "zone")])),
        [],
        [("nodeA", {"zone": "z1"})],
        None,
        [AFF],
    ),
    (
        "nil label selector selects nothing, empty selects all",
        mk("p", aff=affinity(anti=[term(None, "zone"), term({}, "region")])),
        [mk("x", {"any": "thing"}, "nodeA")],
        [("nodeA", {"zone": "z1"}), ("nodeB", {"zone": "z2", "region": "r"}), ("nodeC", {"zone": "z3"})],
        None,
        [None, None, None],
    ),
    (
        "empty label selector matches every pod",
        mk("p", aff=affinity(anti=[term({}, "zone")])),
        [mk("x", {"any": "thing"}, "nodeA")],
        [("nodeA", {"zone": "z1"}), ("nodeB", {"zone": "z1"}), ("nodeC", {"zone": "z3"})],
        None,
        [ANTI, ANTI, None],
    ),
    (
        "namespaces list replaces the pod's own namespace",
        mk("p", aff=affinity(anti=[term(sel("app", "In", "x"), "zone", ["other"])])),
        [mk("x1", {"app": "x"}, "nodeA"), mk("x2", {"app": "x"}, "nodeB", namespace="other")],
        [("nodeA", {"zone": "z1"}), ("nodeB", {"zone": "z2"})],
        None,
        [None, ANTI],
    ),
    (
        # mergeAffinityTermNamespacesIfNotEmpty takes the term by value: the selector stays and is
        # then matched against nil labels, where a DoesNotExist requirement always holds
        "namespace selector of the incoming pod kept after merging (upstream quirk)",
        mk(
            "p",
            {"app": "y"},
            namespace="subteam1.team1",
            aff=affinity(req=[term(sel("app", "In", "x"), "zone", ns_selector=sel("team", "DoesNotExist"))]),
        ),
        [mk("x", {"app": "x"}, "nodeA", namespace="subteam1.team2")],
        [("nodeA", {"zone": "z1"}), ("nodeB", {"zone": "z2"})],
        None,
        [None, AFF],
    ),
]


@pytest.mark.parametrize(
    ("case", "incoming", "existing", "nodes", "want_pre", "want"),
    SINGLE_NODE + MULTI_NODE,
    ids=[c[0] for c in SINGLE_NODE + MULTI_NODE],
)
def test_filter(
    case: str,
    incoming: dict[str, Any],
    existing: list[dict[str, Any]],
    nodes: list[tuple[str, dict[str, str]]],
    want_pre: Any,
    want: list[Any],
) -> None:
    c = cluster([node(n, labels=lb) for n, lb in nodes], existing, NAMESPACES)
    # the builder adds kubernetes.io/hostname; topology keys in these cases never use it
    p = Pod(incoming)
    pl = InterPodAffinity({}, Handle(c))
    state = CycleState(c)
    result, st = pl.pre_filter(state, p)
    assert result is None
    got_pre = None if st.is_success() else (st.code, st.message())
    assert got_pre == want_pre
    if not st.is_success():
        return
    v = pl.filter(state, p, all_nodes(c))
    got = [None if v.at(k)[0] == Code.Success else (v.at(k)[0], v.at(k)[1][0]) for k in range(c.n)]
    assert got == want
    # a subset in another order gets the same verdicts
    order = np.arange(c.n, dtype=np.int64)[::-1].copy()
    v2 = pl.filter(state, p, order)
    got2 = [None if v2.at(k)[0] == Code.Success else (v2.at(k)[0], v2.at(k)[1][0]) for k in range(c.n)]
    assert got2 == want[::-1]


def test_filter_without_prefilter_is_an_error() -> None:
    c = cluster([node("n")])
    v = InterPodAffinity({}, Handle(c)).filter(CycleState(c), Pod(mk("p")), all_nodes(c))
    assert v.at(0) == (Code.Error, ('error reading "PreFilterInterPodAffinity" from cycleState: not found',))


def test_counts_follow_cluster_changes() -> None:
    """Cached per-term counters catch up with pods assumed and removed between cycles."""
    c = cluster(
        [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z2"})],
        [mk("x", {"app": "x"}, "a")],
    )
    pl = InterPodAffinity({}, Handle(c))
    incoming = Pod(mk("p", aff=affinity(anti=[term(sel("app", "In", "x"), "zone")])))

    def verdicts() -> list[int]:
        state = CycleState(c)
        _, st = pl.pre_filter(state, incoming)
        assert st.is_success()
        return [int(x) for x in pl.filter(state, incoming, all_nodes(c)).codes]

    assert verdicts() == [U, 0]
    y = Pod(mk("y", {"app": "x"}, "b"))
    c.add_pod(y, 1)
    assert verdicts() == [U, U]
    c.remove_pod(c.pods_on[0][0])
    assert verdicts() == [0, U]
    # an existing pod with anti-affinity joins, then leaves
    z = Pod(mk("z", {}, "a", aff=affinity(anti=[term({}, "zone")])))
    c.add_pod(z, 0)
    state = CycleState(c)
    pl.pre_filter(state, incoming)
    v = pl.filter(state, incoming, all_nodes(c))
    assert v.at(0) == (U, (ERR_REASON_EXISTING_ANTI_AFFINITY,))
    c.remove_pod(z)
    assert verdicts() == [0, U]


def test_add_remove_pod_extensions() -> None:
    """TestPreFilterStateAddRemovePod: the counts after AddPod, and back after RemovePod."""
    anti_foo_bar = affinity(anti=[term(sel("foo", "In", "bar"), "region")])
    c = cluster(
        [
            node("nodeA", labels={"region": "r1", "zone": "z11"}),
            node("nodeB", labels={"region": "r1", "zone": "z12"}),
            node("nodeC", labels={"region": "r2", "zone": "z21"}),
        ],
        [mk("p1", {"foo": "bar"}, "nodeA"), mk("p2", None, "nodeC", aff=anti_foo_bar)],
    )
    pending = Pod(mk("pending", {"foo": "bar"}, aff=anti_foo_bar))
    added = Pod(mk("added", {"foo": "bar"}, "nodeB", aff=anti_foo_bar))
    pl = InterPodAffinity({}, Handle(c))
    state = CycleState(c)
    pl.pre_filter(state, pending)
    region = c.label("region")
    s = state.read(PRE_FILTER_STATE_KEY)
    before_anti = s.anti["region"].tolist()
    before_existing = s.existing_anti["region"].tolist()
    assert before_anti[region.vocab["r1"]] == 1
    assert before_existing[region.vocab["r2"]] == 1
    cloned = state.clone()
    pl.add_pod(cloned, pending, added, c.index["nodeB"])
    s2 = cloned.read(PRE_FILTER_STATE_KEY)
    assert s2.anti["region"][region.vocab["r1"]] == 2
    assert s2.existing_anti["region"][region.vocab["r1"]] == 1
    assert s.anti["region"].tolist() == before_anti  # the original state is untouched
    pl.remove_pod(cloned, pending, added, c.index["nodeB"])
    assert s2.anti["region"].tolist() == before_anti
    assert s2.existing_anti["region"].tolist() == before_existing


# ----- Score ------------------------------------------------------------------------------------------
SEC_S1 = {"security": "S1"}
SEC_S2 = {"security": "S2"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}

STAY_S1_REGION = affinity(pref=[weighted(5, term(sel("security", "In", "S1"), "region"))])
STAY_S2_REGION = affinity(pref=[weighted(6, term(sel("security", "In", "S2"), "region"))])
AFFINITY3 = affinity(
    pref=[
        weighted(
            8,
            term(
                {
                    "matchExpressions": [
                        {"key": "security", "operator": "NotIn", "values": ["S1"]},
                        {"key": "security", "operator": "In", "values": ["S2"]},
                    ]
                },
                "region",
            ),
        ),
        weighted(
            2,
            term(
                {
                    "matchExpressions": [
                        {"key": "security", "operator": "Exists"},
                        {"key": "wrongkey", "operator": "DoesNotExist"},
                    ]
                },
                "region",
            ),
        ),
    ]
)
HARD_AFFINITY = affinity(
    req=[
        term(sel("security", "In", "S1", "value2"), "region"),
        term(
            {
                "matchExpressions": [
                    {"key": "security", "operator": "Exists"},
                    {"key": "wrongkey", "operator": "DoesNotExist"},
                ]
            },
            "region",
        ),
    ]
)
AWAY_S1_AZ = affinity(anti_pref=[weighted(5, term(sel("security", "In", "S1"), "az"))])
AWAY_S2_AZ = affinity(anti_pref=[weighted(5, term(sel("security", "In", "S2"), "az"))])
STAY_S1_REGION_AWAY_S2_AZ = affinity(
    pref=[weighted(8, term(sel("security", "In", "S1"), "region"))],
    anti_pref=[weighted(5, term(sel("security", "In", "S2"), "az"))],
)
NS_SELECTOR_TERM = term(
    sel("security", "In", "S1"), "region", ["subteam2.team2"], ns_selector=sel("team", "In", "team1")
)
AFFINITY_NS_SELECTOR = affinity(pref=[weighted(5, NS_SELECTOR_TERM)])
ANTI_AFFINITY_NS_SELECTOR = affinity(anti_pref=[weighted(5, NS_SELECTOR_TERM)])

# (case, pod, existing pods, nodes, args, raw or None, normalized or "Skip"/"Error:<substring>")
ScoreCase = tuple[
    str, dict[str, Any], list[dict[str, Any]], list[tuple[str, dict[str, str]]], dict[str, Any], Any, Any
]

SCORE_CASES: list[ScoreCase] = [
    (
        "no affinity anywhere: Skip",
        mk("p", SEC_S1),
        [],
        [("node1", CHINA), ("node2", INDIA), ("node3", AZ1)],
        {},
        None,
        "Skip",
    ),
    (
        "affinity: matching pod in a node with the topology key",
        mk("p", SEC_S1, aff=STAY_S1_REGION),
        [mk("e1", SEC_S1, "node1"), mk("e2", SEC_S2, "node2"), mk("e3", SEC_S1, "node3")],
        [("node1", CHINA), ("node2", INDIA), ("node3", AZ1)],
        {},
        [5, 0, 0],
        [100, 0, 0],
    ),
    (
        "affinity: every node in the matching region",
        mk("p", aff=STAY_S1_REGION),
        [mk("e1", SEC_S1, "node1")],
        [("node1", CHINA), ("node2", CHINA_AZ1), ("node3", INDIA)],
        {},
        [5, 5, 0],
        [100, 100, 0],
    ),
    (
        "affinity: region with more matching pods scores higher",
        mk("p", SEC_S1, aff=STAY_S2_REGION),
        [
            mk("e1", SEC_S2, "node1"),
            mk("e2", SEC_S2, "node1"),
            mk("e3", SEC_S2, "node2"),
            mk("e4", SEC_S2, "node3"),
            mk("e5", SEC_S2, "node4"),
            mk("e6", SEC_S2, "node5"),
        ],
        [("node1", CHINA), ("node2", INDIA), ("node3", CHINA), ("node4", CHINA), ("node5", INDIA)],
        {},
        [24, 12, 24, 24, 12],
        [100, 0, 100, 100, 0],
    ),
    (
        "affinity: different operators, some match failures",
        mk("p", SEC_S1, aff=AFFINITY3),
        [mk("e1", SEC_S1, "node1"), mk("e2", SEC_S2, "node2"), mk("e3", SEC_S1, "node3")],
        [("node1", CHINA), ("node2", INDIA), ("node3", AZ1)],
        {},
        [2, 10, 0],
        [20, 100, 0],
    ),
    (
        "symmetry: existing pods' preferred affinity",
        mk("p", SEC_S2),
        [mk("e1", SEC_S1, "node1", aff=STAY_S1_REGION), mk("e2", SEC_S2, "node2", aff=STAY_S2_REGION)],
        [("node1", CHINA), ("node2", INDIA), ("node3", AZ1)],
        {},
        [0, 6, 0],
        [0, 100, 0],
    ),
    (
        "symmetry with namespace selector",
        mk("p", SEC_S1, namespace="subteam1.team1"),
        [mk("e1", SEC_S1, "node1", aff=AFFINITY_NS_SELECTOR), mk("e2", SEC_S2, "node2", aff=STAY_S2_REGION)],
        [("node1", CHINA), ("node2", INDIA), ("node3", AZ1)],
        {},
        [5, 0, 0],
        [100, 0, 0],
    ),
    (
        "anti-affinity symmetry with namespace selector",
        mk("p", SEC_S1, namespace="subteam1.team1"),
        [
            mk("e1", SEC_S1, "node1", aff=ANTI_AFFINITY_NS_SELECTOR),
            mk("e2", SEC_S2, "node2", aff=STAY_S2_REGION),
        ],
        [("node1", CHINA), ("node2", INDIA), ("node3", AZ1)],
        {},
        [-5, 0, 0],
        [0, 100, 100],
    ),
    (
        "symmetry: existing pods' required affinity, hard weight 1",
        mk("p", SEC_S1),
        [mk("e1", SEC_S1, "node1", aff=HARD_AFFINITY), mk("e2", SEC_S2, "node2", aff=HARD_AFFINITY)],
        [("node1", CHINA), ("node2", INDIA), ("node3", AZ1)],
        {},
        [2, 2, 0],
        [100, 100, 0],
    ),
    (
        "anti-affinity: matching pods in the topology",
        mk("p", SEC_S1, aff=AWAY_S1_AZ),
        [mk("e1", SEC_S1, "node1"), mk("e2", SEC_S2, "node2")],
        [("node1", AZ1), ("node2", CHINA)],
        {},
        [-5, 0],
        [0, 100],
    ),
    (
        "anti-affinity: matching pod on a node without the key",
        mk("p", SEC_S1, aff=AWAY_S1_AZ),
        [mk("e1", SEC_S1, "node1"), mk("e2", SEC_S1, "node2")],
        [("node1", AZ1), ("node2", CHINA)],
        {},
        [-5, 0],
        [0, 100],
    ),
    (
        "anti-affinity: more matching pods, lower score",
        mk("p", SEC_S1, aff=AWAY_S1_AZ),
        [mk("e1", SEC_S1, "node1"), mk("e2", SEC_S1, "node1"), mk("e3", SEC_S2, "node2")],
        [("node1", AZ1), ("node2", INDIA)],
        {},
        [-10, 0],
        [0, 100],
    ),
    (
        "anti-affinity symmetry",
        mk("p", SEC_S2),
        [mk("e1", SEC_S1, "node1", aff=AWAY_S2_AZ), mk("e2", SEC_S2, "node2", aff=AWAY_S1_AZ)],
        [("node1", AZ1), ("node2", AZ2)],
        {},
        [-5, 0],
        [0, 100],
    ),
    (
        "affinity and anti-affinity",
        mk("p", SEC_S1, aff=STAY_S1_REGION_AWAY_S2_AZ),
        [mk("e1", SEC_S1, "node1"), mk("e2", SEC_S1, "node2")],
        [("node1", CHINA), ("node2", AZ1)],
        {},
        [8, 0],
        [100, 0],
    ),
    (
        "affinity and anti-affinity, same labels as the existing pods",
        mk("p", SEC_S1, aff=STAY_S1_REGION_AWAY_S2_AZ),
        [
            mk("e1", SEC_S1, "node1"),
            mk("e2", SEC_S1, "node1"),
            mk("e3", SEC_S1, "node2"),
            mk("e4", SEC_S1, "node3"),
            mk("e5", SEC_S1, "node3"),
            mk("e6", SEC_S1, "node4"),
            mk("e7", SEC_S1, "node5"),
        ],
        [("node1", CHINA_AZ1), ("node2", INDIA), ("node3", CHINA), ("node4", CHINA), ("node5", INDIA)],
        {},
        [40, 16, 40, 40, 16],
        [100, 0, 100, 100, 0],
    ),
    (
        "affinity, anti-affinity and symmetry",
        mk("p", SEC_S1, aff=STAY_S1_REGION_AWAY_S2_AZ),
        [
            mk("e1", SEC_S1, "node1"),
            mk("e2", SEC_S2, "node2"),
            mk("e3", None, "node3", aff=STAY_S1_REGION_AWAY_S2_AZ),
            mk("e4", None, "node4", aff=AWAY_S1_AZ),
        ],
        [("node1", CHINA), ("node2", AZ1), ("node3", INDIA), ("node4", AZ2)],
        {},
        [8, -5, 8, -5],
        [100, 0, 100, 0],
    ),
    (
        "same score everywhere normalizes to 0 (issue 82796)",
        mk("p", SEC_S1),
        [mk("e1", SEC_S1, "node1"), mk("e2", None, "node2", aff=STAY_S1_REGION_AWAY_S2_AZ)],
        [("node1", CHINA), ("node2", CHINA)],
        {},
        [8, 8],
        [0, 0],
    ),
    (
        "invalid affinity label fails PreScore",
        mk("p", aff=affinity(pref=[weighted(8, term(sel("security", "In", "{{.bad-value.}}"), "region"))])),
        [],
        [("node1", CHINA), ("node2", CHINA)],
        {},
        None,
        'Error:Invalid value: "{{.bad-value.}}"',
    ),
    (
        "invalid anti-affinity label fails PreScore",
        mk("p", aff=affinity(anti_pref=[weighted(5, term(sel("security", "In", "{{.bad-value.}}"), "az"))])),
        [],
        [("node1", CHINA), ("node2", CHINA)],
        {},
        None,
        'Error:Invalid value: "{{.bad-value.}}"',
    ),
    (
        "preferred affinity, pods matching the namespace selector",
        mk("p", SEC_S1, namespace="subteam1.team1", aff=AFFINITY_NS_SELECTOR),
        [
            mk("e1", SEC_S1, "node1", namespace="subteam1.team1"),
            mk("e2", SEC_S1, "node1", namespace="subteam1.team1"),
            mk("e3", SEC_S1, "node1", namespace="subteam1.team2"),
            mk("e4", SEC_S1, "node2", namespace="subteam2.team1"),
        ],
        [("node1", CHINA), ("node2", INDIA)],
        {},
        [10, 5],
        [100, 0],
    ),
    (
        "preferred affinity, pods matching namespace selector and namespaces",
        mk("p", SEC_S1, namespace="subteam1.team1", aff=AFFINITY_NS_SELECTOR),
        [
            mk("e1", SEC_S1, "node1", namespace="subteam1.team1"),
            mk("e2", SEC_S1, "node1", namespace="subteam1.team1"),
            mk("e3", SEC_S1, "node1", namespace="subteam2.team2"),
            mk("e4", SEC_S1, "node2", namespace="subteam2.team1"),
        ],
        [("node1", CHINA), ("node2", INDIA)],
        {},
        [15, 5],
        [100, 0],
    ),
    (
        "preferred anti-affinity, pods matching the namespace selector",
        mk("p", SEC_S1, namespace="subteam1.team1", aff=ANTI_AFFINITY_NS_SELECTOR),
        [
            mk("e1", SEC_S1, "node1", namespace="subteam1.team1"),
            mk("e2", SEC_S1, "node1", namespace="subteam1.team1"),
            mk("e3", SEC_S1, "node1", namespace="subteam1.team2"),
            mk("e4", SEC_S1, "node2", namespace="subteam2.team1"),
        ],
        [("node1", CHINA), ("node2", INDIA)],
        {},
        [-10, -5],
        [0, 100],
    ),
    (
        "ignore preferred terms of existing pods: Skip",
        mk("p", SEC_S2),
        [
            mk("e1", SEC_S1, "node1", aff=STAY_S1_REGION_AWAY_S2_AZ),
            mk("e2", SEC_S2, "node2", aff=STAY_S2_REGION),
        ],
        [("node1", CHINA), ("node2", INDIA)],
        {"ignorePreferredTermsOfExistingPods": True},
        None,
        "Skip",
    ),
    (
        "do not ignore preferred terms of existing pods",
        mk("p", SEC_S2),
        [
            mk("e1", SEC_S1, "node1", aff=STAY_S1_REGION_AWAY_S2_AZ),
            mk("e2", SEC_S2, "node2", aff=STAY_S2_REGION),
        ],
        [("node1", CHINA), ("node2", INDIA)],
        {},
        [0, 6],
        [0, 100],
    ),
    (
        "ignore flag still counts existing terms when the pod has preferences",
        mk("p", SEC_S2, aff=AWAY_S1_AZ),
        [mk("e1", SEC_S1, "node1", aff=STAY_S2_REGION)],
        [("node1", {"region": "China", "az": "az1"}), ("node2", INDIA)],
        {"ignorePreferredTermsOfExistingPods": True},
        [1, 0],
        [100, 0],
    ),
    ("no nodes to score", mk("p", SEC_S2), [], [], {}, None, "Skip"),
    (
        "preferences that match nothing: Skip",
        mk("p", SEC_S2, aff=STAY_S1_REGION),
        [mk("e1", SEC_S2, "node1")],
        [("node1", CHINA)],
        {},
        None,
        "Skip",
    ),
    # arithmetic
    (
        "negative scores are shifted by the minimum",
        mk(
            "p",
            aff=affinity(
                pref=[weighted(3, term(sel("security", "In", "S2"), "region"))],
                anti_pref=[weighted(5, term(sel("security", "In", "S1"), "az"))],
            ),
        ),
        [mk("x", SEC_S1, "n1"), mk("y", SEC_S2, "n3")],
        [("n1", {"az": "a1"}), ("n2", {"az": "a2"}), ("n3", {"region": "r", "az": "a3"})],
        {},
        [-5, 0, 3],
        [0, 62, 100],
    ),
    (
        "float64 division before the multiplication (29/100*100 = 28.99..)",
        mk(
            "p",
            aff=affinity(
                pref=[
                    weighted(100, term(sel("x", "Exists"), "region")),
                    weighted(29, term(sel("y", "Exists"), "region")),
                ]
            ),
        ),
        [mk("a", {"x": "1"}, "nA"), mk("b", {"y": "1"}, "nB")],
        [("nA", {"region": "A"}), ("nB", {"region": "B"}), ("nC", {"region": "C"})],
        {},
        [100, 29, 0],
        [100, 28, 0],
    ),
    (
        "weights summed per topology pair over several keys",
        mk(
            "p",
            aff=affinity(
                pref=[
                    weighted(4, term(sel("x", "Exists"), "region")),
                    weighted(7, term(sel("x", "Exists"), "zone")),
                ]
            ),
        ),
        [mk("a", {"x": "1"}, "nA"), mk("b", {"x": "2"}, "nB")],
        [
            ("nA", {"region": "r1", "zone": "z1"}),
            ("nB", {"region": "r1", "zone": "z2"}),
            ("nC", {"region": "r1", "zone": "z1"}),
            ("nD", {"region": "r2", "zone": "z2"}),
        ],
        {},
        [15, 15, 15, 7],
        [100, 100, 100, 0],
    ),
]


@pytest.mark.parametrize(
    ("case", "incoming", "existing", "nodes", "args", "want_raw", "want"),
    SCORE_CASES,
    ids=[c[0] for c in SCORE_CASES],
)
def test_score(
    case: str,
    incoming: dict[str, Any],
    existing: list[dict[str, Any]],
    nodes: list[tuple[str, dict[str, str]]],
    args: dict[str, Any],
    want_raw: Any,
    want: Any,
) -> None:
    c = cluster([node(n, labels=lb) for n, lb in nodes], existing, NAMESPACES)
    p = Pod(incoming)
    pl = InterPodAffinity(
        {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False, **args}, Handle(c)
    )
    state = CycleState(c)
    st = pl.pre_score(state, p, all_nodes(c))
    if want == "Skip":
        assert st.code == Code.Skip
        return
    if isinstance(want, str) and want.startswith("Error:"):
        assert st.code == Code.Error
        assert want[len("Error:") :] in st.message()
        return
    assert st.is_success(), st
    raw = pl.score(state, p, all_nodes(c))
    assert raw.tolist() == want_raw
    assert pl.normalize_score(state, p, all_nodes(c), raw.copy()).tolist() == want


HARD_NS_AFFINITY = affinity(
    req=[
        term(
            sel("service", "In", "S1"),
            "region",
            ["default", "subteam2.team2"],
            ns_selector=sel("team", "In", "team1"),
        )
    ]
)


@pytest.mark.parametrize(
    ("case", "namespace", "weight", "want"),
    [
        ("default weight", "default", 1, [100, 100, 0]),
        ("zero weight", "default", 0, "Skip"),
        ("no matching namespace", "subteam1.team2", 1, "Skip"),
        ("matching namespace selector", "subteam1.team1", 1, [100, 100, 0]),
        ("matching namespaces", "subteam2.team2", 1, [100, 100, 0]),
    ],
)
def test_hard_pod_affinity_weight(case: str, namespace: str, weight: int, want: Any) -> None:
    """TestPreferredAffinityWithHardPodAffinitySymmetricWeight."""
    c = cluster(
        [node("node1", labels=CHINA), node("node2", labels=INDIA), node("node3", labels=AZ1)],
        [mk("e1", None, "node1", aff=HARD_NS_AFFINITY), mk("e2", None, "node2", aff=HARD_NS_AFFINITY)],
        NAMESPACES,
    )
    p = Pod(mk("p", {"service": "S1"}, namespace=namespace))
    pl = InterPodAffinity({"hardPodAffinityWeight": weight}, Handle(c))
    state = CycleState(c)
    st = pl.pre_score(state, p, all_nodes(c))
    if want == "Skip":
        assert st.code == Code.Skip
        return
    raw = pl.score(state, p, all_nodes(c))
    assert raw.tolist() == [weight, weight, 0]
    assert pl.normalize_score(state, p, all_nodes(c), raw).tolist() == want


def test_hard_weight_multiplies() -> None:
    c = cluster(
        [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z2"})],
        [mk("e1", None, "a", aff=affinity(req=[term(sel("app", "In", "x"), "zone")]))] * 1,
    )
    p = Pod(mk("p", {"app": "x"}))
    pl = InterPodAffinity({"hardPodAffinityWeight": 7}, Handle(c))
    state = CycleState(c)
    assert pl.pre_score(state, p, all_nodes(c)).is_success()
    assert pl.score(state, p, all_nodes(c)).tolist() == [7, 0]


def test_add_pod_counts_affinity_only_for_pods_matching_all_terms() -> None:
    c = cluster(
        [node("a", labels={"region": "r1", "zone": "z1"}), node("b", labels={"region": "r2", "zone": "z2"})]
    )
    pending = Pod(
        mk(
            "pending",
            aff=affinity(req=[term(sel("foo", "Exists"), "region"), term(sel("bar", "Exists"), "zone")]),
        )
    )
    pl = InterPodAffinity({}, Handle(c))
    state = CycleState(c)
    pl.pre_filter(state, pending)
    pl.add_pod(state, pending, Pod(mk("half", {"foo": ""}, "a")), 0)
    s = state.read(PRE_FILTER_STATE_KEY)
    assert not s.affinity
    assert pl.filter(state, pending, all_nodes(c)).codes.tolist() == [UU, UU]
    pl.add_pod(state, pending, Pod(mk("both", {"foo": "", "bar": ""}, "a")), 0)
    assert s.affinity["region"].tolist() == [1, 0]
    assert s.affinity["zone"].tolist() == [1, 0]
    assert pl.filter(state, pending, all_nodes(c)).codes.tolist() == [0, UU]
