"""Evaluation charged with cel-go's runtime cost (interpreter/runtimecost.go with Kubernetes'
options): the lowered expression compiled into Python closures, each step charging what cel-go
charges; values SchedViz copies are bounded (MATERIALIZED_MAX).
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable
from typing import Any

import celpy
from celpy import celtypes as ct
from celpy.evaluation import CELEvalError

from .cost import _LIST_FUNCTIONS, _ORDERING_OVERLOADS
from .library import _FUNCTIONS, _error, _invoke
from .limits import (
    _LIST_CREATE_BASE_COST,
    _MAP_CREATE_BASE_COST,
    _REGEX_STRING_LENGTH_COST_FACTOR,
    _STRING_TRAVERSAL_COST_FACTOR,
    CostTracker,
    _CostLimit,
)
from .parse import _Call, _Comp, _Expr, _Ident, _List, _Lit, _Map, _Select
from .types import _CONVERSION_TYPES
from .values import _SETS, INT64_MAX, INT64_MIN, Quantity, Semver

# ----- evaluation with cel-go's runtime cost -------------------------------------------------------------
#
# The lowered expression is compiled into Python closures. Each step charges what cel-go's cost
# tracker (interpreter/runtimecost.go, with Kubernetes' CostEstimator.CallCost and ext/sets.go's
# trackers) charges for it: 1 per variable, field selection and index, 0 for constants, 10 for a list
# and 30 for a map built at runtime (literals of constants are built once, as cel-go's OptOptimize
# does), and per call the function's cost from its arguments' sizes. Calls are charged before they
# run, so no string is built whose cost is already over the budget.

_Fn = Callable[[CostTracker], Any]
_TABLE: collections.ChainMap[str, Any] = collections.ChainMap(_FUNCTIONS, celpy.evaluation.base_functions)
_RUNTIME_NAMES = {"@in": "_in_", "sets.contains": "contains", "sets.intersects": "intersects"}
_RUNTIME_NAMES["sets.equivalent"] = "equivalent"
_TRUE = ct.BoolType(True)
_FALSE = ct.BoolType(False)
_NO_OVERLOAD = CELEvalError("no such overload", TypeError, ())
# cel-go overloads.IsTypeConversionFunction: with a constant argument, OptOptimize folds the call.
_CONVERSIONS = frozenset(_CONVERSION_TYPES)
_STR_OVERHEAD, _LIST_OVERHEAD, _MAP_OVERHEAD, _MAP_ENTRY = 49, 56, 64, 100


class _Lazy:
    """cel.bind's value before its first use (cel-go evaluates the init lazily)."""

    __slots__ = ("f",)

    def __init__(self, f: _Fn) -> None:
        self.f = f


def _int_fast_path(op: Callable[[int, int], int], name: str) -> Callable[[Any, Any], Any]:
    """celpy's arithmetic, with int64 operands computed directly (celpy's IntType operators rebuild
    their range-check wrapper on every call); out of range, celpy raises its overflow error."""
    fallback = celpy.evaluation.base_functions[name]

    def run(a: Any, b: Any) -> Any:
        if type(a) is ct.IntType and type(b) is ct.IntType:
            r = op(a, b)
            if INT64_MIN <= r <= INT64_MAX:
                return int.__new__(ct.IntType, r)
        return fallback(a, b)

    return run


_FAST_FUNCTIONS: dict[str, Callable[[Any, Any], Any]] = {
    "_+_": _int_fast_path(int.__add__, "_+_"),
    "_-_": _int_fast_path(int.__sub__, "_-_"),
    "_*_": _int_fast_path(int.__mul__, "_*_"),
}


def _size_of(v: Any) -> int:
    """interpreter actualSize: the size of strings, bytes, lists and maps, 1 for anything else."""
    return len(v) if isinstance(v, (str, bytes, list, dict)) else 1


def _ceil_traversal(n: int) -> int:
    return math.ceil(float(n) * _STRING_TRAVERSAL_COST_FACTOR)


def _traversal(v: Any) -> int:
    """library traversalCost."""
    if isinstance(v, (str, bytes)):
        return int(float(len(v)) * _STRING_TRAVERSAL_COST_FACTOR)
    if isinstance(v, list):
        return sum(_traversal(x) for x in v)
    if isinstance(v, dict):
        return sum(_traversal(k) + _traversal(x) for k, x in v.items())
    return 1


