"""The engine's reading of stored snapshots, kept by the process between requests.

Reading a stored snapshot into the engine (``engine.loader.load_objects``) costs about a second per
15,000 pods: a production cluster's 150,000 pods take ten seconds and close to 2 GiB. The cycle
pages' questions (a node as the cycle found it, Why here?) and every replay, report and plan of a
snapshot need that reading, and a stored snapshot never changes: the process reads each one once
and keeps it, least recently used first out, within a budget of objects
(``SCHEDVIZ_ENGINE_CACHE_OBJECTS``; 0 keeps nothing).

- One reading per snapshot: requests that ask for a snapshot being read wait for that reading
  instead of starting their own (two users opening the same cluster cost one reading).
- The engine's objects are shared, never changed by a replay (each replay builds its own cluster
  state from them), so any number of threads use one reading at a time.
- A reading of many objects is frozen out of the cyclic collector's sight (``gc.freeze``): kept
  unfrozen, every full collection would walk its millions of containers, seconds with every
  thread of the process stopped. An engine reading holds no reference cycle (a test keeps it so),
  so a frozen reading that leaves the cache is freed by reference counting alone, without a
  collection; what the process froze is handed back to the collector (``gc.unfreeze``) when no
  frozen reading is kept any more.
- A snapshot larger than the whole budget is read for its use only (``use``), frozen while used and
  handed back afterwards, as the replay runner always did.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from schedviz.engine.loader import Snapshot, gc_paused

# A reading of this many objects or more is frozen out of the collector's sight (below it, the
# collector's walks cost little and freezing would only delay the freeing of garbage).
FREEZE_FROM = 20_000
# and at most this many readings, however small
MAX_ENTRIES = 16


@dataclass
class _Entry:
    snapshot: Snapshot
    size: int
    frozen: bool


class EngineSnapshots:
    """Engine snapshots by stored snapshot (``key``: its id and content hash), least recently used
    first out, ``budget`` objects in all."""

    def __init__(
        self, budget: Callable[[], int], freeze_from: int = FREEZE_FROM, max_entries: int = MAX_ENTRIES
    ) -> None:
        self._budget = budget
        self.freeze_from = freeze_from
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._items: OrderedDict[str, _Entry] = OrderedDict()
        self._reading: dict[str, threading.Event] = {}
        self.readings = 0  # how many times a snapshot was read (for tests and metrics)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def holds(self, snapshot: Snapshot) -> bool:
        with self._lock:
            return any(e.snapshot is snapshot for e in self._items.values())

    def clear(self) -> None:
        with self._lock:
            frozen = any(e.frozen for e in self._items.values())
            self._items.clear()
        if frozen:
            gc.unfreeze()

    def get(self, key: str, size: int, read: Callable[[], Snapshot]) -> Snapshot | None:
        """The kept reading of ``key``, reading it with ``read`` (``size``: its object count) if
        needed; None when it does not fit the budget (the caller reads it for its use: ``use``)."""
        if size > self._budget():
            return None
        while True:
            with self._lock:
                entry = self._items.get(key)
                if entry is not None:
                    self._items.move_to_end(key)
                    return entry.snapshot
                waiting = self._reading.get(key)
                if waiting is None:
                    done = self._reading[key] = threading.Event()
                    break
            waiting.wait()  # another request is reading it: take its reading (or read it if it failed)
        try:
            frozen = size >= self.freeze_from
            with gc_paused(freeze=frozen):
                snapshot = read()
                self.readings += 1
            self._put(key, _Entry(snapshot, size, frozen))
            return snapshot
        finally:
            with self._lock:
                del self._reading[key]
            done.set()

    def _put(self, key: str, entry: _Entry) -> None:
        budget = self._budget()
        with self._lock:
            self._items[key] = entry
            total = sum(e.size for e in self._items.values())
            evicted: list[_Entry] = []
            while (total > budget or len(self._items) > self.max_entries) and len(self._items) > 1:
                _, old = self._items.popitem(last=False)
                total -= old.size
                evicted.append(old)
            still_frozen = any(e.frozen for e in self._items.values())
        if any(e.frozen for e in evicted) and not still_frozen:
            gc.unfreeze()

    @contextmanager
    def use(self, key: str, size: int, read: Callable[[], Snapshot]) -> Iterator[Snapshot]:
        """The engine snapshot of ``key`` while the block runs: the kept one, or one read for this
        use only when it does not fit the budget (frozen meanwhile if large, then handed back)."""
        kept = self.get(key, size, read)
        if kept is not None:
            yield kept
            return
        frozen = size >= self.freeze_from
        with gc_paused(freeze=frozen):
            snapshot = read()
        try:
            yield snapshot
        finally:
            snapshot.pods.clear()
            del snapshot
            if frozen:
                with self._lock:
                    kept_frozen = any(e.frozen for e in self._items.values())
                if not kept_frozen:
                    gc.unfreeze()


def _budget() -> int:
    from django.conf import settings

    return int(getattr(settings, "SCHEDVIZ_ENGINE_CACHE_OBJECTS", 400_000))


snapshots = EngineSnapshots(_budget)
