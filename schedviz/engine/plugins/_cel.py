"""The CEL expressions of DRA device selectors, evaluated with cel-python (PyPI ``cel-python``,
module ``celpy``) plus the Kubernetes parts of the environment they run in.

dynamic-resource-allocation/cel/compile.go compiles a selector in Kubernetes' base CEL environment
(apiserver/pkg/cel/environment/base.go) with one variable, ``device``: ``driver`` (string),
``attributes`` and ``capacity`` (maps domain -> id -> value; a missing domain reads as an empty
map, a missing id is the runtime error "no such key"). celpy parses the expression and provides the
values and most operators; this module adds what cel-go and Kubernetes bring on top of it:

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
  "division by zero");
- Kubernetes' CEL cost limits (below).

Cost limits. The API server stores a selector only if it is at most CELSelectorExpressionMaxLength
(10 KiB) long and cel-go's *estimated* worst-case cost is at most CELSelectorExpressionMaxCost
(1,000,000; k8s.io/api/resource/v1/types.go), else validation.go refuses it ("Too long: may not be
more than 10240 bytes", "Forbidden: too complex, exceeds cost limit"): ``compile_selector(expr,
validate=True)`` raises :class:`CelRefused`. kube-scheduler compiles without the estimate but gives
every evaluation a *runtime* budget of the same figure (compile.go: cel.CostLimit), ending it with
cel-go's "operation cancelled: actual cost limit exceeded" (:data:`COST_LIMIT_EXCEEDED`).

- The estimate follows cel-go's checker/cost.go with Kubernetes' CostEstimator
  (apiserver/pkg/cel/library/cost.go) and compile.go's size estimates: strings reached through
  ``device`` are at most 63 (driver, domains), 32 (ids) or 64 (attribute values) long, the attribute
  and capacity maps hold at most 32 entries, list and map literals have their exact sizes, and a
  comprehension costs its range's size times the cost of one iteration (cel-go's expansion of the
  macro: loop condition plus step), so each nested macro multiplies. It reproduces the figures
  upstream's tests expect (compile_test.go, library/cost_test.go). It needs the types cel-go's checker
  infers; SchedViz infers them for what the estimate depends on (literals, ``device``'s fields, the
  macros, the operators and library functions), and takes dyn (every candidate overload, as cel-go
  does for dyn arguments) where it has no declaration, which can only raise the estimate.
- The runtime budget is charged as cel-go's cost tracker (interpreter/runtimecost.go) charges with
  Kubernetes' options (OptOptimize folding constant literals; has() costing nothing): 1 per variable,
  field selection and index, 10 per list and 30 per map built at runtime, and per call the function's
  cost from the actual sizes of its arguments (e.g. 0.1 per character of a string concatenation, the
  list's size for ``in``), by the overload the checker resolved. To count steps this way SchedViz
  evaluates the expression itself (closures over the lowered expression; celpy supplies parsing,
  values and operators) instead of through celpy's interpreter. Calls are charged before they run.
- SchedViz copies values cel-go shares (a concatenated list is a view there and costs 1): every
  evaluation may build at most about :data:`MATERIALIZED_MAX` bytes of strings, lists and maps, and
  ends with the same cost-limit error beyond that, so no expression builds gigabytes.
"""

from __future__ import annotations

import collections
import functools
import logging
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
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
                # ext/bindings.go celBind: cel.bind(name, init, body), name in scope in the body only.
                if len(args) != 3:
                    raise _undeclared("cel.bind")
                var = _bare_ident(args[0])
                if var is None:
                    raise CelCompileError("cel.bind() variable names must be simple identifiers")
                _check(args[1], scope)
                _check(args[2], scope | {var})
                return
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


# ----- Kubernetes' cost limits ---------------------------------------------------------------------

# k8s.io/api/resource/v1/types.go (pkg/apis/resource/types.go declares the same values).
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength
_DRIVER_NAME_MAX_LENGTH = 63  # DriverNameMaxLength
_DEVICE_MAX_DOMAIN_LENGTH = 63  # DeviceMaxDomainLength
_DEVICE_MAX_ID_LENGTH = 32  # DeviceMaxIDLength
_DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64  # DeviceAttributeMaxValueLength
_MAX_ATTRIBUTES_AND_CAPACITIES = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice

# pkg/apis/resource/validation/validation.go validateCELSelector: the bodies of field.Forbidden and
# field.TooLong (apimachinery field.Error.ErrorBody) on <selector>.cel.expression.
TOO_COMPLEX = "Forbidden: too complex, exceeds cost limit"
TOO_LONG = f"Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes"
# cel-go interpreter/runtimecost.go: the EvalCancelledError (cause CostLimitExceeded) an evaluation
# ends with once its cost passes the program's CostLimit.
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"

# cel-go common/cost.go
_SELECT_AND_IDENT_COST = 1
_LIST_CREATE_BASE_COST = 10
_MAP_CREATE_BASE_COST = 30
_STRING_TRAVERSAL_COST_FACTOR = 0.1
_REGEX_STRING_LENGTH_COST_FACTOR = 0.25

# SchedViz's own bound (no upstream counterpart): about how many bytes of strings, lists and maps one
# evaluation may build. cel-go shares what SchedViz copies (list concatenation is O(1) there and costs
# 1); an evaluation that would build more ends with COST_LIMIT_EXCEEDED like one over its budget.
MATERIALIZED_MAX = 64 * 2**20

_U64 = 2**64 - 1
_U64_F = float(_U64)
_TWO_TO_64_F = math.ldexp(1.0, 64)


