"""The OpenAPI schema: generated without warnings, every operation documents its errors; docs render."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from rest_framework.test import APIClient


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    out = StringIO()
    # --fail-on-warn: any warning (an unresolvable type, an undocumented response) fails the command
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    value: dict[str, Any] = yaml.safe_load(out.getvalue())
    return value


def operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, op)
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]


def test_every_operation_documents_its_answers_and_errors(schema: dict[str, Any]) -> None:
    ops = operations(schema)
    paths = {p for _, p, _ in ops}
    for expected in (
        "/api/v1/snapshots/",
        "/api/v1/replays/{id}/cycles/{seq}/",
        "/api/v1/replays/{id}/explain/",
        "/api/v1/replays/{id}/compare/{other}/",
        "/api/v1/reports/",
        "/api/v1/reports/{id}/",
        "/api/v1/tokens/",
    ):
        assert expected in paths, expected
    error_ref = "#/components/schemas/Error"
    for method, path, op in ops:
        where = f"{method.upper()} {path}"
        assert op.get("description"), where
        assert {"tokenAuth": []} in op["security"], where
        responses = op["responses"]
        success = [c for c in responses if c.startswith("2")]
        assert success, where
        for code in success:
            if code != "204":
                assert responses[code].get("content"), f"{where} {code}: undocumented body"
        for code in ("401", "429", *(["404"] if "{" in path else [])):
            assert code in responses, f"{where}: no {code}"
        for code, resp in responses.items():
            if code >= "400":
                schemas = [c["schema"] for c in resp["content"].values()]
                assert schemas == [{"$ref": error_ref}], f"{where} {code}"
    error = schema["components"]["schemas"]["Error"]
    body = schema["components"]["schemas"][error["properties"]["error"]["$ref"].rsplit("/", 1)[1]]
    assert set(body["properties"]) == {"code", "message", "details"}
    # endpoint-specific errors
    by = {(m, p): op["responses"] for m, p, op in ops}
    assert "403" in by[("delete", "/api/v1/snapshots/{id}/")]
    assert "409" in by[("post", "/api/v1/replays/{id}/rerun/")]
    assert "422" in by[("post", "/api/v1/reports/")]
    assert {"application/xml", "text/markdown", "application/json"} <= set(
        by[("get", "/api/v1/reports/{id}/")]["200"]["content"]
    )
    assert schema["components"]["securitySchemes"]["tokenAuth"]["name"] == "Authorization"


def test_schema_and_docs_are_served(db: None) -> None:
    anonymous = APIClient()
    r = anonymous.get("/api/schema/")
    assert r.status_code == 200
    assert yaml.safe_load(r.content)["openapi"].startswith("3.")
    r = anonymous.get("/api/schema/?format=json")
    assert r.status_code == 200 and r.json()["info"]["title"] == "SchedViz API"
    docs = anonymous.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger-ui" in docs.content
    # its start-up script comes from a URL (no inline script, for the Content-Security-Policy)
    script = anonymous.get("/api/docs/?script=")
    assert script.status_code == 200 and b"/api/schema/" in script.content
    assert anonymous.get("/api/redoc/").status_code == 200
