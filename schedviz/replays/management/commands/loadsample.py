from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from schedviz.replays.demo import DEMO_PASSWORD, DEMO_USER, load_sample


class Command(BaseCommand):
    help = "Create the demo user and load the bundled sample cluster with a replay of it."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default=DEMO_USER)
        parser.add_argument("--password", default=DEMO_PASSWORD)

    def handle(self, *args: Any, **opts: Any) -> None:
        user, replay = load_sample(opts["username"], opts["password"])
        self.stdout.write(f"sample loaded for user {user.username}: replay {replay.pk} ({replay.status})")
