"""The CEL expressions of DRA device selectors, evaluated with cel-python (PyPI ``cel-python``,
module ``celpy``) plus the Kubernetes parts of the environment they run in.

dynamic-resource-allocation/cel/compile.go compiles a selector in Kubernetes' base CEL environment
(apiserver/pkg/cel/environment/base.go) with one variable, ``device``: ``driver`` (string),
``attributes`` and ``capacity`` (maps domain -> id -> value; a missing domain reads as an empty
map, a missing id is the runtime error "no such key"). celpy parses and interprets the expression;
this module adds what cel-go and Kubernetes bring on top of it:

- a compile-time check in the manner of cel-go's type-checker: undeclared variables, unknown
  functions, fields ``device`` does not have, ``has()`` without a field selection
  (:class:`CelCompileError`); valid CEL that is not available here raises :class:`CelUnsupported`
  (two-variable comprehensions, optional types, the URL, IP, CIDR and format libraries);
- cel-go's operators where celpy differs: heterogeneous equality (``"a" == 1`` is false) and the
  cross-type numeric comparisons Kubernetes enables (``1 < 1.5``, ``1 == 1.0``);
- the Kubernetes libraries selectors use: ``quantity()`` and ``semver()`` with their methods, the
  lists library (``isSorted``, ``sum``, ``max``, ``indexOf`` ...), regex (``find``, ``findAll``), the
  cel-go string extensions (v2: ``lowerAscii``, ``split``, ``substring`` ...), ``sets.*`` and
  ``cel.bind``;
- runtime errors worded as cel-go words them ("no such key: memoryGiB", "no such overload",
  "division by zero").
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import total_ordering
from typing import Any

import celpy
import lark
from celpy import celtypes as ct
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

from .. import quantity as qty
from ..errors import InputError

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# celpy logs some evaluation problems at ERROR level; SchedViz reports CEL errors in its own words.
logging.getLogger("celpy").setLevel(logging.CRITICAL)


class CelError(Exception):
    """A CEL runtime error (the message is cel-go's)."""


class CelCompileError(Exception):
    """The expression does not compile (syntax, unknown variable or function, unknown field).

    ``stage`` is how compile.go introduces the problem: "compilation failed: " for the checker's
    issues, nothing for a result that is not a bool."""

    def __init__(self, message: str, stage: str = "compilation failed: ") -> None:
        super().__init__(message)
        self.stage = stage


class CelUnsupported(Exception):
    """Valid CEL (in Kubernetes' environment) that SchedViz does not evaluate."""


# ----- Kubernetes' quantity and semver values ----------------------------------------------------


@dataclass(frozen=True)
class Quantity:
    """apiserver/pkg/cel Quantity: a resource.Quantity."""

    value: Decimal

    def cmp(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)


@total_ordering
@dataclass(frozen=True)
class Semver:
    """apiserver/pkg/cel Semver (blang/semver): precedence ignores build metadata."""

    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    def _key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def cmp(self, other: Semver) -> int:
        if self._key() != other._key():
            return -1 if self._key() < other._key() else 1
        # A pre-release version has lower precedence than the release.
        if self.pre == other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            an, bn = a.isdigit(), b.isdigit()
            if an and bn:
                return -1 if int(a) < int(b) else 1
            if an != bn:
                return -1 if an else 1
            return -1 if a < b else 1
        return -1 if len(self.pre) < len(other.pre) else (1 if len(self.pre) > len(other.pre) else 0)

    def __lt__(self, other: Semver) -> bool:
        return self.cmp(other) < 0


_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


def parse_semver(text: str, normalize: bool = False) -> Semver | None:
    """semver.Parse; with ``normalize`` (semver(s, true)) a leading "v" is dropped, missing minor and
    patch numbers become 0 and leading zeros are removed first (library/semverlib.go)."""
    if normalize:
        text = _normalize_semver(text)
    m = _SEMVER.match(text)
    if m is None:
        return None
    pre = tuple(m.group(4).split(".")) if m.group(4) else ()
    return Semver(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)


def _normalize_semver(text: str) -> str:
    text = text[1:] if text.startswith("v") else text
    core, sep, rest = text, "", ""
    for i, ch in enumerate(text):
        if ch in "-+":
            core, sep, rest = text[:i], ch, text[i + 1 :]
            break
    parts = core.split(".")
    if len(parts) > 3:
        return text
    parts += ["0"] * (3 - len(parts))
    parts = [p.lstrip("0") or "0" if p.isdigit() else p for p in parts]
    return ".".join(parts) + (sep + rest if sep else "")


# ----- values ---------------------------------------------------------------------------------------


class _DomainMap(ct.MapType):
    """compile.go's mapper: a domain the device has no entries for reads as an empty map."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str) and not dict.__contains__(self, key):
            return ct.MapType()
        return super().__getitem__(key)


class _Namespace:
    """The receiver of namespaced functions (``sets.contains(...)``): celpy reads ``sets`` as a variable."""

    def __init__(self, name: str) -> None:
        self.name = name


_SETS = _Namespace("sets")


def _to_cel(v: Any) -> Any:
    if isinstance(v, bool):
        return ct.BoolType(v)
    if isinstance(v, int):
        return ct.IntType(v)
    if isinstance(v, float):
        return ct.DoubleType(v)
    if isinstance(v, str):
        return ct.StringType(v)
    if isinstance(v, list):
        return ct.ListType([_to_cel(x) for x in v])
    if isinstance(v, dict) and not isinstance(v, ct.MapType):
        return ct.MapType({_to_cel(k): _to_cel(x) for k, x in v.items()})
    return v


def device_env(driver: str, attributes: Mapping[str, Any], capacity: Mapping[str, Any]) -> dict[str, Any]:
    """The variables of compile.go DeviceMatches: ``device`` with driver, and attributes and capacity
    by domain, then id (a name without a domain belongs to the driver's domain)."""
    by_domain: dict[str, dict[Any, Any]] = {}
    for name, value in attributes.items():
        domain, ident = _split_qualified(name, driver)
        by_domain.setdefault(domain, {})[ct.StringType(ident)] = _to_cel(value)
    attrs = _DomainMap({ct.StringType(d): ct.MapType(v) for d, v in by_domain.items()})
    by_domain = {}
    for name, value in capacity.items():
        domain, ident = _split_qualified(name, driver)
        by_domain.setdefault(domain, {})[ct.StringType(ident)] = value
    caps = _DomainMap({ct.StringType(d): ct.MapType(v) for d, v in by_domain.items()})
    device = ct.MapType(
        {
            ct.StringType("driver"): ct.StringType(driver),
            ct.StringType("attributes"): attrs,
            ct.StringType("capacity"): caps,
        }
    )
    return {"device": device, "sets": _SETS}


def _split_qualified(name: str, default_domain: str) -> tuple[str, str]:
    if "/" in name:
        domain, _, ident = name.partition("/")
        return domain, ident
    return default_domain, name


def _type_name(v: Any) -> str:
    if isinstance(v, (bool, ct.BoolType)):
        return "bool"
    if isinstance(v, ct.UintType):
        return "uint"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bytes):
        return "bytes"
    if v is None:
        return "null_type"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, Quantity):
        return "kubernetes.Quantity"
    if isinstance(v, Semver):
        return "kubernetes.Semver"
    return type(v).__name__


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
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {name: _cel_function(f) for name, f in _IMPLEMENTATIONS.items()}
for _op, _test in (("_<_", lambda c: c < 0), ("_<=_", lambda c: c <= 0), ("_>_", lambda c: c > 0)):
    _FUNCTIONS[_op] = _relation(_test)