def _regex_cost(text: Any, pattern: Any) -> int:
    return math.ceil((1.0 + float(_size_of(text))) * _STRING_TRAVERSAL_COST_FACTOR) * math.ceil(
        float(_size_of(pattern)) * _REGEX_STRING_LENGTH_COST_FACTOR
    )


def _ordering_cost(v: list[Any]) -> int:
    return _ceil_traversal(min(_size_of(v[0]), _size_of(v[1])))


def _equality_cost(v: list[Any]) -> int:
    return _ceil_traversal(min(_size_of(v[0]), _size_of(v[1])))


def _add_cost(v: list[Any]) -> int:
    return _ceil_traversal(_size_of(v[0]) + _size_of(v[1]))


def _sets_cost(factor: float) -> Callable[[list[Any]], int]:
    def cost(v: list[Any]) -> int:
        return 1 + int(float(_size_of(v[1]) * _size_of(v[2])) * factor)

    return cost


def _twice_traversal(v: list[Any]) -> int:
    return math.ceil(float(_size_of(v[0])) * 2 * _STRING_TRAVERSAL_COST_FACTOR)


def _join_cost(v: list[Any]) -> int:
    length = _join_length(v)
    # An error result (not a list of strings) has the size 1.
    return 1 if length < 0 else math.ceil(float(length) * 2 * _STRING_TRAVERSAL_COST_FACTOR)


# The runtime cost of a call from its arguments (the target first). By function name: Kubernetes'
# CostEstimator.CallCost (library/cost.go), consulted first...
_NAME_COSTS: dict[str, Callable[[list[Any]], int]] = {
    "_==_": lambda v: 1 if isinstance(v[0], (Quantity, Semver)) else _equality_cost(v),
    **dict.fromkeys(_LIST_FUNCTIONS, lambda v: _traversal(v[0])),
    **dict.fromkeys(
        ["lowerAscii", "upperAscii", "substring", "trim"], lambda v: _ceil_traversal(_size_of(v[0]))
    ),
    "replace": _twice_traversal,
    "split": _twice_traversal,
    "join": _join_cost,
    "find": lambda v: _regex_cost(v[0], v[1]) if len(v) >= 2 else 1,
    "findAll": lambda v: _regex_cost(v[0], v[1]) if len(v) >= 2 else 1,
    **dict.fromkeys(
        ["quantity", "isQuantity", "semver", "isSemver"],
        lambda v: _ceil_traversal(_size_of(v[0])) if v else 1,
    ),
}
# ... then by the overload the checker resolved (only when it resolved exactly one: with several, cel-go
# dispatches at runtime under an empty overload id, which costs 1): interpreter/runtimecost.go costCall
# and ext/sets.go's trackers. Anything else costs 1.
_OVERLOAD_COSTS: dict[str, Callable[[list[Any]], int]] = {
    "equals": _equality_cost,
    "not_equals": _equality_cost,
    **dict.fromkeys(_ORDERING_OVERLOADS - {"equals", "not_equals"}, _ordering_cost),
    "add_string": _add_cost,
    "add_bytes": _add_cost,
    "in_list": lambda v: _size_of(v[1]),
    "starts_with_string": lambda v: _ceil_traversal(_size_of(v[0])),
    "ends_with_string": lambda v: _ceil_traversal(_size_of(v[0])),
    "string_to_bytes": lambda v: _ceil_traversal(_size_of(v[0])),
    "bytes_to_string": lambda v: _ceil_traversal(_size_of(v[0])),
    "matches_string": lambda v: _regex_cost(v[0], v[1]),
    "contains_string": lambda v: _ceil_traversal(_size_of(v[0])) * _ceil_traversal(_size_of(v[1])),
    "list_sets_contains_list": _sets_cost(1.0),
    "list_sets_intersects_list": _sets_cost(1.0),
    "list_sets_equivalent_list": _sets_cost(2.0),
}


def _call_cost(e: _Call) -> Callable[[list[Any]], int] | None:
    """How a call is charged at runtime; None: 1."""
    if e.fn in _NAME_COSTS:
        return _NAME_COSTS[e.fn]
    if e.fn == "_!=_":
        return _equality_cost
    return _OVERLOAD_COSTS.get(e.overloads[0]) if len(e.overloads) == 1 else None


def _units(v: Any) -> int:
    """About how many bytes a new value takes (what MATERIALIZED_MAX counts)."""
    if isinstance(v, (str, bytes)):
        return _STR_OVERHEAD + len(v)
    if isinstance(v, list):
        return _LIST_OVERHEAD + 8 * len(v) + sum(_units(x) for x in v if isinstance(x, (str, bytes)))
    if isinstance(v, dict):
        return _MAP_OVERHEAD + _MAP_ENTRY * len(v)
    return 0


