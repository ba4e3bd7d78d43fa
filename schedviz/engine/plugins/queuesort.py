"""PrioritySort: the scheduling queue's order.

Mirrors framework/plugins/queuesort/priority_sort.go (v1.35): higher priority first
(corev1 PodPriority: an absent priority is 0), then the earlier queue timestamp.

SchedViz replays a snapshot, so the queue timestamp is the pod's creationTimestamp. A pod without
one sorts before every pod with one, as Go's zero time.Time is before any other time. Ties (same
priority and timestamp), which upstream leaves to the heap, are broken by input order
(``pod.index``) so that replays are deterministic.
"""

from __future__ import annotations

from typing import Any

from ..framework import Handle
from ..objects import Pod

NAME = "PrioritySort"


def sort_key(pod: Pod) -> tuple[int, int, float, int]:
    """A key that orders pods as ``less`` does (smallest first)."""
    created = pod.meta.creation
    return (-pod.prio, 0 if created is None else 1, created or 0.0, pod.index)


class PrioritySort:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        pass

    def less(self, a: Pod, b: Pod) -> bool:
        """Whether ``a`` is to be scheduled before ``b``."""
        return sort_key(a) < sort_key(b)

    def key(self, pod: Pod) -> tuple[int, int, float, int]:
        return sort_key(pod)
