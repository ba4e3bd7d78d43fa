"""The command line: output formats, exit codes, errors without tracebacks."""

from __future__ import annotations

import json
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