class CelRefused(Exception):
    """The API server would refuse the expression (validation.go validateCELSelector): longer than
    CELSelectorExpressionMaxLength, or an estimated cost over CELSelectorExpressionMaxCost. The message
    is the field error's body, e.g. "Forbidden: too complex, exceeds cost limit"."""


class _CostLimit(Exception):
    """The budget of an evaluation is spent (cel-go panics with EvalCancelledError)."""


class CostTracker:
    """cel-go's interpreter.CostTracker for one evaluation: ``cost`` is the actual cost so far,
    ``limit`` the program's CostLimit (compile.go: CELSelectorExpressionMaxCost unless overridden).
    ``materialized`` counts the bytes (roughly) of values the evaluation built, against
    ``materialized_limit`` (MATERIALIZED_MAX)."""

    __slots__ = ("cost", "frame", "limit", "materialized", "materialized_limit", "vars")

    def __init__(
        self, limit: int = CEL_SELECTOR_EXPRESSION_MAX_COST, materialized_limit: int = MATERIALIZED_MAX
    ) -> None:
        self.cost = 0
        self.limit = limit
        self.materialized = 0
        self.materialized_limit = materialized_limit
        self.frame: list[Any] = []
        self.vars: Mapping[str, Any] = {}

    def charge(self, n: int) -> None:
        self.cost += n
        if self.cost > self.limit:
            raise _CostLimit()

    def materialize(self, n: int) -> None:
        """Account for a value about to be built (``materialized`` only counts what was built)."""
        if self.materialized + n > self.materialized_limit:
            raise _CostLimit()
        self.materialized += n


# ----- the checked expression ------------------------------------------------------------------------
#
# celpy's parse tree, lowered to the shape cel-go's parser gives it: operators and functions are calls
# ("_+_", "@in", "_[_]", ...), has() is a presence-test select, and the macros are expanded into
# comprehensions exactly as parser/macro.go (and ext/bindings.go for cel.bind) expand them, so that the
# cost estimate below walks what cel-go's checker/cost.go walks.

_Type = tuple[Any, ...]
_T_DYN: _Type = ("dyn",)
_T_BOOL: _Type = ("bool",)
_T_INT: _Type = ("int",)
_T_DOUBLE: _Type = ("double",)
_T_STRING: _Type = ("string",)
_T_BYTES: _Type = ("bytes",)
_T_QUANTITY: _Type = ("quantity",)
_T_SEMVER: _Type = ("semver",)
_T_DEVICE: _Type = ("device",)
# compile.go newCompiler: the fields of kubernetes.DRADevice (attribute values are dyn).
_DEVICE_FIELD_TYPES: dict[str, _Type] = {
    "driver": _T_STRING,
    "attributes": ("map", _T_STRING, ("map", _T_STRING, _T_DYN)),
    "capacity": ("map", _T_STRING, ("map", _T_STRING, _T_QUANTITY)),
}
_ACCU = "@result"  # parser.HiddenAccumulatorName
_ACCUMULATORS = frozenset({_ACCU, "__result__"})


class _Expr:
    __slots__ = ("overloads", "t")

    def __init__(self) -> None:
        self.t: _Type = _T_DYN
        self.overloads: tuple[str, ...] = ()


class _Lit(_Expr):
    __slots__ = ("kind", "value")

    def __init__(self, value: Any, kind: str) -> None:
        super().__init__()
        self.value = value
        self.kind = kind


class _Ident(_Expr):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


class _Select(_Expr):
    __slots__ = ("field", "operand", "test_only")

    def __init__(self, operand: _Expr, field: str, test_only: bool) -> None:
        super().__init__()
        self.operand = operand
        self.field = field
        self.test_only = test_only


class _Call(_Expr):
    __slots__ = ("args", "fn", "target")

    def __init__(self, fn: str, target: _Expr | None, args: list[_Expr]) -> None:
        super().__init__()
        self.fn = fn
        self.target = target
        self.args = args


class _List(_Expr):
    __slots__ = ("elems",)

    def __init__(self, elems: list[_Expr]) -> None:
        super().__init__()
        self.elems = elems


class _Map(_Expr):
    __slots__ = ("entries",)

    def __init__(self, entries: list[tuple[_Expr, _Expr]]) -> None:
        super().__init__()
        self.entries = entries


class _Comp(_Expr):
    """A comprehension; ``macro`` names the macro it was expanded from and ``body`` is the macro's own
    expression (predicate, transform, or cel.bind's result)."""

    __slots__ = ("accu_init", "accu_var", "body", "cond", "iter_range", "iter_var", "macro", "result", "step")

    def __init__(
        self,
        macro: str,
        iter_var: str,
        iter_range: _Expr,
        accu_var: str,
        accu_init: _Expr,
        cond: _Expr,
        step: _Expr,
        result: _Expr,
        body: _Expr,
    ) -> None:
        super().__init__()
        self.macro = macro
        self.iter_var = iter_var
        self.iter_range = iter_range
        self.accu_var = accu_var
        self.accu_init = accu_init
        self.cond = cond
        self.step = step
        self.result = result
        self.body = body


_OPERATORS = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_gt": "_>_",
    "relation_ge": "_>=_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "@in",
    "addition_add": "_+_",
    "addition_sub": "_-_",
    "multiplication_mul": "_*_",
    "multiplication_div": "_/_",
    "multiplication_mod": "_%_",
}


def _true() -> _Lit:
    return _Lit(ct.BoolType(True), "bool")