def _replace_length(v: list[Any]) -> int:
    """The length of text.replace(old, new[, n]) before building it."""
    text, old, new = v[0], v[1], v[2]
    if not (isinstance(text, str) and isinstance(old, str) and isinstance(new, str)):
        return 0
    count = text.count(old) if old else len(text) + 1
    if len(v) > 3 and isinstance(v[3], int) and v[3] >= 0:
        count = min(count, int(v[3]))
    return len(text) + count * (len(new) - len(old))


def _join_length(v: list[Any]) -> int:
    """The length of list.join(sep) before building it; -1 when it is an error."""
    items, sep = v[0], (v[1] if len(v) > 1 else "")
    if not isinstance(items, list) or not isinstance(sep, str) or not all(isinstance(x, str) for x in items):
        return -1
    return sum(len(x) for x in items) + len(sep) * max(len(items) - 1, 0)


def _add_units(v: list[Any]) -> int:
    a, b = v[0], v[1]
    if isinstance(a, list) and isinstance(b, list):
        return _LIST_OVERHEAD + 8 * (len(a) + len(b))
    if (isinstance(a, str) and isinstance(b, str)) or (isinstance(a, bytes) and isinstance(b, bytes)):
        return _STR_OVERHEAD + len(a) + len(b)
    return 0


# Values built by a call, counted before the call (their size follows from the arguments)...
_UNITS_BEFORE: dict[str, Callable[[list[Any]], int]] = {
    "_+_": _add_units,
    "replace": lambda v: _STR_OVERHEAD + _replace_length(v),
    "join": lambda v: _STR_OVERHEAD + max(_join_length(v), 0),
}
# ... and after it (no bigger than their arguments).
_UNITS_AFTER = frozenset(
    {"split", "findAll", "find", "lowerAscii", "upperAscii", "trim", "substring", "string"}
)
_UNITS_AFTER |= {"bytes", "charAt"}

_GO_TYPES = {
    ct.BoolType: "types.Bool",
    ct.IntType: "types.Int",
    ct.UintType: "types.Uint",
    ct.DoubleType: "types.Double",
    ct.StringType: "types.String",
    ct.BytesType: "types.Bytes",
    ct.DurationType: "types.Duration",
    ct.TimestampType: "types.Timestamp",
    Quantity: "cel.Quantity",
    Semver: "cel.Semver",
}


def _range_items(v: Any) -> Any:
    """A comprehension's range: list items, map keys, or cel-go's error for anything else."""
    if isinstance(v, CELEvalError):
        return v
    if isinstance(v, list):
        return v
    if isinstance(v, dict):
        return list(v)
    name = "types.Null" if v is None else _GO_TYPES.get(type(v), type(v).__name__)
    return _error(f"got '{name}', expected iterable type")


def _select_field(m: Any, name: str) -> Any:
    """Field selection as celpy's Evaluator.member_dot does it (a map's key)."""
    if isinstance(m, ct.MessageType):
        return m.get(name)
    if isinstance(m, ct.MapType):
        try:
            return m[name]
        except KeyError:
            return CELEvalError(f"no such member in mapping: {name!r}", KeyError, None)
    return CELEvalError(f"{m!r} with type: '{type(m)}' does not support field selection", TypeError, None)


def _build_map(pairs: list[tuple[Any, Any]]) -> Any:
    """celpy's Evaluator.mapinits (a duplicate key is an error), the first error element winning."""
    for k, v in pairs:
        for x in (k, v):
            if isinstance(x, CELEvalError):
                return x
    result = ct.MapType()
    try:
        for k, v in pairs:
            if k in result:
                raise ValueError(f"Duplicate key {k!r}")
            result[k] = v
    except ValueError as ex:
        return CELEvalError(ex.args[0], ValueError, ex.args)
    except TypeError as ex:
        return CELEvalError(ex.args[0] if ex.args else "no such overload", TypeError, ex.args)
    return result


def _is_false(v: Any) -> bool:
    return isinstance(v, ct.BoolType) and not v


def _is_true(v: Any) -> bool:
    return isinstance(v, ct.BoolType) and bool(v)


