"""Plugin name -> implementation (pkg/scheduler/framework/plugins/registry.go).

Modules are imported on first use so that a configuration naming a plugin the engine lacks fails with
a clear error rather than at import time.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import cache
from typing import Any

from ..framework import interfaces as fi

# upstream plugin name -> "module:Class"
IN_TREE: dict[str, str] = {
    "PrioritySort": "queuesort:PrioritySort",
    "SchedulingGates": "schedulinggates:SchedulingGates",
    "NodeUnschedulable": "nodeunschedulable:NodeUnschedulable",
    "NodeName": "nodename:NodeName",
    "TaintToleration": "tainttoleration:TaintToleration",
    "NodeAffinity": "nodeaffinity:NodeAffinity",
    "NodePorts": "nodeports:NodePorts",
    "NodeResourcesFit": "noderesources_fit:Fit",
    "NodeResourcesBalancedAllocation": "noderesources_balanced_allocation:BalancedAllocation",
    "VolumeRestrictions": "volumerestrictions:VolumeRestrictions",
    "NodeVolumeLimits": "nodevolumelimits:NodeVolumeLimits",
    "VolumeBinding": "volumebinding:VolumeBinding",
    "VolumeZone": "volumezone:VolumeZone",
    "PodTopologySpread": "podtopologyspread:PodTopologySpread",
    "InterPodAffinity": "interpodaffinity:InterPodAffinity",
    "DynamicResources": "dynamicresources:DynamicResources",
    "DefaultPreemption": "defaultpreemption:DefaultPreemption",
    "ImageLocality": "imagelocality:ImageLocality",
    "DefaultBinder": "defaultbinder:DefaultBinder",
}

_POINTS: tuple[tuple[str, type], ...] = (
    ("preEnqueue", fi.PreEnqueuePlugin),
    ("queueSort", fi.QueueSortPlugin),
    ("preFilter", fi.PreFilterPlugin),
    ("filter", fi.FilterPlugin),
    ("postFilter", fi.PostFilterPlugin),
    ("preScore", fi.PreScorePlugin),
    ("score", fi.ScorePlugin),
    ("reserve", fi.ReservePlugin),
    ("permit", fi.PermitPlugin),
    ("preBind", fi.PreBindPlugin),
    ("bind", fi.BindPlugin),
    ("postBind", fi.PostBindPlugin),
)

_extra: dict[str, type[Any]] = {}


def register(cls: type[Any]) -> type[Any]:
    """Add an out-of-tree plugin class (it must carry a ``name``)."""
    _extra[cls.name] = cls
    return cls


@cache
def _in_tree(name: str) -> type[Any]:
    module, cls = IN_TREE[name].split(":")
    mod = importlib.import_module(f"schedviz.engine.plugins.{module}")
    return getattr(mod, cls)  # type: ignore[no-any-return]


def plugin_class(name: str) -> type[Any]:
    if name in _extra:
        return _extra[name]
    return _in_tree(name)


def known() -> list[str]:
    return sorted(set(IN_TREE) | set(_extra))


def points_of(cls: type[Any]) -> frozenset[str]:
    """The extension points a plugin class implements, by the methods it defines."""
    out = set()
    for point, proto in _POINTS:
        methods = [m for m in dir(proto) if not m.startswith("_") and m != "name"]
        if methods and all(callable(getattr(cls, m, None)) for m in methods):
            out.add(point)
    return frozenset(out)


def implements_table() -> Mapping[str, frozenset[str]]:
    return {name: points_of(plugin_class(name)) for name in known()}