class _Lower:
    """Lowers a parse tree that passed _check."""

    def __init__(self) -> None:
        # celpy's own literal conversion (escapes, bytes, uint suffix).
        self._literals = celpy.evaluation.Evaluator(
            ast=lark.Tree("expr", []), activation=celpy.evaluation.Activation()
        )

    def lower(self, tree: Any, scope: frozenset[str]) -> _Expr:
        while True:
            kind, ch = tree.data, tree.children
            if kind == "expr" and len(ch) == 3:
                return _Call("_?_:_", None, [self.lower(c, scope) for c in ch])
            if kind in ("conditionalor", "conditionaland") and len(ch) == 2:
                fn = "_||_" if kind == "conditionalor" else "_&&_"
                return _Call(fn, None, [self.lower(ch[0], scope), self.lower(ch[1], scope)])
            if kind in ("relation", "addition", "multiplication") and len(ch) == 2:
                op = ch[0]
                return _Call(
                    _OPERATORS[op.data], None, [self.lower(op.children[0], scope), self.lower(ch[1], scope)]
                )
            if kind == "unary" and len(ch) == 2:
                operand = self.lower(ch[1], scope)
                if ch[0].data == "unary_not":
                    return _Call("!_", None, [operand])
                if isinstance(operand, _Lit) and operand.kind in ("int", "double"):
                    # cel-go's grammar reads "-" before a number as the number's sign.
                    v = _invoke(operator.neg, [operand.value])
                    if not isinstance(v, CELEvalError):
                        return _Lit(v, operand.kind)
                return _Call("-_", None, [operand])
            if kind == "member_dot":
                return _Select(self.lower(ch[0], scope), str(ch[1]), False)
            if kind == "member_dot_arg":
                return self._member_call(tree, scope)
            if kind == "member_index":
                return _Call("_[_]", None, [self.lower(ch[0], scope), self.lower(ch[1], scope)])
            if kind == "literal":
                tok = ch[0]
                lit_kind = _LITERAL_TYPES.get(tok.type, "dyn") if isinstance(tok, lark.Token) else "dyn"
                return _Lit(self._literals.literal(tree), lit_kind)
            if kind == "ident":
                return _Ident(str(ch[0]))
            if kind == "ident_arg":
                return self._global_call(tree, scope)
            if kind == "list_lit":
                return _List([self.lower(x, scope) for x in _args(tree, 0)])
            if kind == "map_lit":
                items = _args(tree, 0)
                keys = [self.lower(x, scope) for x in items[0::2]]
                values = [self.lower(x, scope) for x in items[1::2]]
                return _Map(list(zip(keys, values, strict=True)))
            if len(ch) == 1 and isinstance(ch[0], lark.Tree):
                tree = ch[0]  # expr, member, primary, paren_expr ... with a single child
                continue
            raise CelUnsupported(f"the construct {kind}")

    def _global_call(self, tree: lark.Tree[Any], scope: frozenset[str]) -> _Expr:
        name = str(tree.children[0])
        args = _args(tree, 1)
        if name == "has":
            sel = _field_selection(args[0])
            return _Select(self.lower(sel.children[0], scope), str(sel.children[1]), True)
        return _Call(name, None, [self.lower(a, scope) for a in args])

    def _member_call(self, tree: lark.Tree[Any], scope: frozenset[str]) -> _Expr:
        receiver, method = tree.children[0], str(tree.children[1])
        args = _args(tree, 2)
        namespace = _bare_ident(receiver)
        if namespace is not None and namespace not in scope:
            if namespace == "cel" and method == "bind":
                var = str(_bare_ident(args[0]))
                init = self.lower(args[1], scope)
                body = self.lower(args[2], scope | {var})
                # ext/bindings.go celBind
                return _Comp(
                    "bind",
                    "#unused",
                    _List([]),
                    var,
                    init,
                    _Lit(ct.BoolType(False), "bool"),
                    _Ident(var),
                    body,
                    body,
                )
            if namespace == "sets":
                return _Call(f"sets.{method}", None, [self.lower(a, scope) for a in args])
        if method in _MACROS and len(args) == 2:
            var = str(_bare_ident(args[0]))
            rng = self.lower(receiver, scope)
            body = self.lower(args[1], scope | {var})
            return _macro(method, var, rng, body)
        return _Call(method, self.lower(receiver, scope), [self.lower(a, scope) for a in args])


def _macro(name: str, var: str, rng: _Expr, body: _Expr) -> _Comp:
    """parser/macro.go makeQuantifier, MakeMap and MakeFilter."""
    accu = _Ident  # a fresh node per use, as cel-go's NewAccuIdent
    if name == "all":
        return _Comp(
            name,
            var,
            rng,
            _ACCU,
            _true(),
            _Call("@not_strictly_false", None, [accu(_ACCU)]),
            _Call("_&&_", None, [accu(_ACCU), body]),
            accu(_ACCU),
            body,
        )
    if name == "exists":
        return _Comp(
            name,
            var,
            rng,
            _ACCU,
            _Lit(ct.BoolType(False), "bool"),
            _Call("@not_strictly_false", None, [_Call("!_", None, [accu(_ACCU)])]),
            _Call("_||_", None, [accu(_ACCU), body]),
            accu(_ACCU),
            body,
        )
    if name == "exists_one":
        step = _Call(
            "_?_:_", None, [body, _Call("_+_", None, [accu(_ACCU), _Lit(ct.IntType(1), "int")]), accu(_ACCU)]
        )
        result = _Call("_==_", None, [accu(_ACCU), _Lit(ct.IntType(1), "int")])
        return _Comp(name, var, rng, _ACCU, _Lit(ct.IntType(0), "int"), _true(), step, result, body)
    if name == "map":
        step = _Call("_+_", None, [accu(_ACCU), _List([body])])
        return _Comp(name, var, rng, _ACCU, _List([]), _true(), step, accu(_ACCU), body)
    # filter
    step = _Call("_?_:_", None, [body, _Call("_+_", None, [accu(_ACCU), _List([_Ident(var)])]), accu(_ACCU)])
    return _Comp(name, var, rng, _ACCU, _List([]), _true(), step, accu(_ACCU), body)


