"""What `schedviz replay` imports before reading a snapshot: not the CEL engine (a tenth of a second),
which validation imports only for a snapshot with device selectors."""

from __future__ import annotations

import subprocess
import sys

from schedviz.engine.loader import load_objects


def test_the_cel_engine_is_imported_only_for_device_selectors() -> None:
    code = (
        "import sys, schedviz.engine, schedviz.engine.runtime.replay, schedviz.cli; "
        "print(sorted(m for m in sys.modules if m.startswith(('celpy', 'schedviz.engine.cel'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_device_selectors_are_still_checked() -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "selectors": [{"cel": {"expression": "x" * 20_000}}],
                        },
                    }
                ]
            }
        },
    }
    try:
        load_objects([claim])
    except Exception as exc:  # the API server's limit on a CEL selector's length
        assert "cel.expression" in str(exc)
    else:
        raise AssertionError("an over-long CEL selector was accepted")
