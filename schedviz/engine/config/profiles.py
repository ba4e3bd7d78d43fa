"""What the framework builds from a profile (pkg/scheduler/framework/runtime/framework.go NewFramework,
updatePluginList, expandMultiPointPlugins, getScoreWeights): each extension point's final plugin list
and the Score weights, with upstream's errors for unknown plugins, plugins at a point they do not
extend, duplicates, and the queue sort and bind plugins a profile needs."""

from __future__ import annotations

from collections.abc import Mapping

from ..apimachinery import ErrorList, go_quote
from .defaults import Entry, PluginSet
from .types import BUILD_ORDER, EXTENSION_POINTS, INTERFACE, MAX_NODE_SCORE, MAX_TOTAL_SCORE, PluginRef


def plugins_needed(sets: dict[str, PluginSet]) -> set[str]:
    return {e.name for s in sets.values() for e in s.enabled}


def build_profile_plugins(
    sets: dict[str, PluginSet],
    implements: Mapping[str, frozenset[str]],
    scheduler_name: str,
    ppath: str,
    errs: ErrorList,
    already_reported: set[str],
) -> dict[str, list[PluginRef]]:
    reported_unknown: set[tuple[str, str]] = set()

    def unknown(e: Entry, point: str) -> None:
        key = (e.name, e.where)
        if key in reported_unknown or e.name in already_reported:
            return
        reported_unknown.add(key)
        iface = INTERFACE.get(point, "MultiPoint")
        detail = f"unknown plugin ({iface} {go_quote(e.name)} does not exist)"
        if e.where:
            errs.not_found(f"{e.where}.name", e.name, detail)
        else:
            errs.not_found(
                f"{ppath}.plugins.multiPoint", e.name, "default plugin is not registered; " + detail
            )

    # updatePluginList: the plugins named at each extension point
    specific: dict[str, list[str]] = {}
    for point in BUILD_ORDER:
        names: list[str] = []
        for e in sets[point].enabled:
            if e.name not in implements:
                unknown(e, point)
                continue
            where = f"{e.where}.name" if e.where else f"{ppath}.plugins.{point}"
            if point not in implements[e.name]:
                errs.invalid(
                    where, e.name, f"plugin {go_quote(e.name)} does not extend {INTERFACE[point]} plugin"
                )
                continue
            if e.name in names:
                errs.invalid(
                    where,
                    e.name,
                    f"plugin {go_quote(e.name)} already registered as {go_quote(INTERFACE[point])}",
                )
                continue
            names.append(e.name)
        specific[point] = names

    # expandMultiPointPlugins
    final: dict[str, list[str]] = dict(specific)
    multi_point = sets["multiPoint"].enabled
    if multi_point:
        for point in BUILD_ORDER:
            disabled = set(sets[point].disabled)
            if "*" in disabled:
                continue
            enabled_names = specific[point]
            overrides: list[str] = []
            expanded: list[str] = []
            for e in multi_point:
                if e.name not in implements:
                    unknown(e, point)
                    continue
                if point not in implements[e.name] or e.name in disabled:
                    continue
                if e.name in enabled_names:
                    # explicitly configured at this extension point: that setting wins
                    if e.name not in overrides:
                        overrides.append(e.name)
                    continue
                if e.name in expanded:
                    where = f"{e.where}.name" if e.where else f"{ppath}.plugins.multiPoint"
                    errs.invalid(
                        where,
                        e.name,
                        f"plugin {go_quote(e.name)} already registered as {go_quote(INTERFACE[point])}",
                    )
                    continue
                expanded.append(e.name)
            # order: overridden plugins (in their extension point order), multiPoint ones, the rest
            final[point] = (
                [n for n in enabled_names if n in overrides]
                + expanded
                + [n for n in enabled_names if n not in overrides]
            )

    if len(final["queueSort"]) != 1:
        errs.add(
            f"{ppath}.plugins.queueSort: only one queue sort plugin required for profile with scheduler name "
            f"{go_quote(scheduler_name)}, but got {len(final['queueSort'])}"
        )
    if not final["bind"]:
        errs.add(
            f"{ppath}.plugins.bind: at least one bind plugin is needed for profile with scheduler name "
            f"{go_quote(scheduler_name)}"
        )

    # getScoreWeights: score-specific weights first, then multiPoint ones; 0 means 1
    weights: dict[str, int] = {}
    total = 0
    for e in [*sets["score"].enabled, *multi_point]:
        if e.name not in implements or "score" not in implements[e.name] or e.name in weights:
            continue
        w = e.weight or 1
        weights[e.name] = w
        if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            errs.add(f"{ppath}.plugins: total score of Score plugins could overflow")
            break
        total += w * MAX_NODE_SCORE

    return {
        point: [PluginRef(n, weights.get(n, 1) if point == "score" else 0) for n in final[point]]
        for point in EXTENSION_POINTS
    }