# ----- types, as far as cel-go's cost estimate depends on them -------------------------------------------

_REL_PREFIX = {"_<_": "less", "_<=_": "less_equals", "_>_": "greater", "_>=_": "greater_equals"}
_NUMERIC = frozenset({"int", "uint", "double"})
_ADDABLE = frozenset({"int", "uint", "double", "duration", "timestamp", "dyn"})
_CONVERSION_TYPES: dict[str, _Type] = {
    "int": _T_INT,
    "uint": ("uint",),
    "double": _T_DOUBLE,
    "bool": _T_BOOL,
    "string": _T_STRING,
    "bytes": _T_BYTES,
    "type": ("type",),
    "duration": ("duration",),
    "timestamp": ("timestamp",),
    "dyn": _T_DYN,
}
_SETS_OVERLOADS = {
    "sets.contains": "list_sets_contains_list",
    "sets.intersects": "list_sets_intersects_list",
    "sets.equivalent": "list_sets_equivalent_list",
}
_RESULT_TYPES: dict[str, _Type] = {
    **dict.fromkeys(
        ["startsWith", "endsWith", "matches", "contains", "isSorted", "isQuantity", "isSemver", "isInteger"],
        _T_BOOL,
    ),
    **dict.fromkeys(["isGreaterThan", "isLessThan", *_SETS_OVERLOADS], _T_BOOL),
    **dict.fromkeys(
        ["lowerAscii", "upperAscii", "trim", "substring", "replace", "charAt", "join", "find"], _T_STRING
    ),
    "split": ("list", _T_STRING),
    "findAll": ("list", _T_STRING),
    **dict.fromkeys(
        ["indexOf", "lastIndexOf", "compareTo", "sign", "asInteger", "major", "minor", "patch", "size"],
        _T_INT,
    ),
    **dict.fromkeys(
        [
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
        ],
        _T_INT,
    ),
    "asApproximateFloat": _T_DOUBLE,
    "quantity": _T_QUANTITY,
    "add": _T_QUANTITY,
    "sub": _T_QUANTITY,
    "semver": _T_SEMVER,
}


def _join_types(ts: list[_Type]) -> _Type:
    if not ts or any(t != ts[0] for t in ts):
        return _T_DYN
    return ts[0]


def _typecheck(e: _Expr, scope: dict[str, _Type]) -> _Type:
    """The type cel-go's checker gives ``e`` (dyn where it needs declarations SchedViz does not keep),
    and for calls the overloads it keeps (all the candidates when an argument is dyn)."""
    t: _Type
    if isinstance(e, _Lit):
        t = (e.kind,)
    elif isinstance(e, _Ident):
        t = scope.get(e.name) or (_T_DEVICE if e.name == "device" else _T_DYN)
    elif isinstance(e, _Select):
        ot = _typecheck(e.operand, scope)
        if e.test_only:
            t = _T_BOOL
        elif ot[0] == "device":
            t = _DEVICE_FIELD_TYPES.get(e.field, _T_DYN)
        elif ot[0] == "map":
            t = ot[2]
        else:
            t = _T_DYN
    elif isinstance(e, _List):
        t = ("list", _join_types([_typecheck(x, scope) for x in e.elems]))
    elif isinstance(e, _Map):
        keys = [_typecheck(k, scope) for k, _ in e.entries]
        values = [_typecheck(v, scope) for _, v in e.entries]
        t = ("map", _join_types(keys), _join_types(values))
    elif isinstance(e, _Comp):
        rt = _typecheck(e.iter_range, scope)
        elem = rt[1] if rt[0] in ("list", "map") else _T_DYN
        inner = {**scope, e.iter_var: elem}
        init = _typecheck(e.accu_init, scope)
        accu: _Type
        if e.macro == "bind":
            accu = init
        elif e.macro in ("all", "exists"):
            accu = _T_BOOL
        elif e.macro == "exists_one":
            accu = _T_INT
        elif e.macro == "map":
            accu = ("list", _typecheck(e.body, inner))
        else:
            accu = ("list", elem)
        inner[e.accu_var] = accu
        _typecheck(e.cond, inner)
        _typecheck(e.step, inner)
        t = _typecheck(e.result, inner)
    else:
        assert isinstance(e, _Call)
        target = _typecheck(e.target, scope) if e.target is not None else None
        args = [_typecheck(a, scope) for a in e.args]
        e.overloads, t = _resolve(e.fn, target, args)
    e.t = t
    return t


