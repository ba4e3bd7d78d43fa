"""The CEL function library selectors may call: cel-go's operators where celpy differs, Kubernetes'
quantity, semver, lists, regex and sets libraries and the cel-go string extensions, worded as cel-go
words its runtime errors.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from celpy import celtypes as ct
from celpy.evaluation import CELEvalError

from .. import quantity as qty
from ..errors import InputError
from .values import _SETS, INT64_MAX, INT64_MIN, CelError, Quantity, Semver, parse_semver

# ----- functions -----------------------------------------------------------------------------------


class _NoOverload(Exception):
    pass


def _error(message: str) -> CELEvalError:
    return CELEvalError(message, CelError, (message,))


def _cel_function(f: Callable[..., Any]) -> Callable[..., Any]:
    """A function celpy can call: an error argument is the result, exceptions become error values."""

    @functools.wraps(f)
    def run(*args: Any) -> Any:
        for a in args:
            if isinstance(a, CELEvalError):
                return a
        try:
            return f(*args)
        except _NoOverload:
            return _error("no such overload")
        except CelError as exc:
            return _error(str(exc))

    return run


def _is_bool(v: Any) -> bool:
    return isinstance(v, (bool, ct.BoolType))


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not _is_bool(v)


def _num_cmp(a: Any, b: Any) -> int:
    """Cross-type numeric comparison (exact for int against double)."""
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            raise _NoOverload()
        if isinstance(a, int) and not math.isinf(fb):
            return (Decimal(a) > Decimal(fb)) - (Decimal(a) < Decimal(fb))
        if isinstance(b, int) and not math.isinf(fa):
            return (Decimal(fa) > Decimal(b)) - (Decimal(fa) < Decimal(b))
        return (fa > fb) - (fa < fb)
    return (int(a) > int(b)) - (int(a) < int(b))


def _equal(a: Any, b: Any) -> bool:
    """cel-go's heterogeneous equality: values of unrelated types are unequal, numbers compare by value."""
    if _is_bool(a) or _is_bool(b):
        return _is_bool(a) and _is_bool(b) and bool(a) == bool(b)
    if _is_num(a) and _is_num(b):
        try:
            return _num_cmp(a, b) == 0
        except _NoOverload:
            return False
    if isinstance(a, str) and isinstance(b, str):
        return str(a) == str(b)
    if isinstance(a, bytes) and isinstance(b, bytes):
        return bytes(a) == bytes(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        for k, v in a.items():
            match = [bk for bk in b if _equal(k, bk)]
            if not match or not _equal(v, b[match[0]]):
                return False
        return True
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return a.cmp(b) == 0
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.cmp(b) == 0
    if a is None or b is None or isinstance(a, ct.NullType) or isinstance(b, ct.NullType):
        return (a is None or isinstance(a, ct.NullType)) and (b is None or isinstance(b, ct.NullType))
    if type(a) is not type(b):
        return False
    return bool(a == b)


def _compare(a: Any, b: Any) -> int:
    if _is_bool(a) and _is_bool(b):
        return (bool(a) > bool(b)) - (bool(a) < bool(b))
    if _is_num(a) and _is_num(b):
        return _num_cmp(a, b)
    if isinstance(a, str) and isinstance(b, str):
        return (str(a) > str(b)) - (str(a) < str(b))
    if isinstance(a, bytes) and isinstance(b, bytes):
        return (bytes(a) > bytes(b)) - (bytes(a) < bytes(b))
    if (isinstance(a, ct.DurationType) and isinstance(b, ct.DurationType)) or (
        isinstance(a, ct.TimestampType) and isinstance(b, ct.TimestampType)
    ):
        x: Any = a
        return int((x > b) - (x < b))
    raise _NoOverload()


def _relation(test: Callable[[int], bool]) -> Callable[..., Any]:
    return _cel_function(lambda a, b: ct.BoolType(test(_compare(a, b))))


def _in(item: Any, container: Any) -> Any:
    if isinstance(container, list):
        return ct.BoolType(any(_equal(item, x) for x in container))
    if isinstance(container, dict):
        return ct.BoolType(any(_equal(item, k) for k in container))
    raise _NoOverload()


# quantity ------------------------------------------------------------------------------------------

# resource.ErrFormatWrong
_QUANTITY_FORMAT = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


def _parse_quantity(v: Any) -> Quantity:
    if not isinstance(v, str):
        raise _NoOverload()
    try:
        return Quantity(qty.parse(str(v)))
    except InputError:
        raise CelError(_QUANTITY_FORMAT) from None


def _is_quantity(v: Any) -> Any:
    try:
        _parse_quantity(v)
    except CelError:
        return ct.BoolType(False)
    return ct.BoolType(True)


def _check_int(v: int) -> Any:
    if v < INT64_MIN or v > INT64_MAX:
        raise CelError("integer overflow")
    return ct.IntType(v)


def _quantity_arg(v: Any) -> Quantity:
    if isinstance(v, Quantity):
        return v
    if isinstance(v, int) and not _is_bool(v) and not isinstance(v, ct.UintType):
        return Quantity(Decimal(int(v)))
    raise _NoOverload()


# semver --------------------------------------------------------------------------------------------


def _parse_semver(v: Any, normalize: Any = False) -> Semver:
    if not isinstance(v, str) or not _is_bool(normalize):
        raise _NoOverload()
    s = parse_semver(str(v), bool(normalize))
    if s is None:
        raise CelError(f"could not parse {str(v)!r} as a semantic version")
    return s


def _is_semver(v: Any, normalize: Any = False) -> Any:
    if not isinstance(v, str) or not _is_bool(normalize):
        raise _NoOverload()
    return ct.BoolType(parse_semver(str(v), bool(normalize)) is not None)


# methods shared by several receiver types ----------------------------------------------------------


def _compare_to(a: Any, b: Any) -> Any:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return ct.IntType(a.cmp(b))
    if isinstance(a, Semver) and isinstance(b, Semver):
        return ct.IntType(a.cmp(b))
    raise _NoOverload()


def _index_of(target: Any, item: Any, offset: Any = None) -> Any:
    if isinstance(target, str):
        if not isinstance(item, str):
            raise _NoOverload()
        start = _offset(target, offset)
        return ct.IntType(str(target).find(str(item), start))
    if isinstance(target, list) and offset is None:
        for i, x in enumerate(target):
            if _equal(x, item):
                return ct.IntType(i)
        return ct.IntType(-1)
    raise _NoOverload()


def _last_index_of(target: Any, item: Any, offset: Any = None) -> Any:
    if isinstance(target, str):
        if not isinstance(item, str):
            raise _NoOverload()
        text = str(target)
        if offset is None:
            return ct.IntType(text.rfind(str(item)))
        end = _offset(text, offset)
        return ct.IntType(text.rfind(str(item), 0, end + len(item)))
    if isinstance(target, list) and offset is None:
        for i in range(len(target) - 1, -1, -1):
            if _equal(target[i], item):
                return ct.IntType(i)
        return ct.IntType(-1)
    raise _NoOverload()


def _offset(text: str, offset: Any) -> int:
    if offset is None:
        return 0
    if not isinstance(offset, int) or _is_bool(offset):
        raise _NoOverload()
    if offset < 0 or offset > len(text):
        raise CelError(f"index out of range: {int(offset)}")
    return int(offset)


def _contains(target: Any, *args: Any) -> Any:
    if target is _SETS and len(args) == 2:
        a, b = args
        if not isinstance(a, list) or not isinstance(b, list):
            raise _NoOverload()
        return ct.BoolType(all(any(_equal(x, y) for y in a) for x in b))
    if isinstance(target, str) and len(args) == 1 and isinstance(args[0], str):
        return ct.BoolType(str(args[0]) in str(target))
    raise _NoOverload()


def _sets_equivalent(target: Any, a: Any, b: Any) -> Any:
    if target is not _SETS or not isinstance(a, list) or not isinstance(b, list):
        raise _NoOverload()
    return ct.BoolType(
        all(any(_equal(x, y) for y in b) for x in a) and all(any(_equal(x, y) for y in a) for x in b)
    )


def _sets_intersects(target: Any, a: Any, b: Any) -> Any:
    if target is not _SETS or not isinstance(a, list) or not isinstance(b, list):
        raise _NoOverload()
    return ct.BoolType(any(_equal(x, y) for x in a for y in b))


def _str_method(f: Callable[..., Any]) -> Callable[..., Any]:
    def run(target: Any, *args: Any) -> Any:
        if not isinstance(target, str):
            raise _NoOverload()
        return f(str(target), *args)

    return run


def _char_at(text: str, i: Any) -> Any:
    if not isinstance(i, int) or _is_bool(i):
        raise _NoOverload()
    if i < 0 or i > len(text):
        raise CelError(f"index out of range: {int(i)}")
    return ct.StringType(text[i : i + 1])


def _ascii_case(upper: bool) -> Callable[[str], Any]:
    def run(text: str) -> Any:
        return ct.StringType("".join((c.upper() if upper else c.lower()) if c.isascii() else c for c in text))

    return run


def _replace(text: str, old: Any, new: Any, n: Any = -1) -> Any:
    if not isinstance(old, str) or not isinstance(new, str) or not isinstance(n, int) or _is_bool(n):
        raise _NoOverload()
    return ct.StringType(text.replace(str(old), str(new), int(n) if n >= 0 else -1))


def _split(text: str, sep: Any, n: Any = -1) -> Any:
    if not isinstance(sep, str) or not isinstance(n, int) or _is_bool(n):
        raise _NoOverload()
    if n == 0:
        return ct.ListType([])
    if sep == "":
        parts = list(text)
        if n > 0 and len(parts) > n:
            parts = [*parts[: n - 1], "".join(parts[n - 1 :])]
    else:
        parts = text.split(str(sep), int(n) - 1 if n > 0 else -1)
    return ct.ListType([ct.StringType(p) for p in parts])


def _substring(text: str, start: Any, end: Any = None) -> Any:
    for v in (start, end):
        if v is not None and (not isinstance(v, int) or _is_bool(v)):
            raise _NoOverload()
    stop = len(text) if end is None else int(end)
    if start < 0 or start > len(text):
        raise CelError(f"index out of range: {int(start)}")
    if stop < 0 or stop > len(text):
        raise CelError(f"index out of range: {stop}")
    if start > stop:
        raise CelError(f"invalid substring range. start: {int(start)}, end: {stop}")
    return ct.StringType(text[int(start) : stop])


def _join(target: Any, sep: Any = "") -> Any:
    if not isinstance(target, list) or not isinstance(sep, str):
        raise _NoOverload()
    if not all(isinstance(x, str) for x in target):
        raise _NoOverload()
    return ct.StringType(str(sep).join(str(x) for x in target))


def _find(target: Any, pattern: Any) -> Any:
    if not isinstance(target, str) or not isinstance(pattern, str):
        raise _NoOverload()
    m = _regex(str(pattern)).search(str(target))
    return ct.StringType(m.group(0) if m else "")


def _find_all(target: Any, pattern: Any, n: Any = -1) -> Any:
    if not isinstance(target, str) or not isinstance(pattern, str) or not isinstance(n, int) or _is_bool(n):
        raise _NoOverload()
    found = [m.group(0) for m in _regex(str(pattern)).finditer(str(target))]
    if n >= 0:
        found = found[: int(n)]
    return ct.ListType([ct.StringType(x) for x in found])


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> Any:
    import re2  # google-re2, a celpy dependency: RE2 syntax, as cel-go uses

    try:
        return re2.compile(pattern)
    except re2.error as exc:
        raise CelError(f"error parsing regexp: {exc}") from None


def _list_of_comparable(target: Any) -> list[Any]:
    if not isinstance(target, list):
        raise _NoOverload()
    return list(target)


def _is_sorted(target: Any) -> Any:
    items = _list_of_comparable(target)
    return ct.BoolType(all(_compare(items[i], items[i + 1]) <= 0 for i in range(len(items) - 1)))


def _sum(target: Any) -> Any:
    items = _list_of_comparable(target)
    if not items:
        return ct.IntType(0)
    total = items[0]
    for x in items[1:]:
        if type(x) is not type(total) or not _is_num(x):
            raise _NoOverload()
        total = total + x
    if isinstance(total, int) and not isinstance(total, ct.UintType):
        return _check_int(int(total))
    return total


def _max(target: Any, *more: Any) -> Any:
    items = _list_of_comparable(target) if not more else [target, *more]
    if not items:
        raise CelError("max called on empty list")
    best = items[0]
    for x in items[1:]:
        if _compare(x, best) > 0:
            best = x
    return best


def _min(target: Any) -> Any:
    items = _list_of_comparable(target)
    if not items:
        raise CelError("min called on empty list")
    best = items[0]
    for x in items[1:]:
        if _compare(x, best) < 0:
            best = x
    return best


def _quantity_method(name: str) -> Callable[..., Any]:
    def run(target: Any, *args: Any) -> Any:
        if not isinstance(target, Quantity):
            raise _NoOverload()
        v = target.value
        if name == "sign" and not args:
            return ct.IntType((v > 0) - (v < 0))
        if name == "isInteger" and not args:
            return ct.BoolType(v == v.to_integral_value() and INT64_MIN <= v <= INT64_MAX)
        if name == "asInteger" and not args:
            if v != v.to_integral_value() or not INT64_MIN <= v <= INT64_MAX:
                raise CelError("cannot convert value to integer")
            return ct.IntType(int(v))
        if name == "asApproximateFloat" and not args:
            return ct.DoubleType(float(v))
        if name in ("add", "sub") and len(args) == 1:
            other = _quantity_arg(args[0])
            return Quantity(v + other.value if name == "add" else v - other.value)
        raise _NoOverload()

    return run


def _semver_part(name: str) -> Callable[..., Any]:
    def run(target: Any) -> Any:
        if not isinstance(target, Semver):
            raise _NoOverload()
        return ct.IntType(getattr(target, name))

    return run


def _greater(a: Any, b: Any) -> Any:
    return ct.BoolType(_compare_to(a, b) > 0)


def _less(a: Any, b: Any) -> Any:
    return ct.BoolType(_compare_to(a, b) < 0)


def _size(v: Any) -> Any:
    if isinstance(v, (str, bytes, list, dict)):
        return ct.IntType(len(v))
    raise _NoOverload()


_IMPLEMENTATIONS: dict[str, Callable[..., Any]] = {
    "_==_": lambda a, b: ct.BoolType(_equal(a, b)),
    "_!=_": lambda a, b: ct.BoolType(not _equal(a, b)),
    "_in_": _in,
    "size": _size,
    "quantity": _parse_quantity,
    "isQuantity": _is_quantity,
    "semver": _parse_semver,
    "isSemver": _is_semver,
    "compareTo": _compare_to,
    "isGreaterThan": _greater,
    "isLessThan": _less,
    "sign": _quantity_method("sign"),
    "isInteger": _quantity_method("isInteger"),
    "asInteger": _quantity_method("asInteger"),
    "asApproximateFloat": _quantity_method("asApproximateFloat"),
    "add": _quantity_method("add"),
    "sub": _quantity_method("sub"),
    "major": _semver_part("major"),
    "minor": _semver_part("minor"),
    "patch": _semver_part("patch"),
    "contains": _contains,
    "equivalent": _sets_equivalent,
    "intersects": _sets_intersects,
    "charAt": _str_method(_char_at),
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "lowerAscii": _str_method(_ascii_case(False)),
    "upperAscii": _str_method(_ascii_case(True)),
    "replace": _str_method(_replace),
    "split": _str_method(_split),
    "substring": _str_method(_substring),
    "trim": _str_method(lambda text: ct.StringType(text.strip())),
    "join": _join,
    "find": _find,
    "findAll": _find_all,
    "isSorted": _is_sorted,
    "sum": _sum,
    "max": _max,
    "min": _min,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {name: _cel_function(f) for name, f in _IMPLEMENTATIONS.items()}
for _op, _test in (("_<_", lambda c: c < 0), ("_<=_", lambda c: c <= 0), ("_>_", lambda c: c > 0)):
    _FUNCTIONS[_op] = _relation(_test)
_FUNCTIONS["_>=_"] = _relation(lambda c: c >= 0)


def _invoke(func: Callable[..., Any], args: Sequence[Any]) -> Any:
    """Call a CEL function, turning Python's exceptions into error values as celpy's evaluator does."""
    try:
        return func(*args)
    except (TypeError, AttributeError) as ex:
        return CELEvalError("no such overload", TypeError, ex.args)
    except ZeroDivisionError as ex:
        return CELEvalError("modulus or divide by zero", ZeroDivisionError, ex.args)
    except (ValueError, OverflowError) as ex:
        return CELEvalError("return error for overflow", ValueError, ex.args)
    except KeyError as ex:
        return CELEvalError("no such key", KeyError, ex.args)
    except IndexError as ex:
        return CELEvalError("invalid_argument", IndexError, ex.args)