class _Gen:
    """Compiles a lowered, type-checked expression into closures over a CostTracker (which carries the
    variables and the frame of comprehension and cel.bind variables: one slot per comprehension)."""

    def __init__(self) -> None:
        self.slots = 0
        self.consts: dict[int, Any] = {}

    def const(self, e: _Expr, value: Any) -> _Fn:
        self.consts[id(e)] = value
        return lambda s: value

    def gen(self, e: _Expr, scope: dict[str, tuple[int, bool]]) -> _Fn:
        if isinstance(e, _Lit):
            return self.const(e, e.value)
        if isinstance(e, _Ident):
            return self._ident(e.name, scope)
        if isinstance(e, _Select):
            return self._select(e, scope)
        if isinstance(e, _List):
            return self._list(e, scope)
        if isinstance(e, _Map):
            return self._map(e, scope)
        if isinstance(e, _Comp):
            return self._comprehension(e, scope)
        assert isinstance(e, _Call)
        return self._call(e, scope)

    @staticmethod
    def _ident(name: str, scope: dict[str, tuple[int, bool]]) -> _Fn:
        if name in scope:
            slot, lazy = scope[name]
            if lazy:

                def bound(s: CostTracker) -> Any:
                    v = s.frame[slot]
                    if type(v) is _Lazy:
                        v = s.frame[slot] = v.f(s)
                    s.charge(1)
                    return v

                return bound

            def local(s: CostTracker) -> Any:
                s.cost += 1
                if s.cost > s.limit:
                    raise _CostLimit()
                return s.frame[slot]

            return local
        missing = CELEvalError(f"undeclared reference to '{name}'", KeyError, (name,))

        def variable(s: CostTracker) -> Any:
            s.charge(1)
            return s.vars.get(name, missing)

        return variable

    def _select(self, e: _Select, scope: dict[str, tuple[int, bool]]) -> _Fn:
        operand = self.gen(e.operand, scope)
        name = e.field
        if e.test_only:

            def has(s: CostTracker) -> Any:
                m = operand(s)
                if isinstance(m, CELEvalError):
                    return _FALSE
                return ct.BoolType(not isinstance(_select_field(m, name), CELEvalError))

            return has

        def select(s: CostTracker) -> Any:
            m = operand(s)
            if isinstance(m, CELEvalError):
                return m
            s.charge(1)
            return _select_field(m, name)

        return select

    def _list(self, e: _List, scope: dict[str, tuple[int, bool]]) -> _Fn:
        items = [self.gen(x, scope) for x in e.elems]
        if all(id(x) in self.consts for x in e.elems):
            values = [self.consts[id(x)] for x in e.elems]
            errors = [x for x in values if isinstance(x, CELEvalError)]
            return self.const(e, errors[0] if errors else ct.ListType(values))
        units = _LIST_OVERHEAD + 8 * len(items)

        def make_list(s: CostTracker) -> Any:
            out = []
            for item in items:
                v = item(s)
                if isinstance(v, CELEvalError):
                    s.charge(_LIST_CREATE_BASE_COST)
                    return v
                out.append(v)
            s.charge(_LIST_CREATE_BASE_COST)
            s.materialize(units)
            return ct.ListType(out)

        return make_list

    def _map(self, e: _Map, scope: dict[str, tuple[int, bool]]) -> _Fn:
        pairs = [(self.gen(k, scope), self.gen(v, scope)) for k, v in e.entries]
        if all(id(k) in self.consts and id(v) in self.consts for k, v in e.entries):
            return self.const(e, _build_map([(self.consts[id(k)], self.consts[id(v)]) for k, v in e.entries]))
        units = _MAP_OVERHEAD + _MAP_ENTRY * len(pairs)

        def make_map(s: CostTracker) -> Any:
            values = [(k(s), v(s)) for k, v in pairs]
            s.charge(_MAP_CREATE_BASE_COST)
            s.materialize(units)
            return _build_map(values)

        return make_map

    def _comprehension(self, e: _Comp, scope: dict[str, tuple[int, bool]]) -> _Fn:
        slot = self.slots
        self.slots += 1
        if e.macro == "bind":
            init = self.gen(e.accu_init, scope)
            body = self.gen(e.result, {**scope, e.accu_var: (slot, True)})

            def bind(s: CostTracker) -> Any:
                # The range is an empty constant list: only the body runs, the init when first used.
                s.frame[slot] = _Lazy(init)
                return body(s)

            return bind
        rng = self.gen(e.iter_range, scope)
        pred = self.gen(e.body, {**scope, e.iter_var: (slot, False)})
        build = {
            "all": _fold_all,
            "exists": _fold_exists,
            "exists_one": _fold_exists_one,
            "map": _fold_map,
            "filter": _fold_filter,
        }
        return build[e.macro](rng, pred, slot, id(e.body) in self.consts)

    def _call(self, e: _Call, scope: dict[str, tuple[int, bool]]) -> _Fn:
        fn = e.fn
        args = [self.gen(a, scope) for a in e.args]
        if fn in ("_&&_", "_||_"):
            return _logical(fn == "_&&_", args[0], args[1])
        if fn == "_?_:_":
            return _conditional(args[0], args[1], args[2])
        if fn == "!_":
            return _not(args[0])
        name = _RUNTIME_NAMES.get(fn, fn)
        func = _FAST_FUNCTIONS.get(name) or _TABLE.get(name)
        if e.target is None and len(e.args) == 1 and fn in _CONVERSIONS and id(e.args[0]) in self.consts:
            arg = self.consts[id(e.args[0])]
            if fn == "dyn" or isinstance(arg, CELEvalError):
                return self.const(e, arg)
            if func is not None:
                return self.const(e, _invoke(func, [arg]))
        if fn == "dyn":
            only = args[0]

            def dyn(s: CostTracker) -> Any:
                v = only(s)
                s.charge(1)
                return v

            return dyn
        if func is None:
            undeclared = CELEvalError(f"undeclared reference to '{name}'", KeyError, (name,))
            return lambda s: undeclared
        getters = list(args)
        if e.target is not None:
            getters.insert(0, self.gen(e.target, scope))
        if fn.startswith("sets."):
            getters.insert(0, lambda s: _SETS)
        if fn == "_[_]":
            return _index(func, getters[0], getters[1])
        before = _UNITS_BEFORE.get(fn)
        if fn == "_+_" and e.overloads == ("add_other",):
            before = None  # numbers, durations, timestamps: nothing is built
        return _generic_call(fn, func, getters, _call_cost(e), before)


