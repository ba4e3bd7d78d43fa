"""The replay option ``preemption`` through the API: evict (the default) or dry-run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from tests.engine.builders import node, pod
from tests.webfixtures import error_of


def preemption_cluster() -> str:
    items = [
        node("n1", cpu="2"),
        pod("low", node_name="n1", cpu="2", priority=0),
        pod("pre", cpu="2", priority=100),
    ]
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})


@pytest.mark.parametrize(
    ("extra", "want_option", "want_cycles"),
    [
        ({}, "evict", [("default/pre", "Unschedulable"), ("default/pre", "Scheduled")]),
        ({"preemption": "evict"}, "evict", [("default/pre", "Unschedulable"), ("default/pre", "Scheduled")]),
        ({"preemption": "dry-run"}, "dry-run", [("default/pre", "Unschedulable")]),
    ],
)
def test_the_preemption_option_decides_whether_victims_go(
    api: APIClient,
    upload: Callable[..., dict[str, Any]],
    extra: dict[str, Any],
    want_option: str,
    want_cycles: list[tuple[str, str]],
) -> None:
    snap = upload(preemption_cluster())
    r = api.post("/api/v1/replays/", {"snapshot": snap["id"], **extra}, format="json")
    assert r.status_code == 201, r.content
    rep = api.get(f"/api/v1/replays/{r.json()['id']}/").json()
    assert rep["status"] == "succeeded" and rep["options"]["preemption"] == want_option
    # progress counts each pod's first cycle once
    assert rep["cycles_done"] == rep["cycles_total"] == 1
    cycles = api.get(f"/api/v1/replays/{rep['id']}/cycles/").json()["results"]
    assert [(c["pod"], c["result"]) for c in cycles] == want_cycles
    assert cycles[0]["nominated_node"] == "n1"


def test_an_unknown_preemption_mode_is_a_400(api: APIClient, upload: Callable[..., dict[str, Any]]) -> None:
    snap = upload(preemption_cluster())
    r = api.post("/api/v1/replays/", {"snapshot": snap["id"], "preemption": "always"}, format="json")
    err = error_of(r, 400)
    assert "preemption" in str(err["details"])


def test_the_timeline_says_what_a_preemption_evicted_with_its_requests(
    api: APIClient, upload: Callable[..., dict[str, Any]]
) -> None:
    snap = upload(preemption_cluster())
    rid = api.post("/api/v1/replays/", {"snapshot": snap["id"]}, format="json").json()["id"]
    tl = api.get(f"/api/v1/replays/{rid}/timeline/").json()["cycles"]
    assert [(c["seq"], c["result"], c["kind"], c["attempt"]) for c in tl] == [
        (1, "Unschedulable", "Scheduling", 1),
        (2, "Scheduled", "Scheduling", 2),  # the preemptor's retry
    ]
    # the victim left n1 in the first cycle: its requests go with it, as the heatmap needs
    assert [(e["pod"], e["node"], e["requests"]["cpu"]) for e in tl[0]["evictions"]] == [("default/low", "n1", 2000)]
    assert tl[1]["evictions"] == [] and tl[1]["follows"] is None
