"""Wake-ups on the channel layer: the worker tells every consumer of a replay that cycles were stored."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

log = logging.getLogger(__name__)


def group(replay_id: Any) -> str:
    return f"replay-{replay_id}"


def _send(replay_id: Any, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group(replay_id), message)
    except Exception:  # streaming is best effort; consumers also poll the database
        log.warning("could not publish to the channel layer", exc_info=True)


def on_progress(replay: Any, done: int) -> None:
    _send(replay.pk, {"type": "replay.progress", "attempt": replay.attempt, "done": done})


def on_status(replay: Any) -> None:
    _send(replay.pk, {"type": "replay.status", "attempt": replay.attempt, "status": replay.status})


def connect() -> None:
    from schedviz.replays import runner

    if on_progress not in runner.progress_listeners:
        runner.progress_listeners.append(on_progress)
    if on_status not in runner.status_listeners:
        runner.status_listeners.append(on_status)
