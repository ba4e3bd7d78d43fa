"""Compiled selectors: ``compile_selector`` (checked, lowered, costed, compiled; cached) and the
``Program`` that evaluates one against a device; ``estimate_cost``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import celpy
import lark
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

from .check import _VARIABLES, _check, _static_type
from .cost import _Coster
from .eval import _Fn, _Gen
from .library import _is_bool
from .limits import (
    CEL_SELECTOR_EXPRESSION_MAX_COST,
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    COST_LIMIT_EXCEEDED,
    TOO_COMPLEX,
    TOO_LONG,
    CelRefused,
    CostTracker,
    _CostLimit,
)
from .parse import _Lower
from .types import _typecheck
from .values import CelCompileError, CelError, CelUnsupported, _type_name

# ----- programs ------------------------------------------------------------------------------------

_ENV: celpy.Environment | None = None


def _environment() -> celpy.Environment:
    global _ENV
    if _ENV is None:
        _ENV = celpy.Environment()
    return _ENV


def _runtime_message(exc: CELEvalError) -> str:
    """celpy's error as cel-go words it."""
    args = exc.args
    text = str(args[0]) if args else ""
    kind = args[1] if len(args) > 1 else None
    detail = args[2] if len(args) > 2 else None
    if kind is CelError:
        return text
    if kind is KeyError or text.startswith("no such member") or text == "no such key":
        key = text.split(":", 1)[1].strip().strip("'\"") if text.startswith("no such member") else ""
        if not key and isinstance(detail, tuple) and detail:
            key = str(detail[0])
        return f"no such key: {key}"
    if kind is ZeroDivisionError:
        return (
            "modulus by zero"
            if "modulo by zero" in str(detail) and "division" not in str(detail)
            else "division by zero"
        )
    if kind is ValueError or "overflow" in text:
        return "integer overflow"
    if kind is IndexError:
        return "index out of bounds"
    if "overload" in text or kind in (TypeError, AttributeError):
        return "no such overload"
    return text


class Program:
    """A compiled selector: ``max_cost`` is cel-go's estimate of its worst-case cost (compile.go
    CompilationResult.MaxCost), ``evaluate`` runs it under the runtime cost limit."""

    def __init__(self, expression: str, root: _Fn, slots: int, max_cost: int) -> None:
        self.expression = expression
        self.max_cost = max_cost
        self._root = root
        self._slots = slots

    def evaluate(self, env: Mapping[str, Any], tracker: CostTracker | None = None) -> bool:
        """The selector's verdict for one device; CelError for a runtime error (COST_LIMIT_EXCEEDED once
        the cost passes the tracker's limit, CEL_SELECTOR_EXPRESSION_MAX_COST by default) or a non-bool
        result."""
        t = tracker if tracker is not None else CostTracker()
        t.frame = [None] * self._slots
        t.vars = env
        try:
            v = self._root(t)
        except _CostLimit:
            raise CelError(COST_LIMIT_EXCEEDED) from None
        except RecursionError:
            raise CelError("expression too deeply nested") from None
        finally:
            t.frame = []
        if isinstance(v, CELEvalError):
            raise CelError(_runtime_message(v))
        if not _is_bool(v):
            t_name = _type_name(v)
            # compile.go wraps the value's ConvertToNative error (cel-go's wording per type).
            why = {
                "string": ": unsupported native conversion from string to 'bool'",
                "int": ": unsupported type conversion from 'int' to bool",
                "uint": ": unsupported type conversion from 'uint' to bool",
                "double": ": type conversion error from Double to 'bool'",
            }.get(t_name, "")
            raise CelError(f"CEL result of type {t_name} could not be converted to bool{why}")
        return bool(v)


_CACHE: dict[str, Program | CelCompileError | CelUnsupported] = {}


def compile_selector(expression: str, *, validate: bool = False) -> Program:
    """Compile a device selector; raises CelCompileError or CelUnsupported. The program is what
    kube-scheduler's cache compiles (cel.Cache GetOrCompile: no cost estimate, the runtime limit only).

    ``validate`` adds the limits the API server checks when the selector is stored
    (validation.go validateCELSelector), raising CelRefused: an expression longer than
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH bytes (before compiling it), or one whose estimated cost is over
    CEL_SELECTOR_EXPRESSION_MAX_COST."""
    if validate and len(expression.encode("utf-8", "surrogatepass")) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        raise CelRefused(TOO_LONG)
    hit = _CACHE.get(expression)
    if hit is None:
        try:
            hit = _compile(expression)
        except (CelCompileError, CelUnsupported) as exc:
            hit = exc
        _CACHE[expression] = hit
    if isinstance(hit, Exception):
        raise hit
    if validate and hit.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST:
        raise CelRefused(TOO_COMPLEX)
    return hit


def _compile(expression: str) -> Program:
    if "?." in expression or "[?" in expression:
        raise CelUnsupported("optional field selection")
    env = _environment()
    try:
        tree = env.compile(expression)
    except CELParseError as exc:
        first = str(exc.args[0] if exc.args else exc).strip().splitlines()
        raise CelCompileError("Syntax error: " + " ".join(x.strip() for x in first if x.strip())) from None
    except lark.exceptions.LarkError as exc:
        raise CelCompileError(f"Syntax error: {exc}") from None
    try:
        _check(tree, _VARIABLES)
        result = _static_type(tree)
        if result is not None and result != "bool":
            raise CelCompileError(f"must evaluate to bool or the unknown type, not {result}", stage="")
        expr = _Lower().lower(tree, frozenset())
        _typecheck(expr, {})
        max_cost = _Coster().cost(expr)
        gen = _Gen()
        root = gen.gen(expr, {})
    except RecursionError:
        raise CelCompileError("expression too deeply nested") from None
    return Program(expression, root, gen.slots, max_cost)


def estimate_cost(expression: str) -> int:
    """The worst-case cost cel-go's estimator gives the selector in compile.go's environment (the
    figure validation.go compares with CELSelectorExpressionMaxCost). CelCompileError or CelUnsupported
    when the expression does not compile."""
    return compile_selector(expression, validate=False).max_cost
