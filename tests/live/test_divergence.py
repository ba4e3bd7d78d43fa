"""Why here? for live decisions: the worker explains each decision's cycle on the state it replayed
it against (stored with the cycle), and ``GET /clusters/<id>/cycles/<seq>/explain/`` answers it in
the replay explain's shape, plus the live comparison. The decisions are the real kube-scheduler's
(the conformance fixtures), so the numbers are checked against what it computed."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from schedviz.accounts.models import Team
from schedviz.engine.explain import explain
from schedviz.engine.loader import load_objects
from schedviz.engine.runtime.replay import ReplayOptions
from schedviz.kube.testing import TestApiServer
from schedviz.live import schedconfig, services
from schedviz.live.divergence import EXPLAIN_MAX_CHECKS, explain_trigger
from schedviz.live.models import LiveCluster, LiveCycle
from tests.engine.builders import node, pod
from tests.kubefixtures import wait_until
from tests.webfixtures import error_of

from .test_consumer import OBJECTS, trigger
from .test_replays import scenario, serve
from .test_worker import add_cluster, cycles, decide, workers  # noqa: F401

EXPLANATION_KEYS = {
    "apiVersion",
    "kind",
    "kubernetesVersion",
    "pod",
    "profile",
    "seq",
    "result",
    "summary",
    "message",
    "error",
    "nodes",
    "winner",
    "compared",
    "rejected",
    "fixes",
    "fixesOmitted",
    "suggestions",
    "suggestionsOmitted",
    "checks",
    "scheduler",
    "notes",
}


def url(cluster: Any, seq: int | str, *nodes: str) -> str:
    query = "&".join(f"node={n}" for n in nodes)
    return f"/api/v1/clusters/{cluster.pk}/cycles/{seq}/explain/" + (f"?{query}" if query else "")


def weighted(r: dict[str, Any], n: str) -> dict[str, int]:
    """The real kube-scheduler's weighted scores of node ``n`` by plugin."""
    return {p: s[n]["weighted"] for p, s in r["scores"].items()}


def page_nodes(api: APIClient, cluster: Any, seq: int) -> dict[str, dict[str, Any]]:
    detail = api.get(f"/api/v1/clusters/{cluster.pk}/cycles/{seq}/?page_size=100").json()
    return {n["name"]: n for n in detail["nodes"]["results"]}


@pytest.fixture
def history(apiserver: TestApiServer, alice: User, workers: Any) -> dict[str, Any]:  # noqa: F811
    """The real scheduler's first decisions, then the next scored one made on a lower-scored node:
    a FailedScheduling (match), two bindings (match) and a diverged binding."""
    sc, expected = scenario("basic/scn-20001")
    serve(apiserver, sc)
    cluster = add_cluster(alice, apiserver)
    worker = workers()
    wait_until(lambda: LiveCluster.objects.get(pk=cluster.pk).status == "watching", what="watching")
    i = next(i for i, r in enumerate(expected) if i > 1 and r["selected"] and len(r["total"]) > 2)
    for k, r in enumerate(expected[:i], 1):
        decide(apiserver, r)
        wait_until(lambda: len(cycles(cluster)) == k, what=f"cycle {k}")  # noqa: B023
    r = expected[i]
    other = min((n for n in r["total"] if n not in r["tiedTop"]), key=lambda n: r["total"][n])
    decide(apiserver, r, node=other)
    wait_until(lambda: len(cycles(cluster)) == i + 1, what="the diverged cycle")
    worker.stop()  # what follows reads what it stored
    return {"cluster": cluster, "expected": expected, "diverged": i, "other": other}


