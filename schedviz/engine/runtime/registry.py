"""Plugin name -> implementation (pkg/scheduler/framework/plugins/registry.go), in-tree and custom.

In-tree modules are imported on first use so that a configuration naming a plugin the engine lacks
fails with a clear error rather than at import time.

Custom (out-of-tree) plugins are classes following the contract of docs/plugins.md. They are known by
their ``name``, the plugin name a KubeSchedulerConfiguration enables and configures, so the same file
stays valid for a kube-scheduler built with the real plugin under that name: no Python path ever
appears in a configuration. A class joins the registry in one of three ways:

- ``register(cls)`` (also usable as a class decorator);
- ``load_module("pkg.module")`` imports a module whose classes call ``register``, and
  ``load_module("pkg.module:Class")`` registers one class: what the CLI's ``--plugin-module`` and
  the web application's ``SCHEDVIZ_PLUGIN_MODULES`` do;
- an entry point of an installed distribution in the group ``schedviz.plugins``
  (``GpuBinpack = "pkg.module:GpuBinpack"``): discovered on first use, imported when needed.

``register`` checks the class (a ``name``, at least one extension point, method arities) so that a
mistake shows when the plugin is loaded, not in the middle of a replay.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache
from typing import Any, TypeVar

from ..errors import SchedVizError
from ..framework import interfaces as fi

ENTRY_POINT_GROUP = "schedviz.plugins"
ENV_VAR = "SCHEDVIZ_PLUGIN_MODULES"

# upstream plugin name -> "module:Class"
IN_TREE: dict[str, str] = {
    "PrioritySort": "queuesort:PrioritySort",
    "SchedulingGates": "schedulinggates:SchedulingGates",
    "NodeUnschedulable": "nodeunschedulable:NodeUnschedulable",
    "NodeName": "nodename:NodeName",
    "TaintToleration": "tainttoleration:TaintToleration",
    "NodeAffinity": "nodeaffinity:NodeAffinity",
    "NodePorts": "nodeports:NodePorts",
    "NodeResourcesFit": "noderesources.fit:Fit",
    "NodeResourcesBalancedAllocation": "noderesources.balanced_allocation:BalancedAllocation",
    "VolumeRestrictions": "volumerestrictions:VolumeRestrictions",
    "NodeVolumeLimits": "nodevolumelimits:NodeVolumeLimits",
    "VolumeBinding": "volumebinding:VolumeBinding",
    "VolumeZone": "volumezone:VolumeZone",
    "PodTopologySpread": "podtopologyspread:PodTopologySpread",
    "InterPodAffinity": "interpodaffinity:InterPodAffinity",
    "DynamicResources": "dynamicresources.plugin:DynamicResources",
    "DefaultPreemption": "defaultpreemption:DefaultPreemption",
    "ImageLocality": "imagelocality:ImageLocality",
    "DefaultBinder": "defaultbinder:DefaultBinder",
    # out of tree: kubernetes-sigs/scheduler-plugins, not in the default profile
    "Coscheduling": "coscheduling:Coscheduling",
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

# Methods the runtime calls when a plugin has them, outside the extension point protocols.
_OPTIONAL: dict[str, tuple[str, ...]] = {
    "pre_bind_pre_flight": ("state", "pod", "node"),
    "add_pod": ("state", "pod", "pod_to_add", "node"),
    "remove_pod": ("state", "pod", "pod_to_remove", "node"),
    # what explain asks a plugin about the nodes it rejected (framework/diagnosis.py)
    "diagnose": ("ctx", "pod", "nodes", "reasons"),
}
# Class-level args hooks the configuration calls before the plugin is built (config/plugins.py); an
# in-tree plugin declares them exactly as a custom one does.
_ARGS_HOOKS = ("default_args", "validate_args")

T = TypeVar("T")


class PluginError(SchedVizError):
    """A custom plugin that cannot be used: a bad class, a failed import, a name conflict."""


def _methods(proto: type) -> list[str]:
    return [m for m in dir(proto) if not m.startswith("_") and m != "name"]


def _params(proto: type, method: str) -> tuple[str, ...]:
    sig = inspect.signature(getattr(proto, method))
    return tuple(p for p in sig.parameters if p != "self")


@cache
def _method_params() -> dict[str, tuple[str, ...]]:
    """Every method the runtime may call -> its parameters after self (from the protocols)."""
    out: dict[str, tuple[str, ...]] = {}
    for _, proto in (*_POINTS, ("normalizeScore", fi.NormalizeScorePlugin)):
        for m in _methods(proto):
            out[m] = _params(proto, m)
    out.update(_OPTIONAL)
    return out


# --------------------------------------------------------------------------------------------------
# State: custom classes by name, the classes each module registered, discovered entry points

_extra: dict[str, type[Any]] = {}
_declared: dict[str, list[type[Any]]] = {}
_entry_points: dict[str, list[importlib.metadata.EntryPoint]] | None = None


def _label(cls: Any) -> str:
    if isinstance(cls, type):
        return f"{cls.__module__}.{cls.__qualname__}"
    return repr(cls)


def _binds(fn: Any, count: int) -> bool:
    """Whether ``fn`` can be called with ``count`` positional arguments (True when unknowable)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    try:
        sig.bind(*([None] * count))
    except TypeError:
        return False
    return True


