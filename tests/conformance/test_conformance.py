"""SchedViz against the real kube-scheduler v1.35.4.

Each fixture under ``fixtures/`` is a scenario and the decisions the genuine scheduler code made for
it (see fixtures/README.md): every node's filter verdict, every plugin's scores, the selected node,
the tie set and the unschedulable message. Any difference is a bug in SchedViz.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedviz.engine import ReplayOptions, load_paths
from schedviz.engine.runtime.replay import Replay
from schedviz.engine.trace import CycleRecord, ReplayTrace, node_entries

FIXTURES = Path(__file__).parent / "fixtures"


def _scenarios(*sets: str) -> list[Path]:
    return sorted(p for s in sets for p in (FIXTURES / s).glob("*.json") if not p.name.endswith(".expected.json"))


def _run(path: Path, all_nodes: bool) -> tuple[ReplayTrace, dict[str, Any]]:
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text())
    # The fixtures record preemption as a dry run: victims stay and the preemptor is not retried
    # (fixtures/README.md).
    options = ReplayOptions(all_nodes=all_nodes, preemption="dry-run")
    trace = Replay(load_paths([path]), options=options).run()
    return trace, expected


def _by_pod(trace: ReplayTrace) -> dict[str, CycleRecord]:
    return {c.pod: c for c in trace.cycles}


def _filter_of(trace: ReplayTrace, c: CycleRecord) -> dict[str, Any]:
    entries = node_entries(c, trace.node_names, trace.reasons)
    return {n: e["filter"] for n, e in entries.items()}


def _scores_of(trace: ReplayTrace, c: CycleRecord) -> dict[str, dict[str, dict[str, int]]]:
    out: dict[str, dict[str, dict[str, int]]] = {}
    if c.feasible is None or c.raw_scores is None or c.normalized_scores is None:
        return out
    for p, name in enumerate(c.score_plugins):
        per = out.setdefault(name, {})
        for k, ni in enumerate(c.feasible.tolist()):
            norm = int(c.normalized_scores[p, k])
            per[trace.node_names[ni]] = {
                "raw": int(c.raw_scores[p, k]),
                "normalized": norm,
                "weighted": norm * c.score_weights[p],
            }
    return out


def check_cycle(trace: ReplayTrace, c: CycleRecord | None, exp: dict[str, Any]) -> list[str]:
    """Differences between one SchedViz cycle and the real scheduler's, as readable lines."""
    pod = exp["pod"]
    if c is None:
        return [f"{pod}: no cycle"]
    diffs: list[str] = []
    if exp.get("error"):
        if not c.error or c.result not in ("NotHandled", "Gated"):
            diffs.append(f"{pod}: expected error {exp['error']!r}, got result {c.result} error {c.error!r}")
        elif c.error != exp["error"]:
            diffs.append(f"{pod}: error {c.error!r} != {exp['error']!r}")
        return diffs
    if c.profile != exp["profile"]:
        diffs.append(f"{pod}: profile {c.profile} != {exp['profile']}")
    got_filter = _filter_of(trace, c)
    for node, ef in exp["filter"].items():
        gf = got_filter.get(node)
        if gf is None:
            diffs.append(f"{pod} {node}: not evaluated, expected {ef}")
            continue
        if (gf["code"], gf["plugin"], gf["reasons"]) != (ef["code"], ef["plugin"], ef["reasons"]):
            diffs.append(f"{pod} {node}: filter {gf} != {ef}")
    if exp.get("scores") and c.scored:
        got_scores = _scores_of(trace, c)
        for plugin, per in exp["scores"].items():
            if plugin not in got_scores:
                diffs.append(f"{pod}: plugin {plugin} not scored (skipped: {c.skipped_score_plugins})")
                continue
            for node, es in per.items():
                gs = got_scores[plugin].get(node)
                if gs != es:
                    diffs.append(f"{pod} {node} {plugin}: {gs} != {es}")
        extra = set(got_scores) - set(exp["scores"])
        if extra:
            diffs.append(f"{pod}: scored by {sorted(extra)}, which the scheduler skipped")
    if exp.get("selected") != c.selected_node:
        diffs.append(f"{pod}: selected {c.selected_node} != {exp.get('selected')}")
    tied = c.tied_names(trace.node_names)
    if exp.get("tiedTop") and sorted(exp["tiedTop"]) != sorted(tied):
        diffs.append(f"{pod}: tied {tied} != {exp['tiedTop']}")
    pf = exp.get("postFilter") or {}
    if pf.get("nominatedNode") or c.nominated_node:
        if pf.get("nominatedNode") != c.nominated_node:
            diffs.append(f"{pod}: nominated {c.nominated_node} != {pf.get('nominatedNode')}")
        got_victims = sorted(c.post_filter.get("victims", []))
        if sorted(pf.get("victims") or []) != got_victims:
            diffs.append(f"{pod}: victims {got_victims} != {pf.get('victims')}")
    if exp.get("unschedulableMessage") != c.message and not (exp.get("unschedulableMessage") is None and c.result == "Scheduled"):
        diffs.append(f"{pod}: message\n   got {c.message!r}\n  want {exp.get('unschedulableMessage')!r}")
    return diffs


@pytest.mark.parametrize(
    "path", _scenarios("basic", "workloads", "features", "preemption", "storage"), ids=lambda p: p.stem
)
def test_every_node_every_score(path: Path) -> None:
    trace, expected = _run(path, all_nodes=True)
    got = _by_pod(trace)
    assert [c.pod for c in trace.cycles] == [r["pod"] for r in expected["results"]], "queue order"
    diffs: list[str] = []
    for exp in expected["results"]:
        diffs.extend(check_cycle(trace, got.get(exp["pod"]), exp))
    assert not diffs, f"{len(diffs)} differences:\n" + "\n".join(diffs[:40])


@pytest.mark.parametrize("path", _scenarios("sampled"), ids=lambda p: p.stem)
def test_sampled_nodes(path: Path) -> None:
    """With the configured percentageOfNodesToScore: the same nodes evaluated, the same choice."""
    trace, expected = _run(path, all_nodes=False)
    got = _by_pod(trace)
    diffs: list[str] = []
    for exp in expected["results"]:
        c = got.get(exp["pod"])
        if c is None:
            diffs.append(f"{exp['pod']}: no cycle")
            continue
        feas = sorted(trace.node_names[i] for i in (c.feasible.tolist() if c.feasible is not None else []))
        if sorted(exp["evaluatedFeasibleNodes"]) != feas:
            diffs.append(f"{exp['pod']}: {len(feas)} feasible evaluated, expected {len(exp['evaluatedFeasibleNodes'])}")
        if exp["selected"] != c.selected_node:
            diffs.append(f"{exp['pod']}: selected {c.selected_node} != {exp['selected']}")
        if exp.get("unschedulableMessage") != (c.message if c.result != "Scheduled" else None):
            diffs.append(f"{exp['pod']}: message {c.message!r} != {exp.get('unschedulableMessage')!r}")
    assert not diffs, f"{len(diffs)} differences:\n" + "\n".join(diffs[:40])