def test_matched_and_diverged_decisions_are_explained_with_the_cycles_numbers(
    api: APIClient, history: dict[str, Any]
) -> None:
    cluster, expected = history["cluster"], history["expected"]
    rows = cycles(cluster)
    assert all(row.explanation is not None and row.explanation_error == "" for row in rows)
    assert [row.agreement for row in rows] == ["match"] * (len(rows) - 1) + ["diverged"]

    # a matched binding: the winner, its total and its tie set are the stored cycle's and the real scheduler's
    seq, r = next((k + 1, r) for k, r in enumerate(expected) if r["selected"] and len(r["total"]) > 1)
    body = api.get(url(cluster, seq)).json()
    assert set(body) == EXPLANATION_KEYS | {"live"}
    assert body["kind"] == "Explanation" and body["pod"] == r["pod"] and body["seq"] == seq
    detail = api.get(f"/api/v1/clusters/{cluster.pk}/cycles/{seq}/?page_size=100").json()
    assert body["live"] == detail["live"] and body["live"]["agreement"] == "match"
    row = rows[seq - 1]
    winner = body["winner"]
    assert winner["node"] == row.node == detail["selectedNode"] == r["selected"]
    assert winner["total"] == row.winner_total == r["total"][r["selected"]]
    assert winner["tiedNodes"] == detail["tiedNodes"] and set(winner["tiedNodes"]) == set(r["tiedTop"])
    assert body["compared"] == []  # the cluster's node is the winner
    runner = winner["runnerUp"]
    best_other = max((n for n in r["total"] if n != r["selected"]), key=lambda n: r["total"][n])
    assert runner["feasible"] and runner["total"] == r["total"][runner["node"]] == r["total"][best_other]
    assert runner["margin"] == winner["total"] - runner["total"]
    assert {p: v["winner"] for p, v in runner["plugins"].items()} == weighted(r, r["selected"])
    assert {p: v["other"] for p, v in runner["plugins"].items()} == weighted(r, runner["node"])
    assert body["scheduler"]["selectedNode"] == r["selected"] and body["scheduler"]["allNodes"] is True
    assert body["nodes"]["total"] == 8 and body["nodes"]["feasible"] == len(r["feasibleNodes"])
    assert body["checks"]["limit"] == EXPLAIN_MAX_CHECKS

    # the diverged binding: the cluster's node compared with the winner, plugin by plugin
    seq, other = history["diverged"] + 1, history["other"]
    r = expected[history["diverged"]]
    row = rows[seq - 1]
    body = api.get(url(cluster, seq)).json()
    assert body["live"]["agreement"] == "diverged" and body["live"]["actual"]["node"] == other
    assert body["winner"]["node"] == row.node == r["selected"] != other
    [cmp] = body["compared"]
    assert cmp["node"] == other and cmp["feasible"] and not cmp["tied"]
    assert (
        cmp["total"] == r["total"][other] and cmp["margin"] == r["total"][r["selected"]] - r["total"][other]
    )
    assert {p: v["other"] for p, v in cmp["plugins"].items()} == weighted(r, other)
    nodes = page_nodes(api, cluster, seq)
    for plugin, v in cmp["plugins"].items():
        assert v["winner"] == nodes[r["selected"]]["scores"][plugin]["weighted"]
        assert v["other"] == nodes[other]["scores"][plugin]["weighted"]
        assert v["difference"] == v["winner"] - v["other"]
    # the same numbers as the divergence's own explanation
    gap = row.explanations[-1]["details"]
    assert (gap["node"], gap["nodeTotal"], gap["winnerTotal"]) == (
        other,
        cmp["total"],
        body["winner"]["total"],
    )
    assert gap["byPlugin"] == {p: v["difference"] for p, v in cmp["plugins"].items() if v["difference"]}
    # compared from the stored cycle record, the cluster's node gets the same answer as at decision time
    stored = row.explained()
    assert stored is not None
    recomputed = services.cycle_explanation(row, {**stored, "compared": []}, [other])
    assert recomputed["compared"] == body["compared"]


def test_nodes_asked_for_are_compared_from_the_stored_cycle(api: APIClient, history: dict[str, Any]) -> None:
    cluster, r = history["cluster"], history["expected"][history["diverged"]]
    seq, other, winner = history["diverged"] + 1, history["other"], r["selected"]
    feasible = next(n for n in r["total"] if n not in (winner, other))
    rejected = next(n for n, v in r["filter"].items() if v["code"] != "Success")
    base = api.get(url(cluster, seq)).json()
    body = api.get(url(cluster, seq, feasible, rejected, feasible, winner, other)).json()
    assert [c["node"] for c in body["compared"]] == [
        other,
        feasible,
        rejected,
    ]  # once each, the winner left out
    assert body["compared"][0] == base["compared"][0]
    fit = body["compared"][1]
    assert fit["feasible"] and fit["total"] == r["total"][feasible]
    assert fit["margin"] == r["total"][winner] - r["total"][feasible]
    assert {p: v["other"] for p, v in fit["plugins"].items()} == weighted(r, feasible)
    assert {p: v["winner"] for p, v in fit["plugins"].items()} == weighted(r, winner)
    no = body["compared"][2]
    assert no["feasible"] is False and set(no) == {"node", "feasible", "rejected", "fixes"}
    assert no["rejected"] == r["filter"][rejected]  # plugin, code and reasons as the real scheduler said
    assert no["fixes"] and all(isinstance(f, str) for f in no["fixes"])
    assert {k: v for k, v in body.items() if k != "compared"} == {
        k: v for k, v in base.items() if k != "compared"
    }
    # a node the cycle does not have
    err = error_of(api.get(url(cluster, seq, "node-99")), 400)
    assert err["code"] == "invalid" and err["details"] == {"node": [f"no node 'node-99' in cycle {seq}"]}


