"""The messages of one stored cycle, in order, with stable positions (docs/streaming.md).

Pure functions of a cycle record: any web process produces the same messages for the same cycle,
which is what lets a client resume at a position with no gap and no duplicate.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from schedviz.engine.trace import (
    CycleRecord,
    cleared_nomination_to_dict,
    eviction_to_dict,
    permit_event_to_dict,
)

FILTER_CHUNK = 2000
NODES_CHUNK = 5000
TOP_K_DEFAULT = 20
TOP_K_MAX = 200
TIED_LISTED = 50
FRAME_BYTES = 512 * 1024  # a batched frame holds consecutive messages up to this size (docs/streaming.md)

Position = tuple[int, int]


def parse_position(text: str | None) -> Position:
    """`"12.3"` -> (12, 3); empty -> (0, -1), before everything."""
    if not text:
        return (0, -1)
    cycle, _, part = text.partition(".")
    try:
        c = int(cycle)
        p = int(part) if part else 10**9  # "12" means: after all of cycle 12
    except ValueError:
        raise ValueError(f"after: expected <cycle>.<part>, got {text!r}") from None
    if c < 0 or p < -1:
        raise ValueError(f"after: expected non-negative numbers, got {text!r}")
    return (c, p)


def encode(messages: list[dict[str, Any]]) -> list[tuple[Position, str]]:
    """Each message with its position, as the compact JSON text a frame carries."""
    return [((m["pos"][0], m["pos"][1]), json.dumps(m, separators=(",", ":"))) for m in messages]


def frames(encoded: list[tuple[Position, str]], after: Position, batch: bool) -> list[tuple[Position, str]]:
    """The websocket frames that carry a cycle's encoded messages after position ``after``.

    Unbatched, every message is a frame of its own. Batched (``?batch=1``), consecutive messages
    share a frame, a JSON array, up to ``FRAME_BYTES``: one frame per cycle on most clusters, which
    spares every client the per-frame work of a few dozen small frames. Each frame is paired with the
    position of its last message, the client's resume point once it is sent.
    """
    todo = [(pos, text) for pos, text in encoded if pos > after]
    if not batch:
        return todo
    out: list[tuple[Position, str]] = []
    group: list[str] = []
    size = 0
    for i, (pos, text) in enumerate(todo):
        group.append(text)
        size += len(text) + 1
        last = i + 1 == len(todo)
        if last or size + len(todo[i + 1][1]) + 1 > FRAME_BYTES:
            out.append((pos, "[" + ",".join(group) + "]"))
            group, size = [], 0
    return out


NODES_BYTES = 256 * 1024  # and at most about this much text of names per message


def node_messages(names: list[str]) -> list[dict[str, Any]]:
    """The node names in messages of at most ``NODES_CHUNK`` names and about ``NODES_BYTES`` of text
    (node names may be 253 characters long: 5000 of them would not fit a mebibyte)."""
    if not names:
        return [{"type": "nodes", "offset": 0, "names": []}]
    out: list[dict[str, Any]] = []
    start = size = 0
    for i, name in enumerate(names):
        cost = len(name.encode()) + 3  # quotes and comma
        if i > start and (i - start >= NODES_CHUNK or size + cost > NODES_BYTES):
            out.append({"type": "nodes", "offset": start, "names": names[start:i]})
            start, size = i, 0
        size += cost
    out.append({"type": "nodes", "offset": start, "names": names[start:]})
    return out


def cycle_messages(rec: CycleRecord, reasons: list[tuple[str, ...]], topk: int = TOP_K_DEFAULT) -> list[dict[str, Any]]:
    """Every message of one cycle, in order; ``pos`` = [cycle seq, index]."""
    out: list[dict[str, Any]] = []
    seq = rec.seq

    def add(msg: dict[str, Any]) -> None:
        msg["pos"] = [seq, len(out)]
        out.append(msg)

    add(
        {
            "type": "cycle.start",
            "pod": rec.pod,
            "profile": rec.profile,
            "kind": rec.kind,
            "time": rec.time,
            "follows": rec.follows,
            "attempt": rec.attempt,
            "triedNominatedNode": rec.tried_nominated_node,
            "startIndex": rec.start_index,
            "nodesToFind": rec.nodes_to_find,
            "filterPlugins": rec.filter_plugin_names,
            "reasons": [list(r) for r in reasons],
        }
    )
    stages = rec.stages
    k = 0
    # stages before Filter verdicts: PreEnqueue, PreFilter
    while k < len(stages) and stages[k].point in ("PreEnqueue", "PreFilter"):
        add(_stage(stages[k]))
        k += 1
    if rec.filter_codes is not None:
        codes = rec.filter_codes
        plugins = rec.filter_plugins if rec.filter_plugins is not None else np.full(len(codes), -1)
        rids = rec.filter_reasons if rec.filter_reasons is not None else np.full(len(codes), -1)
        for off in range(0, len(codes), FILTER_CHUNK):
            add(
                {
                    "type": "filter",
                    "offset": off,
                    "codes": codes[off : off + FILTER_CHUNK].tolist(),
                    "plugins": plugins[off : off + FILTER_CHUNK].tolist(),
                    "reasons": rids[off : off + FILTER_CHUNK].tolist(),
                }
            )
    while k < len(stages) and stages[k].point == "Filter":
        add(_stage(stages[k]))
        k += 1
    post_done = False
    while k < len(stages) and stages[k].point == "PostFilter":
        add(_stage(stages[k]))
        k += 1
    if rec.result == "Unschedulable" and rec.message is not None:
        add(
            {
                "type": "postFilter",
                "message": rec.message,
                "nominatedNode": rec.nominated_node,
                "victims": list(rec.post_filter.get("victims", [])),
                "details": rec.post_filter,
            }
        )
        post_done = True
    while k < len(stages) and stages[k].point in ("PreScore", "Score", "NormalizeScore"):
        add(_stage(stages[k]))
        k += 1
    if rec.scored and rec.feasible is not None and rec.totals is not None and len(rec.feasible):
        add(_score(rec, topk))
    if rec.selected_node is not None and rec.tied is not None:
        tied = rec.tied.tolist()
        sel_total = None
        if rec.totals is not None and rec.feasible is not None and rec.scored:
            pos = np.flatnonzero(rec.feasible == tied[0])
            sel_total = int(rec.totals[pos[0]]) if len(pos) else None
        add(
            {
                "type": "selection",
                "node": int(tied[0]),
                "tied": len(tied),
                "tiedNodes": tied[:TIED_LISTED],
                "total": sel_total,
            }
        )
    while k < len(stages):
        add(_stage(stages[k]))
        k += 1
    del post_done
    add(
        {
            "type": "cycle.end",
            "result": rec.result,
            "node": rec.selected_node,
            "message": rec.message if rec.result != "Scheduled" else None,
            "nominatedNode": rec.nominated_node,
            "error": rec.error,
            "permitEvents": [permit_event_to_dict(e) for e in rec.permit_events],
            "evictions": [eviction_to_dict(e) for e in rec.evictions],
            "clearedNominations": [cleared_nomination_to_dict(e) for e in rec.cleared_nominations],
        }
    )
    return out


def _stage(s: Any) -> dict[str, Any]:
    out = {
        "type": "stage",
        "point": s.point,
        "plugin": s.plugin,
        "code": s.code,
        "reason": s.reason,
        "durationMicros": s.duration_micros,
    }
    if s.details:
        out["details"] = s.details  # bounded by the plugins (grouped nodes, capped lists)
    return out


def _score(rec: CycleRecord, topk: int) -> dict[str, Any]:
    assert rec.feasible is not None and rec.totals is not None
    raw = rec.raw_scores if rec.raw_scores is not None else np.zeros((0, len(rec.feasible)), dtype=np.int64)
    norm = rec.normalized_scores if rec.normalized_scores is not None else raw
    order = np.lexsort((rec.feasible, -rec.totals))[: max(1, min(topk, TOP_K_MAX))]
    top = [
        {
            "node": int(rec.feasible[j]),
            "total": int(rec.totals[j]),
            "raw": raw[:, j].tolist(),
            "normalized": norm[:, j].tolist(),
        }
        for j in order.tolist()
    ]
    aggregates = {
        name: {"min": int(norm[p].min()), "max": int(norm[p].max()), "mean": round(float(norm[p].mean()), 2)}
        for p, name in enumerate(rec.score_plugins)
    }
    return {
        "type": "score",
        "plugins": rec.score_plugins,
        "weights": rec.score_weights,
        "skipped": rec.skipped_score_plugins,
        "feasible": len(rec.feasible),
        "top": top,
        "aggregates": aggregates,
    }