_FUNCTIONS["_>=_"] = _relation(lambda c: c >= 0)

# ----- compile-time checks -------------------------------------------------------------------------

_VARIABLES = frozenset({"device"})
_DEVICE_FIELDS = frozenset({"driver", "attributes", "capacity"})
_GLOBALS = frozenset(
    {
        "size",
        "int",
        "uint",
        "double",
        "string",
        "bool",
        "bytes",
        "dyn",
        "type",
        "duration",
        "timestamp",
        "matches",
        "quantity",
        "isQuantity",
        "semver",
        "isSemver",
    }
)
_METHODS = frozenset(_FUNCTIONS) | {
    "startsWith",
    "endsWith",
    "matches",
    "getDate",
    "getDayOfMonth",
    "getDayOfWeek",
    "getDayOfYear",
    "getFullYear",
    "getMonth",
    "getHours",
    "getMilliseconds",
    "getMinutes",
    "getSeconds",
    "min",
}
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
# In Kubernetes' environment but not evaluated here.
_UNSUPPORTED_FUNCTIONS = frozenset(
    {
        "url",
        "isURL",
        "ip",
        "isIP",
        "cidr",
        "isCIDR",
        "format",
        "reverse",
        "quote",
        "transformList",
        "transformMap",
        "transformMapEntry",
        "existsOne",
        "optMap",
        "optFlatMap",
        "orValue",
        "hasValue",
        "value",
        "or",
        # methods of the IP, CIDR and URL libraries
        "family",
        "isUnspecified",
        "isLoopback",
        "isGlobalUnicast",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "prefixLength",
        "masked",
        "containsIP",
        "containsCIDR",
        "getScheme",
        "getHost",
        "getHostname",
        "getPort",
        "getEscapedPath",
        "getQuery",
        "isCanonical",
    }
)
_UNSUPPORTED_NAMESPACES = frozenset({"optional", "strings", "base64", "math", "lists", "authorizer"})
_RESERVED = frozenset(
    {
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    }
)


