"""manage.py live_demo: a scripted cluster served locally, watched like a real one (schedviz/live/demo.py)."""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand

from schedviz.live import demo
from schedviz.replays.demo import DEMO_USER


class Command(BaseCommand):
    help = (
        "Serve the bundled sample cluster from a local test API server, make scheduling decisions in it "
        "with a scripted scheduler, and watch it like a real cluster (a live timeline to explore)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default=DEMO_USER, help="the owner of the demo cluster")
        parser.add_argument("--interval", type=float, default=2.0, help="seconds between decisions")
        parser.add_argument("--seconds", type=float, default=None, help="stop after this long")
        parser.add_argument(
            "--port", type=int, default=0, help="the test API server's port (default: any free one)"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        stop = threading.Event()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
            signal.signal(signal.SIGINT, lambda *_: stop.set())
        demo.run(
            stop,
            username=opts["username"],
            interval=opts["interval"],
            seconds=opts["seconds"],
            port=opts["port"],
            say=self.stdout.write,
        )
