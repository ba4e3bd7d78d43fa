"""The `uploads` throttle scope: snapshot uploads and CI reports, 429 with Retry-After past the rate."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

from schedviz.ingestion.models import Snapshot

from .conftest import cluster_yaml, error_of


def test_uploads_are_throttled_with_retry_after(
    api: APIClient, other_api: APIClient, throttle_rates: dict[str, str]
) -> None:
    throttle_rates["uploads"] = "3/hour"
    for i in range(3):
        r = api.post("/api/v1/snapshots/", {"content": cluster_yaml(extra_pods=i)}, format="json")
        assert r.status_code == 201, r.content
    r = api.post("/api/v1/snapshots/", {"content": cluster_yaml(extra_pods=9)}, format="json")
    err = error_of(r, 429)
    assert err["code"] == "throttled"
    retry = int(r["Retry-After"])
    assert 0 < retry <= 3600
    assert Snapshot.objects.count() == 3
    # reports upload too, in the same scope
    first = Snapshot.objects.first()
    assert first is not None
    error_of(api.post("/api/v1/reports/", {"snapshot_id": str(first.pk)}, format="json"), 429)
    # reading is not an upload, and the scope counts per user
    assert api.get("/api/v1/snapshots/").status_code == 200
    assert other_api.post("/api/v1/snapshots/", {"content": cluster_yaml()}, format="json").status_code == 201


def test_the_general_rate_applies_to_everything_else(api: APIClient, throttle_rates: dict[str, Any]) -> None:
    throttle_rates["user"] = "2/minute"
    assert api.get("/api/v1/snapshots/").status_code == 200
    assert api.get("/api/v1/replays/").status_code == 200
    r = api.get("/api/v1/tokens/")
    assert error_of(r, 429)["code"] == "throttled" and int(r["Retry-After"]) <= 60
