"""Property-based fuzzing of the whole REST API from its own OpenAPI schema (schemathesis).

The schema is read from the running application (``/api/schema/``) and every operation is called
in-process through Django's WSGI application with requests generated from it:

- as alice (a token), with valid (positive) and invalid (negative) parameters and bodies;
- with alice's real object ids in the path (so the operations reach real objects, not only 404s);
- with bob's object ids in the path, as alice: every such answer is a 4xx, and bob's data is
  byte-for-byte the same afterwards;
- without credentials and with a wrong token: 401 everywhere.

Every answer must be documented by the schema (status code, content type, body schema) and none may
be a 5xx. The number of examples per operation is bounded so that this file runs in well under a
minute.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import serializers as django_serializers
from hypothesis import HealthCheck, Phase, given, settings
from rest_framework.test import APIClient

from schedviz.accounts.models import ApiToken
from schedviz.ingestion.models import Snapshot
from schedviz.replays.models import Configuration, Cycle, Replay, Report
from tests.replays.test_replays import MOST_ALLOCATED
from tests.webfixtures import cluster_yaml

schemathesis = pytest.importorskip("schemathesis")
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = pytest.mark.django_db(transaction=True)

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
# examples per operation and mode; the whole file stays well under a minute
POSITIVE = 20
NEGATIVE = 12
WITH_IDS = 6
ANONYMOUS = 2


def _settings(n: int) -> settings:
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,  # the same requests on every run: a failure here is reproducible
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )


def _objects_of(user: User) -> dict[str, Any]:
    """Everything a user owns, as serialized rows (blobs included), to compare before and after."""
    qs: list[Any] = [
        Snapshot.objects.filter(owner=user),
        Replay.objects.filter(owner=user),
        Cycle.objects.filter(replay__owner=user),
        Configuration.objects.filter(owner=user),
        Report.objects.filter(owner=user),
        ApiToken.objects.filter(user=user).exclude(last_used__isnull=False).order_by("pk"),
    ]
    out: dict[str, Any] = {}
    for q in qs:
        rows = json.loads(django_serializers.serialize("json", q.order_by("pk")))
        for row in rows:
            row["fields"].pop("last_used", None)  # a token's use is not a change of its owner's data
        out[q.model.__name__] = rows
    out["tokens"] = sorted((t.pk, t.digest, t.revoked, t.expires) for t in ApiToken.objects.filter(user=user))
    return out


def _make_objects(client: APIClient) -> dict[str, str]:
    """One of each kind of object through the API; returns their ids by path parameter role."""
    snap = client.post("/api/v1/snapshots/", {"content": cluster_yaml(2)}, format="json").json()
    a = client.post("/api/v1/replays/", {"snapshot": snap["id"], "all_nodes": True}, format="json").json()
    b = client.post(
        "/api/v1/replays/", {"snapshot": snap["id"], "config": MOST_ALLOCATED}, format="json"
    ).json()
    conf = client.post(
        "/api/v1/configurations/", {"name": "c", "text": json.dumps(MOST_ALLOCATED)}, format="json"
    ).json()
    report = client.post("/api/v1/reports/", {"snapshot_id": snap["id"], "wait": 5}, format="json")
    assert report.status_code == 200, report.content
    token = client.post("/api/v1/tokens/", {"name": "other"}, format="json").json()
    return {
        "snapshot": snap["id"],
        "replay": a["id"],
        "replay2": b["id"],
        "configuration": conf["id"],
        "report": str(Report.objects.filter(snapshot_id=snap["id"]).get().pk),
        "token": str(token["id"]),
    }


def _path_ids(path: str, ids: dict[str, str]) -> dict[str, Any] | None:
    """Real ids for an operation's path parameters (None for kinds this file makes no objects of:
    those operations are fuzzed with generated ids only)."""
    kind = path.split("/")[3]  # /api/v1/<kind>/{id}/...
    key = {
        "snapshots": "snapshot",
        "replays": "replay",
        "configurations": "configuration",
        "reports": "report",
        "tokens": "token",
    }.get(kind)
    if key is None:
        return None
    out: dict[str, Any] = {}
    if "{id}" in path:
        out["id"] = ids[key]
    if "{other}" in path:
        out["other"] = ids["replay2"]
    if "{seq}" in path:
        out["seq"] = 1
    return out


@pytest.fixture(autouse=True)
def _quiet_request_log() -> Iterator[None]:
    """Thousands of 4xx answers: Django's per-request warnings would drown the output."""
    import logging

    log = logging.getLogger("django.request")
    level = log.level
    log.setLevel(logging.ERROR)
    yield
    log.setLevel(level)


