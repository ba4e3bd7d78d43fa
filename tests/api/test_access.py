"""Who may see and change what: 401 without credentials, 404 for other users' ids, team sharing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from schedviz.accounts.models import Team
from schedviz.ingestion.models import Snapshot
from schedviz.replays.models import Configuration, Replay, Report
from tests.replays.test_replays import MOST_ALLOCATED, start
from tests.webfixtures import cluster_yaml, error_of


@pytest.fixture
def alices(api: APIClient, upload: Callable[..., dict[str, Any]]) -> dict[str, str]:
    """One of each of alice's objects: snapshot, two replays, configuration, report, token."""
    snap = upload()
    a = start(api, snap["id"])
    b = start(api, snap["id"], config=MOST_ALLOCATED)
    conf = api.post(
        "/api/v1/configurations/", {"name": "c", "text": json.dumps(MOST_ALLOCATED)}, format="json"
    )
    report = api.post("/api/v1/reports/", {"snapshot_id": snap["id"], "wait": 5}, format="json")
    assert report.status_code == 200
    token = api.post("/api/v1/tokens/", {"name": "ci"}, format="json").json()
    return {
        "snapshot": snap["id"],
        "replay": a["id"],
        "replay2": b["id"],
        "configuration": conf.json()["id"],
        "report": str(Report.objects.get().pk),
        "token": str(token["id"]),
    }


def object_requests(ids: dict[str, str]) -> list[tuple[str, str, dict[str, Any] | None]]:
    """Every endpoint that names one of the objects: (method, url, JSON body)."""
    s, r, r2, c, rep, t = (
        ids[k] for k in ("snapshot", "replay", "replay2", "configuration", "report", "token")
    )
    return [
        ("get", f"/api/v1/snapshots/{s}/", None),
        ("get", f"/api/v1/snapshots/{s}/nodes/", None),
        ("get", f"/api/v1/snapshots/{s}/pods/", None),
        ("get", f"/api/v1/snapshots/{s}/namespaces/", None),
        ("get", f"/api/v1/snapshots/{s}/objects/", None),
        ("delete", f"/api/v1/snapshots/{s}/", None),
        ("get", f"/api/v1/configurations/{c}/", None),
        ("put", f"/api/v1/configurations/{c}/", {"name": "x", "text": json.dumps(MOST_ALLOCATED)}),
        ("patch", f"/api/v1/configurations/{c}/", {"name": "x"}),
        ("delete", f"/api/v1/configurations/{c}/", None),
        ("get", f"/api/v1/replays/{r}/", None),
        ("get", f"/api/v1/replays/{r}/cycles/", None),
        ("get", f"/api/v1/replays/{r}/cycles/1/", None),
        ("get", f"/api/v1/replays/{r}/explain/?pod=default/web", None),
        ("get", f"/api/v1/replays/{r}/timeline/", None),
        ("get", f"/api/v1/replays/{r}/latency/", None),
        ("get", f"/api/v1/replays/{r}/compare/{r2}/", None),
        ("post", f"/api/v1/replays/{r}/cancel/", None),
        ("post", f"/api/v1/replays/{r}/rerun/", None),
        ("delete", f"/api/v1/replays/{r}/", None),
        ("post", "/api/v1/replays/", {"snapshot": s}),
        ("post", "/api/v1/replays/", {"snapshot": s, "configuration": c}),
        ("get", f"/api/v1/reports/{rep}/", None),
        ("get", f"/api/v1/reports/{rep}/?format=junit", None),
        ("post", "/api/v1/reports/", {"snapshot_id": s, "wait": 0}),
        ("delete", f"/api/v1/tokens/{t}/", None),
    ]


def call(client: APIClient, method: str, url: str, body: dict[str, Any] | None) -> Any:
    if body is None:
        return getattr(client, method)(url)
    return getattr(client, method)(url, body, format="json")


