"""Wake-ups for a replay's websockets: the worker tells every consumer of a replay that cycles were
stored, or that its status changed (``connect`` hooks these to the runner, in ``ReplaysConfig.ready``)."""

from __future__ import annotations

from typing import Any

from schedviz.streaming.publish import send


def group(replay_id: Any) -> str:
    return f"replay-{replay_id}"


def on_progress(replay: Any, done: int) -> None:
    send(group(replay.pk), {"type": "replay.progress", "attempt": replay.attempt, "done": done})


def on_status(replay: Any) -> None:
    send(group(replay.pk), {"type": "replay.status", "attempt": replay.attempt, "status": replay.status})


def connect() -> None:
    from . import runner

    if on_progress not in runner.progress_listeners:
        runner.progress_listeners.append(on_progress)
    if on_status not in runner.status_listeners:
        runner.status_listeners.append(on_status)
