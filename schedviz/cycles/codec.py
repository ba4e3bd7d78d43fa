"""Compact storage of one cycle: numpy arrays over nodes plus a small JSON header, compressed.

A 1000-node x 1000-pod replay is 1000 rows of a few kilobytes each, not a million rows.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict
from typing import Any

import numpy as np

from schedviz.engine.framework import PermitEvent
from schedviz.engine.runtime.framework import Stage
from schedviz.engine.trace import ClearedNomination, CycleRecord, Eviction, narrowest

ARRAYS = (
    "filter_codes",
    "filter_plugins",
    "filter_reasons",
    "evaluation_order",
    "feasible",
    "raw_scores",
    "normalized_scores",
    "totals",
    "tied",
)
FORMAT = 1


def encode_cycle(rec: CycleRecord, reasons: list[tuple[str, ...]]) -> bytes:
    """Serialise a cycle with its own table of the reasons it uses."""
    local: dict[int, int] = {}
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    if rec.filter_reasons is not None:
        used = np.unique(rec.filter_reasons[rec.filter_reasons >= 0])
        local = {int(g): i for i, g in enumerate(used.tolist())}
        remap = np.full(len(reasons) + 1, -1, dtype=np.int32)
        for g, i in local.items():
            remap[g] = i
        arrays["filter_reasons"] = narrowest(np.where(rec.filter_reasons >= 0, remap[rec.filter_reasons], -1))
    for name in ARRAYS:
        if name == "filter_reasons":
            continue
        value = getattr(rec, name)
        if value is not None:
            arrays[name] = narrowest(np.asarray(value))
    header = {
        "format": FORMAT,
        "pod": rec.pod,
        "profile": rec.profile,
        "result": rec.result,
        "seq": rec.seq,
        "selected_node": rec.selected_node,
        "message": rec.message,
        "message_before_post_filter": rec.message_before_post_filter,
        "stages": [asdict(s) for s in rec.stages],
        "filter_plugin_names": rec.filter_plugin_names,
        "start_index": rec.start_index,
        "nodes_to_find": rec.nodes_to_find,
        "score_plugins": rec.score_plugins,
        "score_weights": rec.score_weights,
        "skipped_score_plugins": rec.skipped_score_plugins,
        "scored": rec.scored,
        "nominated_node": rec.nominated_node,
        "post_filter": rec.post_filter,
        "error": rec.error,
        "unschedulable_plugins": rec.unschedulable_plugins,
        "time": rec.time,
        "kind": rec.kind,
        "follows": rec.follows,
        "permit_events": [asdict(e) for e in rec.permit_events],
        "attempt": rec.attempt,
        "evictions": [asdict(e) for e in rec.evictions],
        "cleared_nominations": [asdict(e) for e in rec.cleared_nominations],
        "tried_nominated_node": rec.tried_nominated_node,
        "reasons": [list(reasons[g]) for g, _ in sorted(local.items(), key=lambda kv: kv[1])],
    }
    buf = io.BytesIO()
    members: dict[str, Any] = {"header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays}
    np.savez_compressed(buf, **members)
    return buf.getvalue()


def decode_header(blob: bytes) -> dict[str, Any]:
    """Only a stored cycle's header (pod, result, kind, evictions, ...), without its per-node arrays."""
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        header: dict[str, Any] = json.loads(z["header"].tobytes())
    return header


def decode_cycle(blob: bytes) -> tuple[CycleRecord, list[tuple[str, ...]]]:
    """The cycle and the reasons table its ``filter_reasons`` index into."""
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        header = json.loads(z["header"].tobytes())
        arrays = {name: z[name] for name in ARRAYS if name in z.files}
    rec = CycleRecord(
        pod=header["pod"],
        profile=header["profile"],
        result=header["result"],
        seq=header["seq"],
        selected_node=header["selected_node"],
        message=header["message"],
        message_before_post_filter=header["message_before_post_filter"],
        stages=[Stage(**s) for s in header["stages"]],
        filter_plugin_names=header["filter_plugin_names"],
        start_index=header["start_index"],
        nodes_to_find=header["nodes_to_find"],
        score_plugins=header["score_plugins"],
        score_weights=header["score_weights"],
        skipped_score_plugins=header["skipped_score_plugins"],
        scored=header["scored"],
        nominated_node=header["nominated_node"],
        post_filter=header["post_filter"],
        error=header["error"],
        unschedulable_plugins=header.get("unschedulable_plugins", []),
        # absent from cycles stored before replay time and Permit events
        time=header.get("time", 0.0),
        kind=header.get("kind", "Scheduling"),
        follows=header.get("follows"),
        permit_events=[PermitEvent(**e) for e in header.get("permit_events", [])],
        # absent from cycles stored before preemptions evicted and retried
        attempt=header.get("attempt", 1),
        evictions=[Eviction(**e) for e in header.get("evictions", [])],
        cleared_nominations=[ClearedNomination(**e) for e in header.get("cleared_nominations", [])],
        tried_nominated_node=header.get("tried_nominated_node"),
    )
    for name, a in arrays.items():
        if name in ("filter_codes",):
            setattr(rec, name, a.astype(np.int8))
        elif name == "filter_plugins":
            setattr(rec, name, a.astype(np.int16))
        elif name == "filter_reasons":
            setattr(rec, name, a.astype(np.int32))
        else:
            setattr(rec, name, a.astype(np.int64))
    return rec, [tuple(r) for r in header["reasons"]]
