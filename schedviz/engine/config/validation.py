"""Validation (pkg/scheduler/apis/config/validation/validation.go): the configuration's top-level
fields, and plugin args through the plugins' own ``validate_args`` (each plugin module holds its
validation_pluginargs.go rules).

Messages read as upstream's ``field.Error``s: ``<path>: Invalid value: <value>: <detail>``.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from ..apimachinery import ErrorList, format_duration, go_quote, is_label_key, parse_duration_ns
from .plugins import ArgsHooks
from .types import API_VERSION, REMOVED_PLUGINS


def is_extended_resource_name(name: str) -> bool:
    """pkg/apis/core/v1/helper IsExtendedResourceName."""
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return not is_label_key("requests." + name)


@cache
def _takes_features(fn: Callable[..., Any]) -> bool:
    try:
        return "features" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def call_hook(fn: Callable[..., Any], args: dict[str, Any], features: Mapping[str, bool]) -> Any:
    """``fn(args)``, with ``features=`` (the feature gates in force) when the hook takes it."""
    return fn(args, features=features) if _takes_features(fn) else fn(args)


def validate_typed_args(
    name: str, args: dict[str, Any], hooks: ArgsHooks, path: str, errs: ErrorList, features: Mapping[str, bool]
) -> None:
    """Typed args (decoded against the plugin's ``args_type`` and defaulted) through its
    ``validate_args``: each message joined with the args' path ``path``."""
    hooked_args(name, args, ArgsHooks(hooks.args_type, None, hooks.validate, hooks.when_built), path, errs, features)


def join_field(path: str, message: str) -> str:
    """``path`` (the args' field path) joined with a message that starts with a relative field path."""
    if message.startswith(("[", ":")):
        return path + message
    return f"{path}.{message}"


def hooked_args(
    name: str,
    args: Any,
    hooks: ArgsHooks,
    path: str,
    errs: ErrorList,
    features: Mapping[str, bool],
    *,
    given: bool = True,
) -> Any:
    """Defaults then validates the args of a plugin with hooks but no args type (a custom plugin's);
    problems are added to ``errs``."""
    default, validate = hooks.default, hooks.validate
    if args is None:
        args = {}
    if not isinstance(args, dict):
        errs.invalid(path, args, f"args of plugin {go_quote(name)} must be an object")
        return args

    def report(message: str) -> None:
        if given:
            errs.add(join_field(path, message))
        else:
            errs.add(f"{path}: Required value: args of plugin {go_quote(name)}: {message.lstrip(': ')}")

    if default is not None:
        try:
            out = call_hook(default, copy.deepcopy(args), features)
        except Exception as exc:
            report(f": default_args of plugin {go_quote(name)} failed: {type(exc).__name__}: {exc}")
            return args
        if not isinstance(out, dict):
            report(f": default_args of plugin {go_quote(name)} returned {type(out).__name__}, not a dict")
            return args
        args = out
    if validate is not None:
        try:
            messages = call_hook(validate, args, features)
        except Exception as exc:
            report(f": validate_args of plugin {go_quote(name)} failed: {type(exc).__name__}: {exc}")
            return args
        if isinstance(messages, str) or not isinstance(messages, list | tuple):
            report(f": validate_args of plugin {go_quote(name)} must return a list of messages")
            return args
        for m in messages:
            report(str(m))
    return args


def validate_extenders(extenders: list[dict[str, Any]], errs: ErrorList) -> None:
    binders = 0
    seen: set[str] = set()
    for i, ext in enumerate(extenders):
        path = f"extenders[{i}]"
        if ext.get("prioritizeVerb") and ext.get("weight", 0) <= 0:
            errs.invalid(f"{path}.weight", ext.get("weight", 0), "must have a positive weight applied to it")
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources", [])):
            rpath = f"{path}.managedResources[{j}].name"
            rname = res.get("name", "")
            msgs = is_label_key(rname)
            for msg in msgs:
                errs.invalid(rpath, rname, msg)
            if not msgs and not is_extended_resource_name(rname):
                errs.invalid(rpath, rname, "is an invalid extended resource name")
            if rname in seen:
                errs.invalid(rpath, rname, "duplicate extender managed resource name")
            seen.add(rname)
    if binders > 1:
        errs.invalid(
            "extenders",
            f"found {binders} extenders implementing bind",
            "only one extender can implement bind",
        )


def validate_leader_election(le: dict[str, Any], errs: ErrorList) -> None:
    """componentbasevalidation.ValidateLeaderElectionConfiguration after the scheduler's defaults."""
    if not le.get("leaderElect", True):
        return
    durations = {}
    for key, default in (("leaseDuration", "15s"), ("renewDeadline", "10s"), ("retryPeriod", "2s")):
        text = le.get(key, "0s")
        ns = parse_duration_ns(text)
        durations[key] = ns if ns != 0 else parse_duration_ns(default)
    for key in ("leaseDuration", "renewDeadline", "retryPeriod"):
        if durations[key] <= 0:
            errs.invalid(
                f"leaderElection.{key}", format_duration(durations[key]), "must be greater than zero"
            )
    if durations["leaseDuration"] <= durations["renewDeadline"]:
        errs.invalid(
            "leaderElection.leaseDuration",
            format_duration(durations["renewDeadline"]),
            "must be greater than `RenewDeadline`",
        )
    lock = le.get("resourceLock") or "leases"
    if lock != "leases":
        errs.invalid("leaderElection.resourceLock", lock, 'resourceLock value must be "leases"')


def validate_percentage(path: str, value: int | None, errs: ErrorList) -> None:
    if value is not None and (value < 0 or value > 100):
        errs.invalid(path, value, "not in valid range [0-100]")


def invalid_in_version(name: str) -> str | None:
    return (
        f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")'
        if (name in REMOVED_PLUGINS)
        else None
    )
