"""A small upload may not buy a lot of the server's time: the 2 KB snapshot whose DeviceClass selector
costs a million steps is refused when it is uploaded, as the API server refuses it at admission."""

from __future__ import annotations

import time
from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from schedviz.ingestion.models import Snapshot
from tests.engine.builders import node, pod
from tests.engine.plugins._storage_builders import (
    device,
    device_class,
    exact,
    pod_claims,
    resource_claim,
    resource_slice,
)

pytestmark = pytest.mark.django_db(transaction=True)

L = "[" + ", ".join(str(i) for i in range(100)) + "]"
MILLION = f"{L}.all(a, {L}.all(b, {L}.all(c, a + b + c >= 0)))"


def test_the_million_step_selector_is_refused_at_upload(api: APIClient) -> None:
    objects: list[dict[str, Any]] = [
        node("n0"),
        resource_slice("n0", [device("gpu-0", model="a100")]),
        device_class("gpu", MILLION),
        resource_claim("c", exact("gpu", 1, "gpu")),
        pod("p", **pod_claims("c")),
    ]
    text = yaml.safe_dump_all(objects)
    assert len(text.encode()) < 4096  # a small upload
    cpu = time.process_time()
    r = api.post("/api/v1/snapshots/", {"content": text, "name": "amplifier"}, format="json")
    cpu = time.process_time() - cpu
    assert r.status_code == 400, r.content[:300]
    err = r.json()["error"]
    assert err["code"] == "invalid_upload"
    [problem] = err["details"]
    assert problem["object"] == "DeviceClass gpu"
    assert problem["field"] == "spec.selectors[0].cel.expression"
    assert problem["message"].endswith("Forbidden: too complex, exceeds cost limit")
    assert cpu < 10, f"{cpu:.2f}s of CPU"  # the estimate, not the million steps (a wide margin)
    assert Snapshot.objects.count() == 0