def test_every_endpoint_needs_authentication(alices: dict[str, str]) -> None:
    anonymous = APIClient()
    bad_token = APIClient()
    bad_token.credentials(HTTP_AUTHORIZATION="Token svz_not-a-real-token")
    lists = [
        ("get", f"/api/v1/{kind}/", None) for kind in ("snapshots", "configurations", "replays", "tokens")
    ]
    creates = [
        ("post", "/api/v1/snapshots/", {"content": cluster_yaml()}),
        ("post", "/api/v1/configurations/", {"name": "c", "text": json.dumps(MOST_ALLOCATED)}),
        ("post", "/api/v1/configurations/validate/", {"text": json.dumps(MOST_ALLOCATED)}),
        ("post", "/api/v1/tokens/", {"name": "t"}),
    ]
    for method, url, body in [*lists, *creates, *object_requests(alices)]:
        err = error_of(call(anonymous, method, url, body), 401)
        assert err["code"] == "not_authenticated", (method, url)
        r = call(bad_token, method, url, body)
        assert error_of(r, 401)["code"] == "authentication_failed", (method, url)
        assert r["WWW-Authenticate"] == "Token"
    # nothing was created or changed
    assert (
        Snapshot.objects.count() == 1 and Replay.objects.count() == 2 and Configuration.objects.count() == 1
    )
    assert Replay.objects.get(pk=alices["replay"]).attempt == 1


def test_another_users_ids_are_404_for_every_method(alices: dict[str, str], carol_api: APIClient) -> None:
    for method, url, body in object_requests(alices):
        err = error_of(call(carol_api, method, url, body), 404)
        assert err["code"] == "not_found", (method, url)
        assert "alice" not in json.dumps(err)
    # carol's own replay cannot be compared with alice's either, in either order
    mine = carol_api.post("/api/v1/snapshots/", {"content": cluster_yaml()}, format="json").json()
    carols = start(carol_api, mine["id"])
    error_of(carol_api.get(f"/api/v1/replays/{carols['id']}/compare/{alices['replay']}/"), 404)
    # lists show nothing of alice's
    assert carol_api.get("/api/v1/configurations/").json()["count"] == 0
    assert [r["id"] for r in carol_api.get("/api/v1/replays/").json()["results"]] == [carols["id"]]
    assert [s["id"] for s in carol_api.get("/api/v1/snapshots/").json()["results"]] == [mine["id"]]
    assert len(carol_api.get("/api/v1/tokens/").json()["results"]) == 1  # her own (from the fixture)
    # nothing of alice's was changed
    assert Snapshot.objects.filter(pk=alices["snapshot"]).exists()
    replay = Replay.objects.get(pk=alices["replay"])
    assert replay.status == "succeeded" and replay.attempt == 1 and not replay.cancel_requested
    assert Configuration.objects.get(pk=alices["configuration"]).name == "c"
    assert Report.objects.filter(owner__username="alice").count() == 1
    assert alices["token"] in [
        str(t.pk) for t in User.objects.get(username="alice").api_tokens.filter(revoked=None)
    ]


