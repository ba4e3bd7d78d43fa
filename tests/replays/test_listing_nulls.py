"""One representation of "none": the cycles listing says null where the cycle's detail does."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient


def test_the_cycles_listing_says_null_as_the_detail_does(api: APIClient, upload: Any) -> None:
    snap = upload()
    r = api.post("/api/v1/replays/", {"snapshot": snap["id"], "all_nodes": True}, format="json")
    rid = r.json()["id"]
    rows = {c["pod"]: c for c in api.get(f"/api/v1/replays/{rid}/cycles/").json()["results"]}
    scheduled, unschedulable = rows["default/web"], rows["default/huge"]
    assert scheduled["node"] == "large" and scheduled["message"] is None and scheduled["nominated_node"] is None
    assert unschedulable["node"] is None and unschedulable["message"].startswith("0/3 nodes are available")
    for row in (scheduled, unschedulable):
        detail = api.get(f"/api/v1/replays/{rid}/cycles/{row['seq']}/").json()
        assert (row["node"], row["message"]) == (detail["selectedNode"], detail["message"])