def _undeclared(name: str) -> CelCompileError:
    return CelCompileError(f"undeclared reference to '{name}' (in container '')")


def _bare_ident(tree: Any) -> str | None:
    """The name when ``tree`` is nothing but an identifier (through the grammar's single-child levels)."""
    while isinstance(tree, lark.Tree):
        if tree.data == "ident":
            tok = tree.children[0]
            return str(tok) if isinstance(tok, lark.Token) else None
        if len(tree.children) != 1:
            return None
        tree = tree.children[0]
    return None


def _args(tree: lark.Tree[Any], at: int) -> list[Any]:
    if len(tree.children) > at and isinstance(tree.children[at], lark.Tree):
        return list(tree.children[at].children)
    return []


def _check(tree: Any, scope: frozenset[str]) -> None:
    """cel-go's checks that need no types beyond the ``device`` variable."""
    if not isinstance(tree, lark.Tree):
        return
    kind = tree.data
    if kind == "ident":
        name = str(tree.children[0])
        if name in _RESERVED:
            raise CelCompileError(f"Syntax error: reserved identifier: {name}")
        if name not in scope:
            raise _undeclared(name)
        return
    if kind == "ident_arg":
        name = str(tree.children[0])
        args = _args(tree, 1)
        if name == "has":
            if len(args) != 1 or _field_selection(args[0]) is None:
                raise CelCompileError("invalid argument to has() macro")
            _check(args[0], scope)
            return
        if name in _UNSUPPORTED_FUNCTIONS:
            raise CelUnsupported(f"function {name}()")
        if name not in _GLOBALS:
            raise _undeclared(name)
        for a in args:
            _check(a, scope)
        return
    if kind == "member_dot_arg":
        receiver, method = tree.children[0], str(tree.children[1])
        args = _args(tree, 2)
        namespace = _bare_ident(receiver)
        if namespace is not None and namespace not in scope:
            if namespace == "sets" and method in ("contains", "equivalent", "intersects") and len(args) == 2:
                for a in args:
                    _check(a, scope)
                return
            if namespace == "cel" and method == "bind":
                raise CelCompileError("invalid argument to cel.bind() macro")
            if namespace in _UNSUPPORTED_NAMESPACES or namespace == "sets":
                raise CelUnsupported(f"function {namespace}.{method}()")
            raise _undeclared(f"{namespace}.{method}")
        if method in _MACROS:
            if len(args) == 3 and method in ("all", "exists", "exists_one"):
                raise CelUnsupported(f"the two-variable form of {method}()")
            if len(args) == 3 and method == "map":
                raise CelUnsupported("map() with a filter")
            if len(args) != 2:
                raise CelCompileError(f"invalid argument count to {method}() macro")
            var = _bare_ident(args[0])
            if var is None:
                raise CelCompileError("argument must be a simple name")
            _check(receiver, scope)
            _check(args[1], scope | {var})
            return
        _check(receiver, scope)
        if method in _UNSUPPORTED_FUNCTIONS:
            raise CelUnsupported(f"method {method}()")
        if method not in _METHODS:
            raise _undeclared(method)
        for a in args:
            _check(a, scope)
        return
    if kind == "member_dot":
        receiver, name = tree.children[0], str(tree.children[1])
        if _bare_ident(receiver) == "device" and "device" in scope and name not in _DEVICE_FIELDS:
            raise CelCompileError(f"undefined field '{name}'")
        _check(receiver, scope)
        return
    if kind in ("dot_ident_arg", "dot_ident"):
        raise CelUnsupported("names with a leading '.'")
    if kind == "member_object":
        raise CelUnsupported("message construction")
    if kind in ("list_lit", "map_lit"):
        _check_homogeneous(tree)
    for child in tree.children:
        _check(child, scope)


