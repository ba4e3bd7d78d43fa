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
        os.environ["SCHEDVIZ_DEMO_ACCOUNT"] = f"{DEMO_USER}:{DEMO_PASSWORD}"  # offered on the sign-in page
        print(f"SchedViz: sample cluster loaded (replay {replay.pk}).")
        print(f"SchedViz: sign in as {DEMO_USER} / {DEMO_PASSWORD}")
    print(f"SchedViz: http://{host}:{port}/  (database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}, "
          f"replays: {settings.SCHEDVIZ_TASK_MODE})")
    import uvicorn

    config: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": "info",
        "lifespan": "off",
        # compressing every frame for every client costs more CPU than anything else the streams do
        # (README, Hardening: Load); WS_PER_MESSAGE_DEFLATE=true turns it on for slow links
        "ws_per_message_deflate": os.environ.get("WS_PER_MESSAGE_DEFLATE", "false").lower() in ("1", "true", "yes"),
    }
    uvicorn.run("schedviz.asgi:application", **config)
    return 0
