"""What a plugin declares about its args (docs/plugins.md): the messages of ``validate_args``, and the
types ``args_type`` is written in. In-tree and custom plugins use the same helpers.

Messages
--------
``validate_args(args)`` returns a list of messages, each starting with the field path relative to the
plugin's args (``weight``, ``labels[0]``; empty for the args as a whole). SchedViz prefixes the path of
the args in the configuration, so ``invalid("weight", 0, "must be between 1 and 100")`` is reported as
``profiles[0].pluginConfig[1].args.weight: Invalid value: 0: must be between 1 and 100``, worded like
the errors of in-tree plugins' args.

Args types
----------
A plugin whose args have a Go type (every in-tree plugin with args: kube-scheduler/config/v1
types_pluginargs.go) declares it as ``args_type``; the configuration's args are then decoded strictly
against it (unknown fields and wrong types are errors, ``apiVersion``/``kind`` checked) before
``default_args`` and ``validate_args`` run. A type is a leaf name (``"str"``, ``"bool"``, ``"int32"``,
``"int64"``, ``"float32"``, ``"duration"``, ``"bytes"``, ``"any"``), ``list_of(t)``, ``map_of(t)``
or ``obj("v1.GoTypeName", jsonField=t, ...)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from .apimachinery import ErrorList, format_value, go_quote
from .features import DEFAULT_FEATURES


def child(field: str, name: str) -> str:
    """The path of member ``name`` of ``field`` ("" is the args themselves)."""
    return f"{field}.{name}" if field else name


def index(field: str, i: int | str) -> str:
    return f"{field}[{i}]"


def invalid(field: str, value: Any, detail: str = "") -> str:
    s = f"{field}: Invalid value: {format_value(value)}"
    return f"{s}: {detail}" if detail else s


def required(field: str, detail: str = "") -> str:
    return f"{field}: Required value: {detail}" if detail else f"{field}: Required value"


def duplicate(field: str, value: Any) -> str:
    return f"{field}: Duplicate value: {format_value(value)}"


def forbidden(field: str, detail: str) -> str:
    return f"{field}: Forbidden: {detail}"


def not_supported(field: str, value: Any, supported: Iterable[str]) -> str:
    valid = ", ".join(go_quote(v) for v in supported)
    s = f"{field}: Unsupported value: {format_value(value)}"
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


# --------------------------------------------------------------------------------------------------
# Args types

ArgsType = Any  # a leaf name, ("list", t), ("map", t) or ("obj", go type name, {json field: t})


def obj(go_type: str, **fields: ArgsType) -> tuple[str, str, dict[str, ArgsType]]:
    return ("obj", go_type, fields)


def list_of(item: ArgsType) -> tuple[str, ArgsType]:
    return ("list", item)


def map_of(item: ArgsType) -> tuple[str, ArgsType]:
    return ("map", item)


# kube-scheduler/config/v1 types shared by several plugins' args
RESOURCE_SPEC = obj("v1.ResourceSpec", name="str", weight="int64")
SHAPE_POINT = obj("v1.UtilizationShapePoint", utilization="int32", score="int32")
MAX_CUSTOM_PRIORITY_SCORE = 10  # config.MaxCustomPriorityScore


def default_resources() -> list[dict[str, Any]]:
    """The resources scored when args name none: cpu and memory, weight 1 (v1/defaults.go)."""
    return [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def validate_function_shape(shape: list[dict[str, Any]], path: str, errs: ErrorList) -> None:
    """validation_pluginargs.go validateFunctionShape."""
    if not shape:
        errs.required(path, "at least one point must be specified")
        return
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.invalid(
                f"{path}[{i}].utilization",
                shape[i].get("utilization", 0),
                "values must be sorted in increasing order",
            )
            break
    for i, point in enumerate(shape):
        u, s = point.get("utilization", 0), point.get("score", 0)
        if u < 0 or u > 100:
            errs.invalid(f"{path}[{i}].utilization", u, "not in valid range [0, 100]")
        if s < 0 or s > MAX_CUSTOM_PRIORITY_SCORE:
            errs.invalid(f"{path}[{i}].score", s, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")


def gates(features: Mapping[str, bool] | None) -> Mapping[str, bool]:
    """The feature gates a hook was given (``features``): v1.35's defaults when None."""
    return DEFAULT_FEATURES if features is None else features
