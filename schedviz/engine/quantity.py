"""resource.Quantity handling (k8s.io/apimachinery/pkg/api/resource).

Parsing is the kubernetes client's ``parse_quantity``; this module only converts to the integer
units the scheduler works in: CPU in milli-units (MilliValue, rounded up) and everything else in
whole units (Value, rounded up).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from .errors import InputError


def _client_parse_quantity() -> Callable[[object], Any]:
    """The kubernetes client's ``parse_quantity``. Its module needs only ``decimal``, but importing
    it through its package imports the whole client first (about half a second of every command's
    start); it is read from its file alone unless the client is already imported."""
    if "kubernetes" not in sys.modules:
        package = importlib.util.find_spec("kubernetes")  # found, not imported
        if package is not None and package.submodule_search_locations:
            path = Path(next(iter(package.submodule_search_locations))) / "utils" / "quantity.py"
            spec = importlib.util.spec_from_file_location("schedviz.engine._client_quantity", path)
            if spec is not None and spec.loader is not None and path.is_file():
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                parse: Callable[[object], Any] = module.parse_quantity
                return parse
    from kubernetes.utils.quantity import parse_quantity

    return parse_quantity


parse_quantity = _client_parse_quantity()

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
INT64_MAX = 2**63 - 1


def parse(value: object, *, obj: str = "", field: str = "") -> Decimal:
    """Parse a Quantity (string or number) into an exact Decimal."""
    if isinstance(value, bool) or value is None:
        raise InputError(f"invalid quantity {value!r}: expected a string or a number", obj=obj, field=field)
    try:
        q = parse_quantity(value)
    except (ValueError, TypeError, ArithmeticError) as exc:
        raise InputError(f"invalid quantity {value!r}: {exc}", obj=obj, field=field) from None
    if not isinstance(q, Decimal) or not q.is_finite():
        raise InputError(f"invalid quantity {value!r}", obj=obj, field=field)
    if q.copy_abs() > INT64_MAX:  # copy_abs: no context, so no Overflow for 1e9999999999
        # kube-scheduler reads quantities as 64-bit integers; beyond that its arithmetic wraps around
        raise InputError(f"invalid quantity {value!r}: larger than {INT64_MAX}", obj=obj, field=field)
    return q


def to_int(resource: str, value: object, *, obj: str = "", field: str = "") -> int:
    """A quantity in the scheduler's unit for ``resource``: milli-CPU for cpu, whole units otherwise."""
    q = parse(value, obj=obj, field=field)
    n = math.ceil(q * 1000) if resource == CPU else math.ceil(q)
    if abs(n) > INT64_MAX:
        unit = "milli-CPU" if resource == CPU else "units"
        raise InputError(f"invalid quantity {value!r}: larger than {INT64_MAX} {unit}", obj=obj, field=field)
    return n


def format_milli_cpu(milli: int) -> str:
    if milli % 1000 == 0:
        return str(milli // 1000)
    return f"{milli}m"