def _method_binds(cls: type[Any], method: str, count: int) -> bool:
    """Whether ``instance.method(...)`` (or ``cls.method(...)`` for a hook) takes ``count`` arguments."""
    raw = inspect.getattr_static(cls, method)
    if isinstance(raw, staticmethod):
        return _binds(raw.__func__, count)
    if isinstance(raw, classmethod):
        return _binds(raw.__func__, count + 1)
    if inspect.isfunction(raw):
        return _binds(raw, count + 1)
    return _binds(getattr(cls, method), count)


def check_plugin_class(cls: Any) -> list[str]:
    """What is wrong with ``cls`` as a plugin class (empty when nothing is)."""
    if not isinstance(cls, type):
        return [f"{cls!r} is not a class"]
    problems: list[str] = []
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        problems.append(
            "has no `name` class attribute (a non-empty string: the plugin name configurations use)"
        )
    elif name == "*" or re.search(r"\s", name):
        problems.append(f"`name` {name!r} cannot be a plugin name")
    if not _binds(cls, 2):
        problems.append("its constructor must accept (args, handle)")
    params = _method_params()
    for method, names in params.items():
        if getattr(cls, method, None) is None:
            continue
        if not callable(getattr(cls, method)):
            problems.append(f"`{method}` is not a method")
        elif not _method_binds(cls, method, len(names)):
            problems.append(f"{method}() must accept ({', '.join(names)}) besides self")
    for point, proto in _POINTS:
        methods = _methods(proto)
        have = [m for m in methods if callable(getattr(cls, m, None))]
        if have and len(have) < len(methods):
            missing = [m for m in methods if m not in have]
            problems.append(
                f"defines {', '.join(have)}() but not {', '.join(missing)}() (the {point} extension point needs both)"
            )
    if callable(getattr(cls, "normalize_score", None)) and not callable(getattr(cls, "score", None)):
        problems.append("defines normalize_score() without score()")
    if not points_of(cls):
        methods = [m for _, proto in _POINTS for m in _methods(proto)]
        problems.append("implements no extension point (define at least one of " + ", ".join(methods) + ")")
    for hook in _ARGS_HOOKS:
        if getattr(cls, hook, None) is None:
            continue
        raw = inspect.getattr_static(cls, hook)
        if not isinstance(raw, staticmethod | classmethod):
            problems.append(
                f"{hook} must be a staticmethod or classmethod (it runs before the plugin is built)"
            )
        elif not _method_binds(cls, hook, 1):
            problems.append(f"{hook}() must accept (args)")
    return problems


