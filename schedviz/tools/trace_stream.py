"""``schedviz replay --format json|jsonl`` written cycle by cycle, as the replay produces them.

``write_json`` writes the same document as ``json.dump(trace.to_dict(), out, indent=indent)``, byte
for byte: the document's head and tail come from ``ReplayTrace.to_dict()`` itself (taken before the
first cycle, with a placeholder where the cycles go), each cycle from ``cycle_to_dict``, the
function ``to_dict`` expands cycles with. ``write_jsonl`` writes that head without ``cycles`` on the
first line, then one cycle per line.

Each record is serialised as soon as the replay yields it (the engine's web runner relies on the same
thing: a record is complete when yielded) and then dropped from ``trace.cycles``, so memory holds one
cycle's expansion at a time instead of the whole trace.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import IO, Any

from schedviz.engine.trace import CycleRecord, ReplayTrace, cycle_to_dict

_PLACEHOLDER = "\x00schedviz: the cycles go here\x00"


def _head(trace: ReplayTrace) -> dict[str, Any]:
    """``trace.to_dict()`` with no cycle in it (``cycles`` kept in its place)."""
    kept = trace.cycles
    trace.cycles = []
    try:
        return trace.to_dict()
    finally:
        trace.cycles = kept


def _encode(obj: Any, indent: int | None) -> str:
    # json.dumps (the C encoder when indent is None) writes what json.dump writes, faster
    return json.dumps(obj, indent=indent)


def write_json(
    trace: ReplayTrace, records: Iterable[CycleRecord], out: IO[str], *, indent: int | None = None
) -> int:
    """Write the trace document to ``out`` as ``records`` (the replay's cycles, e.g.
    ``Replay.cycles()``) come; returns the number of records written."""
    doc = _head(trace)
    if "cycles" not in doc:
        raise ValueError("the trace's document has no cycles")
    doc["cycles"] = _PLACEHOLDER
    text = _encode(doc, indent)
    placeholder = json.dumps(_PLACEHOLDER)
    at = text.index(placeholder)
    before, after = text[:at], text[at + len(placeholder) :]
    if indent is None:
        first, sep, newline, close = "[", ", ", "", "]"
    else:
        # the cycles list is a value of the top-level object: its items are two levels deep
        first = "[\n" + " " * (2 * indent)
        sep = ",\n" + " " * (2 * indent)
        newline = "\n" + " " * (2 * indent)
        close = "\n" + " " * indent + "]"
    out.write(before)
    n = 0
    for rec in records:
        item = _encode(cycle_to_dict(rec, trace.node_names, trace.reasons), indent)
        if newline:
            item = item.replace("\n", newline)  # JSON strings hold no raw newline
        out.write((sep if n else first) + item)
        out.flush()
        n += 1
        _forget(trace, rec)
    out.write((close if n else "[]") + after + "\n")
    out.flush()
    return n


def write_jsonl(trace: ReplayTrace, records: Iterable[CycleRecord], out: IO[str]) -> int:
    """Write the trace as JSON lines: the document without ``cycles`` (its metadata), then one
    line per cycle, each the object ``write_json`` puts in ``cycles``; returns the cycles written."""
    head = _head(trace)
    head.pop("cycles", None)
    out.write(_encode(head, None) + "\n")
    out.flush()
    n = 0
    for rec in records:
        out.write(_encode(cycle_to_dict(rec, trace.node_names, trace.reasons), None) + "\n")
        out.flush()
        n += 1
        _forget(trace, rec)
    return n


def _forget(trace: ReplayTrace, rec: CycleRecord) -> None:
    """Drop a written record from the trace (the replay appends every record; nothing in a replay
    reads them back)."""
    cycles = trace.cycles
    for i in range(len(cycles) - 1, -1, -1):  # the last one, unless a caller appended more
        if cycles[i] is rec:
            del cycles[i]
            return
