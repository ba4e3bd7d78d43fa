"""`schedviz bench-upload`: a production cluster's dump uploaded through the API and read on the worker.

1. Writes a dense dump (``dense_cluster.py``: ``--nodes`` x ``--pods-per-node`` running pods and
   ``--pending`` pending ones, as ``kubectl get -o json`` prints them) and compresses it (gzip, or zstd),
   unless ``--dump`` names one already written.
2. Uploads it with ``POST /api/v1/snapshots/`` (the Django test client: the whole view, the multipart
   parsing and the storing of the upload as received, without network) and times the answer (202).
3. Reads it as the worker does (``ingestion.services.process_upload``) in a fresh process, the way a
   Celery worker process runs the task, and reports its time and its peak resident memory.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_WORKER = """
import json, os, resource, sys, time
import django
django.setup()
from schedviz.ingestion.models import Snapshot
from schedviz.ingestion.services import process_upload
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0, c0 = time.perf_counter(), time.process_time()
status = process_upload(sys.argv[1])
elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
snap = Snapshot.objects.defer("objects_blob", "summary_blob").get(pk=sys.argv[1])
print(json.dumps({
    "status": status, "seconds": round(elapsed, 2), "cpuSeconds": round(cpu, 2),
    "peakMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    "startMiB": round(before / 1024, 1),
    "nodes": snap.node_count, "pods": snap.pod_count, "pending": snap.pending_count,
    "objects": snap.objects_parsed, "error": snap.error,
}))
"""


def _setup(database_url: str) -> None:
    from schedviz.lib.dbs import ensure_database

    ensure_database(database_url)
    os.environ["DATABASE_URL"] = database_url
    os.environ["SCHEDVIZ_TASK_MODE"] = "celery"  # queued in the in-memory broker: the worker is run below
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedviz.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def write_compressed(nodes: int, pods_per_node: int, pending: int, codec: str, folder: Path) -> Path:
    from schedviz.tools.dense_cluster import DenseShape, write_dump

    raw = folder / f"dense-{nodes}x{pods_per_node}.json"
    write_dump(raw, DenseShape(nodes=nodes, pods_per_node=pods_per_node, pending=pending))
    if codec == "gzip":
        out = raw.with_name(raw.name + ".gz")
        with raw.open("rb") as f, gzip.open(out, "wb", 6) as g:
            shutil.copyfileobj(f, g, 16 << 20)
    else:
        import zstandard

        out = raw.with_name(raw.name + ".zst")
        with raw.open("rb") as f, out.open("wb") as g:
            zstandard.ZstdCompressor(level=3).copy_stream(f, g)
    raw.unlink()
    return out


def run(
    database_url: str,
    *,
    dump: str | None = None,
    nodes: int = 5000,
    pods_per_node: int = 30,
    pending: int = 1000,
    codec: str = "gzip",
) -> dict[str, Any]:
    _setup(database_url)
    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import TemporaryUploadedFile
    from rest_framework.test import APIClient

    from schedviz.ingestion.models import Snapshot

    with tempfile.TemporaryDirectory(prefix="schedviz-bench-upload-") as tmp:
        t0 = time.perf_counter()
        path = Path(dump) if dump else write_compressed(nodes, pods_per_node, pending, codec, Path(tmp))
        written = time.perf_counter() - t0
        size = path.stat().st_size
        user, _ = User.objects.get_or_create(username="bench-upload")
        Snapshot.objects.filter(owner=user).delete()
        client = APIClient()
        client.force_authenticate(user)
        upload = TemporaryUploadedFile(path.name, "application/octet-stream", size, None)
        with path.open("rb") as f:
            shutil.copyfileobj(f, upload, 16 << 20)
        upload.seek(0)
        t1 = time.perf_counter()
        r = client.post("/api/v1/snapshots/", {"file": upload}, format="multipart")
        answered = time.perf_counter() - t1
        upload.close()
        if r.status_code != 202:
            raise SystemExit(f"upload answered {r.status_code}: {r.content[:500]!r}")
        snap_id = r.json()["id"]
        proc = subprocess.run(
            [sys.executable, "-c", _WORKER, snap_id], capture_output=True, text=True, env=dict(os.environ), check=False
        )
        if proc.returncode != 0:
            raise SystemExit(f"the worker failed:\n{proc.stderr[-3000:]}")
        worker = json.loads(proc.stdout.strip().splitlines()[-1])
        Snapshot.objects.filter(pk=snap_id).delete()
    return {
        "dump": path.name,
        "compressedBytes": size,
        "dumpSeconds": round(written, 1) if not dump else None,
        "answerSeconds": round(answered, 2),
        "worker": worker,
        "objectsPerSecond": round(worker["objects"] / worker["seconds"]) if worker["seconds"] else None,
        "objectsPerCpuSecond": round(worker["objects"] / worker["cpuSeconds"]) if worker["cpuSeconds"] else None,
        "readyAfterSeconds": round(answered + worker["seconds"], 1),
    }