def _resolve(fn: str, target: _Type | None, args: list[_Type]) -> tuple[tuple[str, ...], _Type]:
    kinds = [a[0] for a in args]
    if fn in ("_&&_", "_||_"):
        return ("logical_and" if fn == "_&&_" else "logical_or",), _T_BOOL
    if fn == "_?_:_":
        return ("conditional",), _join_types(args[1:3])
    if fn in ("!_", "@not_strictly_false"):
        return (fn,), _T_BOOL
    if fn == "-_":
        return ("negate",), args[0] if kinds[0] in ("int", "double", "duration") else _T_DYN
    if fn in ("_==_", "_!=_"):
        return ("equals" if fn == "_==_" else "not_equals",), _T_BOOL
    if fn in _REL_PREFIX and len(args) == 2:
        prefix = _REL_PREFIX[fn]
        ids = [
            f"{prefix}_{k}" for k in ("string", "bytes") if kinds[0] in (k, "dyn") and kinds[1] in (k, "dyn")
        ]
        if not ids or not {kinds[0], kinds[1]} & {"string", "bytes"}:
            ids.append(f"{prefix}_other")
        return tuple(ids), _T_BOOL
    if fn == "_+_" and len(args) == 2:
        return _resolve_add(args)
    if fn in ("_-_", "_*_", "_/_", "_%_") and len(args) == 2:
        same = args[0] if args[0] == args[1] and kinds[0] != "dyn" else _T_DYN
        return ("arithmetic",), same
    if fn == "@in" and len(args) == 2:
        ids = [i for i, k in (("in_list", "list"), ("in_map", "map")) if kinds[1] in (k, "dyn")]
        return tuple(ids) or ("in_other",), _T_BOOL
    if fn == "_[_]" and len(args) == 2:
        ids = [i for i, k in (("index_list", "list"), ("index_map", "map")) if kinds[0] in (k, "dyn")]
        result = args[0][1] if kinds[0] == "list" else args[0][2] if kinds[0] == "map" else _T_DYN
        return tuple(ids) or ("index_other",), result
    if fn in ("string", "bytes") and target is None and len(args) == 1:
        special, source = ("bytes_to_string", "bytes") if fn == "string" else ("string_to_bytes", "string")
        ids = [special] if kinds[0] in (source, "dyn") else []
        if kinds[0] != source:
            ids.append(f"to_{fn}")
        return tuple(ids), _CONVERSION_TYPES[fn]
    if fn in _CONVERSION_TYPES and target is None:
        return (f"to_{fn}",), _CONVERSION_TYPES[fn]
    if fn == "matches":
        return ("matches_string" if target is not None else "matches",), _T_BOOL
    if target is not None and fn in ("startsWith", "endsWith", "contains"):
        return (
            {"startsWith": "starts_with_string", "endsWith": "ends_with_string"}.get(fn, "contains_string"),
        ), _T_BOOL
    if fn in _SETS_OVERLOADS:
        return (_SETS_OVERLOADS[fn],), _T_BOOL
    if fn in ("sum", "max", "min") and target is not None:
        return (fn,), target[1] if target[0] == "list" else _T_DYN
    return (fn,), _RESULT_TYPES.get(fn, _T_DYN)


def _resolve_add(args: list[_Type]) -> tuple[tuple[str, ...], _Type]:
    a, b = args
    ka, kb = a[0], b[0]
    ids = [f"add_{k}" for k in ("string", "bytes", "list") if ka in (k, "dyn") and kb in (k, "dyn")]
    if ka in _ADDABLE and kb in _ADDABLE:
        ids.append("add_other")
    if not ids:
        ids = ["add_other"]
    result = _T_DYN
    if ids == ["add_string"]:
        result = _T_STRING
    elif ids == ["add_bytes"]:
        result = _T_BYTES
    elif ids == ["add_list"]:
        elems = [t[1] for t in (a, b) if t[0] == "list"]
        result = ("list", _join_types(elems))
    elif ids == ["add_other"]:
        if a == b and ka != "dyn":
            result = a
        elif {ka, kb} - {"dyn"} and ({ka, kb} - {"dyn"}) <= _NUMERIC and "dyn" in (ka, kb):
            result = a if ka != "dyn" else b
    return tuple(ids), result


# ----- the estimated cost (cel-go checker/cost.go, Kubernetes' library/cost.go) ---------------------

_Size = tuple[int, int]
_UNKNOWN: _Size = (0, _U64)


def _sat(n: int) -> int:
    return n if n < _U64 else _U64


def _factor(x: int, f: float) -> int:
    """multiplyByCostFactor: x * f rounded up, saturating."""
    xf = float(x)
    if xf > 0 and f > 0 and xf > _U64_F / f:
        return _U64
    c = math.ceil(xf * f)
    return _U64 if c >= _TWO_TO_64_F else int(c)


def _size_add(a: _Size, b: _Size) -> _Size:
    return _sat(a[0] + b[0]), _sat(a[1] + b[1])


def _size_mul(a: _Size, b: _Size) -> _Size:
    return _sat(a[0] * b[0]), _sat(a[1] * b[1])


def _size_union(a: _Size, b: _Size) -> _Size:
    return min(a[0], b[0]), max(a[1], b[1])


@dataclass
class _Decl:
    """The DeclType facts compile.go's sizeEstimator reads: fields, key and element types, MaxElements."""

    max: int
    key: _Decl | None = None
    elem: _Decl | None = None
    fields: dict[str, _Decl] | None = None


# compile.go: attributeType, domainType, idType, driverType, the attribute and capacity maps, the device.
_ATTRIBUTE_DECL = _Decl(_DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH)
_DOMAIN_DECL = _Decl(_DEVICE_MAX_DOMAIN_LENGTH)
_ID_DECL = _Decl(_DEVICE_MAX_ID_LENGTH)
_DEVICE_DECL = _Decl(
    0,
    fields={
        "driver": _Decl(_DRIVER_NAME_MAX_LENGTH),
        "allowMultipleAllocations": _Decl(1),
        "attributes": _Decl(
            _MAX_ATTRIBUTES_AND_CAPACITIES,
            _DOMAIN_DECL,
            _Decl(_MAX_ATTRIBUTES_AND_CAPACITIES, _ID_DECL, _ATTRIBUTE_DECL),
        ),
        "capacity": _Decl(
            _MAX_ATTRIBUTES_AND_CAPACITIES,
            _DOMAIN_DECL,
            _Decl(_MAX_ATTRIBUTES_AND_CAPACITIES, _ID_DECL, _Decl(0)),
        ),
    },
)


