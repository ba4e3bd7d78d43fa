"""NodePorts: rejects nodes where a host port the pod asks for is already in use.

Mirrors framework/plugins/nodeports/node_ports.go (v1.35), with the host ports of a pod as
pkg/scheduler/util GetHostPorts lists them (containers, plus init containers with
restartPolicy Always, i.e. sidecars; ports with hostPort > 0) and a node's used ports as
kube-scheduler/framework/types.go HostPortInfo keeps them (Add/Remove/CheckConflict).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..budget import uninterruptible
from ..errors import InputError
from ..framework import Code, CycleState, Handle, PreFilterResult, Status, Verdicts
from ..framework.diagnosis import Change, Diagnosis, DiagnosisContext, PodPatch
from ..objects import Pod

if TYPE_CHECKING:
    from ..cluster import ClusterState

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"
DEFAULT_PROTOCOL = "TCP"
PROTOCOLS = ("TCP", "UDP", "SCTP")

# (host IP, protocol, host port), sanitized as HostPortInfo does: "" IP is 0.0.0.0, "" protocol TCP.
HostPort = tuple[str, str, int]

_CACHE_KEY = "NodePorts.used"


def _ports_of(container: Any, ident: str, field: str) -> list[HostPort]:
    if not isinstance(container, dict):
        raise InputError("expected an object", obj=ident, field=field)
    raw = container.get("ports") or []
    if not isinstance(raw, list):
        raise InputError("expected a list", obj=ident, field=f"{field}.ports")
    out: list[HostPort] = []
    for i, p in enumerate(raw):
        f = f"{field}.ports[{i}]"
        if not isinstance(p, dict):
            raise InputError("expected an object", obj=ident, field=f)
        hp = p.get("hostPort", 0)
        if hp is None:
            hp = 0
        if isinstance(hp, bool) or not isinstance(hp, int):
            raise InputError(f"must be an integer, got {hp!r}", obj=ident, field=f"{f}.hostPort")
        if hp <= 0:
            continue
        proto = p.get("protocol") or ""
        if proto and proto not in PROTOCOLS:
            raise InputError(
                f"unsupported protocol {proto!r}: TCP, UDP or SCTP", obj=ident, field=f"{f}.protocol"
            )
        ip = p.get("hostIP") or ""
        if not isinstance(ip, str):
            raise InputError("must be a string", obj=ident, field=f"{f}.hostIP")
        out.append((ip or DEFAULT_BIND_ALL_HOST_IP, proto or DEFAULT_PROTOCOL, hp))
    return out


def host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """util.GetHostPorts, sanitized; parsed once and kept in ``pod.cache``."""
    cached: tuple[HostPort, ...] | None = pod.cache.get(NAME)
    if cached is not None:
        return cached
    spec = pod.spec
    ident = pod.ident
    ports: list[HostPort] = []
    for key in ("initContainers", "containers"):
        cs = spec.get(key) or []
        if not isinstance(cs, list):
            raise InputError("expected a list", obj=ident, field=f"spec.{key}")
        for i, c in enumerate(cs):
            # only sidecars (restartPolicy Always) run for the pod's whole life
            if key == "initContainers" and (not isinstance(c, dict) or c.get("restartPolicy") != "Always"):
                continue
            ports.extend(_ports_of(c, ident, f"spec.{key}[{i}]"))
    result = tuple(ports)
    pod.cache[NAME] = result
    return result


class UsedPorts:
    """Every node's HostPortInfo, kept in step with the cluster's pod changes.

    ``by_port[(protocol, port)][ip]`` is the set of nodes whose HostPortInfo holds (ip, protocol,
    port). As upstream's map, it is a set: removing a pod frees its ports on the node even if
    another pod there declared the same one.
    """

    def __init__(self) -> None:
        self.applied = 0
        self.nodes_list: object = None
        self.by_port: dict[tuple[str, int], dict[str, set[int]]] = {}

    def catch_up(self, cluster: ClusterState) -> None:
        with uninterruptible():  # by_port and applied move together (engine/budget.py)
            self._catch_up(cluster)

    def _catch_up(self, cluster: ClusterState) -> None:
        changes = cluster.changes
        if self.nodes_list is not cluster.nodes or self.applied > len(changes):
            self.by_port = {}
            self.applied = 0
            self.nodes_list = cluster.nodes
        for sign, pod, node in changes[self.applied :]:
            for ip, proto, port in host_ports(pod):
                ips = self.by_port.setdefault((proto, port), {})
                if sign > 0:
                    ips.setdefault(ip, set()).add(node)
                else:
                    holders = ips.get(ip)
                    if holders is not None:
                        holders.discard(node)
                        if not holders:
                            del ips[ip]
        self.applied = len(changes)

    def conflicting(self, n: int, want: tuple[HostPort, ...]) -> BoolArray:
        """Over all n nodes: whether any wanted port conflicts (HostPortInfo.CheckConflict)."""
        bad = np.zeros(n, dtype=bool)
        for ip, proto, port in want:
            ips = self.by_port.get((proto, port))
            if not ips:
                continue
            if ip == DEFAULT_BIND_ALL_HOST_IP:
                # 0.0.0.0 conflicts with the same protocol/port on any IP
                keys = list(ips)
            else:
                # another IP conflicts with itself and with 0.0.0.0
                keys = [DEFAULT_BIND_ALL_HOST_IP, ip]
            for k in keys:
                holders = ips.get(k)
                if holders:
                    bad[np.fromiter(holders, dtype=np.int64, count=len(holders))] = True
        return bad


def used_ports(cluster: ClusterState) -> UsedPorts:
    used: UsedPorts | None = cluster.caches.get(_CACHE_KEY)
    if used is None:
        used = UsedPorts()
        cluster.caches[_CACHE_KEY] = used
    used.catch_up(cluster)
    return used


def format_port(p: HostPort) -> str:
    """80/TCP, 8080/UDP on 10.0.0.1."""
    ip, proto, port = p
    where = "" if ip == DEFAULT_BIND_ALL_HOST_IP else f" on {ip}"
    return f"{port}/{proto}{where}"


def ports_conflict(a: HostPort, b: HostPort) -> bool:
    """HostPortInfo.CheckConflict for one pair: same protocol and port, and 0.0.0.0 on either side or
    the same IP."""
    if a[1] != b[1] or a[2] != b[2]:
        return False
    any_ip = DEFAULT_BIND_ALL_HOST_IP
    return a[0] == any_ip or b[0] == any_ip or a[0] == b[0]


class NodePorts:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        pass

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        want = host_ports(pod)
        if not want:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, want)
        return None, Status.success()

    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        want: tuple[HostPort, ...] | None = state.get(PRE_FILTER_STATE_KEY)
        if want is None:
            want = host_ports(pod)
        if not want:
            return Verdicts.all_pass(len(nodes))
        cluster = state.cluster
        bad = used_ports(cluster).conflicting(cluster.n, want)
        return Verdicts.from_mask(bad[nodes], Code.Unschedulable, ERR_REASON)

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """The pods using the host ports the pod asks for; the changes evict them, or drop the ports."""
        want = host_ports(pod)
        c = ctx.cluster
        by_conflict: dict[tuple[tuple[HostPort, str], ...], list[int]] = {}
        for i in nodes.tolist():
            found: set[tuple[HostPort, str]] = set()
            for other in c.pods_on[i]:
                for hp in host_ports(other):
                    for w in want:
                        if ports_conflict(w, hp):
                            found.add((w, other.uid))
            by_conflict.setdefault(tuple(sorted(found)), []).append(i)
        out = []
        by_port: dict[tuple[HostPort, ...], list[int]] = {}
        for conflicts, idx in by_conflict.items():
            members = np.asarray(idx, dtype=np.int64)
            if not conflicts:
                out.append(Diagnosis(members, "no conflicting host port found", {}, None))
                continue
            pods = sorted({uid for _, uid in conflicts})
            keys = [c.pods[u].key for u in pods]
            parts = [f"host port {format_port(w)} is in use by pod {c.pods[u].key}" for w, u in conflicts]
            change = Change(
                "evict",
                "node",
                "evict pod(s) " + ", ".join(keys) + " from the node",
                evict=tuple(pods),
                details={"pods": keys},
            )
            details = {"conflicts": [{"port": format_port(w), "pod": c.pods[u].key} for w, u in conflicts]}
            out.append(Diagnosis(members, "; ".join(parts), details, change))
            ports = tuple(sorted({w for w, _ in conflicts}))
            by_port.setdefault(ports, []).extend(idx)
        for ports, idx in by_port.items():
            patch = PodPatch(drop_ports=ports)
            desc = "don't request host port(s) " + ", ".join(format_port(p) for p in ports)
            change = Change("drop-host-port", "pod", desc, pod=patch)
            out.append(
                Diagnosis(
                    np.asarray(sorted(idx), dtype=np.int64),
                    "the pod asks for host port(s) "
                    + ", ".join(format_port(p) for p in ports)
                    + " in use on the node",
                    {},
                    change,
                )
            )
            if ctx.top:
                ctx.suggest(change)
                for p in ports:
                    p1 = PodPatch(drop_ports=(p,))
                    ctx.suggest(Change("drop-host-port", "pod", f"don't request host port {format_port(p)}", pod=p1),
                    )
        return out