def _check_homogeneous(tree: lark.Tree[Any]) -> None:
    """cel.HomogeneousAggregateLiterals (Kubernetes' base environment): the elements of a list
    literal, and the keys and values of a map literal, share one type (where the checker knows it)."""
    items = _args(tree, 0)
    groups = [items] if tree.data == "list_lit" else [items[0::2], items[1::2]]
    for group in groups:
        seen: str | None = None
        for item in group:
            t = _static_type(item)
            if t is None:
                continue
            if seen is not None and t != seen:
                raise CelCompileError(f"expected type '{seen}' but found '{t}'")
            seen = t


def _field_selection(tree: Any) -> Any:
    """The member_dot node when ``tree`` is a field selection (what has() accepts)."""
    while isinstance(tree, lark.Tree):
        if tree.data == "member_dot":
            return tree
        if len(tree.children) != 1:
            return None
        tree = tree.children[0]
    return None


# cel.bind(name, init, body): the same value as [init].map(name, body)[0], which celpy evaluates.
_BIND = re.compile(r"\bcel\s*\.\s*bind\s*\(")


def _rewrite_bind(text: str, env: celpy.Environment) -> str:
    for _ in range(64):
        if _BIND.search(text) is None:
            return text
        node = _find_bind(env.compile(text))
        if node is None:
            return text
        args = _args(node, 2)
        name = _bare_ident(args[0]) if len(args) == 3 else None
        if name is None:
            raise CelCompileError("invalid argument to cel.bind() macro")
        init = text[args[1].meta.start_pos : args[1].meta.end_pos]
        body = text[args[2].meta.start_pos : args[2].meta.end_pos]
        replacement = f"([{init}].map({name}, {body})[0])"
        text = text[: node.meta.start_pos] + replacement + text[node.meta.end_pos :]
    return text


def _find_bind(tree: lark.Tree[Any]) -> lark.Tree[Any] | None:
    """The outermost cel.bind(...) call (inner ones are rewritten in later rounds)."""
    for node in tree.iter_subtrees_topdown():  # type: ignore[no-untyped-call]
        if (
            node.data == "member_dot_arg"
            and str(node.children[1]) == "bind"
            and _bare_ident(node.children[0]) == "cel"
        ):
            found: lark.Tree[Any] = node
            return found
    return None


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