def _device_size(path: list[str] | None) -> _Size | None:
    """compile.go sizeEstimator.EstimateSize: the size bound of what a path from ``device`` reaches."""
    if not path or path[0] != "device":
        return None
    node: _Decl | None = _DEVICE_DECL
    for name in path[1:]:
        assert node is not None
        if name in ("@items", "@values"):
            node = node.elem
        elif name == "@keys":
            node = node.key
        else:
            found = (node.fields or {}).get(name)
            if found is None:
                # Any id of an attribute map reaches an attribute value.
                if node.elem is _ATTRIBUTE_DECL:
                    node = _ATTRIBUTE_DECL
                    continue
                return None
            node = found
        if node is None:
            return None
    assert node is not None
    return 0, node.max


_SCALAR_KINDS = frozenset({"bool", "double", "duration", "int", "timestamp", "uint"})


def _expr_size(e: _Expr) -> _Size | None:
    """computeExprSize: literals, list and map literals."""
    if isinstance(e, _Lit):
        if e.kind in ("string", "bytes") and isinstance(e.value, (str, bytes)):
            return len(e.value), len(e.value)
        if e.kind in _SCALAR_KINDS or e.kind == "null_type":
            return 1, 1
        return None
    if isinstance(e, _List):
        return len(e.elems), len(e.elems)
    if isinstance(e, _Map):
        return len(e.entries), len(e.entries)
    return None


@dataclass
class _EntrySize:
    container: str
    key: _Size
    val: _Size


def _entry_union(a: _EntrySize | None, b: _EntrySize | None) -> _EntrySize | None:
    if a is None or b is None:
        return None
    return _EntrySize(a.container, _size_union(a.key, b.key), _size_union(a.val, b.val))


@dataclass
class _LocalVar:
    path: list[str]
    size: _Size | None
    entry: _EntrySize | None


@dataclass
class _Node:
    """checker.AstNode: what function estimators see of an argument."""

    path: list[str] | None
    t: _Type
    expr: _Expr | None
    size: _Size | None


_LIST_FUNCTIONS = frozenset({"isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"})
_NOMINAL_FUNCTIONS = frozenset(
    {
        "sign",
        "asInteger",
        "isInteger",
        "asApproximateFloat",
        "isGreaterThan",
        "isLessThan",
        "compareTo",
        "add",
        "sub",
        "major",
        "minor",
        "patch",
    }
)
_SETS_FACTORS = {
    "list_sets_contains_list": 1.0,
    "list_sets_intersects_list": 1.0,
    "list_sets_equivalent_list": 2.0,
}
_ORDERING_OVERLOADS = frozenset(
    f"{p}_{k}" for p in ("less", "less_equals", "greater", "greater_equals") for k in ("string", "bytes")
) | {"equals", "not_equals"}


def estimate_cost(expression: str) -> int:
    """The worst-case cost cel-go's estimator gives the selector in compile.go's environment (the
    figure validation.go compares with CELSelectorExpressionMaxCost). CelCompileError or CelUnsupported
    when the expression does not compile."""
    return compile_selector(expression, validate=False).max_cost


