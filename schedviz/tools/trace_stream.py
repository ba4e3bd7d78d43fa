"""``schedviz replay --format json|jsonl`` written cycle by cycle, as the replay produces them.

``write_json`` writes the same document as ``json.dump(trace.to_dict(), out, indent=indent)``, byte
for byte: the document's head and tail come from ``ReplayTrace.to_dict()`` itself (taken before the
first cycle, with a placeholder where the cycles go), each cycle from ``cycle_to_dict``, the
function ``to_dict`` expands cycles with. ``write_jsonl`` writes that head without ``cycles`` on the
first line, then one cycle per line.

Each record is serialised as soon as the replay yields it (the engine's web runner relies on the same
thing: a record is complete when yielded) and then dropped from ``trace.cycles``, so memory holds one
cycle's expansion at a time instead of the whole trace.

The compact form (no ``--pretty``) writes a cycle's per-node map (``trace.node_entries``: thousands of
entries a cycle) straight from the record's arrays (``CycleEncoder``), without building its dicts:
the same text ``json.dumps`` makes of them, several times faster.
"""

from __future__ import annotations

import itertools
import json
import operator
from collections.abc import Iterable, Sequence
from typing import IO, Any

import numpy as np

from schedviz.engine.framework import Code
from schedviz.engine.trace import NOT_EVALUATED, CycleRecord, ReplayTrace, cycle_to_dict

_PLACEHOLDER = "\x00schedviz: the cycles go here\x00"
# texts kept per trace for what recurs (a filter verdict, a plugin's scores): enough for any real
# cluster's few distinct values, bounded for one with many
_TEXTS_LIMIT = 200_000


def _head(trace: ReplayTrace) -> dict[str, Any]:
    """``trace.to_dict()`` with no cycle in it (``cycles`` kept in its place)."""
    kept = trace.cycles
    trace.cycles = []
    try:
        return trace.to_dict()
    finally:
        trace.cycles = kept