@pytest.fixture
def wsgi_schema(db: None) -> Any:
    from django.core.wsgi import get_wsgi_application

    return schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())


@pytest.fixture
def world(alice: User, bob: User, api: APIClient, other_api: APIClient) -> Iterator[dict[str, Any]]:
    alices = _make_objects(api)
    bobs = _make_objects(other_api)
    alice_token = ApiToken.issue(alice, "fuzz")[1]
    yield {"alice": alices, "bob": bobs, "token": alice_token}


def _run(
    op: Any,
    n: int,
    mode: Any,
    headers: dict[str, str],
    path_parameters: dict[str, Any] | None = None,
    expect: Callable[[Any], None] | None = None,
    seen: dict[str, set[int]] | None = None,
) -> int:
    calls = 0

    @given(case=op.as_strategy(generation_mode=mode, path_parameters=path_parameters))
    @_settings(n)
    def test(case: Any) -> None:
        nonlocal calls
        calls += 1
        response = case.call(headers=headers)
        if seen is not None:
            seen.setdefault(f"{op.method.upper()} {op.path}", set()).add(response.status_code)
        case.validate_response(response, checks=CHECKS, headers=headers)
        if expect is not None:
            expect(response)

    test()
    return calls


def test_fuzz_every_operation_from_the_schema(
    wsgi_schema: Any, world: dict[str, Any], bob: User, alice: User
) -> None:
    started = time.monotonic()
    before = _objects_of(bob)
    auth = {"Authorization": f"Token {world['token']}"}
    calls = 0
    seen: dict[str, set[int]] = {}
    ops = [r.ok() for r in wsgi_schema.get_all_operations()]
    assert len(ops) >= 30

    def client_error(response: Any) -> None:
        assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])

    def unauthorized(response: Any) -> None:
        assert response.status_code == 401, (response.status_code, response.text[:300])

    for op in ops:
        calls += _run(op, POSITIVE, GenerationMode.POSITIVE, auth, seen=seen)
        calls += _run(op, NEGATIVE, GenerationMode.NEGATIVE, auth, seen=seen)
        calls += _run(op, ANONYMOUS, GenerationMode.POSITIVE, {}, expect=unauthorized)
        calls += _run(
            op, ANONYMOUS, GenerationMode.POSITIVE, {"Authorization": "Token svz_wrong"}, expect=unauthorized
        )
        if "{" in op.path and _path_ids(op.path, world["bob"]) is not None:
            calls += _run(
                op, WITH_IDS, GenerationMode.POSITIVE, auth, _path_ids(op.path, world["bob"]), client_error
            )
    # alice's own ids last: destroying her objects first would leave the other runs only 404s
    for op in sorted(ops, key=lambda o: o.method == "delete"):
        if "{" in op.path and _path_ids(op.path, world["alice"]) is not None:
            calls += _run(
                op, WITH_IDS, GenerationMode.POSITIVE, auth, _path_ids(op.path, world["alice"]), seen=seen
            )

    assert _objects_of(bob) == before, "a request as alice changed bob's data"
    assert calls > 500
    # the fuzzing reached the operations' real work, not only their error answers
    succeeded = {op for op, codes in seen.items() if any(200 <= c < 300 for c in codes)}
    assert len(succeeded) >= 25, sorted(set(seen) - succeeded)
    elapsed = time.monotonic() - started
    print(f"schemathesis: {calls} requests over {len(ops)} operations in {elapsed:.1f} s")