def register(cls: type[T]) -> type[T]:
    """Add a custom plugin class under its ``name``; returns the class, so it works as a decorator.

    Raises ``PluginError`` when the class breaks the contract or its name is taken by an in-tree
    plugin or by another class. Registering the same class again does nothing.
    """
    problems = check_plugin_class(cls)
    if problems:
        raise PluginError(f"plugin class {_label(cls)}: " + "; ".join(problems))
    name: str = cls.name  # type: ignore[attr-defined]
    if name in IN_TREE:
        raise PluginError(f'plugin class {_label(cls)}: a plugin named "{name}" already exists (in-tree)')
    existing = _extra.get(name)
    if existing is not None and existing is not cls and _label(existing) != _label(cls):
        raise PluginError(
            f'plugin class {_label(cls)}: a plugin named "{name}" already exists ({_label(existing)})'
        )
    _extra[name] = cls
    declared = _declared.setdefault(cls.__module__, [])
    declared[:] = [c for c in declared if _label(c) != _label(cls)] + [cls]
    return cls


def unregister(name: str) -> None:
    """Forget a custom plugin (entry points stay discoverable)."""
    _extra.pop(name, None)


def custom() -> dict[str, type[Any]]:
    """The registered custom plugin classes by name."""
    return dict(_extra)


# --------------------------------------------------------------------------------------------------
# Loading modules and entry points


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def load_module(spec: str) -> list[str]:
    """Import ``pkg.module`` (whose plugin classes call ``register``) or register ``pkg.module:Class``.

    Returns the plugin names the module provides. Raises ``PluginError`` naming ``spec`` when the
    module cannot be imported, the class is missing or invalid, or the module registers nothing.
    """
    spec = spec.strip()
    module_name, _, attr = spec.partition(":")
    if not _DOTTED.fullmatch(module_name) or (attr and not _DOTTED.fullmatch(attr)):
        raise PluginError(f"plugin module {spec!r}: expected a dotted module name, optionally with :Class")
    before = set(_extra)
    try:
        module = importlib.import_module(module_name)
    except PluginError as exc:
        raise PluginError(f"plugin module {spec!r}: {exc}") from None
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise PluginError(f"plugin module {spec!r}: no module named {module_name!r}") from None
        raise PluginError(f"plugin module {spec!r}: importing it failed: {exc}") from None
    except Exception as exc:
        raise PluginError(
            f"plugin module {spec!r}: importing it failed: {type(exc).__name__}: {exc}"
        ) from None
    if attr:
        obj: Any = module
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise PluginError(f"plugin module {spec!r}: module {module_name!r} has no attribute {attr!r}")
            obj = getattr(obj, part)
        try:
            register(obj)
        except PluginError as exc:
            raise PluginError(f"plugin module {spec!r}: {exc}") from None
        return [str(obj.name)]
    names = set(_extra) - before
    for mod, classes in _declared.items():
        if mod == module_name or mod.startswith(module_name + "."):
            for cls in classes:
                names.add(register(cls).name)
    if not names:
        raise PluginError(
            f"plugin module {spec!r} registers no plugin: decorate its plugin classes with "
            f"@schedviz.engine.runtime.registry.register, or name one as {module_name}:ClassName"
        )
    return sorted(names)


def load_modules(specs: Iterable[str]) -> list[str]:
    """``load_module`` for each spec (empty ones skipped); every plugin name they provide."""
    out: list[str] = []
    for spec in specs:
        if spec.strip():
            out.extend(n for n in load_module(spec) if n not in out)
    return out


def modules_from_env(environ: Mapping[str, str] | None = None) -> list[str]:
    """The module specs listed, comma-separated, in ``SCHEDVIZ_PLUGIN_MODULES``."""
    value = (os.environ if environ is None else environ).get(ENV_VAR, "")
    return [s.strip() for s in value.split(",") if s.strip()]


def _discover() -> dict[str, list[importlib.metadata.EntryPoint]]:
    global _entry_points
    if _entry_points is None:
        found: dict[str, list[importlib.metadata.EntryPoint]] = {}
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            found.setdefault(ep.name, []).append(ep)
        _entry_points = found
    return _entry_points


