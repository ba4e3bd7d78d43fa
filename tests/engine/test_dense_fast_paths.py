"""The fast paths of dense clusters against the plain ones: the same snapshot, errors and replays.

A production cluster's pods come from a few hundred templates, and the engine reads and replays them
by template: pods of one template share their validation, their resource requests and what plugins
derive from their affinity, tolerations and node selectors (``objects.PodTemplates``); InterPodAffinity
looks only at the existing pods' terms that may select the incoming pod (a label index);
PodTopologySpread's default selector is worked out once per template. Each is checked here against
the plain reading and the plain search, on the production-shaped cluster of ``schedviz bench
--pods-per-node``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from schedviz.engine import objects as objects_module
from schedviz.engine.cluster import ClusterState
from schedviz.engine.framework import Handle
from schedviz.engine.loader import Snapshot, load_documents
from schedviz.engine.objects import Pod
from schedviz.engine.plugins import interpodaffinity, podtopologyspread
from schedviz.engine.runtime.replay import Replay, ReplayOptions
from schedviz.engine.validation import InvalidSnapshot
from schedviz.tools.dense_cluster import DenseShape, objects

SHAPE = DenseShape(nodes=48, pods_per_node=30, pending=80)


@pytest.fixture(scope="module")
def dense_objects() -> list[dict[str, Any]]:
    return list(objects(SHAPE))


def _read(objs: list[dict[str, Any]], share: bool) -> Snapshot:
    # reading with templates shares equal sections between pods: each reading gets its own copy
    return load_documents([("dense.json", {"kind": "List", "items": copy.deepcopy(objs)})], share=share)


def _view(p: Pod) -> tuple[Any, ...]:
    r = p.resources
    return (
        p.key,
        p.uid,
        p.index,
        p.node_name,
        p.phase,
        p.scheduler_name,
        p.priority,
        p.priority_class_name,
        p.preemption_policy,
        p.scheduling_gates,
        p.labels,
        p.meta.annotations,
        p.meta.creation,
        p.meta.owner_refs,
        r.requests,
        r.fit_requests,
        r.nonzero_cpu,
        r.nonzero_memory,
        p.raw,
    )


def test_templated_reading_gives_the_plain_snapshot(dense_objects: list[dict[str, Any]]) -> None:
    shared = _read(dense_objects, share=True)
    plain = _read(dense_objects, share=False)
    assert len(shared.pods) == SHAPE.running + SHAPE.pending
    assert [_view(p) for p in shared.pods] == [_view(p) for p in plain.pods]
    assert [(n.name, n.allocatable, n.taints) for n in shared.nodes] == [
        (n.name, n.allocatable, n.taints) for n in plain.nodes
    ]


def test_pods_of_one_template_share_their_sections_and_caches(dense_objects: list[dict[str, Any]]) -> None:
    snap = _read(dense_objects, share=True)
    by_app: dict[tuple[str, str], list[Pod]] = {}
    for p in snap.pods:
        by_app.setdefault((p.namespace, p.labels["app"]), []).append(p)
    with_affinity = [ps for ps in by_app.values() if "affinity" in ps[0].spec]
    assert with_affinity, "the dense shape gives half of the Deployments a pod anti-affinity"
    for pods in with_affinity:
        first = pods[0]
        for p in pods[1:]:
            assert p.spec["affinity"] is first.spec["affinity"]
            assert p.spec["tolerations"] is first.spec["tolerations"]
            assert p.resources is first.resources
        # running replicas share one template; pending ones (no node) are the same template too
        assert len({id(p.shared) for p in pods}) == 1
    # the plain reading shares nothing
    plain = _read(dense_objects, share=False)
    assert len({id(p.shared) for p in plain.pods}) == len(plain.pods)
    # a template is per namespace: equal specs in two namespaces keep apart
    namespaces_of = {id(p.shared): p.namespace for p in snap.pods}
    for p in snap.pods:
        assert namespaces_of[id(p.shared)] == p.namespace


def _broken(objs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The dense cluster with problems in pods that share templates with valid ones, in the parts
    a template holds and in the parts each pod has of its own."""
    pods = [o for o in objs if o["kind"] == "Pod"]
    edits: list[Callable[[dict[str, Any]], object]] = [
        lambda p: p["spec"]["tolerations"].append({"key": "k", "operator": "Sometimes"}),
        lambda p: p["spec"].__setitem__("priority", True),
        lambda p: p["spec"]["containers"][0]["resources"]["requests"].__setitem__("cpu", "lots"),
        lambda p: p["spec"].__setitem__("nodeName", "Not_A_Node"),
        lambda p: p["metadata"]["labels"].__setitem__("app", "-bad-"),
        lambda p: p["spec"]["volumes"].append(dict(p["spec"]["volumes"][0])),
        lambda p: p["spec"].__setitem__("preemptionPolicy", "Sometimes"),
    ]
    chosen = {7 + 97 * i: edit for i, edit in enumerate(edits)}
    # the same broken template twice, so the second one comes from the template's cache
    chosen.update({7 + 97 * i + 500: edit for i, edit in enumerate(edits)})
    for k, p in enumerate(pods):
        if k in chosen:
            p = copy.deepcopy(p)
            chosen[k](p)
        yield p
    yield from (o for o in objs if o["kind"] != "Pod")


