"""One plugin call as the trace records it (docs/trace-format.md, *Stages*)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stage:
    """One plugin call at one extension point, as the trace records it."""

    point: str
    plugin: str
    code: str
    reason: str = ""
    duration_micros: int = 0
    details: dict[str, Any] = field(default_factory=dict)