class CycleEncoder:
    """``json.dumps(cycle_to_dict(rec, trace.node_names, trace.reasons))``, byte for byte, with the
    per-node map written from the record's arrays; what repeats (node names, plugin names, reason
    lists, verdict codes) is encoded once per trace."""

    def __init__(self, trace: ReplayTrace) -> None:
        self.trace = trace
        self._names = [json.dumps(n) + ": " for n in trace.node_names]
        # each node's key as the per-node map writes it: after ", " but for the first
        self._keys = [("" if i == 0 else ", ") + name for i, name in enumerate(self._names)]
        self._codes = {int(c): json.dumps(c.name) for c in Code}
        self._reasons: list[str] = []
        self._strings: dict[str, str] = {}
        self._filters: dict[tuple[int, str, int], str] = {}
        self._scores: dict[tuple[str, int], dict[tuple[int, int], str]] = {}

    def _string(self, s: str) -> str:
        got = self._strings.get(s)
        if got is None:
            got = self._strings[s] = json.dumps(s)
        return got

    def _reason(self, rid: int) -> str:
        reasons = self.trace.reasons
        cache = self._reasons
        while len(cache) <= rid:  # the table only grows
            cache.append(json.dumps(list(reasons[len(cache)])))
        return cache[rid]

    def encode(self, rec: CycleRecord) -> str:
        trace = self.trace
        head = json.dumps(cycle_to_dict(rec, trace.node_names, trace.reasons, nodes=False))
        nodes = self._nodes(rec)
        if nodes is None:  # a shape this writer does not know: the plain expansion
            return json.dumps(cycle_to_dict(rec, trace.node_names, trace.reasons))
        return head[:-1] + ', "nodes": ' + nodes + "}"

    def _nodes(self, c: CycleRecord) -> str | None:
        if c.filter_codes is None:
            return "{}"
        if set(c.score_plugins) & set(c.skipped_score_plugins):
            return None
        n = len(self._names)
        codes = c.filter_codes.tolist()
        if len(codes) != n:
            return None
        if n == 0:
            return "{}"
        plugins = c.filter_plugins.tolist() if c.filter_plugins is not None else [-1] * n
        rids = c.filter_reasons.tolist() if c.filter_reasons is not None else [-1] * n
        plugin_names = [self._string(p) for p in c.filter_plugin_names]
        # each node's text after its verdict: "}" when it was not scored, "" when it was not
        # evaluated (its verdict is whole), else its scores and total; nodes in snapshot order
        pool: list[str] = []
        where = np.full(n, -1, dtype=np.int64)
        if c.feasible is not None and c.scored and c.raw_scores is not None and c.normalized_scores is not None:
            raws = c.raw_scores
            norms = c.normalized_scores
            weights = list(c.score_weights)
            keys = [self._string(p) for p in c.score_plugins]
            skipped = "".join(", " + self._string(p) + ': {"skipped": true}' for p in c.skipped_score_plugins)
            feasible = c.feasible
            count = len(feasible)
            totals: Iterable[Any] = c.totals.tolist() if c.totals is not None else itertools.repeat(0, count)
            # a plugin's scores, a column of text per plugin: the same few (raw, normalized) pairs
            # recur over thousands of nodes, each written once per trace
            columns = [self._score_texts(key, weights[p], raws[p], norms[p]) for p, key in enumerate(keys)]
            if columns:
                bodies: Iterable[str] = map(", ".join, zip(*columns, strict=True))
                after = skipped + '}, "total": '
            else:
                bodies = itertools.repeat(skipped[2:], count)
                after = '}, "total": '
            pool = list(
                map(
                    "".join,
                    zip(
                        itertools.repeat(', "scores": {', count),
                        bodies,
                        itertools.repeat(after, count),
                        map(str, totals),
                        itertools.repeat("}", count),
                        strict=True,
                    ),
                )
            )
            inside = (feasible >= 0) & (feasible < n)
            where[feasible[inside]] = np.arange(count, dtype=np.int64)[inside]
        unscored, unevaluated = len(pool), len(pool) + 1
        pool += ["}", ""]
        where[where < 0] = unscored
        where[np.asarray(codes) == NOT_EVALUATED] = unevaluated
        tails = operator.itemgetter(*where.tolist())(pool) if n > 1 else [pool[int(where[0])]]
        verdicts = self._verdicts(codes, plugins, rids, plugin_names)
        parts: list[str] = [""] * (3 * n)
        parts[0::3] = self._keys
        parts[1::3] = verdicts
        parts[2::3] = tails
        return "{" + "".join(parts) + "}"

    def _verdicts(self, codes: list[int], plugins: list[int], rids: list[int], plugin_names: list[str]) -> Sequence[str]:
        """Each node's filter verdict's text; each distinct (code, plugin, reasons) written once."""
        n = len(codes)
        if n > 64:
            code = np.asarray(codes, dtype=np.int64)
            pid = np.asarray(plugins, dtype=np.int64)
            rid = np.asarray(rids, dtype=np.int64)
            if (
                int(code.min()) >= -1
                and int(code.max()) < 1 << 14
                and int(pid.min()) >= -1
                and int(pid.max()) < (1 << 16) - 1
                and int(rid.min()) >= -1
                and int(rid.max()) < (1 << 32) - 1
            ):
                triples, where = np.unique(((code + 1) << 48) | ((pid + 1) << 32) | (rid + 1), return_inverse=True)
                texts = [
                    self._verdict((t >> 48) - 1, ((t >> 32) & 0xFFFF) - 1, (t & 0xFFFFFFFF) - 1, plugin_names)
                    for t in triples.tolist()
                ]
                return operator.itemgetter(*where.reshape(-1).tolist())(texts)  # type: ignore[no-any-return]
        return [self._verdict(codes[i], plugins[i], rids[i], plugin_names) for i in range(n)]

    def _verdict(self, code: int, pid: int, rid: int, plugin_names: list[str]) -> str:
        if code == NOT_EVALUATED:
            return '{"evaluated": false, "filter": null}'
        # by (code, plugin's name, reasons): the plugin's number is the cycle's own
        plugin = plugin_names[pid] if pid >= 0 else '""'
        filters = self._filters
        verdict = filters.get((code, plugin, rid))
        if verdict is None:
            verdict = (
                f'{{"evaluated": true, "filter": {{"code": {self._codes[code]}, '
                f'"plugin": {plugin}, "reasons": {self._reason(rid) if rid >= 0 else "[]"}}}'
            )
            if len(filters) < _TEXTS_LIMIT:
                filters[(code, plugin, rid)] = verdict
        return verdict

    def _score_texts(self, key: str, weight: int, raws: Any, norms: Any) -> Sequence[str]:
        """``key: {"raw": .., "normalized": .., "weighted": ..}`` for each node's scores (``raws``
        and ``norms``: the plugin's rows of the cycle's score matrices)."""
        cache = self._scores.get((key, weight))
        if cache is None:
            cache = self._scores[(key, weight)] = {}
        r = np.asarray(raws)
        m = np.asarray(norms)
        if (
            len(r) > 64
            and r.dtype.kind in "iu"
            and m.dtype.kind in "iu"
            and r.shape == m.shape
            and int(m.min()) >= 0
            and int(m.max()) < 1024
            and max(abs(int(r.min())), abs(int(r.max()))) < 1 << 50
        ):
            # each distinct (raw, normalized) pair written once, as one integer
            pairs, where = np.unique(r.astype(np.int64) * 1024 + m.astype(np.int64), return_inverse=True)
            texts = [self._score_text(cache, key, weight, *divmod(pair, 1024)) for pair in pairs.tolist()]
            return operator.itemgetter(*where.reshape(-1).tolist())(texts)  # type: ignore[no-any-return]
        return [
            self._score_text(cache, key, weight, raw, norm)
            for raw, norm in zip(r.tolist(), m.tolist(), strict=True)
        ]

    @staticmethod
    def _score_text(cache: dict[tuple[int, int], str], key: str, weight: int, raw: int, norm: int) -> str:
        text = cache.get((raw, norm))
        if text is None:
            text = f'{key}: {{"raw": {raw}, "normalized": {norm}, "weighted": {norm * weight}}}'
            if len(cache) < _TEXTS_LIMIT:
                cache[(raw, norm)] = text
        return text


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
    encoder = CycleEncoder(trace) if indent is None else None
    for rec in records:
        if encoder is not None:
            item = encoder.encode(rec)
        else:
            item = _encode(cycle_to_dict(rec, trace.node_names, trace.reasons), indent)
        if newline:
            item = item.replace("\n", newline)  # JSON strings hold no raw newline
        out.write((sep if n else first) + item)
        out.flush()
        n += 1
        forget(trace, rec)
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
    encoder = CycleEncoder(trace)
    for rec in records:
        out.write(encoder.encode(rec) + "\n")
        out.flush()
        n += 1
        forget(trace, rec)
    return n


def forget(trace: ReplayTrace, rec: CycleRecord) -> None:
    """Drop a written record from the trace (the replay appends every record; nothing in a replay
    reads them back)."""
    cycles = trace.cycles
    for i in range(len(cycles) - 1, -1, -1):  # the last one, unless a caller appended more
        if cycles[i] is rec:
            del cycles[i]
            return
