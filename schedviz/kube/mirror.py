"""The mirrored cluster state: one store per stream, and a changelog to look back in time.

Reflectors (``watch.py``) feed it: ``replace`` with a full list (the first one, or a relist after
``410 Gone``), ``apply`` with each watch event, ``bookmark`` with a bookmark's resourceVersion.

- ``replace`` diffs the list against the store and emits exactly the changes that happened
  meanwhile (objects added, modified -- a different ``resourceVersion`` -- or gone), so a relist
  neither loses nor repeats a change;
- ``apply`` is idempotent: an event whose object has the ``resourceVersion`` already stored (a
  replay of history after a reconnect) changes nothing, a DELETED for an object already gone
  neither;
- every change gets a sequence number and goes to the listeners (under the mirror's lock, so what
  a listener sees is exactly the state after that change) and, for mirrored kinds, into the
  changelog;
- ``objects_before(seq, rv)`` rebuilds the state as it was just before change ``seq`` by undoing
  the newer changes; with a numeric ``rv`` it also undoes changes whose object's
  resourceVersion is newer than ``rv``, which came in earlier on another stream (kube-apiserver's
  resourceVersions are etcd revisions: one order across kinds; opaque strings are left alone).

A checkpoint holds the stores and their resourceVersions and, when asked, the changes still
needed to rebuild the state before given decisions (``checkpoint(keep_seq, keep_rv)``): ``restore``
puts them back in the changelog.

Objects are kept as the API server sent them with ``apiVersion``/``kind`` set and
``metadata.managedFields`` dropped; they are never changed in place, so the store and the
changelog share them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .kinds import Stream

JSON = dict[str, Any]
Key = tuple[str, str]
ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"
CHECKPOINT_FORMAT = 1
# how far back before a change ``objects_before`` looks for changes with a newer resourceVersion
RV_LOOKBACK = 5000
EVENT_FIELDS = (
    "apiVersion",
    "kind",
    "involvedObject",
    "reason",
    "message",
    "type",
    "action",
    "reportingComponent",
    "reportingInstance",
    "source",
    "count",
    "series",
    "eventTime",
    "firstTimestamp",
    "lastTimestamp",
)


@dataclass(frozen=True)
class Change:
    seq: int
    stream: str
    kind: str
    type: str  # ADDED, MODIFIED, DELETED
    key: Key
    old: JSON | None
    new: JSON | None
    rv: str
    time: float  # when the mirror saw it (seconds since the epoch)
    relist: bool = False  # found by a list's diff rather than a watch event
    initial: bool = False  # part of the stream's first list: the starting state, not a change
    server_time: float | None = None  # found by a list: the API server's clock when it answered

    @property
    def object(self) -> JSON:
        obj = self.new if self.new is not None else self.old
        assert obj is not None
        return obj

    def to_dict(self) -> JSON:
        return {
            "seq": self.seq,
            "stream": self.stream,
            "kind": self.kind,
            "type": self.type,
            "key": list(self.key),
            "old": self.old,
            "new": self.new,
            "rv": self.rv,
            "time": self.time,
            "relist": self.relist,
            "initial": self.initial,
        }

    @classmethod
    def from_dict(cls, d: JSON) -> Change:
        ns, name = d["key"]
        return cls(
            seq=int(d["seq"]),
            stream=str(d["stream"]),
            kind=str(d["kind"]),
            type=str(d["type"]),
            key=(str(ns), str(name)),
            old=d.get("old"),
            new=d.get("new"),
            rv=str(d.get("rv") or ""),
            time=float(d["time"]),
            relist=bool(d.get("relist")),
            initial=bool(d.get("initial")),
        )


Listener = Callable[[Change], None]


def key_of(obj: JSON) -> Key:
    md = obj.get("metadata") or {}
    return (str(md.get("namespace") or ""), str(md.get("name") or ""))


def rv_of(obj: JSON | None) -> str:
    if not obj:
        return ""
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _num(rv: str | None) -> int | None:
    return int(rv) if rv and rv.isdigit() else None


class Mirror:
    """The mirrored state of one cluster. Thread-safe; listeners run under its lock."""

    def __init__(
        self,
        streams: Iterable[Stream],
        *,
        changelog_limit: int = 50_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.streams = {s.name: s for s in streams}
        self.lock = threading.RLock()
        self.listeners: list[Listener] = []
        self.clock = clock
        self.changelog_limit = changelog_limit
        self._stores: dict[str, dict[Key, JSON]] = {name: {} for name in self.streams}
        self._rv: dict[str, str] = {}
        self._has_state: set[str] = set()  # streams listed (or restored) at least once
        self._seq = 0
        self._log: deque[Change] = deque()
        self._trimmed_to = 0  # every change with seq <= this is gone from the changelog
        self._keep_from = 0  # the processor still needs changes from this seq on
        self.restored_at: float | None = None

    # ----- what reflectors call ---------------------------------------------------------------
    def replace(
        self, stream: str, items: Iterable[JSON], rv: str, *, server_time: float | None = None
    ) -> list[Change]:
        """A full list of ``stream`` at ``rv``: the differences from the store become changes
        (``server_time``: the API server's clock when it answered, kept on them)."""
        s = self.streams[stream]
        with self.lock:
            store = self._stores[stream]
            initial = stream not in self._has_state
            seen: set[Key] = set()
            changes: list[Change] = []
            for raw in items:
                obj = self._normalize(s, raw)
                key = key_of(obj)
                seen.add(key)
                old = store.get(key)
                if old is not None and rv_of(old) == rv_of(obj):
                    continue
                changes.append(
                    self._record(
                        s,
                        ADDED if old is None else MODIFIED,
                        key,
                        old,
                        obj,
                        relist=True,
                        initial=initial,
                        server_time=server_time,
                    )
                )
            for key in [k for k in store if k not in seen]:
                changes.append(
                    self._record(
                        s,
                        DELETED,
                        key,
                        store[key],
                        None,
                        relist=True,
                        initial=initial,
                        server_time=server_time,
                    )
                )
            self._rv[stream] = rv
            self._has_state.add(stream)
            return changes

    def apply(self, stream: str, type_: str, raw: JSON) -> Change | None:
        """One watch event; None when it changes nothing (already applied)."""
        s = self.streams[stream]
        obj = self._normalize(s, raw)
        key = key_of(obj)
        with self.lock:
            store = self._stores[stream]
            old = store.get(key)
            rv = rv_of(obj)
            if rv:
                self._rv[stream] = rv
            if type_ == DELETED:
                if old is None:
                    return None
                return self._record(s, DELETED, key, old, None, deleted_rv=rv)
            if type_ not in (ADDED, MODIFIED):
                raise ValueError(f"unknown watch event type {type_!r}")
            if old is not None and rv_of(old) == rv:
                return None
            return self._record(s, ADDED if old is None else MODIFIED, key, old, obj)

    def bookmark(self, stream: str, rv: str) -> None:
        with self.lock:
            if rv:
                self._rv[stream] = rv

    def resource_version(self, stream: str) -> str | None:
        with self.lock:
            return self._rv.get(stream)

    def has_state(self, stream: str) -> bool:
        with self.lock:
            return stream in self._has_state

    # ----- reading ----------------------------------------------------------------------------
    @property
    def seq(self) -> int:
        with self.lock:
            return self._seq

    def counts(self) -> dict[str, int]:
        with self.lock:
            return {name: len(store) for name, store in self._stores.items()}

    def get(self, stream: str, key: Key) -> JSON | None:
        with self.lock:
            return self._stores[stream].get(key)

    def values(self, stream: str) -> list[JSON]:
        with self.lock:
            return list(self._stores.get(stream, {}).values())

    def objects(self) -> list[JSON]:
        """The mirrored kinds' objects now (events excluded), in stream then insertion order."""
        with self.lock:
            return [
                o
                for name, store in self._stores.items()
                if self.streams[name].mirrored
                for o in store.values()
            ]

    def objects_before(self, seq: int, rv: str | None = None) -> tuple[list[JSON], bool]:
        """The mirrored objects just before change ``seq``; the flag is False when the changelog
        no longer reaches back that far.

        With a numeric ``rv`` (the revision of that change), the state is the cluster's as of just
        before revision ``rv`` across every stream: changes with a numeric resourceVersion are
        undone when it is ``>= rv`` (whenever they arrived: another stream may have delivered a
        newer change first) and kept when it is older (even when they arrived after ``seq``, on a
        stream that lagged). Changes without a numeric resourceVersion are undone from ``seq`` on.
        """
        limit = _num(rv)
        with self.lock:
            stores = {
                name: dict(store) for name, store in self._stores.items() if self.streams[name].mirrored
            }
            exact = seq > self._trimmed_to
            for ch in reversed(self._log):
                if ch.seq < seq - RV_LOOKBACK:
                    break
                ch_rv = _num(ch.rv) if limit is not None else None
                undo = ch_rv >= limit if ch_rv is not None and limit is not None else ch.seq >= seq
                if not undo:
                    continue
                store = stores[ch.stream]
                if ch.old is None:
                    store.pop(ch.key, None)
                else:
                    store[ch.key] = ch.old
            return [o for store in stores.values() for o in store.values()], exact

    def changes(self, after_seq: int = 0, before_seq: int | None = None) -> list[Change]:
        """Changelog entries with ``after_seq < seq < before_seq``."""
        with self.lock:
            return [c for c in self._log if c.seq > after_seq and (before_seq is None or c.seq < before_seq)]

    def release(self, seq: int) -> None:
        """The processor no longer needs changes before ``seq``: they may be trimmed."""
        with self.lock:
            self._keep_from = max(self._keep_from, seq)
            self._trim()

    # ----- checkpoints ------------------------------------------------------------------------
    def checkpoint(self, keep_seq: int | None = None, keep_rv: int | None = None) -> JSON:
        """The stores and their resourceVersions; with ``keep_seq`` also the changelog from that
        change on, and the earlier changes whose resourceVersion is ``keep_rv`` or newer (what
        rebuilding the state before the decisions still to replay needs)."""
        with self.lock:
            out: JSON = {
                "format": CHECKPOINT_FORMAT,
                "seq": self._seq,
                "time": self.clock(),
                "streams": {
                    name: {"rv": self._rv.get(name, ""), "objects": list(store.values())}
                    for name, store in self._stores.items()
                    if name in self._has_state
                },
            }
            if keep_seq is not None:
                out["keptFrom"] = keep_seq
                out["changes"] = [
                    ch.to_dict()
                    for ch in self._log
                    if ch.seq >= keep_seq or (keep_rv is not None and (_num(ch.rv) or -1) >= keep_rv)
                ]
            return out

    def restore(self, data: JSON) -> None:
        """Start from a checkpoint: the reflectors then watch on from its resourceVersions."""
        if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
            raise ValueError("not a mirror checkpoint of this version")
        with self.lock:
            for name, part in (data.get("streams") or {}).items():
                if name not in self.streams or not isinstance(part, dict):
                    continue
                store: dict[Key, JSON] = {}
                for obj in part.get("objects") or []:
                    if isinstance(obj, dict):
                        store[key_of(obj)] = obj
                self._stores[name] = store
                if part.get("rv"):
                    self._rv[name] = str(part["rv"])
                self._has_state.add(name)
            self._seq = max(self._seq, int(data.get("seq") or 0))
            # nothing before the checkpoint can be looked back at, but the changes it kept
            kept = [Change.from_dict(d) for d in data.get("changes") or [] if d.get("stream") in self.streams]
            self._log = deque(sorted(kept, key=lambda ch: ch.seq))
            self._trimmed_to = int(data["keptFrom"]) - 1 if "keptFrom" in data else self._seq
            self.restored_at = float(data.get("time") or self.clock())

    # ----- internals --------------------------------------------------------------------------
    def _normalize(self, s: Stream, raw: JSON) -> JSON:
        if not isinstance(raw, dict) or not isinstance(raw.get("metadata"), dict):
            raise ValueError(f"{s.name}: an object without metadata")
        obj = dict(raw)
        obj["apiVersion"], obj["kind"] = s.api_version, s.kind
        md = obj["metadata"]
        if "managedFields" in md:
            obj["metadata"] = {k: v for k, v in md.items() if k != "managedFields"}
        if not s.mirrored:  # events: what the trigger detector reads
            obj = {k: obj[k] for k in ("metadata", *EVENT_FIELDS) if k in obj}
        return obj

    def _record(
        self,
        s: Stream,
        type_: str,
        key: Key,
        old: JSON | None,
        new: JSON | None,
        *,
        relist: bool = False,
        initial: bool = False,
        deleted_rv: str = "",
        server_time: float | None = None,
    ) -> Change:
        store = self._stores[s.name]
        if new is None:
            store.pop(key, None)
        else:
            store[key] = new
        self._seq += 1
        ch = Change(
            seq=self._seq,
            stream=s.name,
            kind=s.kind,
            type=type_,
            key=key,
            old=old,
            new=new,
            rv=rv_of(new) if new is not None else (deleted_rv or rv_of(old)),
            time=self.clock(),
            relist=relist,
            initial=initial,
            server_time=server_time,
        )
        if s.mirrored:
            self._log.append(ch)
            if len(self._log) > self.changelog_limit:
                self._trim()
        for fn in self.listeners:
            fn(ch)
        return ch

    def _trim(self) -> None:
        # keep what the processor still needs, but never more than twice the limit
        while self._log and (
            (len(self._log) > self.changelog_limit and self._log[0].seq < self._keep_from)
            or len(self._log) > 2 * self.changelog_limit
        ):
            self._trimmed_to = self._log.popleft().seq
