"""Quantities are parsed by the kubernetes client's ``parse_quantity``, read without importing the
whole client (engine/quantity.py)."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal

import pytest
from kubernetes.utils.quantity import parse_quantity as client_parse_quantity

from schedviz.engine import quantity


@pytest.mark.parametrize(
    "value",
    ["100m", "1", "0.5", "1Ki", "128Mi", "2Gi", "1e3", "1E3", "5k", "3M", "1u", "7n", "1.5Ti", "2Pi", "1Ei", 3, 2.5,
     Decimal("1.25"), "1ki", "1Zi", "abc", "", "-1", "+2", "1.", ".5"],
)
def test_the_client_parse_quantity(value: object) -> None:
    def outcome(parse: object) -> tuple[str, str]:
        try:
            return ("value", repr(parse(value)))  # type: ignore[operator]
        except Exception as exc:  # the same error, of the same kind
            return (type(exc).__name__, str(exc))

    assert outcome(quantity.parse_quantity) == outcome(client_parse_quantity)


def test_the_engine_does_not_import_the_kubernetes_client() -> None:
    code = (
        "import sys, schedviz.engine, schedviz.engine.runtime.replay, schedviz.cli; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'kubernetes'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
