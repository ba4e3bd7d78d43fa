"""What the configuration asks a plugin class about its args, through the registry (runtime/registry.py).

A plugin class, in-tree or custom, may declare (docs/plugins.md, "Arguments"):

- ``args_type``: the Go type of its args (plugin_args.py): the args are then *typed*, as upstream's
  registered args types are: decoded strictly, defaulted whenever they are given, and validated when
  given (only when the plugin is enabled if the class sets ``validate_args_when_built``, as for args
  upstream checks in the plugin's constructor);
- ``default_args(args[, features=...]) -> args`` and ``validate_args(args[, features=...]) -> [message]``
  (static or class methods; ``features``, when the hook takes it, is the feature gates in force).

Without ``args_type`` the hooks run only when the plugin is enabled, as upstream builds only enabled
plugins; an in-tree plugin that declares nothing receives its args as given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..plugin_args import ArgsType
from ..runtime import registry


@dataclass(frozen=True)
class ArgsHooks:
    args_type: ArgsType | None
    default: Callable[..., Any] | None
    validate: Callable[..., Any] | None
    when_built: bool  # typed args validated only when the plugin is enabled


def _of(cls: type[Any]) -> ArgsHooks:
    return ArgsHooks(
        getattr(cls, "args_type", None),
        getattr(cls, "default_args", None),
        getattr(cls, "validate_args", None),
        bool(getattr(cls, "validate_args_when_built", False)),
    )


def args_hooks(implements: Mapping[str, frozenset[str]], name: str) -> ArgsHooks | None:
    """What plugin ``name``'s class declares about its args; None when its args pass through as given.

    In-tree plugins are always looked up; custom ones when ``implements`` is the registry's table
    (``registry.implements_table()``), which knows them.
    """
    if name in registry.IN_TREE:
        hooks = _of(registry.plugin_class(name))
        if hooks.args_type is None and hooks.default is None and hooks.validate is None:
            return None
        return hooks
    get = getattr(implements, "args_hooks", None)
    if get is None or get(name) is None:
        return None
    return _of(registry.plugin_class(name))