def test_templated_reading_reports_the_plain_errors(dense_objects: list[dict[str, Any]]) -> None:
    broken = list(_broken(dense_objects))
    problems: list[list[str]] = []
    for share in (True, False):
        with pytest.raises(InvalidSnapshot) as err:
            _read(broken, share=share)
        problems.append([str(p) for p in err.value.problems])
    assert problems[0] == problems[1]
    assert len(problems[0]) == 2 * 7
    joined = "\n".join(problems[0])
    for expected in ("Sometimes", "priority", "lots", "Not_A_Node", "-bad-", "Duplicate value"):
        assert expected in joined


def test_dense_replay_matches_the_plain_one(
    dense_objects: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = Replay(_read(dense_objects, share=True), options=ReplayOptions(all_nodes=True)).run().to_dict()

    # the plain search: every registered group of existing pods' terms, every Service scanned
    def every_group(self: Any, labels: Any, anti: bool = False) -> list[Any]:
        return list(self.groups.values())

    monkeypatch.setattr(interpodaffinity._Registry, "candidates", every_group)
    monkeypatch.setattr(podtopologyspread, "default_selector", podtopologyspread._default_selector)
    # every resource score, fit and image score computed on the cycle's nodes, not kept per node
    monkeypatch.setattr(ClusterState, "memo_per_node", lambda self, key, nodes, compute: compute(nodes))
    # spreading's counts caught up pod by pod, never from the index's arrays
    monkeypatch.setattr(podtopologyspread, "_DELTA_FROM_INDEX", 1 << 60)
    plain = Replay(_read(dense_objects, share=False), options=ReplayOptions(all_nodes=True)).run().to_dict()

    assert len(fast["cycles"]) == SHAPE.pending
    for a, b in zip(fast["cycles"], plain["cycles"], strict=True):
        for c in (a, b):
            for stage in c["stages"]:
                stage.pop("durationMicros")
        assert a == b
    # the cluster's existing anti-affinity and spreading took part
    scored = {
        p
        for c in fast["cycles"]
        for n in c["nodes"].values()
        for p, v in (n.get("scores") or {}).items()
        if not v.get("skipped") and v["raw"] != 0
    }
    assert {"InterPodAffinity", "PodTopologySpread"} <= scored


def test_the_cache_filled_in_bulk_is_the_one_filled_pod_by_pod(dense_objects: list[dict[str, Any]]) -> None:
    snap = _read(dense_objects, share=True)
    bulk = snap.cluster()
    one = ClusterState(snap.nodes, snap.store())
    for p in snap.running:
        one.add_pod(p, one.index[p.node_name])
    assert bulk.resource_names() == one.resource_names()
    for r in one.resource_names():
        assert bulk.requested(r).tolist() == one.requested(r).tolist(), r
    assert bulk.nonzero_cpu.tolist() == one.nonzero_cpu.tolist()
    assert bulk.nonzero_memory.tolist() == one.nonzero_memory.tolist()
    assert bulk.pod_count.tolist() == one.pod_count.tolist()
    assert bulk.pod_node == one.pod_node and bulk.generation == one.generation
    assert [[p.uid for p in ps] for ps in bulk.pods_on] == [[p.uid for p in ps] for ps in one.pods_on]
    assert [(s, p.uid, n) for s, p, n in bulk.changes] == [(s, p.uid, n) for s, p, n in one.changes]
    assert [(g.namespace, g.labels, [p.uid for p in g.pods], g.nodes) for g in bulk.groups()] == [
        (g.namespace, g.labels, [p.uid for p in g.pods], g.nodes) for g in one.groups()
    ]
    assert int(bulk.pod_count.sum()) == SHAPE.running


def test_pods_past_the_compaction_threshold_hold_one_copy_of_their_template(
    dense_objects: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(objects_module, "COMPACT_AFTER_PODS", 0)
    compact = _read(dense_objects, share=True)
    plain = _read(dense_objects, share=False)
    assert [_view(p) for p in compact.pods] == [_view(p) for p in plain.pods]
    by_template: dict[int, list[Pod]] = {}
    for p in compact.pods:
        by_template.setdefault(id(p.shared), []).append(p)
    shared_specs = 0
    for pods in by_template.values():
        first = pods[0]
        for p in pods[1:]:
            for k, v in p.spec.items():
                if k not in ("nodeName", "volumes", "containers", "initContainers"):
                    assert v is first.spec[k]
                    shared_specs += 1
            for c, fc in zip(p.spec["containers"], first.spec["containers"], strict=True):
                assert c["volumeMounts"] is not fc["volumeMounts"]  # named per pod
                assert c["image"] is fc["image"] and c["resources"] is fc["resources"]
            assert p.spec["volumes"][0]["projected"] is first.spec["volumes"][0]["projected"]
            assert p.meta.owner_refs[0] is first.meta.owner_refs[0]
    assert shared_specs > 1000
    # and the replay is the plain one
    fast = Replay(compact, options=ReplayOptions(all_nodes=True)).run().to_dict()
    slow = Replay(plain, options=ReplayOptions(all_nodes=True)).run().to_dict()
    for a, b in zip(fast["cycles"], slow["cycles"], strict=True):
        for c in (a, b):
            for stage in c["stages"]:
                stage.pop("durationMicros")
        assert a == b


def test_a_released_replay_is_freed_without_waiting_for_a_full_collection(
    dense_objects: list[dict[str, Any]],
) -> None:
    import gc

    def garbage_after(release: bool) -> int:
        gc.collect()
        gc.disable()
        try:
            snap = _read(dense_objects, share=True)
            rp = Replay(snap, options=ReplayOptions(all_nodes=True))
            for _ in rp.cycles():
                pass
            if release:
                rp.release()
            del rp, snap
            return gc.collect()  # what only a cycle collection frees
        finally:
            gc.enable()

    held = garbage_after(False)
    released = garbage_after(True)
    assert held > 20 * SHAPE.running  # the whole cluster, pods and their objects, held by cycles
    assert released < held / 5  # the framework's own objects and the records


def test_the_spread_index_filled_in_bulk_is_the_one_filled_pod_by_pod(
    dense_objects: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """PodTopologySpread's index of assigned pods takes a run of additions at once (the first sync
    adds the snapshot's every running pod): the same slots, codes and vocabularies as one by one."""
    snap = _read(dense_objects, share=True)
    cluster = snap.cluster()
    index = podtopologyspread._PodIndex
    bulk = index(cluster)
    with monkeypatch.context() as m:
        m.setattr(index, "_add_many", lambda self, added: [self._add(p, n) for _, p, n in added] and None)
        one = index(cluster)

    def state(ix: Any) -> tuple[Any, ...]:
        k = ix.size
        return (
            k,
            ix.node[:k].tolist(),
            ix.counted[:k].tolist(),
            ix.ns[:k].tolist(),
            ix.labels,
            ix.slot_of,
            ix.ns_codes,
            {key: (codes[:k].tolist(), vocab) for key, (codes, vocab) in ix.columns.items()},
        )

    assert state(bulk) == state(one) and bulk.size == SHAPE.running
    # with label columns already built, and a removal between two runs of additions
    keys = sorted({key for p in snap.running for key in p.labels})
    for ix in (bulk, one):
        for key in keys:
            ix.column(key)
    assert state(bulk) == state(one)
    # the columns built at once are the ones built pod by pod
    plain_columns: dict[str, Any] = {}
    for key in keys:
        vocab: dict[str, int] = {}
        codes: list[int] = []
        for lab in one.labels:
            v = lab.get(key)
            if v is None:
                codes.append(-1)
            else:
                codes.append(vocab.setdefault(v, len(vocab)))
        plain_columns[key] = (codes, vocab)
    assert {key: (c[: one.size].tolist(), v) for key, (c, v) in one.columns.items()} == plain_columns
    pods = [(1, p, cluster.index[p.node_name]) for p in snap.running[:300]]
    bulk._add_many(pods[:150])
    bulk._remove(pods[10][1])
    bulk._add_many(pods[150:])
    for _, p, n in pods[:150]:
        one._add(p, n)
    one._remove(pods[10][1])
    for _, p, n in pods[150:]:
        one._add(p, n)
    assert state(bulk) == state(one) and len(keys) > 1


def test_spread_counts_caught_up_from_the_index_are_the_ones_counted_pod_by_pod(
    dense_objects: list[dict[str, Any]],
) -> None:
    """A selector's counts left behind by many changes (the pods of other templates placed,
    removed, placed again) are caught up from the index's arrays: the counts a pod-by-pod catch-up
    gives, and the ones counted afresh."""
    import random

    snap = _read(dense_objects, share=True)
    cluster = snap.cluster()
    index = podtopologyspread._PodIndex(cluster)
    spread = podtopologyspread.PodTopologySpread({}, Handle(cluster))
    selectors = {
        (p.namespace, podtopologyspread._selector_key(c.selector)): (p.namespace, c.selector)
        for p in snap.pending
        for c in spread.constraints(p, cluster.objects).soft
    }
    assert len(selectors) > 3
    by_index = {k: podtopologyspread._Counts(index, ns, sel, index.pos) for k, (ns, sel) in selectors.items()}
    by_pod = {k: podtopologyspread._Counts(index, ns, sel, index.pos) for k, (ns, sel) in selectors.items()}
    rng = random.Random(5)
    placed: list[Pod] = []
    running = list(snap.running)
    for round_ in range(6):
        for _ in range(40):  # well past the run caught up pod by pod
            if placed and rng.random() < 0.3:
                cluster.remove_pod(placed.pop(rng.randrange(len(placed))))
            elif rng.random() < 0.2:
                victim = running.pop(rng.randrange(len(running)))
                cluster.remove_pod(victim)
            else:
                p = snap.pending[rng.randrange(len(snap.pending))]
                if cluster.node_of(p) is None:
                    cluster.add_pod(p, rng.randrange(cluster.n))
                    placed.append(p)
        for k, (ns, sel) in selectors.items():
            a = by_index[k].sync(cluster, index)
            b = by_pod[k].sync(cluster)
            assert a.tolist() == b.tolist(), (round_, k)
            assert a.tolist() == index.per_node(ns, sel).tolist()
    assert any(c.counts.any() for c in by_index.values())


def test_the_affinity_registry_built_by_template_is_the_one_built_pod_by_pod(
    dense_objects: list[dict[str, Any]],
) -> None:
    """InterPodAffinity's registry of assigned pods with affinity works out once per template which
    pods have terms: the same groups, nodes and label index as pod by pod."""
    snap = _read(dense_objects, share=True)
    cluster = snap.cluster()
    registry = interpodaffinity._Registry
    bulk = registry(cluster)
    one = object.__new__(registry)
    one.groups = {}
    one._scored = interpodaffinity._LabelIndex(interpodaffinity._scored_terms)
    one._anti = interpodaffinity._LabelIndex(interpodaffinity._anti_terms)
    for p in cluster.assigned_pods():
        node = cluster.node_of(p)
        assert node is not None
        one._apply(1, p, node)

    def state(r: Any) -> tuple[Any, ...]:
        return (
            [(sig, g.terms, g.nodes) for sig, g in r.groups.items()],
            [(list(ix.any), [(k, list(v)) for k, v in ix.by_label.items()]) for ix in (r._scored, r._anti)],
        )

    assert state(bulk) == state(one)
    assert 0 < sum(len(g.nodes) for g in bulk.groups.values()) < SHAPE.running


def test_json_pods_find_their_templates_as_by_content_key(dense_objects: list[dict[str, Any]]) -> None:
    """Pods decoded from JSON are keyed by their msgpack encoding (``objects._json_content_key``):
    the same templates as ``content_key`` gives, also where values differ only in type."""
    pods = [copy.deepcopy(o) for o in dense_objects if o.get("kind") == "Pod"]
    odd: list[Any] = [1, 1.0, True, "1", None, [1], {"1": 1}, -0.0, 0.0, 2**70, "\ud800", [[1]], [1, [1]]]
    for i, value in enumerate(odd * 3):  # each odd value in three pods of one template
        p = copy.deepcopy(pods[0])
        p["metadata"]["name"] = f"odd-{i}"
        p["spec"]["x-odd"] = value
        pods.append(p)

    def partition(json_only: bool) -> list[int]:
        templates = objects_module.PodTemplates()
        seen: dict[int, int] = {}
        out = []
        for p in pods:
            t = templates.template_of(p, json_only=json_only)
            assert t is not None
            out.append(seen.setdefault(id(t), len(seen)))
        return out

    fast = partition(True)
    assert fast == partition(False)
    assert len(set(fast[-len(odd) :])) == len(odd)
    assert objects_module._json_content_key(2**70) == ("content", objects_module.content_key(2**70))