def _generic_call(
    fn: str,
    func: Callable[..., Any],
    getters: list[_Fn],
    cost: Callable[[list[Any]], int] | None,
    before: Callable[[list[Any]], int] | None,
) -> _Fn:
    after = fn in _UNITS_AFTER
    if cost is None and before is None and not after and len(getters) == 2:
        first, second = getters

        def call2(s: CostTracker) -> Any:
            a = first(s)
            b = second(s)
            s.cost += 1
            if s.cost > s.limit:
                raise _CostLimit()
            if isinstance(a, CELEvalError):
                return a
            if isinstance(b, CELEvalError):
                return b
            return _invoke(func, (a, b))

        return call2

    def call(s: CostTracker) -> Any:
        values = [g(s) for g in getters]
        s.charge(cost(values) if cost is not None else 1)
        for v in values:
            if isinstance(v, CELEvalError):
                return v
        if before is not None:
            s.materialize(before(values))
        result = _invoke(func, values)
        if after:
            s.materialize(_units(result))
        return result

    return call


def _index(func: Callable[..., Any], operand: _Fn, key: _Fn) -> _Fn:
    def index(s: CostTracker) -> Any:
        m = operand(s)
        if isinstance(m, CELEvalError):
            return m
        k = key(s)
        s.charge(1)
        if isinstance(k, CELEvalError):
            return k
        return _invoke(func, [m, k])

    return index


def _logical(is_and: bool, left: _Fn, right: _Fn) -> _Fn:
    """cel-go evalAnd / evalOr: short-circuits, else the first error (or no such overload)."""
    stop = _is_false if is_and else _is_true

    def logical(s: CostTracker) -> Any:
        a = left(s)
        if stop(a):
            return a
        b = right(s)
        if stop(b):
            return b
        for v in (a, b):
            if isinstance(v, CELEvalError):
                return v
            if not isinstance(v, ct.BoolType):
                return _NO_OVERLOAD
        return _TRUE if is_and else _FALSE

    return logical


def _conditional(cond: _Fn, yes: _Fn, no: _Fn) -> _Fn:
    def conditional(s: CostTracker) -> Any:
        c = cond(s)
        if isinstance(c, ct.BoolType):
            return yes(s) if c else no(s)
        return c if isinstance(c, CELEvalError) else _NO_OVERLOAD

    return conditional


def _not(arg: _Fn) -> _Fn:
    def negate(s: CostTracker) -> Any:
        v = arg(s)
        s.charge(1)
        if isinstance(v, ct.BoolType):
            return ct.BoolType(not v)
        return v if isinstance(v, CELEvalError) else _NO_OVERLOAD

    return negate


