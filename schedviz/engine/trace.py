"""The public trace format (docs/trace-format.md), kept compactly in memory.

A cycle keeps its per-node results as arrays over the snapshot's nodes (filter code, rejecting
plugin, interned reasons) and its scores as plugin x feasible-node matrices; ``to_dict`` expands
them into the documented JSON only when asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .framework import Code, PermitEvent
from .framework.stage import Stage

API_VERSION = "schedviz.io/v1"
KIND = "ReplayTrace"
KUBERNETES_VERSION = "v1.35.4"
TRACE_FORMAT_VERSION = 3

NOT_EVALUATED = -1

RESULTS = ("Scheduled", "Unschedulable", "Waiting", "Error", "NotHandled", "Gated")

# A record is a scheduling cycle, or the end of the binding cycle of a pod that waited at Permit.
SCHEDULING = "Scheduling"
BINDING = "Binding"


IntegerArray = npt.NDArray[np.signedinteger[Any]]


def narrowest(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``a`` (integers) in the narrowest signed integer type that holds each of its values: a
    cycle's score matrices are kept so (a 5000-node cycle's normalized scores, 0 to 100, in 35 kB
    rather than 280 kB) and stored so (``cycles.codec``). Read their values with ``int()`` or
    ``tolist()``, or widen them before arithmetic."""
    if a.size == 0:
        return a.astype(np.int8)
    lo, hi = int(a.min()), int(a.max())
    for t in (np.int8, np.int16, np.int32):
        info = np.iinfo(t)
        if info.min <= lo and hi <= info.max:
            return a.astype(t)
    return a


@dataclass
class Eviction:
    """A pod preemption deleted to make room for ``preemptor`` on ``node``, at replay time ``time``."""

    time: float
    pod: str
    node: str
    preemptor: str


@dataclass
class ClearedNomination:
    """A lower-priority pod whose nomination to ``node`` a preemption there cleared."""

    time: float
    pod: str
    node: str


@dataclass
class CycleRecord:
    """One scheduling attempt of one pod."""

    pod: str
    profile: str
    result: str
    seq: int = 0
    selected_node: str | None = None
    tied: npt.NDArray[np.int64] | None = None  # node indices with the best total, snapshot order
    message: str | None = None
    message_before_post_filter: str | None = None
    stages: list[Stage] = field(default_factory=list)
    # node-level verdicts over all snapshot nodes (index = snapshot order)
    filter_codes: npt.NDArray[np.int8] | None = None
    filter_plugins: npt.NDArray[np.int16] | None = None
    filter_reasons: npt.NDArray[np.int32] | None = None
    filter_plugin_names: list[str] = field(default_factory=list)
    evaluation_order: npt.NDArray[np.int64] | None = None
    start_index: int = 0
    nodes_to_find: int = 0
    # scoring over feasible nodes
    feasible: npt.NDArray[np.int64] | None = None
    score_plugins: list[str] = field(default_factory=list)
    score_weights: list[int] = field(default_factory=list)
    skipped_score_plugins: list[str] = field(default_factory=list)
    # plugin x feasible node, each in its narrowest integer type (``narrowest``)
    raw_scores: IntegerArray | None = None
    normalized_scores: IntegerArray | None = None
    totals: npt.NDArray[np.int64] | None = None
    scored: bool = False
    nominated_node: str | None = None
    post_filter: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    # replay time of the record (seconds since the Unix epoch), its kind, and for a Binding record
    # the seq of the Scheduling record that left the pod waiting at Permit
    time: float = 0.0
    kind: str = SCHEDULING
    follows: int | None = None
    permit_events: list[PermitEvent] = field(default_factory=list)
    # Diagnosis.UnschedulablePlugins of a FitError: the plugins that rejected nodes, and "Extender"
    # when extenders filtered some out (sorted; empty unless the result is Unschedulable)
    unschedulable_plugins: list[str] = field(default_factory=list)
    # which attempt of the pod this is (1 for its first cycle; a Binding record has its Scheduling
    # record's), the pods a preemption in this cycle deleted and the nominations it cleared, and
    # the node the cycle tried first because the pod was nominated to it (evaluateNominatedNode)
    attempt: int = 1
    evictions: list[Eviction] = field(default_factory=list)
    cleared_nominations: list[ClearedNomination] = field(default_factory=list)
    tried_nominated_node: str | None = None

    def tied_names(self, node_names: list[str]) -> list[str]:
        return [] if self.tied is None else [node_names[i] for i in self.tied.tolist()]

    def node_total(self, node_index: int) -> int | None:
        if self.feasible is None or self.totals is None:
            return None
        pos = np.flatnonzero(self.feasible == node_index)
        return int(self.totals[pos[0]]) if len(pos) else None


