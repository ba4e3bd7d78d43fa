"""``schedviz report --min-headroom POD.yaml=N``: N more copies must fit under the candidate."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedviz.cli import main
from schedviz.engine import load_config, load_paths
from schedviz.planning import capacity, read_pod_spec
from tests.engine.builders import node, pod

CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _write(tmp_path: Path, name: str, obj: Any) -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(obj))
    return str(p)


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, str]:
    """Two 4-CPU nodes and a pending 2-CPU pod: six 1-CPU copies fit after it."""
    copy = pod("web", cpu="1", labels={"app": "web"})
    return {
        "snapshot": _write(tmp_path, "cluster.yaml", {"kind": "List", "items": [node("a"), node("b"), pod("p", cpu="2")]}),
        "config": _write(tmp_path, "config.yaml", CONFIG),
        "web": _write(tmp_path, "web.yaml", copy),
    }


def _args(files: dict[str, str], *extra: str) -> list[str]:
    return ["report", "--local", "--snapshot", files["snapshot"], "--config", files["config"], *extra]


def test_headroom_passes_and_fails_with_the_capacity_answer(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = capacity(load_paths([files["snapshot"]]), [read_pod_spec(files["web"])], load_config(files["config"]))
    assert expected.replicas == 6
    out = tmp_path / "r.json"
    assert main(_args(files, "--min-headroom", f"{files['web']}=6", "--json", str(out))) == 0
    (check,) = json.loads(out.read_text())["headroom"]
    assert check == {
        "pod": "default/web",
        "source": files["web"],
        "required": 6,
        "fits": 6,
        "passed": True,
        "perZone": {"(no zone)": 6},
        "message": None,
    }
    assert "headroom " in capsys.readouterr().out
    junit, md = tmp_path / "r.xml", tmp_path / "r.md"
    code = main(_args(files, "--min-headroom", f"{files['web']}=7", "--junit", str(junit), "--markdown", str(md)))
    assert code == 1
    assert "policy failed: headroom: " in capsys.readouterr().out
    case = next(c for c in ET.parse(junit).getroot().iter("testcase") if c.get("classname") == "headroom")
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == expected.stop.message  # type: ignore[union-attr]
    text = md.read_text()
    assert "### Headroom" in text and "| default/web | 7 | 6 | failed |" in text


def test_bad_headroom_arguments_exit_2(files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_args(files, "--min-headroom", files["web"])) == 2
    assert "field --min-headroom" in capsys.readouterr().err
    two = _write(tmp_path, "two.yaml", {"kind": "List", "items": [pod("a"), pod("b")]})
    assert main(_args(files, "--min-headroom", f"{two}=1")) == 2
    assert "two.yaml: expected exactly one Pod" in capsys.readouterr().err
