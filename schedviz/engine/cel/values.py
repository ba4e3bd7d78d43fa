"""Kubernetes' CEL values: quantity() and semver() values, the ``device`` variable's environment
(``device_env``), and the errors every stage raises (CelError, CelCompileError, CelUnsupported).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import total_ordering
from typing import Any

from celpy import celtypes as ct

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