class ReplayTrace:
    """Every cycle of a replay, with the node names and reason table needed to expand them."""

    def __init__(
        self, node_names: list[str], reasons: list[tuple[str, ...]], options: dict[str, Any]
    ) -> None:
        self.node_names = node_names
        self.reasons = reasons
        self.options = options
        self.cycles: list[CycleRecord] = []

    def cycle(self, pod: str) -> CycleRecord:
        """The pod's first record."""
        for c in self.cycles:
            if c.pod == pod:
                return c
        raise KeyError(pod)

    def pod_records(self) -> dict[str, tuple[CycleRecord, CycleRecord]]:
        """Per pod, in queue order: its first scheduling record and its final record.

        They differ for a pod that waited at Permit (the final record is the Binding record that
        bound or released it) and for a preemptor retried after its preemption (the final record
        is its last attempt's).
        """
        out: dict[str, tuple[CycleRecord, CycleRecord]] = {}
        for c in self.cycles:
            first = out.get(c.pod)
            out[c.pod] = (first[0] if first is not None else c, c)
        return out

    def to_dict(self, *, nodes: bool = True) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "formatVersion": TRACE_FORMAT_VERSION,
            "kubernetesVersion": KUBERNETES_VERSION,
            "options": self.options,
            "nodeNames": self.node_names,
            "cycles": [cycle_to_dict(c, self.node_names, self.reasons, nodes=nodes) for c in self.cycles],
        }


def _stage(s: Stage) -> dict[str, Any]:
    out: dict[str, Any] = {
        "point": s.point,
        "plugin": s.plugin,
        "code": s.code,
        "reason": s.reason,
        "durationMicros": s.duration_micros,
    }
    if s.details:
        out["details"] = s.details
    return out


def permit_event_to_dict(e: PermitEvent) -> dict[str, Any]:
    out: dict[str, Any] = {
        "time": e.time,
        "pod": e.pod,
        "action": e.action,
        "plugin": e.plugin,
        "node": e.node,
        "message": e.message,
    }
    if e.timeout is not None:
        out["timeoutSeconds"] = e.timeout
    return out


def eviction_to_dict(e: Eviction) -> dict[str, Any]:
    return {"time": e.time, "pod": e.pod, "node": e.node, "preemptor": e.preemptor}


def cleared_nomination_to_dict(e: ClearedNomination) -> dict[str, Any]:
    return {"time": e.time, "pod": e.pod, "node": e.node}


def cycle_to_dict(
    c: CycleRecord, node_names: list[str], reasons: list[tuple[str, ...]], *, nodes: bool = True
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "seq": c.seq,
        "kind": c.kind,
        "time": c.time,
        "attempt": c.attempt,
        "pod": c.pod,
        "profile": c.profile,
        "result": c.result,
        "selectedNode": c.selected_node,
        "tiedNodes": c.tied_names(node_names),
        "message": c.message,
        "messageBeforePostFilter": c.message_before_post_filter,
        "nominatedNode": c.nominated_node,
        "scored": c.scored,
        "scorePlugins": c.score_plugins,
        "scoreWeights": dict(zip(c.score_plugins, c.score_weights, strict=True)),
        "skippedScorePlugins": c.skipped_score_plugins,
        "startIndex": c.start_index,
        "nodesToFind": c.nodes_to_find,
        "evaluatedNodes": 0 if c.evaluation_order is None else len(c.evaluation_order),
        "stages": [_stage(s) for s in c.stages],
    }
    if c.follows is not None:
        out["follows"] = c.follows
    if c.permit_events:
        out["permitEvents"] = [permit_event_to_dict(e) for e in c.permit_events]
    if c.post_filter:
        out["postFilter"] = c.post_filter
    if c.tried_nominated_node is not None:
        out["triedNominatedNode"] = c.tried_nominated_node
    if c.evictions:
        out["evictions"] = [eviction_to_dict(e) for e in c.evictions]
    if c.cleared_nominations:
        out["clearedNominations"] = [cleared_nomination_to_dict(e) for e in c.cleared_nominations]
    if c.unschedulable_plugins:
        out["unschedulablePlugins"] = c.unschedulable_plugins
    if c.error:
        out["error"] = c.error
    if nodes:
        out["nodes"] = node_entries(c, node_names, reasons)
    return out


def node_entries(
    c: CycleRecord, node_names: list[str], reasons: list[tuple[str, ...]], only: list[int] | None = None
) -> dict[str, Any]:
    """The per-node part of a cycle: filter verdict, scores per plugin, total."""
    result: dict[str, Any] = {}
    if c.filter_codes is None:
        return result
    feas_pos: dict[int, int] = {}
    if c.feasible is not None:
        feas_pos = {int(n): k for k, n in enumerate(c.feasible.tolist())}
    codes = c.filter_codes
    plugins = c.filter_plugins
    rids = c.filter_reasons
    indices = range(len(node_names)) if only is None else only
    for i in indices:
        code = int(codes[i])
        entry: dict[str, Any]
        if code == NOT_EVALUATED:
            entry = {"evaluated": False, "filter": None}
        else:
            pid = int(plugins[i]) if plugins is not None else -1
            rid = int(rids[i]) if rids is not None else -1
            entry = {
                "evaluated": True,
                "filter": {
                    "code": Code(code).name,
                    "plugin": c.filter_plugin_names[pid] if pid >= 0 else "",
                    "reasons": list(reasons[rid]) if rid >= 0 else [],
                },
            }
        k = feas_pos.get(i)
        if k is not None and c.scored and c.raw_scores is not None and c.normalized_scores is not None:
            scores: dict[str, Any] = {}
            for p, name in enumerate(c.score_plugins):
                norm = int(c.normalized_scores[p, k])
                scores[name] = {
                    "raw": int(c.raw_scores[p, k]),
                    "normalized": norm,
                    "weighted": norm * c.score_weights[p],
                }
            for name in c.skipped_score_plugins:
                scores[name] = {"skipped": True}
            entry["scores"] = scores
            entry["total"] = int(c.totals[k]) if c.totals is not None else 0
        result[node_names[i]] = entry
    return result
