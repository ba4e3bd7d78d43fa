"""explain(): why here, why not there, and what would make the pod fit (every change checked)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from schedviz.cli import main
from schedviz.engine import InputError, ReplayOptions, load_config, replay
from schedviz.engine.explain import Explanation, Fix, explain, format_amount, format_bytes, node_story
from schedviz.engine.loader import Snapshot
from schedviz.engine.objects import KubeObject, Node, Pod
from tests.engine.builders import container, node, pod
from tests.engine.plugins._storage_builders import pv, pvc

Z = "topology.kubernetes.io/zone"
GPU_TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def snapshot(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], objects: list[dict[str, Any]] | None = None
) -> Snapshot:
    return Snapshot(
        nodes=[Node(copy.deepcopy(n)) for n in nodes],
        pods=[Pod(copy.deepcopy(p), i) for i, p in enumerate(pods)],
        objects=[KubeObject(copy.deepcopy(o)) for o in objects or []],
    )


def passes_on(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], target: str, node_name: str, objects: Any = None
) -> bool:
    """Independent check through a plain replay with every node filtered: does ``target`` pass
    Filter on ``node_name``?"""
    trace = replay(snapshot(nodes, pods, objects), options=ReplayOptions(all_nodes=True))
    cycle = trace.cycle(target)
    assert cycle.filter_codes is not None
    return int(cycle.filter_codes[trace.node_names.index(node_name)]) == 0


def fixes_for(ex: Explanation, node_name: str, plugin: str | None = None) -> list[Fix]:
    return [f for f in ex.fixes if node_name in f.nodes and (plugin is None or f.plugin == plugin)]


def only_node_affinity_score(weight: int = 2) -> Any:
    raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "score": {
                        "disabled": [{"name": "*"}],
                        "enabled": [{"name": "NodeAffinity", "weight": weight}],
                    }
                },
            }
        ],
    }
    return load_config(raw)


def preferred(*terms: tuple[int, str, str]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": w,
                    "preference": {"matchExpressions": [{"key": k, "operator": "In", "values": [v]}]},
                }
                for w, k, v in terms
            ]
        }
    }


# ----- why here? -----------------------------------------------------------------------------------
def test_winner_runner_up_and_weighted_differences() -> None:
    # Raw NodeAffinity scores 8, 5, 3, 0; normalized 100*s/8 (integer): 100, 62, 37, 0; weight 2.
    nodes = [
        node("x", labels={"disk": "ssd", "zone": "a"}),
        node("y", labels={"disk": "ssd"}),
        node("z", labels={"zone": "a"}),
        node("w"),
    ]
    pods = [pod("p", affinity=preferred((5, "disk", "ssd"), (3, "zone", "a")))]
    ex = explain(snapshot(nodes, pods), "default/p", config=only_node_affinity_score(), nodes=["z", "w"])
    assert ex.result == "Scheduled" and ex.selected_node == "x" and ex.winner_total == 200
    assert ex.tied == ["x"]
    ru = ex.runner_up
    assert ru is not None and ru.node == "y" and ru.total == 124 and ru.margin == 76 and not ru.tied
    assert ru.plugins == {
        "NodeAffinity": {
            "weight": 2,
            "winner": 200,
            "other": 124,
            "difference": 76,
            "winnerRaw": 8,
            "otherRaw": 5,
        }
    }
    by_node = {c.node: c for c in ex.comparisons}
    assert by_node["z"].margin == 126 and by_node["z"].plugins["NodeAffinity"]["other"] == 74
    assert by_node["w"].margin == 200 and by_node["w"].plugins["NodeAffinity"]["otherRaw"] == 0
    d = ex.to_dict()
    assert d["winner"]["runnerUp"]["node"] == "y" and d["nodes"] == {"total": 4, "feasible": 4, "rejected": 0}
    assert "runner-up y: total 124, 76 behind" in ex.to_text()


def test_ties_report_the_whole_tie_set() -> None:
    nodes = [node("b1", labels={"disk": "ssd"}), node("b2", labels={"disk": "ssd"}), node("c")]
    pods = [pod("p", affinity=preferred((1, "disk", "ssd")))]
    ex = explain(snapshot(nodes, pods), "default/p", config=only_node_affinity_score())
    assert ex.selected_node == "b1" and ex.tied == ["b1", "b2"]
    assert ex.runner_up is not None and ex.runner_up.node == "b2" and ex.runner_up.tied
    assert ex.runner_up.margin == 0
    assert "tied with b2" in ex.to_text()


def test_earlier_cycles_are_replayed_first() -> None:
    # p1 is queued first and takes 3 of the node's 4 CPUs; p2 then lacks 2 CPUs exactly.
    nodes = [node("n", cpu="4")]
    pods = [pod("p1", cpu="3"), pod("p2", cpu="3")]
    ex = explain(snapshot(nodes, pods), "default/p2")
    assert ex.seq == 2 and ex.result == "Unschedulable"
    (fix,) = ex.fixes
    assert fix.plugin == "NodeResourcesFit" and fix.reasons == ("Insufficient cpu",)
    assert fix.diagnosis == "needs 2 more CPU (request 3, 1 free of 4 allocatable)"
    assert fix.details["cpu"]["deficit"] == 2000 and fix.verdict == "fits"
    assert ex.scheduler["result"] == "Unschedulable"


# ----- what would make it fit --------------------------------------------------------------------
def test_untolerated_taint_suggestion_is_checked() -> None:
    nodes = [node("gpu", cpu="4", taints=[GPU_TAINT]), node("small", cpu="1")]
    pods = [pod("p", cpu="2")]
    ex = explain(snapshot(nodes, pods), "default/p", nodes=["gpu"])
    assert ex.result == "Unschedulable"
    (fix,) = fixes_for(ex, "gpu")
    assert fix.plugin == "TaintToleration" and fix.code == "UnschedulableAndUnresolvable"
    assert fix.diagnosis == "untolerated taint(s): dedicated=gpu:NoSchedule"
    assert fix.change is not None and fix.change.description == "tolerate dedicated=gpu:NoSchedule"
    assert fix.verdict == "fits" and fix.passes == ["gpu"] and fix.more_feasible == 1
    toleration = {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    assert fix.change.details["tolerations"] == [toleration]
    # the same toleration, applied by hand, lets a plain replay schedule the pod there
    assert not passes_on(nodes, pods, "default/p", "gpu")
    tolerating = pod("p", cpu="2", tolerations=[toleration])
    trace = replay(snapshot(nodes, [tolerating]))
    assert trace.cycles[0].selected_node == "gpu"
    # ranked with the other single changes that free one node: the pod asking for no more than
    # small's 1 CPU, or small getting 1 more CPU (node changes after pod changes on ties)
    ranked = [(s.change.description, s.feasible_nodes, s.nodes) for s in ex.suggestions]
    assert ranked == [
        ("request at most 1 CPU (the pod requests 2)", 1, ["small"]),
        ("tolerate dedicated=gpu:NoSchedule", 1, ["gpu"]),
        (
            "add 1 CPU of allocatable capacity to the node (it is too small for the pod even empty)",
            1,
            ["small"],
        ),
    ]
    assert ex.comparisons[0].fixes == ["tolerate dedicated=gpu:NoSchedule -> fits (checked)"]


def test_a_change_that_still_fails_is_reported_with_the_next_change() -> None:
    nodes = [node("t", memory="1Gi", taints=[GPU_TAINT])]
    pods = [pod("p", memory="2Gi")]
    ex = explain(snapshot(nodes, pods), "default/p", nodes=["t"])
    (fix,) = ex.fixes
    assert fix.change is not None and fix.change.description == "tolerate dedicated=gpu:NoSchedule"
    assert fix.verdict == "still-fails" and fix.passes == []
    (then,) = fix.then
    assert (then.plugin, then.code, then.reasons) == (
        "NodeResourcesFit",
        "UnschedulableAndUnresolvable",
        ("Insufficient memory",),
    )
    (nxt,) = then.next
    assert nxt.change is not None and nxt.verdict == "fits"
    assert nxt.change.description == (
        "add 1Gi memory of allocatable capacity to the node (it is too small for the pod even empty)"
    )
    assert nxt.details["memory"]["neverFits"] is True
    assert fix.fits_with_more()
    assert node_story(ex.fixes, "t") == [
        "tolerate dedicated=gpu:NoSchedule [alone: would then fail NodeResourcesFit: Insufficient memory] + "
        "add 1Gi memory of allocatable capacity to the node (it is too small for the pod even empty) -> fits (checked)"
    ]
    # no single change makes the node feasible: nothing is ranked as if it did
    assert ex.suggestions == []
    d = fix.to_dict()
    assert d["verdict"] == "still-fails" and d["thenFails"][0]["next"][0]["verdict"] == "fits"


def test_resource_deficits_are_exact_and_grouped() -> None:
    # 2 CPU / 4Gi nodes running 1500m / 3.5Gi: 500m and 512Mi free; the pod wants 800m and 1Gi.
    nodes = [node("n1", cpu="2", memory="4Gi"), node("n2", cpu="2", memory="4Gi")]
    running = [pod(f"r{i}", node_name=f"n{i}", cpu="1500m", memory="3584Mi") for i in (1, 2)]
    pods = [*running, pod("p", cpu="800m", memory="1Gi")]
    ex = explain(snapshot(nodes, pods), "default/p")
    (fix,) = ex.fixes
    assert fix.nodes == ["n1", "n2"] and fix.code == "Unschedulable"
    assert fix.diagnosis == (
        "needs 0.3 more CPU (request 0.8, 0.5 free of 2 allocatable); "
        "needs 512Mi more memory (request 1Gi, 512Mi free of 4Gi allocatable)"
    )
    assert fix.change is not None
    assert fix.change.description == "free 0.3 CPU and 512Mi memory on the node (evict pods or add capacity)"
    assert fix.verdict == "fits" and fix.passes == ["n1", "n2"]
    # exactly that much: with the running pod 300m / 512Mi smaller the pod fits, 1m less is not enough
    shrunk = [pod("r1", node_name="n1", cpu="1200m", memory="3Gi"), running[1], pods[-1]]
    assert passes_on(nodes, shrunk, "default/p", "n1")
    short = [pod("r1", node_name="n1", cpu="1201m", memory="3Gi"), running[1], pods[-1]]
    assert not passes_on(nodes, short, "default/p", "n1")


def test_a_node_too_small_even_empty_is_noted() -> None:
    nodes = [node("tiny", cpu="1")]
    ex = explain(snapshot(nodes, [pod("p", cpu="1500m")]), "default/p")
    (fix,) = ex.fixes
    assert fix.code == "UnschedulableAndUnresolvable"
    assert "could never fit the pod, even empty" in fix.diagnosis
    assert fix.details["cpu"]["neverFits"] is True and fix.details["cpu"]["deficit"] == 500
    assert fix.change is not None and fix.change.description.startswith(
        "add 0.5 CPU of allocatable capacity"
    )
    assert fix.verdict == "fits"


def test_too_many_pods_and_extended_resources() -> None:
    nodes = [
        node("full", pods="1", extra={"example.com/dongle": "2"}),
        node("used", extra={"example.com/dongle": "1"}),
    ]
    dongle = {"example.com/dongle": "1"}
    pods = [
        pod("x", node_name="full"),
        pod("y", node_name="used", containers=[container(extra=dongle)]),
        pod("p", containers=[container(extra=dongle)]),
    ]
    ex = explain(snapshot(nodes, pods), "default/p")
    (full,) = fixes_for(ex, "full")
    assert full.reasons == ("Too many pods",)
    assert full.diagnosis == "needs 1 more pod slot (1 of 1 pods in use)"
    assert full.change is not None and full.change.extra == (("pods", 1),) and full.verdict == "fits"
    (used,) = fixes_for(ex, "used")
    assert used.diagnosis == "needs 1 more example.com/dongle (request 1, 0 free of 1 allocatable)"
    assert used.verdict == "fits"


def test_cordoned_node() -> None:
    nodes = [node("c", unschedulable=True), node("d", cpu="1")]
    pods = [pod("p", cpu="2")]
    ex = explain(snapshot(nodes, pods), "default/p")
    (fix,) = fixes_for(ex, "c")
    assert fix.plugin == "NodeUnschedulable" and fix.diagnosis == "node is cordoned (spec.unschedulable)"
    assert fix.change is not None and fix.change.scope == "node" and fix.verdict == "fits"
    assert [s.change.kind for s in ex.suggestions if s.nodes == ["c"]] == ["uncordon"]
    uncordoned = [node("c"), nodes[1]]
    assert replay(snapshot(uncordoned, pods)).cycles[0].selected_node == "c"


def test_node_selector_and_required_affinity_requirements() -> None:
    required = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "zone", "operator": "In", "values": ["a"]},
                            {"key": "arch", "operator": "In", "values": ["arm64"]},
                        ]
                    }
                ]
            }
        }
    }
    nodes = [
        node("n1", labels={"disktype": "hdd", "zone": "a", "arch": "arm64"}),
        node("n2", labels={"disktype": "ssd", "zone": "b", "arch": "arm64"}),
        node("n3", labels={"disktype": "ssd", "zone": "b", "arch": "amd64"}),
    ]
    p = pod("p", nodeSelector={"disktype": "ssd"}, affinity=required)
    ex = explain(snapshot(nodes, [p]), "default/p")
    (f1,) = fixes_for(ex, "n1")
    assert f1.diagnosis == "nodeSelector disktype=ssd: node has disktype=hdd"
    assert f1.change is not None and f1.change.description == "drop nodeSelector disktype=ssd"
    (f2,) = fixes_for(ex, "n2")
    assert f2.diagnosis == "term 0: zone In [a]: node has zone=b"
    assert (
        f2.change is not None
        and f2.change.description == "drop the node affinity requirement zone In [a] (term 0)"
    )
    (f3,) = fixes_for(ex, "n3")
    assert (
        f3.diagnosis == "term 0: zone In [a]: node has zone=b; term 0: arch In [arm64]: node has arch=amd64"
    )
    assert f3.change is not None and f3.change.description == "drop the required node affinity"
    assert all(f.verdict == "fits" for f in (f1, f2, f3))
    # by hand: the pod without the zone requirement passes on n2
    relaxed = copy.deepcopy(p)
    exprs = relaxed["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ][0]["matchExpressions"]
    del exprs[0]
    assert passes_on(nodes, [relaxed], "default/p", "n2") and not passes_on(nodes, [p], "default/p", "n2")
    # the original pod is untouched by the what-ifs
    assert len(ex.to_dict()["fixes"]) == 3 and p["spec"]["nodeSelector"] == {"disktype": "ssd"}


def test_host_port_conflict_names_the_pod() -> None:
    port = [{"containerPort": 80, "hostPort": 8080}]
    nodes = [node("n")]
    pods = [
        pod("web", node_name="n", containers=[container(ports=port)]),
        pod("p", containers=[container(ports=port)]),
    ]
    ex = explain(snapshot(nodes, pods), "default/p")
    evict, drop = ex.fixes
    assert evict.diagnosis == "host port 8080/TCP is in use by pod default/web"
    assert evict.details == {"conflicts": [{"port": "8080/TCP", "pod": "default/web"}]}
    assert evict.change is not None and evict.change.description == "evict pod(s) default/web from the node"
    assert evict.verdict == "fits"
    assert drop.change is not None and drop.change.description == "don't request host port(s) 8080/TCP"
    assert drop.verdict == "fits"
    assert passes_on(nodes, pods[1:], "default/p", "n")
    # the eviction was only a what-if: the real cycle still sees the port taken
    assert ex.scheduler["result"] == "Unschedulable"


def twelve_nodes_with_web_pods() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = [node(f"{z}{i}", labels={Z: z}) for z in "abc" for i in range(4)]
    web = [pod(f"web-{z}", node_name=f"{z}0", labels={"app": "web"}) for z in "abc"]
    return nodes, web


ZONE_ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": Z}
        ]
    }
}


def test_dropping_the_zone_anti_affinity_term_counts_every_node_it_frees() -> None:
    nodes, web = twelve_nodes_with_web_pods()
    nodes.append(node("d0", labels={Z: "d"}, taints=[{"key": "team", "value": "x", "effect": "NoSchedule"}]))
    nodes.append(node("d1", labels={Z: "d"}, taints=[{"key": "team", "value": "x", "effect": "NoExecute"}]))
    pods = [*web, pod("p", affinity=ZONE_ANTI)]
    ex = explain(snapshot(nodes, pods), "default/p")
    assert ex.result == "Unschedulable"
    anti = [f for f in ex.fixes if f.plugin == "InterPodAffinity"]
    assert sorted(n for f in anti for n in f.nodes) == sorted(f"{z}{i}" for z in "abc" for i in range(4))
    (zone_a,) = [f for f in anti if "a0" in f.nodes]
    assert zone_a.diagnosis == (
        "podAntiAffinity term 0 (pods app=web, topologyKey topology.kubernetes.io/zone): "
        "1 matching pod(s) in topology.kubernetes.io/zone=a: default/web-a"
    )
    assert all(f.more_feasible == 12 and f.verdict == "fits" for f in anti)
    ranked = [(s.change.description, s.feasible_nodes) for s in ex.suggestions]
    assert ranked[0] == (
        "drop the required podAntiAffinity term 0 (topologyKey topology.kubernetes.io/zone)",
        12,
    )
    # each taint frees the one node that has it
    assert ranked[1:] == [("tolerate team=x:NoExecute", 1), ("tolerate team=x:NoSchedule", 1)]
    assert passes_on(nodes, [*web, pod("p")], "default/p", "b3")


def test_existing_pods_anti_affinity_names_the_pod() -> None:
    guard_anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"role": "db"}}, "topologyKey": Z}
            ]
        }
    }
    nodes = [node("a1", labels={Z: "a"}), node("a2", labels={Z: "a"}), node("b1", labels={Z: "b"}, cpu="1")]
    pods = [pod("guard", node_name="a1", affinity=guard_anti), pod("db", labels={"role": "db"}, cpu="2")]
    ex = explain(snapshot(nodes, pods), "default/db")
    (fix,) = [f for f in ex.fixes if f.plugin == "InterPodAffinity"]
    assert fix.nodes == ["a1", "a2"] and fix.reasons == (
        "node(s) didn't satisfy existing pods anti-affinity rules",
    )
    assert "pod default/guard (on a1) has required anti-affinity" in fix.diagnosis
    assert fix.change is not None and fix.change.details == {"pods": ["default/guard"]}
    assert fix.verdict == "fits"
    assert passes_on(nodes, pods[1:], "default/db", "a2")


def test_spread_constraint_skew_and_missing_label() -> None:
    nodes = [
        node("a1", labels={Z: "a"}),
        node("a2", labels={Z: "a"}),
        node("b1", labels={Z: "b"}),
        node("nz"),
    ]
    running = [pod(f"w{i}", node_name="a1", labels={"app": "w"}) for i in range(3)]
    running.append(pod("w3", node_name="b1", labels={"app": "w"}))

    def spreading(max_skew: int) -> dict[str, Any]:
        c = {"maxSkew": max_skew, "topologyKey": Z, "whenUnsatisfiable": "DoNotSchedule"}
        c["labelSelector"] = {"matchLabels": {"app": "w"}}
        return pod("new", labels={"app": "w"}, topologySpreadConstraints=[c])

    ex = explain(snapshot(nodes, [*running, spreading(1)]), "default/new")
    assert ex.selected_node == "b1"
    (skewed,) = [f for f in ex.fixes if "a1" in f.nodes]
    assert skewed.nodes == ["a1", "a2"]
    # 3 matching pods in zone a + 1 for the pod itself - global minimum 1 (zone b) = 3
    assert skewed.diagnosis == (
        "spread constraint 0 (topologyKey topology.kubernetes.io/zone, maxSkew 1): topology.kubernetes.io/zone=a "
        "has 3 matching pod(s) + 1 for this pod, global minimum 1: skew 3 > 1"
    )
    assert skewed.change is not None
    assert (
        skewed.change.description == "raise maxSkew of the topology.kubernetes.io/zone spread constraint to 3"
    )
    assert skewed.verdict == "fits" and skewed.more_feasible == 2
    (nz,) = fixes_for(ex, "nz")
    assert nz.diagnosis.endswith("node has no label topology.kubernetes.io/zone")
    assert (
        nz.change is not None
        and nz.change.description == "drop the topology.kubernetes.io/zone spread constraint"
    )
    assert nz.verdict == "fits"
    # maxSkew 3 is the smallest that admits zone a
    assert passes_on(nodes, [*running, spreading(3)], "default/new", "a2")
    assert not passes_on(nodes, [*running, spreading(2)], "default/new", "a2")


def test_volume_reasons_name_the_objects() -> None:
    objects = [
        pvc("data", volume="pv1", bound=True, phase="Bound"),
        pv("pv1", hostnames=["elsewhere"], claim="data", claim_uid="uid-pvc-data", phase="Bound"),
    ]
    pods = [pod("p", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])]
    ex = explain(snapshot([node("a")], pods, objects), "default/p")
    (fix,) = ex.fixes
    assert fix.plugin == "VolumeBinding" and fix.change is None and fix.verdict == "no-suggestion"
    assert "PersistentVolumeClaim default/data bound to PersistentVolume pv1" in fix.diagnosis
    assert "kubernetes.io/hostname In [elsewhere]" in fix.diagnosis
    assert fix.details["volumes"][0]["volume"] == "pv1"


def test_gated_pod() -> None:
    ex = explain(snapshot([node("a")], [pod("g", schedulingGates=[{"name": "wait"}])]), "default/g")
    assert ex.result == "Gated" and ex.fixes == [] and "scheduling gates (wait)" in ex.notes[0]


# ----- limits and bookkeeping ------------------------------------------------------------------------
def test_checks_are_capped_and_say_so() -> None:
    nodes = [node("gpu", taints=[GPU_TAINT]), node("c", unschedulable=True), node("tiny", cpu="1")]
    pods = [pod("p", cpu="2")]
    ex = explain(snapshot(nodes, pods), "default/p", max_checks=2)
    assert ex.capped and ex.checks == 2 and any("capped" in n for n in ex.notes)
    verdicts = sorted(f.verdict for f in ex.fixes)
    assert "unchecked" in verdicts and "fits" in verdicts
    unchecked = [f for f in ex.fixes if f.verdict == "unchecked"]
    assert all(not f.to_dict()["verified"] and f.passes == [] for f in unchecked)
    assert ex.to_dict()["checks"] == {"run": 2, "limit": 2, "capped": True}
    assert not explain(snapshot(nodes, pods), "default/p").capped


def test_the_cluster_is_restored_after_the_what_ifs() -> None:
    # evictions, uncordons and extra capacity are all tried; the real cycle must not see them
    port = [{"containerPort": 80, "hostPort": 8080}]
    nodes = [node("n", cpu="2"), node("c", unschedulable=True), node("m", cpu="1")]
    pods = [
        pod("web", node_name="n", cpu="500m", containers=[container(cpu="500m", ports=port)]),
        pod("p", cpu="1500m", containers=[container(cpu="1500m", ports=port)]),
        pod("q", cpu="1"),
    ]
    snap = snapshot(nodes, pods)
    before = [copy.deepcopy(p.raw) for p in snap.pods]
    ex = explain(snap, "default/p")
    assert ex.result == "Unschedulable" and len(ex.fixes) >= 3
    plain = replay(snapshot(nodes, pods))
    assert ex.scheduler["result"] == plain.cycle("default/p").result
    assert ex.scheduler["message"] == plain.cycle("default/p").message
    assert [p.raw for p in snap.pods] == before
    # q, queued after p, still sees the cluster as the replay does
    ex_q = explain(snapshot(nodes, pods), "default/q")
    assert ex_q.scheduler["selectedNode"] == plain.cycle("default/q").selected_node


@pytest.mark.parametrize(
    ("key", "nodes", "fragment"),
    [
        ("default/nope", None, "Pod default/nope: no such pod in the snapshot"),
        ("default/run", None, "bound to node a"),
        ("a/b/c", None, "expected namespace/name"),
        ("default/p", ["zzz"], "no node 'zzz' in the snapshot"),
    ],
)
def test_bad_input(key: str, nodes: list[str] | None, fragment: str) -> None:
    snap = snapshot([node("a")], [pod("run", node_name="a"), pod("p")])
    with pytest.raises(InputError, match=fragment):
        explain(snap, key, nodes=nodes)


def test_bare_pod_name_means_default_namespace() -> None:
    assert explain(snapshot([node("a")], [pod("p")]), "p").pod == "default/p"


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        # CPU in cores, to the millicore: one unit, so that 32.6 and 33 compare at a glance
        ("cpu", 300, "0.3"),
        ("cpu", 2000, "2"),
        ("cpu", 32600, "32.6"),
        ("cpu", 1, "0.001"),
        ("cpu", 1250, "1.25"),
        ("memory", 512 * 2**20, "512Mi"),
        ("memory", 3 * 2**29, "1.5Gi"),
        ("memory", 1000, "1000 bytes"),
        ("memory", 2**30 + 1, "1073741825 bytes (about 1024.0Mi)"),
        ("example.com/dongle", 3, "3"),
    ],
)
def test_amounts(resource: str, amount: int, text: str) -> None:
    assert format_amount(resource, amount) == text


def test_format_bytes_kib() -> None:
    assert format_bytes(1536) == "1.5Ki"


# ----- command line ------------------------------------------------------------------------------------
def write(tmp_path: Path, obj: object) -> Path:
    p = tmp_path / "cluster.yaml"
    p.write_text(yaml.safe_dump(obj))
    return p


def test_cli_json_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = [node("gpu", taints=[GPU_TAINT]), node("small", cpu="1"), pod("p", cpu="2")]
    f = write(tmp_path, {"kind": "List", "items": items})
    assert main(["explain", str(f), "--pod", "default/p", "--format", "json", "--node", "gpu"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "Explanation" and out["result"] == "Unschedulable"
    assert out["compared"][0]["node"] == "gpu"
    assert out["suggestions"][1]["change"]["description"] == "tolerate dedicated=gpu:NoSchedule"
    assert main(["explain", str(f), "--pod", "default/p"]) == 0
    text = capsys.readouterr().out
    assert "what would make it fit:" in text and "tolerate dedicated=gpu:NoSchedule -> fits (checked)" in text


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--pod", "default/ghost"], "Pod default/ghost: no such pod in the snapshot"),
        (["--pod", "default/p", "--node", "zzz"], "no node 'zzz'"),
    ],
)
def test_cli_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], fragment: str
) -> None:
    f = write(tmp_path, {"kind": "List", "items": [node("a"), pod("p")]})
    assert main(["explain", str(f), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("schedviz: error:") and fragment in err and "Traceback" not in err


# ----- every "fits" claim, re-checked through the snapshot itself ------------------------------------
FIXTURES = Path(__file__).parents[2] / "conformance" / "fixtures" / "basic"


def _with_change(snap: Snapshot, target: str, placed: dict[str, str], fix: Fix, node_name: str) -> Snapshot:
    """The snapshot as it stands at ``target``'s cycle (earlier placements frozen as running pods),
    with ``fix``'s change written into the objects: the pod's spec, the node's allocatable or
    spec.unschedulable, evicted pods left out."""
    from schedviz.engine.quantity import to_int

    change = fix.change
    assert change is not None
    nodes = []
    for n in snap.nodes:
        raw = copy.deepcopy(n.raw)
        if n.name == node_name:
            alloc = raw["status"].setdefault("allocatable", {}) or raw["status"].setdefault("capacity", {})
            for r, amount in change.extra:
                total = to_int(r, alloc.get(r, 0)) + amount
                alloc[r] = f"{total}m" if r == "cpu" else str(total)
            if change.uncordon:
                raw["spec"]["unschedulable"] = False
        nodes.append(Node(raw))
    pods = []
    for p in snap.pods:
        if p.uid in change.evict or (p.key != target and not p.node_name and p.key not in placed):
            continue
        raw = copy.deepcopy(change.pod.apply(p).raw if p.key == target else p.raw)
        if p.key in placed:
            raw["spec"]["nodeName"] = placed[p.key]
        pods.append(Pod(raw, p.index))
    return Snapshot(nodes=nodes, pods=pods, objects=snap.objects, config=snap.config)


@pytest.mark.parametrize("scenario", ["scn-20000", "scn-20008"])
def test_fits_claims_hold_when_the_change_is_made_in_the_snapshot(scenario: str) -> None:
    from schedviz.engine import load_paths

    path = FIXTURES / f"{scenario}.json"
    snap = load_paths([path])
    trace = replay(snap)
    checked = 0
    for k, cycle in enumerate(trace.cycles[:4]):
        placed = {c.pod: c.selected_node for c in trace.cycles[:k] if c.selected_node}
        ex = explain(load_paths([path]), cycle.pod)
        assert (ex.scheduler["result"], ex.scheduler["selectedNode"]) == (cycle.result, cycle.selected_node)
        for fix in ex.fixes:
            if fix.change is None or not fix.passes or fix.change.pod.request_caps:
                continue
            node_name = fix.passes[0]
            changed = _with_change(snap, cycle.pod, placed, fix, node_name)
            assert passes_on_snapshot(changed, cycle.pod, node_name), (cycle.pod, node_name, fix.change)
            checked += 1
    assert checked >= 5


def passes_on_snapshot(snap: Snapshot, target: str, node_name: str) -> bool:
    trace = replay(snap, options=ReplayOptions(all_nodes=True))
    cycle = trace.cycle(target)
    assert cycle.filter_codes is not None
    return int(cycle.filter_codes[trace.node_names.index(node_name)]) == 0


def test_sampling_difference_is_noted() -> None:
    # 200 nodes: the scheduler stops after 100 feasible nodes (numFeasibleNodesToFind), so it never
    # sees n150, the only node the pod prefers; with every node evaluated n150 wins.
    nodes = [node(f"n{i:03d}", labels={"best": "yes"} if i == 150 else {}) for i in range(200)]
    pods = [pod("p", affinity=preferred((100, "best", "yes")))]
    ex = explain(snapshot(nodes, pods), "default/p", config=only_node_affinity_score(), nodes=["n000"])
    assert ex.selected_node == "n150"
    assert ex.scheduler["selectedNode"] == "n000" and ex.scheduler["evaluatedNodes"] == 100
    assert any("evaluated 100 of 200 nodes and selected n000" in n for n in ex.notes)
    (vs,) = ex.comparisons
    assert vs.node == "n000" and vs.margin == 200 and vs.plugins["NodeAffinity"]["difference"] == 200


def test_named_nodes_are_checked_first() -> None:
    # every node holds the port with a different pod: evictions are checked node by node
    port = [{"containerPort": 80, "hostPort": 8080}]
    nodes = [node(f"n{i}") for i in range(8)]
    holders = [pod(f"h{i}", node_name=f"n{i}", containers=[container(ports=port)]) for i in range(8)]
    pods = [*holders, pod("p", containers=[container(ports=port)])]
    ex = explain(snapshot(nodes, pods), "default/p", nodes=["n7"], max_checks=3)
    assert ex.capped
    (evict_n7,) = [
        f for f in ex.fixes if f.nodes == ["n7"] and f.change is not None and f.change.kind == "evict"
    ]
    assert evict_n7.verdict == "fits" and ex.fixes[0].nodes in (["n7"], [f"n{i}" for i in range(8)])
    assert "evict pod(s) default/h7 from the node -> fits (checked)" in ex.comparisons[0].fixes


def test_pod_without_a_profile() -> None:
    ex = explain(snapshot([node("a")], [pod("p", schedulerName="other")]), "default/p")
    assert ex.result == "NotHandled" and ex.error == 'no profile for schedulerName "other"'
    assert ex.fixes == [] and ex.notes == ["profiles of the configuration: default-scheduler"]


# ----- the pieces explain stands on ------------------------------------------------------------------
def test_replay_run_until_and_preview_leave_the_replay_as_it_was() -> None:
    from schedviz.engine import Replay

    nodes = [node(f"n{i}", cpu="2") for i in range(3)]
    pods = [pod("a", cpu="1"), pod("b", cpu="1"), pod("c", cpu="1")]
    rp = Replay(snapshot(nodes, pods))
    target = rp.run_until("default/b")
    assert target.key == "default/b" and [c.pod for c in rp.trace.cycles] == ["default/a"]
    before = (rp.next_start_node_index, rp._seq, len(rp.trace.cycles), rp.cluster.generation)
    preview = rp.preview(target, all_nodes=True)
    assert preview.result == "Scheduled" and preview.selected_node is not None and preview.seq == 2
    assert (rp.next_start_node_index, rp._seq, len(rp.trace.cycles), rp.cluster.generation) == before
    assert rp.cluster.node_of(target) is None and not rp.options.all_nodes
    real = rp.schedule_one(target)
    assert (real.seq, real.selected_node) == (2, preview.selected_node)
    plain = replay(snapshot(nodes, pods))
    assert plain.cycle("default/b").selected_node == real.selected_node
    with pytest.raises(KeyError):
        Replay(snapshot(nodes, pods)).run_until("default/zzz")


def test_batched_checks_agree_with_evaluate_node() -> None:
    from schedviz.engine import Replay
    from schedviz.engine.explain import _Analysis

    nodes, web = twelve_nodes_with_web_pods()
    nodes[5]["spec"]["taints"] = [GPU_TAINT]
    nodes[6]["spec"]["unschedulable"] = True
    pinned = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["a1", "b1", "b2"]}
                        ]
                    }
                ]
            }
        },
        **ZONE_ANTI,
    }
    for spec_affinity in (ZONE_ANTI, pinned):
        rp = Replay(snapshot(nodes, [*web, pod("p", cpu="3", affinity=spec_affinity)]))
        target = rp.run_until("default/p")
        fw = rp.frameworks["default-scheduler"]
        an = _Analysis(rp, fw, target, 10)
        batch = an.run(target, np.arange(rp.cluster.n, dtype=np.int64))
        for i, (code, plugin, reasons) in enumerate(batch):
            one = fw.evaluate_node(target, i)
            assert int(one.code) == code, rp.cluster.names[i]
            if one.plugin:  # evaluate_node names no plugin for nodes outside a PreFilter subset
                assert (one.plugin, one.reasons) == (plugin, reasons)
        outside = [v for v in batch if v[2] == ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)]
        assert len(outside) == (0 if spec_affinity is ZONE_ANTI else 9)
        assert all(v[1] == "NodeAffinity" for v in outside)


def test_uncordoning_also_drops_the_unschedulable_taint() -> None:
    # the node lifecycle controller taints cordoned nodes; uncordoning removes both
    cordon_taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    nodes = [node("c", unschedulable=True, taints=[cordon_taint]), node("d", cpu="1")]
    pods = [pod("p", cpu="2")]
    ex = explain(snapshot(nodes, pods), "default/p")
    (fix,) = fixes_for(ex, "c")
    assert fix.change is not None and fix.change.kind == "uncordon" and fix.verdict == "fits"
    assert replay(snapshot([node("c"), nodes[1]], pods)).cycles[0].selected_node == "c"
    # the what-if left the taint in place for the real cycle
    assert ex.scheduler["result"] == "Unschedulable"
    assert "1 node(s) were unschedulable" in ex.scheduler["message"]


# ----- the one-line summary and the order of the ranked changes ----------------------------------------


def test_an_unschedulable_pods_summary_names_the_shortage_and_the_most_free() -> None:
    nodes = [node("small", cpu="8"), node("big", cpu="32"), node("mid", cpu="16")]
    pods = [pod("run", node_name="big", cpu="6"), pod("p", cpu="40")]
    ex = explain(snapshot(nodes, pods), "default/p")
    assert ex.result == "Unschedulable"
    assert ex.summary == "no node has 40 CPU free; the most is 26 on big"
    assert ex.to_dict()["summary"] == ex.summary
    # asking for less keeps the pod's intent: first; then the node changes by how much they add, as numbers
    kinds = [s.change.kind for s in ex.suggestions]
    assert kinds[0] == "lower-request" and ex.suggestions[0].change.description.startswith("request at most 26 CPU")
    amounts = [sum(a for _, a in s.change.extra) for s in ex.suggestions if s.change.scope == "node"]
    assert amounts == sorted(amounts) and len(amounts) == 3


def test_no_node_change_adds_a_resource_the_node_does_not_have() -> None:
    nodes = [
        node("cpu-a", cpu="32"),
        node("cpu-b", cpu="32"),
        node("gpu-a", cpu="32", extra={"nvidia.com/gpu": "4"}),
    ]
    pods = [pod("train", containers=[container(cpu="1", extra={"nvidia.com/gpu": "8"})])]
    ex = explain(snapshot(nodes, pods), "default/train")
    assert ex.summary == "no node has 8 nvidia.com/gpu free; the most is 4 on gpu-a"
    targets = {n for s in ex.suggestions if s.change.scope == "node" for n in s.nodes}
    assert targets == {"gpu-a"}, [s.to_dict() for s in ex.suggestions]
    assert ex.suggestions[0].change.kind == "lower-request"


def test_a_placed_pods_summary_gives_the_margin_over_the_runner_up() -> None:
    nodes = [node("empty", cpu="8"), node("busy", cpu="8")]
    pods = [pod("run", node_name="busy", cpu="6"), pod("p", cpu="1")]
    ex = explain(snapshot(nodes, pods), "default/p")
    assert ex.selected_node == "empty" and ex.runner_up is not None and ex.runner_up.margin
    margin = ex.runner_up.margin
    assert ex.summary.startswith(f"empty scored {ex.winner_total}, {margin} ahead of the runner-up busy ")
    assert ex.summary.endswith(f"busy would need {margin} more weighted point{'' if margin == 1 else 's'} to tie")
