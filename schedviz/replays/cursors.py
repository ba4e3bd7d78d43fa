"""Replays stood at a cycle, kept by the process between the questions asked about them.

A node "as the cycle found it" and Why here? need the cluster just before a cycle: the replay run
again up to it (a pod's cycle is a function of the snapshot, the configuration and the cycles before
it). On a production cluster that run is the expensive part of the answer, and an operator asks
about one replay many times, mostly moving forward (the next cycle, another node of the same cycle).
So the process keeps the last few replays where the last question left them
(``SCHEDVIZ_REPLAY_CURSORS``), and the next question about the same replay goes on from there when it
is about the same cycle or a later one; an earlier cycle starts again from the beginning.

A kept replay is handed to one request at a time (taken out while used, put back after); two
requests about one replay at once each get their own. Why here? runs the pod's own cycle on the
replay it is given, so that replay is not put back. What a kept replay records is dropped as it goes:
the stored cycles are the replay's record, the cursor only needs the state.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from schedviz.engine.budget import Budget
from schedviz.engine.objects import Pod
from schedviz.engine.runtime.replay import Replay as EngineReplay


class ReplayCursors:
    """Engine replays by key (a stored replay's id and attempt), the ``size()`` most recently used."""

    def __init__(self, size: Callable[[], int]) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[str, EngineReplay] = OrderedDict()
        self.started = 0  # engine replays built from the beginning (for tests and metrics)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def clear(self) -> None:
        with self._lock:
            items = list(self._items.values())
            self._items.clear()
        for rp in items:
            rp.release()

    def _take(self, key: str, usable: Callable[[EngineReplay], bool], make: Callable[[], EngineReplay]) -> EngineReplay:
        with self._lock:
            rp = self._items.pop(key, None)
        if rp is not None and usable(rp):
            return rp
        if rp is not None:
            rp.release()
        self.started += 1
        return make()

    def _put(self, key: str, rp: EngineReplay) -> None:
        rp.options = replace(rp.options, budget=None)
        dropped: list[EngineReplay] = []
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                dropped.append(old)
            self._items[key] = rp
            while len(self._items) > max(0, self._size()):
                dropped.append(self._items.popitem(last=False)[1])
        for d in dropped:
            if d is not rp:
                d.release()

    @staticmethod
    def _advance(rp: EngineReplay, budget: Budget | None, step: Callable[[], Any]) -> Any:
        rp.options = replace(rp.options, budget=budget)
        try:
            return step()
        finally:
            rp.trace.cycles.clear()

    @contextmanager
    def through(
        self, key: str, seq: int, make: Callable[[], EngineReplay], budget: Budget | None = None
    ) -> Iterator[EngineReplay]:
        """A replay that has run its records through the first one numbered ``seq`` or later
        (``Replay.run_through``), bounded by ``budget`` meanwhile; the block must leave its state as
        it found it (looking, not scheduling)."""
        rp = self._take(key, lambda r: r.stepped <= seq, make)
        try:
            self._advance(rp, budget, lambda: rp.run_through(seq))
            yield rp
        except BaseException:
            rp.release()  # stopped half-way, or the block failed: not kept
            raise
        self._put(key, rp)

    @contextmanager
    def before(
        self,
        key: str,
        pod: str,
        first_seq: int | None,
        make: Callable[[], EngineReplay],
        budget: Budget | None = None,
    ) -> Iterator[tuple[EngineReplay, Pod]]:
        """A replay stood just before ``pod``'s first cycle (``Replay.run_until``; ``first_seq``: that
        cycle's number, when known, lets a kept replay short of it go on from where it is), and the
        pod. The block may run the pod's cycle: the replay is not kept afterwards. KeyError when the
        pod never comes out of the queue."""
        rp = self._take(
            key, lambda r: first_seq is not None and r.stepped < first_seq, make
        )
        try:
            target = self._advance(rp, budget, lambda: rp.run_until(pod))
            yield rp, target
        finally:
            rp.release()


def _size() -> int:
    from django.conf import settings

    return int(getattr(settings, "SCHEDVIZ_REPLAY_CURSORS", 2))


cursors = ReplayCursors(_size)