@dataclass
class Program:
    expression: str
    runner: Any

    def evaluate(self, env: Mapping[str, Any]) -> bool:
        """The selector's verdict for one device; CelError for a runtime error or a non-bool result."""
        try:
            v = self.runner.evaluate(dict(env))
        except CELEvalError as exc:
            raise CelError(_runtime_message(exc)) from None
        except RecursionError:
            raise CelError("expression too deeply nested") from None
        if isinstance(v, CELEvalError):
            raise CelError(_runtime_message(v))
        if not _is_bool(v):
            t = _type_name(v)
            # compile.go wraps the value's ConvertToNative error (cel-go's wording per type).
            why = {
                "string": ": unsupported native conversion from string to 'bool'",
                "int": ": unsupported type conversion from 'int' to bool",
                "uint": ": unsupported type conversion from 'uint' to bool",
                "double": ": type conversion error from Double to 'bool'",
            }.get(t, "")
            raise CelError(f"CEL result of type {t} could not be converted to bool{why}")
        return bool(v)


_CACHE: dict[str, Program | CelCompileError | CelUnsupported] = {}


def compile_selector(expression: str) -> Program:
    """Compile a device selector; raises CelCompileError or CelUnsupported."""
    hit = _CACHE.get(expression)
    if hit is None:
        try:
            hit = _compile(expression)
        except (CelCompileError, CelUnsupported) as exc:
            hit = exc
        _CACHE[expression] = hit
    if isinstance(hit, Exception):
        raise hit
    return hit


def _compile(expression: str) -> Program:
    if "?." in expression or "[?" in expression:
        raise CelUnsupported("optional field selection")
    env = _environment()
    try:
        text = _rewrite_bind(expression, env)
        tree = env.compile(text)
    except CELParseError as exc:
        first = str(exc.args[0] if exc.args else exc).strip().splitlines()
        raise CelCompileError("Syntax error: " + " ".join(x.strip() for x in first if x.strip())) from None
    except lark.exceptions.LarkError as exc:
        raise CelCompileError(f"Syntax error: {exc}") from None
    _check(tree, _VARIABLES)
    result = _static_type(tree)
    if result is not None and result != "bool":
        raise CelCompileError(f"must evaluate to bool or the unknown type, not {result}", stage="")
    return Program(expression, env.program(tree, functions=_FUNCTIONS))


_LITERAL_TYPES = {
    "INT_LIT": "int",
    "UINT_LIT": "uint",
    "FLOAT_LIT": "double",
    "STRING_LIT": "string",
    "MLSTRING_LIT": "string",
    "BYTES_LIT": "bytes",
    "BOOL_LIT": "bool",
    "NULL_LIT": "null_type",
}


def _static_type(tree: Any) -> str | None:
    """The type cel-go's checker gives ``tree`` where it needs no variable types: literals, list and map
    literals, comparisons and logic (bool), ``device.driver`` (string); None where it is dyn."""
    while isinstance(tree, lark.Tree):
        kind = tree.data
        if kind == "literal":
            tok = tree.children[0]
            return _LITERAL_TYPES.get(tok.type) if isinstance(tok, lark.Token) else None
        if kind == "list_lit":
            return "list"
        if kind == "map_lit":
            return "map"
        if kind in ("conditionalor", "conditionaland", "relation") and len(tree.children) == 2:
            return "bool"
        if kind == "unary" and len(tree.children) == 2:
            op = tree.children[0]
            return "bool" if isinstance(op, lark.Tree) and op.data == "unary_not" else None
        if kind == "member_dot":
            if _bare_ident(tree.children[0]) == "device" and str(tree.children[1]) == "driver":
                return "string"
            return None
        if kind == "expr" and len(tree.children) == 3:
            a, b = _static_type(tree.children[1]), _static_type(tree.children[2])
            return a if a == b else None
        if len(tree.children) != 1:
            return None
        tree = tree.children[0]
    return None