class _Coster:
    """cel-go checker/cost.go ``coster`` with Kubernetes' CostEstimator (library/cost.go) and compile.go's
    sizeEstimator. Only the upper bound is tracked for costs (validation compares the maximum); sizes
    keep both bounds, which the replace() estimate uses."""

    def __init__(self) -> None:
        self.paths: dict[int, list[str]] = {}
        self.local: dict[str, list[_LocalVar]] = {}
        self.sizes: dict[int, _Size] = {}
        self.entries: dict[int, _EntrySize] = {}

    # scopes ------------------------------------------------------------------------------------------
    def _peek(self, name: str) -> _LocalVar | None:
        stack = self.local.get(name)
        return stack[-1] if stack else None

    def _push(self, name: str, var: _LocalVar) -> None:
        self.local.setdefault(name, []).append(var)

    def _pop(self, name: str) -> None:
        self.local[name].pop()

    def _push_local(self, name: str, e: _Expr) -> None:
        self._push(name, _LocalVar(self._path(e), self._size(e), self._entry(e)))

    def _push_iter(self, name: str, rng: _Expr) -> None:
        """pushIterSingle: list items or map keys, with the range's entry sizes when it has them."""
        entry = self._entry(rng)
        container = entry.container if entry is not None else rng.t[0]
        if container == "list":
            size, sub = (entry.val if entry is not None else None), "@items"
        else:
            size, sub = (entry.key if entry is not None else None), "@keys"
        self._push(name, _LocalVar([*self._path(rng), sub], size, None))

    # paths and sizes -------------------------------------------------------------------------------------
    def _path(self, e: _Expr) -> list[str]:
        if isinstance(e, _Ident):
            var = self._peek(e.name)
            if var is not None:
                return list(var.path)
        return list(self.paths.get(id(e), []))

    def _size(self, e: _Expr) -> _Size | None:
        """computeSize."""
        hit = self.sizes.get(id(e))
        if hit is not None:
            return hit
        size = _expr_size(e)
        if size is not None:
            return size
        size = _device_size(self._path(e))
        if size is not None:
            self.sizes[id(e)] = size
            return size
        if e.t[0] in _SCALAR_KINDS:
            return 1, 1
        if isinstance(e, _Ident):
            var = self._peek(e.name)
            if var is not None and var.size is not None:
                return var.size
        return None

    def _entry(self, e: _Expr) -> _EntrySize | None:
        hit = self.entries.get(id(e))
        if hit is not None:
            return hit
        if isinstance(e, _Ident):
            var = self._peek(e.name)
            if var is not None:
                return var.entry
        return None

    def _copy_sizes(self, dst: _Expr, src: _Expr) -> None:
        size, entry = self._size(src), self._entry(src)
        if size is not None:
            self.sizes[id(dst)] = size
        if entry is not None:
            self.entries[id(dst)] = entry

    def _node(self, e: _Expr) -> _Node:
        path: list[str] | None = self._path(e)
        if path and path[0] in _ACCUMULATORS:
            path = None
        return _Node(path, e.t, e, self._size(e))

    @staticmethod
    def _known(node: _Node) -> _Size:
        """sizeOrUnknown / library CostEstimator.sizeEstimate."""
        if node.size is not None:
            return node.size
        return _device_size(node.path) or _UNKNOWN

    # costs -----------------------------------------------------------------------------------------------
    def cost(self, e: _Expr) -> int:
        if isinstance(e, _Lit):
            return 0
        if isinstance(e, _Ident):
            var = self._peek(e.name)
            self.paths[id(e)] = list(var.path) if var is not None else [e.name]
            return _SELECT_AND_IDENT_COST
        if isinstance(e, _Select):
            if e.test_only:
                # Kubernetes' base environment: checker.PresenceTestHasCost(false).
                return self.cost(e.operand)
            total = self.cost(e.operand)
            if e.operand.t[0] in ("map", "device"):
                total = _sat(total + _SELECT_AND_IDENT_COST)
            self.paths[id(e)] = [*self._path(e.operand), e.field]
            return total
        if isinstance(e, _Call):
            return self._call(e)
        if isinstance(e, _List):
            total, item = 0, ((_U64, 0) if e.elems else (0, 0))
            for x in e.elems:
                total = _sat(total + self.cost(x))
                item = _size_union(item, self._size(x) or _UNKNOWN)
            self.entries[id(e)] = _EntrySize("list", (1, 1), item)
            return _sat(total + _LIST_CREATE_BASE_COST)
        if isinstance(e, _Map):
            total = 0
            keys, values = ((_U64, 0), (_U64, 0)) if e.entries else ((0, 0), (0, 0))
            for k, v in e.entries:
                total = _sat(total + self.cost(k) + self.cost(v))
                keys = _size_union(keys, self._size(k) or _UNKNOWN)
                values = _size_union(values, self._size(v) or _UNKNOWN)
            self.entries[id(e)] = _EntrySize("map", keys, values)
            return _sat(total + _MAP_CREATE_BASE_COST)
        assert isinstance(e, _Comp)
        return self._bind(e) if e.macro == "bind" else self._comprehension(e)

    def _comprehension(self, e: _Comp) -> int:
        total = _sat(self.cost(e.iter_range) + self.cost(e.accu_init))
        self._push_local(e.accu_var, e.accu_init)
        self._push_iter(e.iter_var, e.iter_range)
        loop = self.cost(e.cond)
        step = self.cost(e.step)
        self._pop(e.iter_var)
        total = _sat(total + self.cost(e.result))
        self._pop(e.accu_var)
        count = self._size(e.iter_range) or _UNKNOWN
        total = _sat(total + _sat(count[1] * _sat(step + loop)))
        if isinstance(e.accu_init, _Lit):
            size = self._size(e.accu_init)
            if size is not None:
                self.sizes[id(e)] = size
        elif isinstance(e.accu_init, (_List, _Map)):
            self.sizes[id(e)] = count
            entry = self._entry(e.step)
            if entry is not None:
                self.entries[id(e)] = entry
        return total

    def _bind(self, e: _Comp) -> int:
        # Binds are lazily initialized: the cost of the empty range is kept.
        total = _sat(self.cost(e.iter_range) + self.cost(e.accu_init))
        self._push_local(e.accu_var, e.accu_init)
        total = _sat(total + self.cost(e.result))
        self._pop(e.accu_var)
        self._copy_sizes(e, e.result)
        return total

    def _call(self, e: _Call) -> int:
        if e.fn == "dyn" and e.args:
            total = _sat(1 + self.cost(e.args[0]))
            self._copy_sizes(e, e.args[0])
            return total
        arg_costs: list[int] = []
        args: list[_Node] = []
        for a in e.args:
            arg_costs.append(self.cost(a))
            args.append(self._node(a))
        total = 0
        target: _Node | None = None
        if e.target is not None:
            total = self.cost(e.target)
            target = self._node(e.target)
        fn_cost = 0
        result: _Size | None = None
        for ovl in e.overloads:
            cost, size = self._function_cost(e, ovl, target, args, arg_costs)
            fn_cost = max(fn_cost, cost)
            if size is not None:
                result = size if result is None else _size_union(result, size)
            if ovl in ("index_list", "index_map") and e.args:
                entry = self._entry(e.args[0])
                result = entry.val if entry is not None else None
                sub = "@items" if ovl == "index_list" else "@values"
                self.paths[id(e)] = [*self._path(e.args[0]), sub]
            if result is None:
                result = self._size(e)
        if result is not None:
            self.sizes[id(e)] = result
        return _sat(total + fn_cost)

    def _function_cost(
        self, e: _Call, ovl: str, target: _Node | None, args: list[_Node], arg_costs: list[int]
    ) -> tuple[int, _Size | None]:
        argsum = _sat(sum(arg_costs))
        # ext/sets.go estimateSetsCost (an overload estimator, consulted first)
        if ovl in _SETS_FACTORS and len(args) == 2:
            product = _size_mul(self._known(args[0]), self._known(args[1]))
            return _sat(_factor(product[1], _SETS_FACTORS[ovl]) + 1 + argsum), None
        k8s = self._library_cost(e.fn, target, args)
        if k8s is not None:
            return _sat(k8s[0] + argsum), k8s[1]
        traversal = _STRING_TRAVERSAL_COST_FACTOR
        if ovl in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return _sat(_factor(self._known(args[0])[1], traversal) + argsum), None
        if ovl == "in_list" and len(args) == 2:
            return _sat(_factor(self._known(args[1])[1], 1) + argsum), None
        if ovl == "matches_string" and target is not None and len(args) == 1:
            text = _factor(_size_add(self._known(target), (1, 1))[1], traversal)
            regex = _factor(self._known(args[0])[1], _REGEX_STRING_LENGTH_COST_FACTOR)
            return _sat(_sat(text * regex) + argsum), None
        if ovl == "contains_string" and target is not None and len(args) == 1:
            text = _factor(self._known(target)[1], traversal)
            sub = _factor(self._known(args[0])[1], traversal)
            return _sat(_sat(text * sub) + argsum), None
        if ovl in ("logical_or", "logical_and"):
            return _sat(arg_costs[0] + arg_costs[1]), None
        if ovl == "conditional" and len(args) == 3:
            size = _size_union(self._known(args[1]), self._known(args[2]))
            entry = _entry_union(self._entry(e.args[1]), self._entry(e.args[2]))
            if entry is not None:
                self.entries[id(e)] = entry
            return _sat(arg_costs[0] + max(arg_costs[1], arg_costs[2])), size
        if ovl in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            size = _size_add(self._known(args[0]), self._known(args[1]))
            entry = _entry_union(self._entry(e.args[0]), self._entry(e.args[1]))
            if entry is not None:
                self.entries[id(e)] = entry
            if ovl == "add_list":
                return _sat(1 + argsum), size
            return _sat(_factor(size[1], traversal) + argsum), size
        if ovl in _ORDERING_OVERLOADS and len(args) == 2:
            smallest = min(self._known(args[0])[1], self._known(args[1])[1])
            return _sat(_factor(smallest, traversal) + argsum), None
        if ovl in ("string_to_bytes", "bytes_to_string") and len(args) == 1:
            size = self._known(args[0])
            cost = _sat(_factor(size[1], traversal) + argsum)
            if ovl == "string_to_bytes":
                return cost, (size[0], _sat(size[1] * 4))
            return cost, (size[0] // 4, size[1])
        return _sat(1 + argsum), None

    def _element(self, target: _Node) -> _Node | None:
        """library CostEstimator.listElementNode."""
        if len(target.t) < 2:
            return None
        path = [*target.path, "@items"] if target.path else None
        return _Node(path, target.t[1], None, None)

    def _library_cost(
        self, fn: str, target: _Node | None, args: list[_Node]
    ) -> tuple[int, _Size | None] | None:
        """Kubernetes' CostEstimator.EstimateCallCost (apiserver/pkg/cel/library/cost.go)."""
        known = self._known
        traversal = _STRING_TRAVERSAL_COST_FACTOR
        if fn in _LIST_FUNCTIONS and target is not None:
            element = self._element(target)
            if element is None:
                return _factor(known(target)[1], traversal), None
            per_element = 1
            if element.t[0] in ("string", "bytes"):
                per_element = _sat(per_element + _factor(known(element)[1], traversal))
            return _sat(known(target)[1] * per_element), None
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            size = known(target)
            return _factor(size[1], traversal), size
        if fn == "replace" and target is not None and len(args) >= 2:
            return self._replace_cost(known(target), known(args[0]), known(args[1]))
        if fn == "split" and target is not None:
            size = known(target)
            most = size[1]
            if len(args) > 1 and isinstance(args[1].expr, _Lit) and args[1].expr.kind == "int":
                most = int(args[1].expr.value) & _U64  # uint64(int64)
            return _factor(size[1], 2 * traversal), (0, most)
        if fn == "join" and target is not None:
            length = known(target)
            joined: _Size = (0, 0)
            element = self._element(target)
            if element is not None:
                joined = _size_mul(length, known(element))
            if args:
                separators = (max(length[0] - 1, 0), max(length[1] - 1, 0))
                joined = _size_add(joined, _size_mul(known(args[0]), separators))
            return _factor(joined[1], traversal), joined
        if fn in ("find", "findAll") and target is not None and args:
            size = known(target)
            text = _factor(_size_add(size, (1, 1))[1], traversal)
            regex = _factor(known(args[0])[1], _REGEX_STRING_LENGTH_COST_FACTOR)
            return _sat(text * regex), (0, size[1])
        if fn in ("quantity", "isQuantity", "semver", "isSemver") and args:
            return _factor(known(args[0])[1], traversal), None
        if fn in _NOMINAL_FUNCTIONS:
            return 1, None
        if (
            fn == "_==_"
            and len(args) == 2
            and args[0].t == args[1].t
            and args[0].t[0] in ("quantity", "semver")
        ):
            return 1, None
        return None

    @staticmethod
    def _replace_cost(size: _Size, old: _Size, new: _Size) -> tuple[int, _Size]:
        def ceil_div(a: int, b: int) -> int:
            return min(_U64, math.ceil(float(a) / float(b)))

        if old[0] == 0:
            count_max, kept_max = (size[1] + 1 if size[1] < _U64 else size[1]), size[1]
        elif new[1] <= old[0]:
            count_max, kept_max = 0, size[1]
        else:
            count_max, kept_max = ceil_div(size[1], old[0]), 0
        if old[1] == 0:
            count_min, kept_min = (size[0] + 1 if size[0] < _U64 else size[0]), size[0]
        elif old[1] <= new[0]:
            count_min, kept_min = 0, size[0]
        else:
            count_min, kept_min = ceil_div(size[0], old[1]), 0
        result = _size_add(_size_mul((count_min, count_max), new), (kept_min, kept_max))
        return _factor(size[1], 2 * _STRING_TRAVERSAL_COST_FACTOR), result


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
