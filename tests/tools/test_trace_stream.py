"""``schedviz replay --format json|jsonl`` written as cycles come (schedviz/tools/trace_stream.py)."""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from schedviz.cli import SAMPLE
from schedviz.engine import ReplayOptions, load_config, load_paths
from schedviz.engine.runtime.replay import Replay
from schedviz.engine.trace import CycleRecord, cycle_to_dict
from schedviz.tools.dense_cluster import DenseShape, write_dump
from schedviz.tools.trace_stream import CycleEncoder, write_json, write_jsonl

PIPELINE = SAMPLE.parent / "pipeline"


def _replay(paths: list[Path], config: Path | None = None, all_nodes: bool = False) -> Replay:
    snap = load_paths(paths)
    return Replay(snap, load_config(config if config else snap.config), ReplayOptions(all_nodes=all_nodes))


def _kept(rp: Replay, into: list[CycleRecord]) -> Iterator[CycleRecord]:
    for rec in rp.cycles():
        into.append(rec)
        yield rec


def _cases(tmp_path: Path) -> list[tuple[list[Path], Path | None]]:
    dense = tmp_path / "dense.json"
    write_dump(dense, DenseShape(nodes=16, pods_per_node=8, pending=12))
    return [
        ([SAMPLE], None),
        ([PIPELINE / "preemption.yaml"], None),  # evictions, a preemptor's second attempt
        ([PIPELINE / "gang.yaml"], PIPELINE / "gang-config.yaml"),  # Binding records, permit events
        ([dense], None),
    ]


@pytest.mark.parametrize("indent", [None, 1])
@pytest.mark.parametrize("all_nodes", [False, True])
def test_the_streamed_document_is_the_in_memory_one_byte_for_byte(
    tmp_path: Path, indent: int | None, all_nodes: bool
) -> None:
    for paths, config in _cases(tmp_path):
        rp = _replay(paths, config, all_nodes)
        records: list[CycleRecord] = []
        out = io.StringIO()
        n = write_json(rp.trace, _kept(rp, records), out, indent=indent)
        assert n == len(records) > 0
        # the same records, kept and dumped whole as the command did before it streamed
        rp.trace.cycles = records
        before = io.StringIO()
        json.dump(rp.trace.to_dict(), before, indent=indent)
        before.write("\n")
        assert out.getvalue() == before.getvalue(), paths


def test_json_lines_are_the_documents_head_and_cycles(tmp_path: Path) -> None:
    for paths, config in _cases(tmp_path):
        rp = _replay(paths, config, all_nodes=True)
        records: list[CycleRecord] = []
        out = io.StringIO()
        write_jsonl(rp.trace, _kept(rp, records), out)
        rp.trace.cycles = records
        doc = rp.trace.to_dict()
        lines = out.getvalue().splitlines()
        assert len(lines) == len(records) + 1
        assert json.loads(lines[0]) == json.loads(json.dumps({k: v for k, v in doc.items() if k != "cycles"}))
        assert [json.loads(line) for line in lines[1:]] == json.loads(json.dumps(doc["cycles"]))
        assert lines[1:] == [json.dumps(c) for c in doc["cycles"]]


def test_each_cycle_is_written_before_the_next_one_is_replayed() -> None:
    rp = Replay(load_paths([SAMPLE]))
    out = io.StringIO()
    seen: list[int] = []

    def watched() -> Iterator[CycleRecord]:
        for rec in rp.cycles():
            seen.append(out.getvalue().count("\n"))
            yield rec

    n = write_jsonl(rp.trace, watched(), out)
    assert n > 3 and seen == list(range(1, n + 1))  # the header, then one line per cycle already written
    assert rp.trace.cycles == []  # written records are not kept


def test_the_json_document_grows_cycle_by_cycle_and_nothing_is_kept() -> None:
    rp = Replay(load_paths([SAMPLE]))
    out = io.StringIO()
    sizes: list[int] = []

    def watched() -> Iterator[CycleRecord]:
        for rec in rp.cycles():
            sizes.append(len(out.getvalue()))
            yield rec

    write_json(rp.trace, watched(), out)
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
    assert rp.trace.cycles == []
    doc = json.loads(out.getvalue())
    assert [c["seq"] for c in doc["cycles"]] == list(range(1, len(sizes) + 1))


def test_no_cycle_writes_the_empty_document() -> None:
    rp = Replay(load_paths([SAMPLE]))
    expected = rp.trace.to_dict()
    for indent in (None, 1):
        out = io.StringIO()
        assert write_json(rp.trace, iter(()), out, indent=indent) == 0
        buf = io.StringIO()
        json.dump(expected, buf, indent=indent)
        assert out.getvalue() == buf.getvalue() + "\n"


FIXTURES = Path(__file__).resolve().parents[1] / "conformance" / "fixtures"


@pytest.mark.parametrize("all_nodes", [False, True])
def test_the_cycle_encoder_writes_what_json_dumps_writes_on_every_conformance_scenario(all_nodes: bool) -> None:
    scenarios = sorted(p for p in FIXTURES.rglob("*.json") if not p.name.endswith(".expected.json"))
    assert len(scenarios) > 20
    cycles = 0
    for path in scenarios:
        rp = Replay(load_paths([path]), options=ReplayOptions(all_nodes=all_nodes))
        encoder = CycleEncoder(rp.trace)
        for rec in rp.cycles():
            expected = json.dumps(cycle_to_dict(rec, rp.trace.node_names, rp.trace.reasons))
            assert encoder.encode(rec) == expected, (path, rec.seq)
            cycles += 1
    assert cycles > 50


@pytest.mark.parametrize("all_nodes", [False, True])
def test_the_cycle_encoder_writes_what_json_dumps_writes_past_64_nodes(tmp_path: Path, all_nodes: bool) -> None:
    """Past 64 nodes the encoder finds a cycle's distinct filter verdicts and score pairs with numpy
    and writes each once: the same text as ``json.dumps``, also for values outside what it packs
    (negative and huge raw scores, normalized scores past 1023, unknown plugin and reason numbers)."""
    dense = tmp_path / "dense.json"
    write_dump(dense, DenseShape(nodes=96, pods_per_node=6, pending=20))
    rp = _replay([dense], all_nodes=all_nodes)
    records = list(rp.cycles())
    encoder = CycleEncoder(rp.trace)

    def same(rec: CycleRecord) -> None:
        want = json.dumps(cycle_to_dict(rec, rp.trace.node_names, rp.trace.reasons))
        assert encoder.encode(rec) == want

    scored = [r for r in records if r.scored and r.raw_scores is not None and r.raw_scores.shape[1] > 64]
    assert scored
    for rec in records:
        same(rec)
    rec = scored[0]
    assert rec.raw_scores is not None and rec.normalized_scores is not None
    # the matrices are kept in their narrowest types: widened to take any int64
    rec.raw_scores = rec.raw_scores.astype(np.int64)
    rec.normalized_scores = rec.normalized_scores.astype(np.int64)
    for raw, norm in ((-7, 3), (1 << 55, 100), (12, 2000), (-(1 << 60), 0)):
        rec.raw_scores[0, : rec.raw_scores.shape[1] // 2] = raw
        rec.normalized_scores[-1, 1::3] = norm
        same(rec)
    # nodes not evaluated (a cycle that stopped early, without scoring)
    assert rec.filter_codes is not None
    codes = rec.filter_codes.copy()
    codes[::5] = -1
    same(dataclasses.replace(rec, scored=False, filter_codes=codes))
