"""Defaulting (pkg/scheduler/apis/config/v1/defaults.go, default_plugins.go): the default plugins, how a
profile's plugin sets merge with them (mergePlugins), and plugin args filled in by the plugins'
``default_args``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .types import EXTENSION_POINTS, PluginRef, gates_with_defaults


@dataclass
class Entry:
    name: str
    weight: int  # 0 when unset
    where: str  # field path of the entry in the user's config, "" for a default plugin


@dataclass
class PluginSet:
    enabled: list[Entry] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


def default_plugins(features: Mapping[str, bool] | None = None) -> list[PluginRef]:
    """getDefaultPlugins: the v1.35 multiPoint list, feature gates applied."""
    gates = gates_with_defaults(features)
    mp = [
        PluginRef("SchedulingGates"),
        PluginRef("PrioritySort"),
        PluginRef("NodeUnschedulable"),
        PluginRef("NodeName"),
        PluginRef("TaintToleration", 3),
        PluginRef("NodeAffinity", 2),
        PluginRef("NodePorts"),
        PluginRef("NodeResourcesFit", 1),
        PluginRef("VolumeRestrictions"),
        PluginRef("NodeVolumeLimits"),
        PluginRef("VolumeBinding"),
        PluginRef("VolumeZone"),
        PluginRef("PodTopologySpread", 2),
        PluginRef("InterPodAffinity", 2),
        PluginRef("DefaultPreemption"),
        PluginRef("NodeResourcesBalancedAllocation", 1),
        PluginRef("ImageLocality", 1),
        PluginRef("DefaultBinder"),
    ]
    # applyFeatureGates, in upstream's order
    if gates.get("NodeDeclaredFeatures"):
        mp.append(PluginRef("NodeDeclaredFeatures"))
    if gates.get("DynamicResourceAllocation"):
        # before DefaultPreemption: better to deallocate an idle claim than to evict a pod
        for i, ref in enumerate(mp):
            if ref.name == "DefaultPreemption":
                mp.insert(i, PluginRef("DynamicResources", 2))
                break
    if gates.get("GangScheduling"):
        mp.append(PluginRef("GangScheduling"))
    return mp


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """mergePluginSet: custom entries replace default ones in place; "*" drops every default."""
    disabled = [*custom.disabled, *default.disabled]
    disabled_set = set(disabled)
    last_index = {e.name: i for i, e in enumerate(custom.enabled)}  # a repeated name: the last one wins
    replaced: set[int] = set()
    enabled: list[Entry] = []
    if "*" not in disabled_set:
        for d in default.enabled:
            if d.name in disabled_set:
                continue
            if d.name in last_index:
                idx = last_index[d.name]
                d = custom.enabled[idx]
                replaced.add(idx)
            enabled.append(d)
    # custom plugins that replaced nothing are appended (duplicates included: the framework rejects them)
    enabled.extend(e for i, e in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled, disabled)


def _custom_sets(plugins: dict[str, Any], ppath: str) -> dict[str, PluginSet]:
    out: dict[str, PluginSet] = {}
    for point in ("multiPoint", *EXTENSION_POINTS):
        ps = plugins.get(point, {})
        enabled = [
            Entry(p.get("name", ""), p.get("weight", 0), f"{ppath}.plugins.{point}.enabled[{i}]")
            for i, p in enumerate(ps.get("enabled", []))
        ]
        disabled = [p.get("name", "") for p in ps.get("disabled", [])]
        out[point] = PluginSet(enabled, disabled)
    return out


def merged_sets(plugins: dict[str, Any], ppath: str, gates: Mapping[str, bool]) -> dict[str, PluginSet]:
    defaults = {p: PluginSet() for p in ("multiPoint", *EXTENSION_POINTS)}
    defaults["multiPoint"] = PluginSet([Entry(r.name, r.weight, "") for r in default_plugins(gates)])
    custom = _custom_sets(plugins, ppath)
    return {p: merge_plugin_set(defaults[p], custom[p]) for p in defaults}