def _fold_all(rng: _Fn, pred: _Fn, slot: int, _const: bool) -> _Fn:
    """all(): per element @not_strictly_false(@result) (2) and @result && pred (1 + pred), the result
    (1); stops once the result is false."""

    def all_(s: CostTracker) -> Any:
        items = _range_items(rng(s))
        if isinstance(items, CELEvalError):
            return items
        frame = s.frame
        accu: Any = _TRUE
        for x in items:
            s.charge(2)
            if _is_false(accu):
                break
            frame[slot] = x
            v = pred(s)
            s.charge(1)
            if _is_false(v):
                accu = _FALSE
            elif not isinstance(accu, CELEvalError):
                accu = v if isinstance(v, (CELEvalError, ct.BoolType)) else _NO_OVERLOAD
        s.charge(1)
        return accu

    return all_


def _fold_exists(rng: _Fn, pred: _Fn, slot: int, _const: bool) -> _Fn:
    """exists(): per element @not_strictly_false(!@result) (3) and @result || pred (1 + pred)."""

    def exists(s: CostTracker) -> Any:
        items = _range_items(rng(s))
        if isinstance(items, CELEvalError):
            return items
        frame = s.frame
        accu: Any = _FALSE
        for x in items:
            s.charge(3)
            if _is_true(accu):
                break
            frame[slot] = x
            v = pred(s)
            s.charge(1)
            if _is_true(v):
                accu = _TRUE
            elif not isinstance(accu, CELEvalError):
                accu = v if isinstance(v, (CELEvalError, ct.BoolType)) else _NO_OVERLOAD
        s.charge(1)
        return accu

    return exists


def _fold_exists_one(rng: _Fn, pred: _Fn, slot: int, _const: bool) -> _Fn:
    """exists_one(): per element pred ? @result + 1 (2) : @result (1); the result @result == 1 (2)."""

    def exists_one(s: CostTracker) -> Any:
        items = _range_items(rng(s))
        if isinstance(items, CELEvalError):
            return items
        frame = s.frame
        accu: Any = 0
        for x in items:
            frame[slot] = x
            v = pred(s)
            if isinstance(v, CELEvalError):
                accu = v
            elif not isinstance(v, ct.BoolType):
                accu = _NO_OVERLOAD
            elif v:
                s.charge(2)
                if not isinstance(accu, CELEvalError):
                    accu += 1
            else:
                s.charge(1)
        s.charge(2)
        return accu if isinstance(accu, CELEvalError) else ct.BoolType(accu == 1)

    return exists_one


def _fold_map(rng: _Fn, fn: _Fn, slot: int, const: bool) -> _Fn:
    """map(): per element @result + [fn] (1 + 10 for the list unless fn is a constant + 1 + fn)."""
    step = 2 if const else 2 + _LIST_CREATE_BASE_COST

    def map_(s: CostTracker) -> Any:
        items = _range_items(rng(s))
        if isinstance(items, CELEvalError):
            return items
        frame = s.frame
        out: list[Any] = []
        error = None
        for x in items:
            frame[slot] = x
            v = fn(s)
            s.charge(step)
            if error is None:
                if isinstance(v, CELEvalError):
                    error = v
                else:
                    s.materialize(8)
                    out.append(v)
        s.charge(1)
        if error is not None:
            return error
        s.materialize(_LIST_OVERHEAD)
        return ct.ListType(out)

    return map_


def _fold_filter(rng: _Fn, pred: _Fn, slot: int, _const: bool) -> _Fn:
    """filter(): per element pred ? @result + [x] (1 + 1 + 10 + 1) : @result (1)."""

    def filter_(s: CostTracker) -> Any:
        items = _range_items(rng(s))
        if isinstance(items, CELEvalError):
            return items
        frame = s.frame
        out: list[Any] = []
        error: Any = None
        for x in items:
            frame[slot] = x
            v = pred(s)
            if isinstance(v, CELEvalError):
                error = v
            elif not isinstance(v, ct.BoolType):
                error = _NO_OVERLOAD
            elif v:
                s.charge(3 + _LIST_CREATE_BASE_COST)
                if error is None:
                    s.materialize(8)
                    out.append(x)
            else:
                s.charge(1)
        s.charge(1)
        if error is not None:
            return error
        s.materialize(_LIST_OVERHEAD)
        return ct.ListType(out)

    return filter_