def rediscover() -> None:
    """Forget the discovered entry points (after installing a distribution, or in tests)."""
    global _entry_points
    _entry_points = None


def _load_entry_point(name: str) -> type[Any]:
    eps = _discover()[name]
    values = sorted({ep.value for ep in eps})
    where = f'entry point "{name} = {values[0]}" (group {ENTRY_POINT_GROUP})'
    if len(values) > 1:
        raise PluginError(
            f'entry points (group {ENTRY_POINT_GROUP}) name "{name}" more than once: {", ".join(values)}'
        )
    try:
        obj = eps[0].load()
    except Exception as exc:
        raise PluginError(f"{where}: cannot load it: {type(exc).__name__}: {exc}") from None
    named = getattr(obj, "name", None) if isinstance(obj, type) else None
    if named is not None and named != name:
        raise PluginError(
            f'{where}: the class is named "{named}"; the entry point name must be the plugin name'
        )
    try:
        return register(obj)
    except PluginError as exc:
        raise PluginError(f"{where}: {exc}") from None


def load_entry_points() -> list[str]:
    """Import every discovered entry point now (the web application does, to fail at startup)."""
    names = sorted(n for n in _discover() if n not in _extra)
    for name in names:
        _load_entry_point(name)
    return names


# --------------------------------------------------------------------------------------------------
# Lookup


@cache
def _in_tree(name: str) -> type[Any]:
    module, cls = IN_TREE[name].split(":")
    mod = importlib.import_module(f"schedviz.engine.plugins.{module}")
    return getattr(mod, cls)  # type: ignore[no-any-return]


def plugin_class(name: str) -> type[Any]:
    """The class of plugin ``name``; KeyError when no plugin has that name."""
    if name in _extra:
        return _extra[name]
    if name in IN_TREE:
        return _in_tree(name)
    if name in _discover():
        return _load_entry_point(name)
    raise KeyError(name)


def known() -> list[str]:
    return sorted(set(IN_TREE) | set(_extra) | set(_discover()))


def is_custom(name: str) -> bool:
    return name not in IN_TREE and (name in _extra or name in _discover())


def points_of(cls: type[Any]) -> frozenset[str]:
    """The extension points a plugin class implements, by the methods it defines."""
    out = set()
    for point, proto in _POINTS:
        methods = _methods(proto)
        if methods and all(callable(getattr(cls, m, None)) for m in methods):
            out.add(point)
    return frozenset(out)


ArgsHooks = tuple[
    Callable[[dict[str, Any]], dict[str, Any]] | None, Callable[[dict[str, Any]], list[str]] | None
]


class PluginTable(Mapping[str, frozenset[str]]):
    """Every known plugin name -> the extension points it implements: what ``load_config`` takes.

    A plugin's class is looked up (and an entry point imported) only when its name is asked for.
    ``args_hooks`` tells the configuration (config/plugins.py) which custom plugins it may ask for
    their ``default_args`` and ``validate_args``; in-tree plugins' are always asked.
    """

    def __init__(self, names: Iterable[str]) -> None:
        self._names = frozenset(names)
        self._points: dict[str, frozenset[str]] = {}

    def __getitem__(self, name: str) -> frozenset[str]:
        if name not in self._names:
            raise KeyError(name)
        got = self._points.get(name)
        if got is None:
            got = self._points[name] = points_of(plugin_class(name))
        return got

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names))

    def __len__(self) -> int:
        return len(self._names)

    def args_hooks(self, name: str) -> ArgsHooks | None:
        """None for in-tree and unknown plugins; else the custom class's (default_args, validate_args)."""
        if name not in self._names or not is_custom(name):
            return None
        cls = plugin_class(name)
        return getattr(cls, "default_args", None), getattr(cls, "validate_args", None)


def implements_table() -> PluginTable:
    return PluginTable(known())
