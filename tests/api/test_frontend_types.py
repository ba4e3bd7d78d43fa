"""The explorer's API types are generated from the OpenAPI schema: this fails when they drift.

``frontend/src/api/schema.gen.ts`` is openapi-typescript's output for ``/api/schema/`` (JSON). When a
serializer changes, regenerate it: ``cd frontend && npm run api:types``. Needs the frontend's
node_modules (``npm ci``); without them the test is skipped, unless ``$CI`` is set.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
GENERATED = FRONTEND / "src" / "api" / "schema.gen.ts"
TOOL = FRONTEND / "node_modules" / ".bin" / "openapi-typescript"


def schema_json() -> str:
    """The schema /api/schema/ serves, as the management command writes it."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return OpenApiJsonRenderer().render(schema, renderer_context={}).decode()


def test_the_generated_types_match_the_schema(tmp_path: Path) -> None:
    if not TOOL.exists():
        if os.environ.get("CI"):
            pytest.fail("frontend/node_modules is missing: cd frontend && npm ci")
        pytest.skip("frontend/node_modules is missing (cd frontend && npm ci)")
    src = tmp_path / "schema.json"
    src.write_text(schema_json())
    json.loads(src.read_text())  # the schema is JSON
    out = tmp_path / "schema.gen.ts"
    subprocess.run([str(TOOL), str(src), "-o", str(out)], cwd=FRONTEND, check=True, capture_output=True, timeout=120)
    assert out.read_text() == GENERATED.read_text(), (
        "frontend/src/api/schema.gen.ts differs from the API's schema: regenerate it with "
        "`cd frontend && npm run api:types` and commit it"
    )


def test_the_generated_types_hold_the_cycle_endpoints() -> None:
    text = GENERATED.read_text()
    for path in ("/api/v1/replays/{id}/cycles/{seq}/nodes/{node}/", "/api/v1/replays/{id}/cycles/{seq}/pod/"):
        assert f'"{path}"' in text, path
    for name in ("CyclePod", "CycleNodeInspection", "Explanation"):
        assert f"        {name}: {{" in text, name
