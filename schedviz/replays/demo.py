"""The embedded default's sample: a demo user, the bundled sample cluster, and a replay of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from schedviz.ingestion.services import create_snapshot

from .models import Replay
from .services import start_replay

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "cluster.yaml"
DEMO_USER = "demo"
DEMO_PASSWORD = "demo"


def load_sample(username: str = DEMO_USER, password: str = DEMO_PASSWORD) -> tuple[Any, Replay]:
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_password(password)
        user.save()
    snap, _ = create_snapshot(user, SAMPLE.read_bytes(), SAMPLE.name, name="Sample cluster (21 nodes, 3 zones)")
    replay = Replay.objects.filter(snapshot=snap, owner=user).order_by("-created").first()
    if replay is None:
        replay = start_replay(user, snap, all_nodes=True, name="Sample cluster, default profile")
    return user, replay
