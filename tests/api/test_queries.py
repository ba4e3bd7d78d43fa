"""List endpoints issue a fixed number of queries, whatever the number of rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from schedviz.accounts.models import ApiToken, Team
from tests.replays.test_replays import MOST_ALLOCATED
from tests.webfixtures import cluster_yaml

ROWS = 12
# token lookup, its last_used update, the page's count and its rows; the ownership rule's team
# subquery is part of the same statements
MAX_QUERIES = 5


def queries(api: APIClient, url: str) -> tuple[int, list[str], dict[str, Any]]:
    with CaptureQueriesContext(connection) as ctx:
        r = api.get(url)
    assert r.status_code == 200, r.content
    return len(ctx.captured_queries), [q["sql"] for q in ctx.captured_queries], r.json()


def test_lists_do_not_query_per_row(
    api: APIClient, alice: Any, team: Team, django_assert_max_num_queries: Callable[..., Any]
) -> None:
    snapshots = []
    for i in range(ROWS):
        form = {"content": cluster_yaml(extra_pods=i), **({"team": team.pk} if i % 2 else {})}
        snapshots.append(api.post("/api/v1/snapshots/", form, format="json").json()["id"])
        r = api.post("/api/v1/replays/", {"snapshot": snapshots[0], "config": MOST_ALLOCATED}, format="json")
        assert r.status_code == 201
        api.post(
            "/api/v1/configurations/", {"name": f"c{i}", "text": json.dumps(MOST_ALLOCATED)}, format="json"
        )
        ApiToken.issue(alice, f"t{i}")
    replay = api.get("/api/v1/replays/").json()["results"][0]["id"]
    urls = [
        "/api/v1/snapshots/",
        "/api/v1/replays/",
        f"/api/v1/replays/?snapshot={snapshots[0]}&status=succeeded",
        "/api/v1/configurations/",
        "/api/v1/tokens/",
        f"/api/v1/replays/{replay}/cycles/",
    ]
    for url in urls:
        with django_assert_max_num_queries(MAX_QUERIES):
            full = api.get(url)
        assert full.status_code == 200
        many, _, body = queries(api, url)
        few, _, _ = queries(api, url + ("&" if "?" in url else "?") + "page_size=1")
        assert len(body["results"]) >= 2, url
        assert many == few, (url, many, few)
    # the snapshot list leaves the stored objects and summaries (megabytes per row) in the database
    _, sql, body = queries(api, "/api/v1/snapshots/")
    assert body["count"] == ROWS
    assert not any("objects_blob" in q or "summary_blob" in q for q in sql)
    assert not any("DISTINCT" in q.upper() for q in sql)
