"""Bounds on user YAML before it is loaded (schedviz/engine/yamlbounds.py)."""

from __future__ import annotations

import pytest

from schedviz.engine.config import parse_config_text
from schedviz.engine.errors import ConfigError
from schedviz.engine.yamlbounds import YamlBoundsError, check


def test_anchors_used_as_intended_are_fine() -> None:
    text = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: a
  pluginConfig: &shared
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
- schedulerName: b
  pluginConfig: *shared
"""
    cfg = parse_config_text(text)
    assert cfg["profiles"][1]["pluginConfig"] == cfg["profiles"][0]["pluginConfig"]


def test_expansion_counts_every_alias_as_what_it_stands_for() -> None:
    # the root mapping, its two keys, a (itself and 10 scalars: 11) and b (itself and 5 aliases of a)
    text = "a: &a [" + ", ".join(["x"] * 10) + "]\nb: [" + ", ".join(["*a"] * 5) + "]\n"
    check(text, max_nodes=1 + 2 + 11 + 1 + 5 * 11)
    with pytest.raises(YamlBoundsError, match=r"more than 69 values once aliases are expanded \(line 2\)"):
        check(text, max_nodes=69)


def test_depth_is_bounded_before_the_loader_recurses() -> None:
    check("a:" + " {a:" * 99 + " 1" + "}" * 99)
    with pytest.raises(YamlBoundsError, match="nested deeper than 100 levels"):
        check("a:" + " {a:" * 100 + " 1" + "}" * 100)
    with pytest.raises(ConfigError, match="nested deeper than 100 levels"):
        parse_config_text("a:" + " {a:" * 5000 + " 1" + "}" * 5000)
