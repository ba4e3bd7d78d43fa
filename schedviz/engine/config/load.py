"""``load_config``: a KubeSchedulerConfiguration decoded, defaulted and validated, and each profile's
plugin lists built, as kube-scheduler v1.35 does (decode.py, defaults.py, validation.py, profiles.py).

Every problem is collected and raised together as a ``ConfigError``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..apimachinery import ErrorList, go_quote
from ..errors import ConfigError
from ..runtime import registry
from .decode import Decoder, decode_configuration, read_source
from .defaults import merged_sets
from .plugins import ArgsHooks, args_hooks
from .profiles import build_profile_plugins, plugins_needed
from .types import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    ProfileConfig,
    SchedulerConfig,
    gates_with_defaults,
)
from .validation import (
    call_hook,
    hooked_args,
    invalid_in_version,
    validate_extenders,
    validate_leader_election,
    validate_percentage,
    validate_typed_args,
)


@dataclass
class _PluginConfigItem:
    name: str
    args: Any  # decoded (typed plugins) or raw
    path: str
    typed: bool
    given: bool  # present in the user's configuration
    hooks: ArgsHooks | None  # what the plugin's class declares about its args


def _default_typed(hooks: ArgsHooks, args: Any, gates: Mapping[str, bool]) -> Any:
    """Decoded typed args with the plugin's defaults filled in."""
    if hooks.default is None:
        return args
    return call_hook(hooks.default, args, gates)


