"""`schedviz bench-storage`: how much a stored replay weighs, and how fast one cycle's node page answers.

1. Replays a 1000-node x 1000-pod synthetic cluster (every node evaluated) through the same runner
   the workers use and reports the rows and bytes it stored.
2. Replays a 5000-node cluster and requests one cycle's node page through the API (the Django test
   client: the whole view, serialisation and database read, without network) many times, reporting
   the 50th and 95th percentile.

``--pods-per-node K`` measures a real-size replay instead: the dense, production-shaped cluster of
``schedviz bench --pods-per-node`` (``--nodes``, default 5000, K running pods a node, ``--pods``
pending, default 1000), every node evaluated, stored by the same runner: its rows, bytes per cycle
and table size, the time the worker took, the node page of its cycles, and the questions asked on a
late cycle's page (its pod, a node as the cycle found it, Why here?), cold and then warm.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from typing import Any


def _setup(database_url: str) -> None:
    from schedviz.lib.dbs import ensure_database

    ensure_database(database_url)
    os.environ["DATABASE_URL"] = database_url
    os.environ["SCHEDVIZ_TASK_MODE"] = "sync"
    os.environ["DJANGO_SETTINGS_MODULE"] = "schedviz.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def _replay(user: Any, nodes: int, pods: int) -> Any:
    import dataclasses

    from schedviz.ingestion.parsing import Limits
    from schedviz.ingestion.services import create_snapshot
    from schedviz.replays.models import Replay
    from schedviz.replays.runner import run_replay
    from schedviz.tools.bench_engine import synthetic_cluster

    snap = synthetic_cluster(nodes, pods)
    payload = json.dumps({"kind": "List", "items": [n.raw for n in snap.nodes] + [p.raw for p in snap.pods]}).encode()
    base = Limits.from_env()
    limits = dataclasses.replace(base, max_upload_bytes=max(base.max_upload_bytes, len(payload) + 1))
    stored, _ = create_snapshot(user, payload, "bench.json", name=f"bench {nodes}x{pods}", limits=limits)
    replay = Replay.objects.create(owner=user, snapshot=stored, options={"allNodes": True})
    t0 = time.perf_counter()
    status = run_replay(replay.pk)
    replay.refresh_from_db()
    replay.elapsed = time.perf_counter() - t0  # type: ignore[attr-defined]
    assert status == "succeeded", replay.reason
    return replay


def _dense_replay(user: Any, nodes: int, per_node: int, pending: int) -> Any:
    """The dense dump uploaded gzip'd as an operator would, read as the worker reads a large upload
    (``ingestion.services.start_upload``: in this process, the task mode being ``sync``), replayed."""
    import gzip
    import tempfile
    from pathlib import Path

    from schedviz.ingestion.services import start_upload
    from schedviz.replays.models import Replay
    from schedviz.replays.runner import run_replay
    from schedviz.tools.dense_cluster import DenseShape, write_dump

    shape = DenseShape(nodes=nodes, pods_per_node=per_node, pending=pending)
    with tempfile.TemporaryDirectory(prefix="schedviz-bench-storage-") as tmp:
        dump = Path(tmp) / "dense.json"
        write_dump(dump, shape, "json")
        payload = gzip.compress(dump.read_bytes(), compresslevel=6)
    t0 = time.perf_counter()
    stored = start_upload(user, [payload], "dense.json.gz", len(payload), name=f"dense {nodes}x{per_node}")
    stored.refresh_from_db()
    stored_seconds = time.perf_counter() - t0
    if stored.status == "failed" and stored.duplicate_of is not None:
        stored = stored.duplicate_of  # read in full all the same, then found stored by an earlier run
    assert stored.status == "ready", (stored.status, stored.error)
    del payload
    replay = Replay.objects.create(owner=user, snapshot=stored, options={"allNodes": True})
    t0 = time.perf_counter()
    status = run_replay(replay.pk)
    replay.refresh_from_db()
    replay.elapsed = time.perf_counter() - t0  # type: ignore[attr-defined]
    replay.stored_seconds = stored_seconds  # type: ignore[attr-defined]
    assert status == "succeeded", replay.reason
    return replay


def _table_bytes() -> int | None:
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cur:
        cur.execute("SELECT pg_total_relation_size('replays_cycle')")
        return int(cur.fetchone()[0])


def _pages(user: Any, replay: Any, pages: int) -> dict[str, Any]:
    from rest_framework.test import APIClient

    from schedviz.replays.models import Cycle

    client = APIClient()
    client.force_authenticate(user)
    timings = []
    seqs = list(Cycle.objects.filter(replay=replay, attempt=replay.attempt).values_list("seq", flat=True))
    for i in range(pages):
        seq = seqs[(i * 7919) % len(seqs)]
        t0 = time.perf_counter()
        r = client.get(f"/api/v1/replays/{replay.pk}/cycles/{seq}/?page_size=100")
        timings.append((time.perf_counter() - t0) * 1000)
        assert r.status_code == 200, r.content[:200]
    timings.sort()
    return {
        "requests": pages,
        "p50ms": round(statistics.median(timings), 1),
        "p95ms": round(timings[int(0.95 * (len(timings) - 1))], 1),
        "maxms": round(timings[-1], 1),
    }


def _questions(user: Any, replay: Any) -> dict[str, Any]:
    """What an operator asks on a late cycle's page, as a web process answers it: first in a process
    that has not read the snapshot yet (cold), then the next questions (the process keeps its reading
    and the replay where the last question left it: ingestion.enginecache, replays.cursors)."""
    from rest_framework.test import APIClient

    from schedviz.ingestion import models as ingestion_models
    from schedviz.ingestion.enginecache import snapshots
    from schedviz.replays.cursors import cursors
    from schedviz.replays.models import Cycle

    client = APIClient()
    client.force_authenticate(user)
    rows = list(
        Cycle.objects.filter(replay=replay, attempt=replay.attempt).order_by("seq").values_list("seq", "pod", "node")
    )
    names = replay.node_names()
    late = int(len(rows) * 0.9)
    base = f"/api/v1/replays/{replay.pk}"

    def timed(url: str) -> float:
        t0 = time.perf_counter()
        r = client.get(url)
        ms = (time.perf_counter() - t0) * 1000
        assert r.status_code == 200, (url, r.content[:300])
        return round(ms, 1)

    snapshots.clear()
    cursors.clear()
    ingestion_models._summaries.items.clear()
    seq, _, node = rows[late]
    return {
        "cycle": seq,
        "podColdMs": timed(f"{base}/cycles/{seq}/pod/"),
        "podMs": timed(f"{base}/cycles/{rows[late + 1][0]}/pod/"),
        "nodeColdMs": timed(f"{base}/cycles/{seq}/nodes/{node or names[0]}/"),
        "nodeOtherMs": timed(f"{base}/cycles/{seq}/nodes/{names[1]}/"),
        "nodeNextCycleMs": timed(f"{base}/cycles/{rows[late + 1][0]}/nodes/{names[2]}/"),
        "whyHereNextMs": timed(f"{base}/explain/?pod={rows[late + 3][1]}"),
        "whyHereEarlierMs": timed(f"{base}/explain/?pod={rows[len(rows) // 2][1]}"),
        "enginesBuilt": cursors.started,
        "snapshotReadings": snapshots.readings,
    }


def run_dense(database_url: str, nodes: int, per_node: int, pending: int, pages: int = 200) -> dict[str, Any]:
    _setup(database_url)
    from django.contrib.auth.models import User
    from django.db import connection
    from django.db.models import Sum
    from django.db.models.functions import Length

    from schedviz.replays.models import Cycle

    user, _ = User.objects.get_or_create(username="bench-storage")
    before = _table_bytes()
    replay = _dense_replay(user, nodes, per_node, pending)
    rows = Cycle.objects.filter(replay=replay, attempt=replay.attempt)
    count = rows.count()
    payload = rows.aggregate(total=Sum(Length("payload")))["total"] or 0
    after = _table_bytes()
    return {
        "database": connection.vendor,
        "dense": {
            "nodes": nodes,
            "runningPods": nodes * per_node,
            "pending": pending,
            "cycles": count,
            "payloadBytes": payload,
            "payloadBytesPerCycle": round(payload / count) if count else 0,
            "tableBytesAdded": None if before is None or after is None else after - before,
            "uploadParsedSeconds": round(replay.stored_seconds, 1),
            "replaySeconds": round(replay.elapsed, 1),
            "cyclesPerSecond": round(count / replay.elapsed, 1) if replay.elapsed else 0.0,
        },
        "cyclePage": _pages(user, replay, pages),
        "questions": _questions(user, replay),
    }


def run(database_url: str, pages: int = 200) -> dict[str, Any]:
    _setup(database_url)
    from django.contrib.auth.models import User
    from django.db import connection
    from django.db.models import Sum
    from django.db.models.functions import Length
    from rest_framework.test import APIClient

    from schedviz.replays.models import Cycle

    user, _ = User.objects.get_or_create(username="bench-storage")
    big = _replay(user, 1000, 1000)
    rows = Cycle.objects.filter(replay=big, attempt=big.attempt)
    payload = rows.aggregate(total=Sum(Length("payload")))["total"] or 0
    table_bytes = None
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("SELECT pg_total_relation_size('replays_cycle')")
            table_bytes = int(cur.fetchone()[0])
    wide = _replay(user, 5000, 20)
    client = APIClient()
    client.force_authenticate(user)
    timings = []
    seqs = list(Cycle.objects.filter(replay=wide, attempt=wide.attempt).values_list("seq", flat=True))
    for i in range(pages):
        seq = seqs[i % len(seqs)]
        t0 = time.perf_counter()
        r = client.get(f"/api/v1/replays/{wide.pk}/cycles/{seq}/?page_size=100")
        timings.append((time.perf_counter() - t0) * 1000)
        assert r.status_code == 200, r.content[:200]
    timings.sort()
    return {
        "database": connection.vendor,
        "replay1000x1000": {
            "cycles": rows.count(),
            "payloadBytes": payload,
            "tableBytes": table_bytes,
            "replaySeconds": round(big.elapsed, 2),
        },
        "cyclePage5000Nodes": {
            "requests": pages,
            "p50ms": round(statistics.median(timings), 1),
            "p95ms": round(timings[int(0.95 * (len(timings) - 1))], 1),
            "maxms": round(timings[-1], 1),
        },
    }
