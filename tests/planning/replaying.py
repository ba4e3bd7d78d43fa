"""What the plans are checked against: plain replays of snapshots the tests build themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schedviz.engine import ReplayOptions, Snapshot, load_paths
from schedviz.engine.loader import load_objects
from schedviz.engine.runtime.replay import Replay, start_time
from schedviz.planning.base import timestamp

FIXTURES = Path(__file__).resolve().parents[1] / "conformance" / "fixtures"


def scenarios() -> list[Path]:
    """The conformance scenarios that have nodes."""
    out = []
    for p in sorted(FIXTURES.glob("*/*.json")):
        if p.name.endswith(".expected.json"):
            continue
        objs, _ = raw_objects(p)
        if any(o.get("kind") == "Node" for o in objs):
            out.append(p)
    return out


def raw_objects(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """A scenario's objects (nodes, pods, the rest) and its configuration."""
    doc = json.loads(path.read_text())
    return [*doc.get("nodes", []), *doc.get("pods", []), *doc.get("items", [])], doc.get("config")


def created_at(snapshot: Snapshot) -> str | None:
    t = start_time(snapshot)
    return timestamp(t) if t else None


def replay(
    objects: list[dict[str, Any]], config: dict[str, Any] | None, preemption: str
) -> dict[str, tuple[str, str | None, str | None]]:
    """pod -> (result, node, message) of the last scheduling cycle of every replayed pod."""
    snap = load_objects(objects, config)
    trace = Replay(snap, options=ReplayOptions(preemption=preemption)).run()
    out: dict[str, tuple[str, str | None, str | None]] = {}
    for c in trace.cycles:
        if c.kind == "Scheduling":
            out[c.pod] = (c.result, c.selected_node, c.message)
    return out


def load(path: Path) -> Snapshot:
    return load_paths([path])
