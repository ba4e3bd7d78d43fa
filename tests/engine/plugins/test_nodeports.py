"""NodePorts (framework/plugins/nodeports/node_ports.go, HostPortInfo in kube-scheduler/framework
types.go), cases after upstream's node_ports_test.go."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.engine.errors import InputError
from schedviz.engine.framework import Code, CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.nodeports import NodePorts, host_ports
from tests.engine.builders import all_nodes, cluster, container, node, pod

REASON = "node(s) didn't have free ports for the requested pod ports"


def ports(*specs: str) -> list[dict[str, Any]]:
    """ "PROTO/IP/PORT" strings as container ports (empty parts are left out)."""
    out = []
    for s in specs:
        proto, ip, port = s.split("/")
        p: dict[str, Any] = {"containerPort": int(port), "hostPort": int(port)}
        if proto:
            p["protocol"] = proto
        if ip:
            p["hostIP"] = ip
        out.append(p)
    return out


def with_ports(name: str, *specs: str, node_name: str | None = None) -> dict[str, Any]:
    return pod(name, node_name=node_name, containers=[container(ports=ports(*specs))])


def verdict(
    incoming: dict[str, Any], existing: list[dict[str, Any]]
) -> tuple[bool, tuple[Code, tuple[str, ...]] | None]:
    """(skipped at PreFilter, filter verdict on node m1 that runs ``existing``)."""
    c = cluster([node("m1")], existing)
    pl = NodePorts({}, Handle(c))
    st = CycleState(c)
    p = Pod(incoming)
    _, s = pl.pre_filter(st, p)
    if s.is_skip():
        return True, None
    assert s.is_success()
    return False, pl.filter(st, p, all_nodes(c)).at(0)


OK = (Code.Success, ())
BAD = (Code.Unschedulable, (REASON,))

CASES: list[tuple[str, list[str], list[list[str]], tuple[Code, tuple[str, ...]]]] = [
    # (case, incoming pod's ports, ports of each pod on m1, verdict)
    ("other port", ["UDP/127.0.0.1/8080"], [["UDP/127.0.0.1/9090"]], OK),
    ("same udp port", ["UDP/127.0.0.1/8080"], [["UDP/127.0.0.1/8080"]], BAD),
    ("same tcp port", ["TCP/127.0.0.1/8080"], [["TCP/127.0.0.1/8080"]], BAD),
    ("different host ip", ["TCP/127.0.0.1/8080"], [["TCP/127.0.0.2/8080"]], OK),
    ("different protocol", ["UDP/127.0.0.1/8080"], [["TCP/127.0.0.1/8080"]], OK),
    (
        "second udp port conflicts",
        ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"],
        [["UDP/127.0.0.1/8080"]],
        BAD,
    ),
    (
        "first tcp port conflicts",
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
        [["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"]],
        BAD,
    ),
    ("wanted 0.0.0.0 conflicts with any ip", ["TCP/0.0.0.0/8001"], [["TCP/127.0.0.1/8001"]], BAD),
    ("ip and 0.0.0.0 wanted", ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"], [["TCP/127.0.0.1/8001"]], BAD),
    ("used 0.0.0.0 conflicts with a wanted ip", ["TCP/127.0.0.1/8001"], [["TCP/0.0.0.0/8001"]], BAD),
    ("0.0.0.0 but another protocol", ["UDP/127.0.0.1/8001"], [["TCP/0.0.0.0/8001"]], OK),
    ("udp on 0.0.0.0", ["UDP/127.0.0.1/8001"], [["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"]], BAD),
    ("empty ip means 0.0.0.0 (wanted)", ["TCP//8001"], [["TCP/127.0.0.1/8001"]], BAD),
    ("empty ip means 0.0.0.0 (used)", ["TCP/127.0.0.1/8001"], [["TCP//8001"]], BAD),
    ("empty protocol means TCP", ["/127.0.0.1/8001"], [["TCP/127.0.0.1/8001"]], BAD),
    ("empty protocol is not UDP", ["/127.0.0.1/8001"], [["UDP/127.0.0.1/8001"]], OK),
    ("SCTP vs SCTP", ["SCTP/127.0.0.1/9"], [["SCTP/127.0.0.1/9"]], BAD),
    (
        "ports of several pods on the node",
        ["TCP/127.0.0.1/81"],
        [["TCP/127.0.0.1/80"], ["TCP/127.0.0.1/81"]],
        BAD,
    ),
    (
        "multiple non-conflicting",
        ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90"],
        [["TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"]],
        OK,
    ),
    (
        "multiple, one conflicting",
        ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90"],
        [["TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"]],
        BAD,
    ),
]


@pytest.mark.parametrize(("case", "want", "used", "expected"), CASES, ids=[c[0] for c in CASES])
def test_filter(
    case: str, want: list[str], used: list[list[str]], expected: tuple[Code, tuple[str, ...]]
) -> None:
    existing = [with_ports(f"e{i}", *u, node_name="m1") for i, u in enumerate(used)]
    skipped, got = verdict(with_ports("p", *want), existing)
    assert not skipped
    assert got == expected


def test_pod_without_host_ports_skips() -> None:
    skipped, _ = verdict(pod("p"), [with_ports("e", "TCP//80", node_name="m1")])
    assert skipped
    # containerPort without hostPort is not a host port
    skipped, _ = verdict(pod("q", containers=[container(ports=[{"containerPort": 80}])]), [])
    assert skipped


def _init(restart: str | None) -> dict[str, Any]:
    c = container("init", ports=[{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}])
    if restart:
        c["restartPolicy"] = restart
    return c


def test_regular_init_container_ports_are_ignored() -> None:
    p = pod("p", initContainers=[_init(None)])
    skipped, _ = verdict(p, [with_ports("e", "TCP/0.0.0.0/8001", node_name="m1")])
    assert skipped


def test_sidecar_init_container_ports_count() -> None:
    p = pod("p", initContainers=[_init("Always")])
    skipped, got = verdict(p, [with_ports("e", "TCP/0.0.0.0/8001", node_name="m1")])
    assert not skipped and got == BAD
    # and a sidecar's ports are in use on its node
    skipped, got = verdict(
        with_ports("q", "TCP/127.0.0.1/8001"), [dict(p, spec=dict(p["spec"], nodeName="m1"))]
    )
    assert got == BAD


def test_ports_follow_pod_changes() -> None:
    c = cluster([node("a"), node("b")], [with_ports("e", "TCP//80", node_name="a")])
    pl = NodePorts({}, Handle(c))
    p = Pod(with_ports("p", "TCP/10.0.0.1/80"))

    def passed() -> list[bool]:
        st = CycleState(c)
        pl.pre_filter(st, p)
        return [bool(x) for x in pl.filter(st, p, all_nodes(c)).passed]

    assert passed() == [False, True]
    other = Pod(with_ports("o", "TCP/10.0.0.1/80"), 7)
    c.add_pod(other, 1)
    assert passed() == [False, False]
    c.remove_pod(c.pods_on[0][0])
    assert passed() == [True, False]
    c.remove_pod(other)
    assert passed() == [True, True]


def test_used_ports_are_a_set_as_upstream() -> None:
    # Two pods on a node declare the same host port; removing one frees it, as HostPortInfo.Remove does.
    c = cluster(
        [node("a")],
        [with_ports("e1", "TCP//80", node_name="a"), with_ports("e2", "TCP//80", node_name="a")],
    )
    pl = NodePorts({}, Handle(c))
    p = Pod(with_ports("p", "TCP//80"))
    st = CycleState(c)
    pl.pre_filter(st, p)
    assert pl.filter(st, p, all_nodes(c)).passed.tolist() == [False]
    c.remove_pod(c.pods_on[0][0])
    st = CycleState(c)
    pl.pre_filter(st, p)
    assert pl.filter(st, p, all_nodes(c)).passed.tolist() == [True]


def test_host_ports_sanitized() -> None:
    p = Pod(with_ports("p", "//80", "UDP/1.2.3.4/53"))
    assert host_ports(p) == (("0.0.0.0", "TCP", 80), ("1.2.3.4", "UDP", 53))


@pytest.mark.parametrize(
    ("port", "field"),
    [
        ({"containerPort": 1, "hostPort": "80"}, "spec.containers[0].ports[0].hostPort"),
        ({"containerPort": 1, "hostPort": 80, "protocol": "ICMP"}, "spec.containers[0].ports[0].protocol"),
    ],
)
def test_bad_ports(port: dict[str, Any], field: str) -> None:
    p = Pod(pod("bad", containers=[container(ports=[port])]))
    with pytest.raises(InputError) as err:
        host_ports(p)
    assert err.value.field == field