def load_config(
    source: str | Path | dict[str, Any] | None,
    *,
    implements: Mapping[str, frozenset[str]] | None = None,
    name: str = "",
    features: Mapping[str, bool] | None = None,
) -> SchedulerConfig:
    """Loads, defaults and validates a KubeSchedulerConfiguration and builds each profile's plugin lists.

    ``source``: None for the default configuration, a path (str or Path) to a YAML/JSON file, or an
    already parsed dict. ``implements``: every known plugin name -> the extension points it implements;
    by default the registry's table (``runtime.registry.implements_table()``: every in-tree, registered
    and entry point plugin). Plugin args are defaulted and validated by what the plugins' classes
    declare (``args_type``, ``default_args``, ``validate_args``; config/plugins.py); custom plugins'
    hooks are asked only when ``implements`` is the registry's table.
    ``features``: feature gate overrides (defaults: ``DEFAULT_FEATURES``, as in v1.35).
    Raises ``ConfigError`` listing every problem found.
    """
    if implements is None:
        implements = registry.implements_table()
    table = implements
    gates = gates_with_defaults(features)

    def hooks_of(plugin: str) -> ArgsHooks | None:
        return args_hooks(table, plugin)

    label, raw = read_source(source, name)
    dec = Decoder()
    cfg = decode_configuration(raw, dec, lambda n: h.args_type if (h := hooks_of(n)) is not None else None)
    if dec.problems:
        raise ConfigError(dec.problems, label)
    errs = ErrorList()

    # SetDefaults_KubeSchedulerConfiguration
    parallelism = cfg.get("parallelism", 16)
    profiles_in: list[dict[str, Any]] = cfg.get("profiles") or [{}]
    if len(profiles_in) == 1 and "schedulerName" not in profiles_in[0]:
        profiles_in[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    percentage = cfg.get("percentageOfNodesToScore")
    initial_backoff = cfg.get("podInitialBackoffSeconds", 1)
    max_backoff = cfg.get("podMaxBackoffSeconds", 10)
    extenders: list[dict[str, Any]] = cfg.get("extenders", [])

    # ValidateKubeSchedulerConfiguration
    burst = cfg.get("clientConnection", {}).get("burst", 0)
    if burst < 0:
        errs.invalid("clientConnection.burst", burst, "must be non-negative")
    validate_leader_election(cfg.get("leaderElection", {}), errs)
    if parallelism <= 0:
        errs.invalid("parallelism", parallelism, "should be an integer value greater than zero")

    prepared = []
    seen_names: dict[str, int] = {}
    for i, prof in enumerate(profiles_in):
        ppath = f"profiles[{i}]"
        sched_name: str = prof.get("schedulerName", "")
        sets = merged_sets(prof.get("plugins", {}), ppath, gates)
        needed = plugins_needed(sets)

        # plugin configs: the given ones defaulted, then defaults for enabled plugins with args types
        items: list[_PluginConfigItem] = []
        for j, pc in enumerate(prof.get("pluginConfig", [])):
            pname = pc.get("name", "")
            path = f"{ppath}.pluginConfig[{j}]"
            hooks = hooks_of(pname)
            typed = hooks is not None and hooks.args_type is not None
            args = pc.get("args", {}) if typed else pc.get("args")
            if typed:
                assert hooks is not None
                args = _default_typed(hooks, args, gates)
            elif hooks is not None and pname in needed:
                # hooks without an args type: run only when the plugin is enabled, as upstream
                # builds only enabled plugins
                args = hooked_args(pname, args, hooks, f"{path}.args", errs, gates)
            items.append(_PluginConfigItem(pname, args, path, typed, True, hooks))
        configured = {it.name for it in items}
        for pname in sorted(needed):
            if pname in configured or (hooks := hooks_of(pname)) is None:
                continue
            if hooks.args_type is not None:
                items.append(_PluginConfigItem(pname, _default_typed(hooks, {}, gates), "", True, False, hooks))
            else:
                args = hooked_args(pname, {}, hooks, f"{ppath}.pluginConfig", errs, gates, given=False)
                items.append(_PluginConfigItem(pname, args, "", False, False, hooks))

        # validateKubeSchedulerProfile
        if not sched_name:
            errs.required(f"{ppath}.schedulerName")
        pct = prof.get("percentageOfNodesToScore")
        validate_percentage(f"{ppath}.percentageOfNodesToScore", pct, errs)
        removed_reported: set[str] = set()
        for point in EXTENSION_POINTS:
            for e in sets[point].enabled:
                detail = invalid_in_version(e.name)
                if detail:
                    removed_reported.add(e.name)
                    errs.invalid(e.where or f"{ppath}.plugins.{point}.enabled", e.name, detail)
        seen_config: set[str] = set()
        for it in items:
            if not it.given:
                continue
            if it.name in seen_config:
                errs.duplicate(it.path, it.name)
            seen_config.add(it.name)
            detail = invalid_in_version(it.name)
            if detail:
                errs.invalid(it.path, it.name, detail)
            elif it.typed and it.hooks is not None and (not it.hooks.when_built or it.name in needed):
                # args upstream checks in the plugin's constructor (NodeResourcesFit, Coscheduling) only
                # when the plugin is built
                validate_typed_args(it.name, it.args, it.hooks, f"{it.path}.args", errs, gates)
        if sched_name in seen_names:
            errs.add(
                f"{ppath}.schedulerName: Duplicate value: {go_quote(sched_name)} "
                f"(already used by profiles[{seen_names[sched_name]}].schedulerName)"
            )
        seen_names.setdefault(sched_name, i)
        prepared.append((prof, sets, items, removed_reported, pct))

    # validateCommonQueueSort: the queueSort extension point (not multiPoint) must agree
    if prepared:
        canon = prepared[0][1]["queueSort"]
        if len(canon.enabled) > 1:
            errs.invalid(
                "profiles[0].plugins.queueSort.Enabled",
                len(canon.enabled),
                "only one queue sort plugin can be enabled",
            )
        qs_name = canon.enabled[0].name if canon.enabled else ""
        qs_args = next(
            (it.args for it in prepared[0][2] if it.given and qs_name and it.name == qs_name), None
        )
        canon_key = ([(e.name, e.weight) for e in canon.enabled], canon.disabled)
        for i, (_, sets, items, _, _) in enumerate(prepared[1:], start=1):
            cur = sets["queueSort"]
            if ([(e.name, e.weight) for e in cur.enabled], cur.disabled) != canon_key:
                errs.invalid(
                    f"profiles[{i}].plugins.queueSort",
                    {"Enabled": [e.name for e in cur.enabled], "Disabled": cur.disabled},
                    "must be the same for all profiles",
                )
            for it in items:
                if it.given and qs_name and it.name == qs_name and it.args != qs_args:
                    errs.invalid(
                        f"profiles[{i}].pluginConfig.args",
                        it.args,
                        "queueSort must be the same for all profiles",
                    )

    validate_percentage("percentageOfNodesToScore", percentage, errs)
    if initial_backoff <= 0:
        errs.invalid("podInitialBackoffSeconds", initial_backoff, "must be greater than 0")
    if max_backoff < initial_backoff:
        errs.invalid(
            "podMaxBackoffSeconds", max_backoff, "must be greater than or equal to PodInitialBackoffSeconds"
        )
    validate_extenders(extenders, errs)

    # profile.NewMap: build every profile's framework
    profiles: list[ProfileConfig] = []
    first_queue_sort: tuple[str, Any] | None = None
    for i, (prof, sets, items, removed_reported, pct) in enumerate(prepared):
        ppath = f"profiles[{i}]"
        sched_name = prof.get("schedulerName", "")
        plugins = build_profile_plugins(sets, implements, sched_name, ppath, errs, removed_reported)
        plugin_args: dict[str, dict[str, Any]] = {}
        given_args: dict[str, Any] = {}
        for it in items:
            if it.name in plugin_args:
                continue
            args = it.args
            plugin_args[it.name] = args if isinstance(args, dict) else {}
            if it.given:
                given_args[it.name] = args
        for pname in sorted(plugins_needed(sets)):
            plugin_args.setdefault(pname, {})
        # cfgValidator: one queue sort plugin, with the same args, for every profile
        if len(plugins["queueSort"]) == 1:
            qs = plugins["queueSort"][0].name
            if first_queue_sort is None:
                first_queue_sort = (qs, given_args.get(qs))
            elif first_queue_sort[0] != qs:
                errs.add(
                    f"{ppath}: different queue sort plugins for profile {go_quote(sched_name)}: "
                    f"{go_quote(qs)}, first: {go_quote(first_queue_sort[0])}"
                )
            elif first_queue_sort[1] != given_args.get(qs):
                errs.add(f"{ppath}: different queue sort plugin args for profile {go_quote(sched_name)}")
        profiles.append(ProfileConfig(sched_name, pct, plugins, plugin_args))

    if errs:
        raise ConfigError(errs.items, label)
    return SchedulerConfig(
        profiles=profiles,
        percentage_of_nodes_to_score=percentage,
        parallelism=parallelism,
        pod_initial_backoff_seconds=initial_backoff,
        pod_max_backoff_seconds=max_backoff,
        extenders=extenders,
        raw=copy.deepcopy(raw) if raw is not None else {},
        features=gates,
    )
