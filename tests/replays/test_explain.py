"""Explain through the API agrees with the stored cycle: winner, totals and per-plugin weighted scores."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from schedviz.replays.models import Cycle
from tests.webfixtures import cluster_yaml

from .test_replays import MOST_ALLOCATED, start


def stored_nodes(api: APIClient, replay: str, seq: int) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    page = api.get(f"/api/v1/replays/{replay}/cycles/{seq}/?page_size=1000").json()
    return page, {n["name"]: n for n in page["nodes"]["results"]}


@pytest.mark.parametrize("config", [None, MOST_ALLOCATED], ids=["default", "most-allocated"])
def test_explain_numbers_match_the_stored_cycle(
    api: APIClient, upload: Callable[..., dict[str, Any]], config: Any
) -> None:
    snap = upload(cluster_yaml(extra_pods=3))
    replay = start(api, snap["id"], **({"config": config} if config else {}))
    cycles = api.get(f"/api/v1/replays/{replay['id']}/cycles/").json()["results"]
    # every scheduled pod, including later ones whose cycle depends on the earlier placements
    scheduled = [c for c in cycles if c["result"] == "Scheduled"]
    assert len(scheduled) == 4
    for c in scheduled:
        page, nodes = stored_nodes(api, replay["id"], c["seq"])
        winner = page["selectedNode"]
        others = [n for n in nodes if n != winner and nodes[n]["filter"]["code"] == "Success"]
        assert others, "the cluster leaves a second feasible node to compare with"
        url = f"/api/v1/replays/{replay['id']}/explain/?pod={c['pod']}" + "".join(
            f"&node={n}" for n in others
        )
        ex = api.get(url).json()
        assert ex["pod"] == c["pod"] and ex["seq"] == c["seq"] and ex["result"] == "Scheduled"
        assert ex["winner"]["node"] == winner == c["node"]
        row = Cycle.objects.get(replay_id=replay["id"], seq=c["seq"])
        assert ex["winner"]["total"] == nodes[winner]["total"] == row.winner_total
        assert ex["nodes"]["feasible"] == page["nodeCounts"]["passed"]
        assert ex["nodes"]["rejected"] == page["nodeCounts"]["failed"]
        assert [cmp["node"] for cmp in ex["compared"]] == others
        for cmp in ex["compared"]:
            other = nodes[cmp["node"]]
            assert cmp["feasible"] and cmp["total"] == other["total"]
            assert cmp["margin"] == nodes[winner]["total"] - other["total"]
            assert set(cmp["plugins"]) == set(page["scorePlugins"])
            for plugin, numbers in cmp["plugins"].items():
                assert numbers["weight"] == page["scoreWeights"][plugin]
                assert numbers["winner"] == nodes[winner]["scores"][plugin]["weighted"], plugin
                assert numbers["other"] == other["scores"][plugin]["weighted"], plugin
                assert numbers["winnerRaw"] == nodes[winner]["scores"][plugin]["raw"], plugin
                assert numbers["otherRaw"] == other["scores"][plugin]["raw"], plugin
                assert numbers["difference"] == numbers["winner"] - numbers["other"]
            assert sum(p["winner"] for p in cmp["plugins"].values()) == ex["winner"]["total"]
        # the rejected node, with the plugin and reasons the cycle stored
        rejected = {n: v for n, v in nodes.items() if v["filter"]["code"] != "Success"}
        assert {n for g in ex["rejected"] for n in g["nodes"]} == set(rejected)
        for group in ex["rejected"]:
            for n in group["nodes"]:
                assert (group["plugin"], group["reasons"]) == (
                    rejected[n]["filter"]["plugin"],
                    rejected[n]["filter"]["reasons"],
                )


def test_explain_unschedulable_pod_matches_the_stored_message(
    api: APIClient, upload: Callable[..., dict[str, Any]]
) -> None:
    replay = start(api, upload()["id"])
    stored = api.get(f"/api/v1/replays/{replay['id']}/cycles/?pod=default/huge").json()["results"][0]
    ex = api.get(f"/api/v1/replays/{replay['id']}/explain/?pod=default/huge").json()
    assert ex["result"] == stored["result"] == "Unschedulable"
    assert ex["message"] == stored["message"]
    assert ex["winner"] is None and ex["nodes"] == {"total": 3, "feasible": 0, "rejected": 3}
    assert ex["scheduler"]["result"] == "Unschedulable"
