"""Questions about one replay answered from where the previous one left it (``replays.cursors``) give
the answers a replay run from the start gives, in any order; the pod of a cycle comes from the
snapshot's summary as from the snapshot itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from schedviz.engine.explain.inspect import pod_spec_summary
from schedviz.ingestion.enginecache import snapshots
from schedviz.ingestion.models import Snapshot
from schedviz.replays.cursors import cursors

from .test_replays import start

SAMPLE = Path(__file__).resolve().parents[2] / "schedviz" / "samples" / "cluster.yaml"


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    cursors.clear()
    yield
    cursors.clear()


def _answers(api: APIClient, rid: str, asks: list[tuple[int, str]]) -> list[dict[str, Any]]:
    out = []
    for seq, node in asks:
        r = api.get(f"/api/v1/replays/{rid}/cycles/{seq}/nodes/{node}/")
        assert r.status_code == 200, r.content
        out.append(r.json())
    return out


def test_node_questions_in_any_order_answer_as_from_the_start(
    api: APIClient, upload: Callable[..., dict[str, Any]]
) -> None:
    snap = upload(SAMPLE.read_text())
    rid = start(api, snap["id"], all_nodes=True)["id"]
    cycles = api.get(f"/api/v1/replays/{rid}/cycles/?page_size=1000").json()["results"]
    nodes = [n["name"] for n in api.get(f"/api/v1/snapshots/{snap['id']}/nodes/?page_size=1000").json()["results"]]
    seqs = [c["seq"] for c in cycles]
    assert len(seqs) >= 8 and len(nodes) >= 3
    # forward, the same cycle again, forward, back to the start, forward again
    asks = [
        (seqs[1], nodes[0]),
        (seqs[1], nodes[1]),
        (seqs[4], nodes[2]),
        (seqs[6], nodes[0]),
        (seqs[0], nodes[1]),
        (seqs[7], nodes[2]),
    ]
    first = cursors.started
    with override_settings(SCHEDVIZ_REPLAY_CURSORS=0):  # nothing kept: each answer replays from the start
        fresh = _answers(api, rid, asks)
    assert cursors.started - first == len(asks) and len(cursors) == 0
    before = cursors.started
    kept = _answers(api, rid, asks)
    assert kept == fresh
    # one replay for the forward questions, and one more after going back to the first cycle
    assert cursors.started - before == 2 and len(cursors) == 1


def test_why_here_after_node_questions_answers_as_from_the_start(
    api: APIClient, upload: Callable[..., dict[str, Any]]
) -> None:
    snap = upload(SAMPLE.read_text())
    rid = start(api, snap["id"])["id"]
    cycles = api.get(f"/api/v1/replays/{rid}/cycles/?page_size=1000").json()["results"]
    firsts: dict[str, int] = {}
    for c in cycles:
        firsts.setdefault(c["pod"], c["seq"])
    late = [(pod, seq) for pod, seq in firsts.items() if seq > 3][:3]
    assert late
    some_node = api.get(f"/api/v1/snapshots/{snap['id']}/nodes/").json()["results"][0]["name"]
    with override_settings(SCHEDVIZ_REPLAY_CURSORS=0):
        fresh = [api.get(f"/api/v1/replays/{rid}/explain/?pod={pod}").json() for pod, _ in late]
    for (pod, seq), expected in zip(late, fresh, strict=True):
        assert expected["pod"] == pod and expected["seq"] == seq
        node = expected["winner"]["node"] if expected.get("winner") else None
        ask = node or some_node
        assert api.get(f"/api/v1/replays/{rid}/cycles/{seq - 2}/nodes/{ask}/").status_code == 200
        assert len(cursors) == 1
        started = cursors.started
        got = api.get(f"/api/v1/replays/{rid}/explain/?pod={pod}").json()
        for volatile in ("durationMicros",):
            got.pop(volatile, None)
            expected.pop(volatile, None)
        assert got == expected
        assert cursors.started == started  # went on from the kept replay
        assert len(cursors) == 0  # which ran the pod's cycle, so is not kept


def test_the_cycles_pod_from_the_summary_is_the_snapshots(
    api: APIClient, upload: Callable[..., dict[str, Any]]
) -> None:
    snap = upload(SAMPLE.read_text())
    rid = start(api, snap["id"])["id"]
    row = Snapshot.objects.get(pk=snap["id"])
    specs = row.summary()["pendingSpecs"]
    engine = row.engine_snapshot()
    pending = {p.key: p for p in engine.pods if not p.node_name and not p.terminal}
    assert sorted(specs) == sorted(pending)
    for key, p in pending.items():
        assert specs[key] == pod_spec_summary(p)
    cycles = api.get(f"/api/v1/replays/{rid}/cycles/?page_size=1000").json()["results"]
    for c in cycles[:5]:
        assert api.get(f"/api/v1/replays/{rid}/cycles/{c['seq']}/pod/").json() == specs[c["pod"]]
    assert snapshots.get(row.engine_key, row.object_count, lambda: pytest.fail("read again")) is engine
