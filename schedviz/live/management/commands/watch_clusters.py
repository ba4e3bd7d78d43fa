"""manage.py watch_clusters: the live-mode worker (see schedviz/live/worker.py)."""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand

from schedviz.live.worker import Worker, default_worker_id


class Command(BaseCommand):
    help = (
        "Watch every enabled live cluster (or those named): mirror their state, replay each scheduling "
        "decision and compare it with the cluster's. Runs until stopped (SIGTERM/SIGINT); several workers "
        "share the clusters through leases."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--cluster", action="append", default=[], help="only this cluster id (repeatable)"
        )
        parser.add_argument("--worker-id", default="", help="this worker's name (default: host-pid)")
        parser.add_argument(
            "--lease-seconds",
            type=float,
            default=30.0,
            help="a cluster's lease; another worker takes over after it expires",
        )
        parser.add_argument(
            "--checkpoint-seconds",
            type=float,
            default=30.0,
            help="how often each mirrored state is checkpointed",
        )
        parser.add_argument(
            "--tick-seconds",
            type=float,
            default=1.0,
            help="how often leases, health and requests are handled",
        )
        parser.add_argument(
            "--max-seconds", type=float, default=None, help="stop after this many seconds (demos, tests)"
        )
        parser.add_argument(
            "--heartbeat-file",
            default="",
            help="touch this file after every tick that reached the database (for a health check)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        stop = threading.Event()

        def on_signal(signum: int, frame: Any) -> None:
            stop.set()

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, on_signal)
            signal.signal(signal.SIGINT, on_signal)
        worker = Worker(
            opts["worker_id"] or default_worker_id(),
            cluster_ids=opts["cluster"] or None,
            lease_seconds=opts["lease_seconds"],
            checkpoint_seconds=opts["checkpoint_seconds"],
            heartbeat_file=opts["heartbeat_file"] or None,
        )
        self.stdout.write(f"worker {worker.id}: watching clusters (Ctrl-C to stop)")
        worker.run(stop, tick_seconds=opts["tick_seconds"], max_seconds=opts["max_seconds"])
        self.stdout.write(f"worker {worker.id}: stopped")
