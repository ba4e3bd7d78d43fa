"""Messages for a custom plugin's ``validate_args`` (docs/plugins.md, "Custom plugins").

``validate_args(args)`` returns a list of messages, each starting with the field path relative to the
plugin's args (``weight``, ``labels[0]``; empty for the args as a whole). SchedViz prefixes the path of
the args in the configuration, so ``invalid("weight", 0, "must be between 1 and 100")`` is reported as
``profiles[0].pluginConfig[1].args.weight: Invalid value: 0: must be between 1 and 100``, worded like
the errors of in-tree plugins' args.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from .config import _fmt_value, _go_quote


def child(field: str, name: str) -> str:
    """The path of member ``name`` of ``field`` ("" is the args themselves)."""
    return f"{field}.{name}" if field else name


def index(field: str, i: int | str) -> str:
    return f"{field}[{i}]"


def invalid(field: str, value: Any, detail: str = "") -> str:
    s = f"{field}: Invalid value: {_fmt_value(value)}"
    return f"{s}: {detail}" if detail else s


def required(field: str, detail: str = "") -> str:
    return f"{field}: Required value: {detail}" if detail else f"{field}: Required value"


def forbidden(field: str, detail: str) -> str:
    return f"{field}: Forbidden: {detail}"


def not_supported(field: str, value: Any, supported: Iterable[str]) -> str:
    valid = ", ".join(_go_quote(v) for v in supported)
    s = f"{field}: Unsupported value: {_fmt_value(value)}"
    return f"{s}: supported values: {valid}" if valid else s


def unknown_fields(args: Mapping[str, Any], known: Iterable[str], field: str = "") -> list[str]:
    """One message per key of ``args`` that is not in ``known``, like a strict decoder's."""
    allowed = list(known)
    return [
        forbidden(child(field, str(k)), "unknown field (known fields: " + ", ".join(allowed) + ")")
        for k in args
        if k not in allowed
    ]


def is_int(value: Any) -> TypeGuard[int]:
    """An integer as YAML/JSON gives it (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool)
