"""The cluster as the scheduler's cache sees it, laid out as arrays over nodes.

Node ``i`` everywhere is the i-th node of the snapshot (input order). Per-node quantities are numpy
arrays so that plugins judge every node with a handful of vectorised operations. Pods assigned to
nodes are grouped by (namespace, labels) so that label selectors are evaluated once per group, not
once per pod.

Mirrors what pkg/scheduler/backend/cache (cache.go, node_tree.go, snapshot.go) keeps: only
non-terminal pods (the scheduler's pod informer drops Succeeded/Failed pods), node order from the
node tree (zones visited round-robin).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from . import quantity
from .budget import uninterruptible
from .objects import KubeObject, Node, Pod

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")
REGION_LABELS = ("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region")


def zone_key(labels: dict[str, str]) -> str:
    """component-helpers/node/topology GetZoneKey: region and zone, beta labels first."""
    zone = labels.get(ZONE_LABELS[0], labels.get(ZONE_LABELS[1], ""))
    region = labels.get(REGION_LABELS[0], labels.get(REGION_LABELS[1], ""))
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


def node_tree_order(nodes: list[Node]) -> list[int]:
    """Node indices in the order backend/cache/node_tree.go lists them: one node per zone in turn."""
    zones: dict[str, list[int]] = {}
    for i, n in enumerate(nodes):
        zones.setdefault(zone_key(n.labels), []).append(i)
    lists = list(zones.values())
    order: list[int] = []
    depth = 0
    while len(order) < len(nodes):
        for members in lists:
            if depth < len(members):
                order.append(members[depth])
        depth += 1
    return order


@dataclass
class LabelColumn:
    """One node label key over all nodes: ``codes[i]`` is the value's code, -1 when the label is absent."""

    codes: npt.NDArray[np.int32]
    vocab: dict[str, int]
    values: list[str]

    @property
    def present(self) -> BoolArray:
        out: BoolArray = self.codes >= 0
        return out

    def equals(self, value: str) -> BoolArray:
        code = self.vocab.get(value)
        if code is None:
            return np.zeros(len(self.codes), dtype=bool)
        out: BoolArray = self.codes == code
        return out

    def isin(self, values: Iterable[str]) -> BoolArray:
        codes = [self.vocab[v] for v in values if v in self.vocab]
        if not codes:
            return np.zeros(len(self.codes), dtype=bool)
        if len(codes) == 1:
            one: BoolArray = self.codes == codes[0]
            return one
        return np.isin(self.codes, np.asarray(codes, dtype=np.int32))


@dataclass
class PodGroup:
    """Assigned pods that share a namespace and a label set."""

    namespace: str
    labels: dict[str, str]
    pods: list[Pod] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)
    _array: IntArray | None = None

    def node_array(self) -> IntArray:
        if self._array is None or len(self._array) != len(self.nodes):
            self._array = np.asarray(self.nodes, dtype=np.int64)
        return self._array


class ObjectStore:
    """Every non-Node, non-Pod object of the snapshot, by kind."""

    def __init__(self, objects: Iterable[KubeObject] = ()) -> None:
        self._by_kind: dict[str, list[KubeObject]] = {}
        self._by_key: dict[tuple[str, str], KubeObject] = {}
        # What plugins derive from these objects alone (e.g. a pod template's default spreading
        # selector, from the Services and controllers); emptied whenever an object is added.
        self.memo: dict[Hashable, Any] = {}
        for o in objects:
            self.add(o)

    def add(self, obj: KubeObject) -> None:
        self._by_kind.setdefault(obj.kind, []).append(obj)
        self._by_key.setdefault((obj.kind, obj.key), obj)  # the first of a key, as a scan finds it
        self.memo.clear()

    def of_kind(self, kind: str) -> list[KubeObject]:
        return self._by_kind.get(kind, [])

    def get(self, kind: str, key: str) -> KubeObject | None:
        return self._by_key.get((kind, key))

    def kinds(self) -> dict[str, int]:
        return {k: len(v) for k, v in self._by_kind.items()}

    def namespace_labels(self, name: str) -> dict[str, str]:
        ns = self.get("Namespace", name)
        return ns.meta.labels if ns is not None else {}


class _NodeMemo:
    """One function's value on every node, as of ``pos`` in ``ClusterState.changes``."""

    __slots__ = ("pos", "values")

    def __init__(self, values: IntArray, pos: int) -> None:
        self.values = values
        self.pos = pos


_NODE_MEMO = "cluster/per-node memo"
# distinct keys kept per cluster before the memo starts afresh (each holds one int64 per node)
NODE_MEMO_LIMIT = 256