def test_an_unschedulable_decision_has_rejected_groups_fixes_and_suggestions(
    api: APIClient, history: dict[str, Any]
) -> None:
    cluster, expected = history["cluster"], history["expected"]
    seq, r = next((k + 1, r) for k, r in enumerate(expected) if not r["selected"])
    body = api.get(url(cluster, seq)).json()
    assert body["live"]["trigger"] == "failed" and body["live"]["agreement"] == "match"
    assert body["result"] == "Unschedulable" and body["winner"] is None and body["compared"] == []
    assert body["message"] == r["unschedulableMessage"] == body["live"]["actual"]["message"]
    assert body["nodes"] == {"total": 8, "feasible": 0, "rejected": 8}
    # every node in one group, grouped by what the real scheduler said about it
    grouped = {n: (g["plugin"], g["code"], g["reasons"]) for g in body["rejected"] for n in g["nodes"]}
    assert grouped == {n: (v["plugin"], v["code"], v["reasons"]) for n, v in r["filter"].items()}
    assert sum(g["count"] for g in body["rejected"]) == 8
    # a diagnosis (and a change checked against it) for every rejected node
    assert {n for f in body["fixes"] for n in f["nodes"]} == set(r["filter"])
    assert not body["checks"]["capped"] and 0 < body["checks"]["run"] <= EXPLAIN_MAX_CHECKS
    # suggestions: single changes, each making nodes feasible that the checks confirmed
    assert body["suggestions"]
    fits = {n: f for f in body["fixes"] if f["verdict"] == "fits" for n in f["passes"]}
    for s in body["suggestions"]:
        assert s["feasibleNodes"] == len(s["nodes"]) > 0
        for n in s["nodes"]:
            assert fits[n]["change"]["description"] == s["change"]["description"]
    # a node the suggestions make fit, asked for: the stored cycle's verdict and the fixes found for it
    n = body["suggestions"][0]["nodes"][0]
    [cmp] = api.get(url(cluster, seq, n)).json()["compared"]
    assert cmp["feasible"] is False and cmp["rejected"] == r["filter"][n]
    assert f"{body['suggestions'][0]['change']['description']} -> fits (checked)" in cmp["fixes"]


def test_refusals_and_ownership(
    api: APIClient, other_api: APIClient, carol_api: APIClient, history: dict[str, Any], team: Team
) -> None:
    cluster = history["cluster"]
    err = error_of(api.get(url(cluster, 999)), 404)
    assert err["code"] == "not_found" and "no cycle 999" in err["message"]
    error_of(api.get(url(cluster, 10**30)), 404)
    assert api.get(f"/api/v1/clusters/{cluster.pk}/cycles/x/explain/").status_code == 404
    assert error_of(other_api.get(url(cluster, 1)), 404)["code"] == "not_found"
    cluster.team = team
    cluster.save(update_fields=["team"])
    assert other_api.get(url(cluster, 1)).status_code == 200  # a team member reads it
    error_of(carol_api.get(url(cluster, 1)), 404)


def _store(cluster: Any, objects: list[dict[str, Any]], t: Any, **kw: Any) -> LiveCycle:
    outcome = explain_trigger(objects, True, t, schedconfig.build(None), all_nodes=True, recent=[], **kw)
    row = services.store_outcome(cluster.pk, outcome)
    assert row is not None
    return row