def test_team_members_read_shared_objects_but_only_the_owner_changes_them(
    api: APIClient, other_api: APIClient, carol_api: APIClient, team: Team
) -> None:
    r = api.post("/api/v1/snapshots/", {"content": cluster_yaml(), "team": team.pk}, format="json")
    assert r.status_code == 201 and r.json()["team"] == team.pk
    snap = r.json()
    replay = start(api, snap["id"])
    assert replay["team"] == team.pk  # a replay of a shared snapshot is shared with its team
    rid = replay["id"]
    # bob, a member, reads everything
    assert [s["id"] for s in other_api.get("/api/v1/snapshots/").json()["results"]] == [snap["id"]]
    for url in (
        f"/api/v1/snapshots/{snap['id']}/",
        f"/api/v1/snapshots/{snap['id']}/nodes/",
        f"/api/v1/replays/{rid}/",
        f"/api/v1/replays/{rid}/cycles/",
        f"/api/v1/replays/{rid}/cycles/1/",
        f"/api/v1/replays/{rid}/explain/?pod=default/web",
        f"/api/v1/replays/{rid}/timeline/",
    ):
        assert other_api.get(url).status_code == 200, url
    # ... and may replay the shared snapshot himself (his replay, shared with the team)
    bobs = start(other_api, snap["id"])
    assert api.get(f"/api/v1/replays/{bobs['id']}/").status_code == 200
    # but changes nothing of alice's: 403 with the error shape
    for method, url in (
        ("delete", f"/api/v1/snapshots/{snap['id']}/"),
        ("delete", f"/api/v1/replays/{rid}/"),
        ("post", f"/api/v1/replays/{rid}/cancel/"),
        ("post", f"/api/v1/replays/{rid}/rerun/"),
    ):
        err = error_of(getattr(other_api, method)(url), 403)
        assert err["code"] == "forbidden" and "owner" in err["message"], url
    assert Snapshot.objects.filter(pk=snap["id"]).exists() and Replay.objects.get(pk=rid).attempt == 1
    # carol is no member: 404 for all of it
    for url in (
        f"/api/v1/snapshots/{snap['id']}/",
        f"/api/v1/replays/{rid}/",
        f"/api/v1/replays/{bobs['id']}/",
    ):
        error_of(carol_api.get(url), 404)
    assert carol_api.get("/api/v1/snapshots/").json()["count"] == 0
    # the owner still deletes
    assert api.delete(f"/api/v1/replays/{rid}/").status_code == 204


def test_team_on_replay_creation_and_on_a_repeated_upload(
    api: APIClient, other_api: APIClient, upload: Callable[..., dict[str, Any]], team: Team
) -> None:
    snap = upload()  # private
    assert snap["team"] is None
    private = start(api, snap["id"])
    shared = start(api, snap["id"], team=team.pk)
    assert private["team"] is None and shared["team"] == team.pk
    error_of(other_api.get(f"/api/v1/replays/{private['id']}/"), 404)
    assert other_api.get(f"/api/v1/replays/{shared['id']}/cycles/").json()["count"] == 2
    error_of(other_api.get(f"/api/v1/snapshots/{snap['id']}/"), 404)  # the replay is shared, not the snapshot
    # the owner uploads the same content again for the team: the one snapshot becomes shared
    again = api.post("/api/v1/snapshots/", {"content": cluster_yaml(), "team": team.pk}, format="json")
    assert again.status_code == 200 and again.json()["id"] == snap["id"] and again.json()["team"] == team.pk
    assert other_api.get(f"/api/v1/snapshots/{snap['id']}/").status_code == 200


def test_only_ones_own_teams_can_be_named(
    api: APIClient, carol_api: APIClient, upload: Callable[..., dict[str, Any]], team: Team
) -> None:
    others = Team.objects.create(name="others")
    snap = upload()
    for team_id in (others.pk, 999999):  # a team alice is not in, and no team at all: the same answer
        r = api.post("/api/v1/snapshots/", {"content": cluster_yaml(1), "team": team_id}, format="json")
        err = error_of(r, 400)
        assert err["code"] == "invalid" and "team" in err["details"], err
        assert f"team with id {team_id}" in err["details"]["team"][0]
        err = error_of(
            api.post("/api/v1/replays/", {"snapshot": snap["id"], "team": team_id}, format="json"), 400
        )
        assert "team" in err["details"]
    err = error_of(
        api.post("/api/v1/snapshots/", {"content": cluster_yaml(1), "team": "platform"}, format="json"), 400
    )
    assert "team" in err["details"]
    # carol names alice's team: refused, and nothing is stored
    err = error_of(
        carol_api.post("/api/v1/snapshots/", {"content": cluster_yaml(), "team": team.pk}, format="json"), 400
    )
    assert "team" in err["details"]
    assert Snapshot.objects.count() == 1 and Replay.objects.count() == 0