class ClusterState:
    """Nodes and the pods placed on them; mutated as pods are assumed, evicted or bound."""

    def __init__(self, nodes: list[Node], objects: ObjectStore | None = None) -> None:
        self.nodes: list[Node] = nodes
        self.n: int = len(nodes)
        self.names: list[str] = [n.name for n in nodes]
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.objects: ObjectStore = objects or ObjectStore()
        self.tree_order: IntArray = np.asarray(node_tree_order(nodes), dtype=np.int64)
        self.unschedulable: BoolArray = np.asarray([n.unschedulable for n in nodes], dtype=bool)
        self._alloc: dict[str, IntArray] = {}
        self._requested: dict[str, IntArray] = {}
        resources = {r for n in nodes for r in n.allocatable}
        resources |= {quantity.CPU, quantity.MEMORY, quantity.EPHEMERAL_STORAGE, quantity.PODS}
        for r in sorted(resources):
            self._alloc[r] = np.asarray([n.allocatable.get(r, 0) for n in nodes], dtype=np.int64)
            self._requested[r] = np.zeros(self.n, dtype=np.int64)
        self.nonzero_cpu: IntArray = np.zeros(self.n, dtype=np.int64)
        self.nonzero_memory: IntArray = np.zeros(self.n, dtype=np.int64)
        self.pod_count: IntArray = np.zeros(self.n, dtype=np.int64)
        self._labels: dict[str, LabelColumn] = {}
        self.pods_on: list[list[Pod]] = [[] for _ in nodes]
        self.pod_node: dict[str, int] = {}
        self.pods: dict[str, Pod] = {}
        self._groups: dict[tuple[str, frozenset[tuple[str, str]]], PodGroup] = {}
        self.generation: int = 0
        self.caches: dict[str, Any] = {}
        # Every add_pod (+1) / remove_pod (-1) in order, so caches can catch up incrementally.
        self.changes: list[tuple[int, Pod, int]] = []

    # ----- resources -----------------------------------------------------------------------
    def alloc(self, resource: str) -> IntArray:
        a = self._alloc.get(resource)
        if a is None:
            a = np.zeros(self.n, dtype=np.int64)
            self._alloc[resource] = a
        return a

    def requested(self, resource: str) -> IntArray:
        if resource == quantity.PODS:
            return self.pod_count
        a = self._requested.get(resource)
        if a is None:
            a = np.zeros(self.n, dtype=np.int64)
            self._requested[resource] = a
        return a

    def resource_names(self) -> list[str]:
        return sorted(set(self._alloc) | set(self._requested))

    def memo_per_node(self, key: Hashable, nodes: IntArray, compute: Callable[[IntArray], IntArray]) -> IntArray:
        """``compute(nodes)``, answered from a memo of its value on every node kept current through
        ``changes``. For functions of each node's own state and of what ``key`` names alone
        (elementwise: a node's value never depends on another node's): a resource score or fit
        given the pod's requests. A cycle places one pod, so the pods of one template are computed
        over every node once, then only on the nodes whose pods changed since."""
        memo: dict[Hashable, _NodeMemo] = self.caches.setdefault(_NODE_MEMO, {})
        entry = memo.get(key)
        changes = self.changes
        if entry is None or entry.pos > len(changes):
            if len(memo) >= NODE_MEMO_LIMIT:
                memo.clear()
            values = np.asarray(compute(np.arange(self.n, dtype=np.int64)), dtype=np.int64)
            entry = memo[key] = _NodeMemo(values, len(changes))
        elif entry.pos < len(changes):
            touched = np.unique(np.fromiter((node for _, _, node in changes[entry.pos :]), dtype=np.int64))
            fresh = np.asarray(compute(touched), dtype=np.int64)
            with uninterruptible():  # the values and pos move together (engine/budget.py)
                entry.values[touched] = fresh
                entry.pos = len(changes)
        out: IntArray = entry.values[nodes]
        return out

    @contextmanager
    def node_memo_suspended(self) -> Iterator[None]:
        """For a what-if that writes nodes' allocatable (or other per-node arrays) in place and
        puts them back before it ends: ``memo_per_node`` answers afresh meanwhile, and what it held
        before is its memo again afterwards (caught up through ``changes`` as usual)."""
        saved = self.caches.pop(_NODE_MEMO, None)
        try:
            yield
        finally:
            if saved is None:
                self.caches.pop(_NODE_MEMO, None)
            else:
                self.caches[_NODE_MEMO] = saved

    # ----- labels --------------------------------------------------------------------------
    def label(self, key: str) -> LabelColumn:
        col = self._labels.get(key)
        if col is None:
            vocab: dict[str, int] = {}
            codes = np.full(self.n, -1, dtype=np.int32)
            for i, node in enumerate(self.nodes):
                v = node.labels.get(key)
                if v is not None:
                    codes[i] = vocab.setdefault(v, len(vocab))
            col = LabelColumn(codes, vocab, list(vocab))
            self._labels[key] = col
        return col

    # ----- pods ----------------------------------------------------------------------------
    def add_pod(self, pod: Pod, node: int) -> None:
        """Account ``pod`` on node index ``node`` (NodeInfo.AddPod)."""
        with uninterruptible():  # never half done when a budget stops the cycle (engine/budget.py)
            self._add_pod(pod, node)

    def _add_pod(self, pod: Pod, node: int) -> None:
        if pod.uid in self.pod_node:
            raise ValueError(f"pod {pod.key} is already on node {self.names[self.pod_node[pod.uid]]}")
        self.pod_node[pod.uid] = node
        self.pods[pod.uid] = pod
        self.pods_on[node].append(pod)
        self._account(pod, node, 1)
        gk = (pod.namespace, frozenset(pod.labels.items()))
        g = self._groups.get(gk)
        if g is None:
            g = PodGroup(pod.namespace, pod.labels)
            self._groups[gk] = g
        g.pods.append(pod)
        g.nodes.append(node)
        self.changes.append((1, pod, node))
        self.generation += 1

    def add_pods(self, placed: Iterable[tuple[Pod, int]]) -> None:
        """``add_pod`` for each (pod, node index) in order, with the resources summed per node in
        arrays: the scheduler cache filled from a snapshot's 150,000 running pods. Pods of one
        template share their ``PodResources`` (``objects.PodTemplates``): their requests are added
        once per template, times the template's pods on each node."""
        with uninterruptible():
            pod_node = self.pod_node
            pods = self.pods
            pods_on = self.pods_on
            groups = self._groups
            changes = self.changes
            names = self.names
            by_resources: dict[int, tuple[Any, list[int]]] = {}
            group_of: dict[tuple[str, tuple[tuple[str, str], ...]], PodGroup] = {}
            count = 0
            for pod, node in placed:
                uid = pod.meta.uid
                if uid in pod_node:
                    raise ValueError(f"pod {pod.key} is already on node {names[pod_node[uid]]}")
                pod_node[uid] = node
                pods[uid] = pod
                pods_on[node].append(pod)
                res = pod.resources
                entry = by_resources.get(id(res))
                if entry is None:
                    entry = by_resources[id(res)] = (res, [])
                entry[1].append(node)
                labels = pod.meta.labels
                short = (pod.meta.namespace, tuple(labels.items()))
                g = group_of.get(short)
                if g is None:
                    gk = (short[0], frozenset(short[1]))
                    g = groups.get(gk)
                    if g is None:
                        g = groups[gk] = PodGroup(short[0], labels)
                    group_of[short] = g
                g.pods.append(pod)
                g.nodes.append(node)
                changes.append((1, pod, node))
                count += 1
            if not count:
                return
            n = self.n
            for res, where in by_resources.values():
                per_node = np.bincount(np.asarray(where, dtype=np.int64), minlength=n)
                for r, v in res.requests.items():
                    if r == quantity.PODS:
                        continue
                    column = self.requested(r)  # made even for a zero request, as add_pod makes it
                    if v:
                        column += per_node * np.int64(v)
                if res.nonzero_cpu:
                    self.nonzero_cpu += per_node * np.int64(res.nonzero_cpu)
                if res.nonzero_memory:
                    self.nonzero_memory += per_node * np.int64(res.nonzero_memory)
                self.pod_count += per_node
            self.generation += count

    def release(self) -> None:
        """Forget every pod and cache (``runtime.replay.Replay.release``)."""
        self.caches.clear()
        self.changes.clear()
        self.pods.clear()
        self.pod_node.clear()
        self._groups.clear()
        for pods in self.pods_on:
            pods.clear()

    def remove_pod(self, pod: Pod) -> int:
        """Take ``pod`` off its node (NodeInfo.RemovePod); returns the node index it was on."""
        with uninterruptible():
            return self._remove_pod(pod)

    def _remove_pod(self, pod: Pod) -> int:
        node = self.pod_node.pop(pod.uid)
        del self.pods[pod.uid]
        self.pods_on[node] = [p for p in self.pods_on[node] if p.uid != pod.uid]
        self._account(pod, node, -1)
        g = self._groups[(pod.namespace, frozenset(pod.labels.items()))]
        try:
            k = g.pods.index(pod)  # by identity, at C speed: groups can hold thousands of pods
        except ValueError:
            k = next(i for i, p in enumerate(g.pods) if p.uid == pod.uid)
        del g.pods[k]
        del g.nodes[k]
        g._array = None
        self.changes.append((-1, pod, node))
        self.generation += 1
        return node

    def _account(self, pod: Pod, node: int, sign: int) -> None:
        for r, v in pod.resources.requests.items():
            if r == quantity.PODS:
                continue
            self.requested(r)[node] += sign * v
        self.nonzero_cpu[node] += sign * pod.resources.nonzero_cpu
        self.nonzero_memory[node] += sign * pod.resources.nonzero_memory
        self.pod_count[node] += sign

    def groups(self) -> Iterator[PodGroup]:
        """Non-empty groups of assigned pods sharing namespace and labels."""
        return (g for g in self._groups.values() if g.pods)

    def node_of(self, pod: Pod) -> int | None:
        return self.pod_node.get(pod.uid)

    def assigned_pods(self) -> Iterator[Pod]:
        return iter(self.pods.values())