def test_skipped_and_unexplained_cycles_are_409(
    api: APIClient, alice: User, apiserver: TestApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = add_cluster(alice, apiserver, verify=False)
    gone = _store(cluster, OBJECTS, trigger("bound", "gone", 1, "b"))  # a pod SchedViz never saw
    err = error_of(api.get(url(cluster, gone.seq)), 409)
    assert err["code"] == "not_replayed" and "is not in the mirrored state" in err["message"]
    assert err["details"]["live"]["agreement"] == "skipped" and err["details"]["live"]["seq"] == gone.seq

    quiet = _store(cluster, OBJECTS, trigger("bound", "web", 2, "b"), explain_checks=None)
    err = error_of(api.get(url(cluster, quiet.seq)), 409)
    assert err["code"] == "no_explanation" and err["details"]["reason"] == "the cycle was stored without one"
    assert err["details"]["live"]["replay"]["node"] == quiet.node and err["message"].startswith(
        f"cycle {quiet.seq} has no explanation: "
    )

    # an explanation that fails leaves the cycle as it would be without one, and says why
    import schedviz.engine.explain as engine_explain

    def boom(*args: Any, **kw: Any) -> None:
        raise RuntimeError("the analysis broke")

    monkeypatch.setattr(engine_explain, "_explain_cycle", boom)
    failed = _store(cluster, OBJECTS, trigger("bound", "late", 3, "b"))
    monkeypatch.undo()
    fine = _store(cluster, OBJECTS, trigger("bound", "late", 4, "b"))
    assert failed.explanation is None and fine.explanation is not None
    assert failed.explanation_error == "the explanation failed: RuntimeError: the analysis broke"
    err = error_of(api.get(url(cluster, failed.seq)), 409)
    assert err["code"] == "no_explanation" and err["details"]["reason"] == failed.explanation_error
    a, _ = failed.decoded()
    b, _ = fine.decoded()
    assert (a.result, a.selected_node, a.totals.tolist(), a.filter_codes.tolist()) == (
        b.result,
        b.selected_node,
        b.totals.tolist(),
        b.filter_codes.tolist(),
    )
    assert (failed.agreement, failed.node) == (fine.agreement, fine.node)


def test_the_stored_explanation_is_the_engines_on_the_state_before(
    api: APIClient, alice: User, apiserver: TestApiServer
) -> None:
    """With only the decided pod pending, the engine's explain of that state (the replay API's
    explain) answers what was stored: the worker explained the same cycle."""
    objects = [
        node("a", cpu="2"),
        node("b", cpu="8", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
        node("c", cpu="4"),
        pod("running", node_name="a", cpu="1"),
        pod("wide", cpu="3"),
    ]
    cluster = add_cluster(alice, apiserver, verify=False)
    row = _store(cluster, copy.deepcopy(objects), trigger("bound", "wide", 1, "a"))  # the cluster chose a
    snap = load_objects(copy.deepcopy(objects), None, "state before")
    every = ReplayOptions(all_nodes=True)  # as the cluster is watched (all_nodes)
    direct = explain(
        snap, "default/wide", options=every, nodes=["a"], max_checks=EXPLAIN_MAX_CHECKS
    ).to_dict()
    body = api.get(url(cluster, row.seq)).json()
    assert {k: v for k, v in body.items() if k not in ("seq", "live")} == {
        k: v for k, v in direct.items() if k != "seq"
    }
    assert body["winner"]["node"] == "c" and body["compared"][0]["node"] == "a"
    assert body["compared"][0]["rejected"]["plugin"] == "NodeResourcesFit"
    # b (tainted) asked for afterwards: as the engine answers when asked at once
    later = api.get(url(cluster, row.seq, "b")).json()["compared"]
    both = explain(
        load_objects(copy.deepcopy(objects), None, "s"),
        "default/wide",
        options=every,
        nodes=["a", "b"],
        max_checks=EXPLAIN_MAX_CHECKS,
    ).to_dict()["compared"]
    assert later == both


def test_the_operation_is_in_the_schema(api: APIClient) -> None:
    import yaml

    schema = yaml.safe_load(api.get("/api/schema/").content)
    op = schema["paths"]["/api/v1/clusters/{id}/cycles/{seq}/explain/"]["get"]
    assert {"200", "400", "404", "409"} <= set(op["responses"])
    ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    props = schema["components"]["schemas"][ref]["properties"]
    assert set(props) == EXPLANATION_KEYS | {"live"}
    assert [p["name"] for p in op["parameters"] if p["in"] == "query"] == ["node"]
