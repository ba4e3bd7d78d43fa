"""The command line: output formats, exit codes, errors without tracebacks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from schedviz.cli import SAMPLE, main

from .engine.builders import node, pod


def write(tmp_path: Path, name: str, obj: object) -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(obj))
    return p


def test_replay_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "c.yaml", {"kind": "List", "items": [node("a"), node("b", cpu="8"), pod("p", cpu="1")]})
    assert main(["replay", str(f), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "ReplayTrace" and out["cycles"][0]["selectedNode"] == "b"


def test_replay_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "c.yaml", {"kind": "List", "items": [node("a", cpu="1"), pod("p", cpu="2")]})
    assert main(["replay", str(f)]) == 0
    out = capsys.readouterr().out
    assert "default/p" in out and "Unschedulable" in out
    assert "0/1 nodes are available: 1 Insufficient cpu." in out


def test_config_file_is_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "c.yaml", {"kind": "List", "items": [node("a"), node("b", cpu="8"), pod("p", cpu="1")]})
    cfg = write(
        tmp_path,
        "cfg.yaml",
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}],
                }
            ],
        },
    )
    assert main(["replay", str(f), "--config", str(cfg), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["cycles"][0]["selectedNode"] == "a"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ({"kind": "List", "items": [node("a", memory="eight")]}, "status.allocatable.memory"),
        ("key: [unclosed\n", "invalid YAML"),
    ],
)
def test_bad_input_exits_2_without_traceback(tmp_path: Path, content: object, fragment: str) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(content if isinstance(content, str) else yaml.safe_dump(content))
    r = subprocess.run([sys.executable, "-m", "schedviz", "replay", str(f)], capture_output=True, text=True)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert str(f) in r.stderr and fragment in r.stderr


def test_invalid_config_exits_2_naming_the_field(tmp_path: Path) -> None:
    f = write(tmp_path, "c.yaml", {"kind": "List", "items": [node("a")]})
    cfg = write(
        tmp_path,
        "cfg.yaml",
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "x", "plugins": {"score": {"enabled": [{"name": "NoSuchPlugin"}]}}}],
        },
    )
    r = subprocess.run([sys.executable, "-m", "schedviz", "replay", str(f), "--config", str(cfg)], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "profiles[0].plugins.score.enabled[0]" in r.stderr and "NoSuchPlugin" in r.stderr


def test_sample_cluster_replays_sensibly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert SAMPLE.exists()
    # a mix of outcomes, each explained
    for needle in ("Scheduled", "Unschedulable", "Gated", "NotHandled", "Insufficient cpu", "untolerated taint"):
        assert needle in out


_DURATION = re.compile(r'"durationMicros": \d+')


def _same_but_durations(text: str) -> str:
    """Two replays differ only in the stages' measured durations (wall clock): those become 0.
    (tests/tools/test_trace_stream.py compares the bytes of one replay's records, durations included.)"""
    return _DURATION.sub('"durationMicros": 0', text)


def _in_memory(paths: list[str], *extra: str, config: str | None = None) -> str:
    """What `schedviz replay --format json` printed before it streamed: the whole trace built, then dumped."""
    import io

    from schedviz.engine import ReplayOptions, load_config, load_paths
    from schedviz.engine.runtime.replay import Replay

    snapshot = load_paths(paths)
    cfg = load_config(config if config else snapshot.config)
    trace = Replay(snapshot, cfg, ReplayOptions(all_nodes="--all-nodes" in extra)).run()
    buf = io.StringIO()
    json.dump(trace.to_dict(), buf, indent=1 if "--pretty" in extra else None)
    return buf.getvalue() + "\n"


PIPELINE = SAMPLE.parent / "pipeline"


@pytest.mark.parametrize(
    ("paths", "config"),
    [
        ([str(SAMPLE)], None),
        # preemption: evictions, a nominated preemptor's second attempt
        ([str(PIPELINE / "preemption.yaml")], None),
        # Permit waits: Binding records, permit events, a timeout
        ([str(PIPELINE / "gang.yaml")], str(PIPELINE / "gang-config.yaml")),
    ],
)
@pytest.mark.parametrize("extra", [(), ("--all-nodes",), ("--pretty",)])
def test_streamed_json_is_the_in_memory_document(
    paths: list[str], config: str | None, extra: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["replay", *paths, "--format", "json", *extra, *(["--config", config] if config else [])]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert _same_but_durations(out) == _same_but_durations(_in_memory(paths, *extra, config=config))


def test_streamed_json_is_the_in_memory_document_on_a_dense_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from schedviz.tools.dense_cluster import DenseShape, write_dump

    dump = tmp_path / "dense.json"
    write_dump(dump, DenseShape(nodes=24, pods_per_node=10, pending=24))
    for extra in ((), ("--all-nodes",)):
        assert main(["replay", str(dump), "--format", "json", *extra]) == 0
        out = capsys.readouterr().out
        assert _same_but_durations(out) == _same_but_durations(_in_memory([str(dump)], *extra))
    assert len(json.loads(out)["cycles"]) == 24


@pytest.mark.parametrize("paths", [[str(SAMPLE)], [str(PIPELINE / "preemption.yaml")]])
def test_jsonl_is_a_header_then_the_json_forms_cycles(paths: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", *paths, "--format", "json", "--all-nodes"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(["replay", *paths, "--format", "jsonl", "--all-nodes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header, cycles = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    assert header == {k: v for k, v in doc.items() if k != "cycles"}
    assert "cycles" not in header and header["kind"] == "ReplayTrace"
    for c in [*cycles, *doc["cycles"]]:  # two replays: only the measured durations differ
        for stage in c["stages"]:
            stage["durationMicros"] = 0
    assert cycles == doc["cycles"] and len(cycles) > 1


def test_jsonl_cannot_be_pretty(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(SAMPLE), "--format", "jsonl", "--pretty"]) == 2
    assert "--pretty" in capsys.readouterr().err


def _plain_best(totals: list[int], feasible: list[int], top: int) -> list[int]:
    return sorted(range(len(feasible)), key=lambda k: (-totals[k], feasible[k]))[:top]


@pytest.mark.parametrize("top", [-2, 0, 1, 3, 7, 50])
def test_table_best_nodes_are_the_plain_sort(top: int) -> None:
    import random

    import numpy as np

    from schedviz.cli import _best

    rng = random.Random(top)
    for n in (0, 1, 2, 3, 5, 40, 300):
        feasible = sorted(rng.sample(range(2 * n + 1), n))
        rng.shuffle(feasible)
        for spread in (1, 3, 1000):  # many ties, some, few
            totals = [rng.randrange(spread) for _ in range(n)]
            want = _plain_best(totals, feasible, top)
            assert _best(np.array(totals, dtype=np.int64), np.array(feasible, dtype=np.int64), top) == want
            assert _best(totals, feasible, top) == want  # plain lists


def test_table_on_a_dense_cluster_names_the_best_nodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from schedviz.engine import ReplayOptions, load_paths
    from schedviz.engine.config import load_config
    from schedviz.engine.runtime.replay import Replay
    from schedviz.tools.dense_cluster import DenseShape, write_dump

    dump = tmp_path / "dense.json"
    write_dump(dump, DenseShape(nodes=24, pods_per_node=10, pending=24))
    assert main(["replay", str(dump), "--all-nodes", "--top", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    snap = load_paths([dump])
    trace = Replay(snap, load_config(snap.config), ReplayOptions(all_nodes=True)).run()
    want: list[str] = []
    for c in trace.cycles:
        assert c.feasible is not None and c.totals is not None
        order = _plain_best([int(t) for t in c.totals], [int(f) for f in c.feasible], 5)
        want.append(" ".join(trace.node_names[int(c.feasible[k])] for k in order))
    got = [" ".join(line.split()[0] for line in lines[i + 1 : i + 6]) for i, line in enumerate(lines) if re.match(r"\s*\d+\s", line)]
    assert got == want and len(got) == 24


def test_the_command_line_ends_without_freeing_the_snapshot_yet_writes_everything(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Run as a program, `schedviz replay` ends the process without freeing what it read (cli.py's
    ``_RETAINED``): its output is all written and flushed, and its exit code is the command's."""
    assert main(["replay", str(SAMPLE), "--all-nodes"]) == 0
    want = capsys.readouterr().out
    r = subprocess.run(
        [sys.executable, "-m", "schedviz", "replay", str(SAMPLE), "--all-nodes"], capture_output=True, text=True
    )
    assert r.returncode == 0 and r.stderr == "" and r.stdout == want
    # a reader that goes away early: a quiet stop, as before
    p = subprocess.Popen(
        [sys.executable, "-m", "schedviz", "replay", str(SAMPLE), "--all-nodes", "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.read(10)
    p.stdout.close()
    assert p.wait() == 0 and b"Traceback" not in p.stderr.read()
    p.stderr.close()


@pytest.mark.parametrize(
    ("paths", "config"),
    [
        ([str(SAMPLE)], None),
        ([str(PIPELINE / "preemption.yaml")], None),
        ([str(PIPELINE / "gang.yaml")], str(PIPELINE / "gang-config.yaml")),
    ],
)
@pytest.mark.parametrize("extra", [(), ("--all-nodes",), ("--top", "5")])
def test_the_streamed_table_is_the_table_of_the_whole_trace(
    paths: list[str], config: str | None, extra: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """`schedviz replay` writes its table cycle by cycle, dropping each record once written: the
    text ``render_table`` makes of the whole trace, the summary counting each pod's final record."""
    from schedviz.cli import render_table
    from schedviz.engine import ReplayOptions, load_config, load_paths
    from schedviz.engine.runtime.replay import Replay

    assert main(["replay", *paths, *extra, *(["--config", config] if config else [])]) == 0
    out = capsys.readouterr().out
    snapshot = load_paths(paths)
    options = ReplayOptions(all_nodes="--all-nodes" in extra)
    trace = Replay(snapshot, load_config(config if config else snapshot.config), options).run()
    assert out == render_table(trace, top=5 if "--top" in extra else 3)
    assert "summary: " in out
