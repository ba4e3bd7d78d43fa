"""The live clusters operations fuzzed from the OpenAPI schema (schemathesis): no 5xx, every answer
as documented, another user's clusters untouched, 401 without credentials."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.core import serializers as django_serializers
from hypothesis import HealthCheck, Phase, given, settings

from schedviz.accounts.models import ApiToken
from schedviz.kube.testing import TestApiServer
from schedviz.live import services
from schedviz.live.models import LiveCluster, LiveCycle

from .test_consumer import OBJECTS, store, trigger

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


def _cluster(owner: User, srv: TestApiServer) -> LiveCluster:
    cluster = services.create_cluster(
        owner,
        name="c",
        credentials=services.Credentials("kubeconfig", yaml.safe_dump(srv.kubeconfig())),
        verify=False,
    )
    store(cluster, OBJECTS, trigger("bound", "web", 1, "b"))
    return cluster


def _rows(user: User) -> Any:
    return [
        json.loads(
            django_serializers.serialize("json", LiveCluster.objects.filter(owner=user).order_by("pk"))
        ),
        json.loads(
            django_serializers.serialize("json", LiveCycle.objects.filter(cluster__owner=user).order_by("pk"))
        ),
    ]


def test_fuzz_the_live_cluster_operations(alice: User, bob: User, apiserver: TestApiServer) -> None:
    from django.core.wsgi import get_wsgi_application

    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    mine, theirs = _cluster(alice, apiserver), _cluster(bob, apiserver)
    before = _rows(bob)
    auth = {"Authorization": f"Token {ApiToken.issue(alice, 'fuzz')[1]}"}
    ops = [r.ok() for r in schema.get_all_operations() if "/clusters/" in r.ok().path]
    assert len(ops) >= 10

    def run(op: Any, n: int, mode: Any, headers: dict[str, str], ids: dict[str, Any] | None = None) -> None:
        @given(case=op.as_strategy(generation_mode=mode, path_parameters=ids))
        @settings(
            max_examples=n,
            deadline=None,
            derandomize=True,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def test(case: Any) -> None:
            response = case.call(headers=headers)
            case.validate_response(response, checks=CHECKS, headers=headers)
            if headers is not auth:
                assert response.status_code == 401
            elif ids is not None and ids.get("id") == str(theirs.pk):
                assert 400 <= response.status_code < 500

        test()

    def ids_of(op: Any, cluster: LiveCluster) -> dict[str, Any] | None:
        if "{id}" not in op.path:
            return None
        out: dict[str, Any] = {"id": str(cluster.pk)}
        if "{seq}" in op.path:
            out["seq"] = 1
        return out

    for op in ops:
        run(op, 8, GenerationMode.POSITIVE, auth)
        run(op, 6, GenerationMode.NEGATIVE, auth)
        run(op, 1, GenerationMode.POSITIVE, {})
        if "{id}" in op.path:
            run(op, 4, GenerationMode.POSITIVE, auth, ids_of(op, theirs))
    for op in sorted(ops, key=lambda o: o.method == "delete"):
        if "{id}" in op.path and mine.pk and LiveCluster.objects.filter(pk=mine.pk).exists():
            run(op, 4, GenerationMode.POSITIVE, auth, ids_of(op, mine))
    assert _rows(bob) == before
