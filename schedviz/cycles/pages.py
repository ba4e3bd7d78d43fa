"""One cycle, page by page over nodes: what the API and the explorer show of a stored cycle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from schedviz.engine.framework import Code
from schedviz.engine.trace import NOT_EVALUATED, CycleRecord, cycle_to_dict

SORTS = ("rank", "name", "verdict")
VERDICTS = ("passed", "failed", "not-evaluated")


@dataclass
class NodeQuery:
    page: int = 1
    page_size: int = 100
    sort: str = "rank"
    verdict: str = ""
    plugin: str = ""
    search: str = ""

    @classmethod
    def from_params(cls, params: Any) -> NodeQuery:
        def num(name: str, default: int, lo: int, hi: int) -> int:
            raw = params.get(name)
            if raw in (None, ""):
                return default
            try:
                v = int(raw)
            except (TypeError, ValueError):
                raise ValueError(f"{name}: must be an integer") from None
            if not lo <= v <= hi:
                raise ValueError(f"{name}: must be between {lo} and {hi}")
            return v

        q = cls(
            page=num("page", 1, 1, 10**9),
            page_size=num("page_size", 100, 1, 1000),
            sort=str(params.get("sort") or "rank"),
            verdict=str(params.get("verdict") or ""),
            plugin=str(params.get("plugin") or ""),
            search=str(params.get("search") or ""),
        )
        if q.sort not in SORTS:
            raise ValueError(f"sort: must be one of {', '.join(SORTS)}")
        if q.verdict and q.verdict not in VERDICTS:
            raise ValueError(f"verdict: must be one of {', '.join(VERDICTS)}")
        return q


def cycle_page(
    rec: CycleRecord, reasons: list[tuple[str, ...]], node_names: list[str], q: NodeQuery
) -> dict[str, Any]:
    """The cycle's header and one page of its nodes, ranked (feasible by total, then rejected)."""
    n = len(node_names)
    head = cycle_to_dict(rec, node_names, reasons, nodes=False)
    codes = rec.filter_codes if rec.filter_codes is not None else np.full(n, NOT_EVALUATED, dtype=np.int8)
    total_of = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    feas_pos = np.full(n, -1, dtype=np.int64)
    if rec.feasible is not None and len(rec.feasible):
        feas_pos[rec.feasible] = np.arange(len(rec.feasible))
        if rec.totals is not None and rec.scored:
            total_of[rec.feasible] = rec.totals
    mask = np.ones(n, dtype=bool)
    if q.verdict == "passed":
        mask &= codes == 0
    elif q.verdict == "failed":
        mask &= codes > 0
    elif q.verdict == "not-evaluated":
        mask &= codes == NOT_EVALUATED
    if q.plugin:
        names = rec.filter_plugin_names
        pid = names.index(q.plugin) if q.plugin in names else -2
        mask &= (rec.filter_plugins if rec.filter_plugins is not None else np.full(n, -1)) == pid
    idx = np.flatnonzero(mask)
    if q.search:
        s = q.search.lower()
        idx = np.asarray([i for i in idx.tolist() if s in node_names[i].lower()], dtype=np.int64)
    # rank: passed nodes by total (desc), then rejected, then not evaluated; ties by snapshot order
    group = np.where(codes == 0, 0, np.where(codes > 0, 1, 2))
    rank_order = np.lexsort((np.arange(n), -np.where(total_of == np.iinfo(np.int64).min, 0, total_of), group))
    rank = np.empty(n, dtype=np.int64)
    rank[rank_order] = np.arange(1, n + 1)
    if q.sort == "rank":
        idx = idx[np.argsort(rank[idx], kind="stable")]
    elif q.sort == "name":
        idx = np.asarray(sorted(idx.tolist(), key=lambda i: node_names[i]), dtype=np.int64)
    else:
        idx = idx[np.lexsort((idx, codes[idx]))]
    count = len(idx)
    start = (q.page - 1) * q.page_size
    page = idx[start : start + q.page_size].tolist()
    nodes = [_node(rec, reasons, node_names, i, int(feas_pos[i]), int(rank[i])) for i in page]
    counts = {
        "passed": int((codes == 0).sum()),
        "failed": int((codes > 0).sum()),
        "notEvaluated": int((codes == NOT_EVALUATED).sum()),
    }
    rejected_by: dict[str, int] = {}
    if rec.filter_plugins is not None:
        for pid, c in zip(*np.unique(rec.filter_plugins[codes > 0], return_counts=True), strict=True):
            name = rec.filter_plugin_names[int(pid)] if 0 <= int(pid) < len(rec.filter_plugin_names) else ""
            rejected_by[name] = int(c)
    return {
        **head,
        "nodeCounts": counts,
        "rejectedBy": rejected_by,
        "nodes": {"count": count, "page": q.page, "pageSize": q.page_size, "results": nodes},
    }


def _node(rec: CycleRecord, reasons: list[tuple[str, ...]], names: list[str], i: int, k: int, rank: int) -> dict[str, Any]:
    code = int(rec.filter_codes[i]) if rec.filter_codes is not None else NOT_EVALUATED
    out: dict[str, Any] = {"name": names[i], "rank": rank, "evaluated": code != NOT_EVALUATED}
    if code == NOT_EVALUATED:
        out["filter"] = None
    else:
        pid = int(rec.filter_plugins[i]) if rec.filter_plugins is not None else -1
        rid = int(rec.filter_reasons[i]) if rec.filter_reasons is not None else -1
        out["filter"] = {
            "code": Code(code).name,
            "plugin": rec.filter_plugin_names[pid] if 0 <= pid < len(rec.filter_plugin_names) else "",
            "reasons": list(reasons[rid]) if 0 <= rid < len(reasons) else [],
        }
    if k >= 0 and rec.scored and rec.raw_scores is not None and rec.normalized_scores is not None:
        scores: dict[str, Any] = {}
        for p, plugin in enumerate(rec.score_plugins):
            norm = int(rec.normalized_scores[p, k])
            scores[plugin] = {"raw": int(rec.raw_scores[p, k]), "normalized": norm, "weighted": norm * rec.score_weights[p]}
        for plugin in rec.skipped_score_plugins:
            scores[plugin] = {"skipped": True}
        out["scores"] = scores
        out["total"] = int(rec.totals[k]) if rec.totals is not None else None
    return out
