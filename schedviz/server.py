"""`schedviz serve`: the whole application in one process (the embedded default), or the web tier."""

from __future__ import annotations

import os
from typing import Any


def serve(host: str = "127.0.0.1", port: int = 8000, demo: bool = False, migrate: bool = True) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedviz.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    if migrate:
        call_command("migrate", interactive=False, verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    if demo:
        from schedviz.replays.demo import DEMO_PASSWORD, DEMO_USER, load_sample

        _, replay = load_sample()
        print(f"SchedViz: sample cluster loaded (replay {replay.pk}).")
        print(f"SchedViz: sign in as {DEMO_USER} / {DEMO_PASSWORD}")
    print(f"SchedViz: http://{host}:{port}/  (database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}, "
          f"replays: {settings.SCHEDVIZ_TASK_MODE})")
    import uvicorn

    config: dict[str, Any] = {"host": host, "port": port, "log_level": "info", "lifespan": "off"}
    uvicorn.run("schedviz.asgi:application", **config)
    return 0
