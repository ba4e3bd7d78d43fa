"""A live cluster for the browser tests, paced by the test: ``python -m tests.e2e.live_driver``.

The pieces of ``manage.py live_demo`` (schedviz/live/demo.py): the sample cluster served by the
wire-protocol test API server, the demo's cluster pointed at it, the live worker watching it in a
thread; but the scripted scheduler decides only when told, one decision per ``step`` line on stdin,
so that the test knows when the timeline stands still. Run with the ``SCHEDVIZ_DATA_DIR`` of the
``schedviz serve --demo`` under test: same SQLite database, same encryption key.

stdout: ``ready <cluster id>`` once the cluster is watched, then ``stepped <what happened>`` per
step; ``expire`` ends every watch with a 410 Gone (the worker relists). ``quit`` (or the end of
stdin) stops the worker and the server.
"""

from __future__ import annotations

import os
import secrets
import sys
import threading
import time


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedviz.settings")
    import django

    django.setup()
    from django.contrib.auth.models import User

    from schedviz.live import demo
    from schedviz.live.models import LiveCluster
    from schedviz.live.worker import Worker
    from schedviz.replays.demo import DEMO_USER

    user = User.objects.get(username=DEMO_USER)
    srv = demo.start_server()
    stop = threading.Event()
    thread: threading.Thread | None = None
    try:
        cluster = demo.demo_cluster(user, srv)
        worker = Worker(f"e2e-{secrets.token_hex(3)}", cluster_ids=[cluster.pk])
        thread = threading.Thread(target=worker.run, args=(stop, 0.5), daemon=True)
        thread.start()
        deadline = time.monotonic() + 60
        while not LiveCluster.objects.filter(pk=cluster.pk, status="watching").exists():
            if time.monotonic() > deadline:
                print("error: the cluster was not watched within 60 s", flush=True)
                return 1
            time.sleep(0.1)
        scheduler = demo.ScriptedScheduler(srv, expire_every=0)
        print(f"ready {cluster.pk}", flush=True)
        for line in sys.stdin:
            command = line.strip()
            if command == "quit":
                break
            if command == "step":
                print(f"stepped {scheduler.step()}", flush=True)
            elif command == "expire":
                srv.expire_watches()
                print("expired", flush=True)
            elif command:
                print(f"error: unknown command {command!r}", flush=True)
        return 0
    finally:
        stop.set()
        if thread is not None:
            thread.join(30)
        srv.close()


if __name__ == "__main__":
    sys.exit(main())
