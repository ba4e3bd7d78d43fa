"""SchedulingGates: keeps pods with scheduling gates out of the active queue.

Mirrors framework/plugins/schedulinggates/scheduling_gates.go (v1.35).
"""

from __future__ import annotations

from typing import Any

from ..framework import Code, Handle, Status
from ..objects import Pod

NAME = "SchedulingGates"


class SchedulingGates:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        pass

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.scheduling_gates:
            return Status.success()
        # Go's %v of a []string: "[a b]"
        return Status(
            Code.UnschedulableAndUnresolvable,
            f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]",
        )
