"""What kube-scheduler borrows from k8s.io/apimachinery: field errors, Go durations and name formats.

- ``ErrorList`` renders errors as ``field.Error`` does (apimachinery/pkg/util/validation/field/errors.go):
  ``<path>: Invalid value: <value>: <detail>``; ``go_quote`` and ``format_value`` are its quoting;
- ``parse_duration_ns``/``parse_duration``/``format_duration``: Go's time.ParseDuration and
  Duration.String, as metav1.Duration encodes durations;
- ``is_label_key``, ``is_label_value``, ``is_dns1123_subdomain`` (apimachinery/pkg/api/validate/content)
  and ``validate_label_name`` (metav1validation.ValidateLabelName).

Nothing here depends on the rest of the engine: the configuration, the API validation of snapshot
objects, node selectors, the framework and the plugins' args validation all use it.
"""

from __future__ import annotations

import json
import re
from typing import Any

_MAX_INT64 = 2**63 - 1


# --------------------------------------------------------------------------------------------------
# field.Error rendering (apimachinery/pkg/util/validation/field/errors.go)


def go_quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def format_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, str):
        return go_quote(v)
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


class ErrorList:
    def __init__(self) -> None:
        self.items: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, msg: str) -> None:
        self.items.append(msg)

    def invalid(self, path: str, value: Any, detail: str) -> None:
        s = f"{path}: Invalid value: {format_value(value)}"
        self.items.append(f"{s}: {detail}" if detail else s)

    def required(self, path: str, detail: str = "") -> None:
        self.items.append(f"{path}: Required value: {detail}" if detail else f"{path}: Required value")

    def duplicate(self, path: str, value: Any) -> None:
        self.items.append(f"{path}: Duplicate value: {format_value(value)}")

    def not_supported(self, path: str, value: Any, valid: list[str]) -> None:
        s = f"{path}: Unsupported value: {format_value(value)}"
        if valid:
            s += ": supported values: " + ", ".join(go_quote(v) for v in valid)
        self.items.append(s)

    def forbidden(self, path: str, detail: str) -> None:
        self.items.append(f"{path}: Forbidden: {detail}")

    def not_found(self, path: str, value: Any, detail: str) -> None:
        self.items.append(f"{path}: Not found: {format_value(value)}: {detail}")


def child_path(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# --------------------------------------------------------------------------------------------------
# Go durations (time.ParseDuration, Duration.String), as metav1.Duration encodes them

_UNIT_NS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_DURATION_PART = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]*)")


def parse_duration_ns(text: str) -> int:
    """time.ParseDuration, in nanoseconds; raises ValueError with Go's message."""
    orig = text
    bad = ValueError(f"time: invalid duration {go_quote(orig)}")
    neg = False
    if text and text[0] in "+-":
        neg = text[0] == "-"
        text = text[1:]
    if text == "0":
        return 0
    if not text:
        raise bad
    total = 0
    while text:
        m = _DURATION_PART.match(text)
        if m is None:  # pragma: no cover - the pattern always matches
            raise bad
        whole, frac, unit = m.group(1), m.group(2), m.group(3)
        if not whole and not frac:
            raise bad
        if not unit:
            raise ValueError(f"time: missing unit in duration {go_quote(orig)}")
        if unit not in _UNIT_NS:
            raise ValueError(f"time: unknown unit {go_quote(unit)} in duration {go_quote(orig)}")
        scale = _UNIT_NS[unit]
        value = int(whole or "0") * scale
        if frac:
            value += int(frac) * scale // 10 ** len(frac)
        total += value
        text = text[m.end() :]
    if total > _MAX_INT64:
        raise bad
    return -total if neg else total


def parse_duration(text: str) -> float:
    """A metav1.Duration string ("10s", "1m30s") in seconds."""
    return parse_duration_ns(text) / 1e9


def _frac(value: int, unit: int) -> str:
    whole, rest = divmod(value, unit)
    if not rest:
        return str(whole)
    digits = str(rest).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def format_duration(ns: int) -> str:
    """Duration.String."""
    if ns == 0:
        return "0s"
    u = abs(ns)
    if u < 1_000:
        s = f"{u}ns"
    elif u < 1_000_000:
        s = _frac(u, 1_000) + "\u00b5s"
    elif u < 1_000_000_000:
        s = _frac(u, 1_000_000) + "ms"
    else:
        h, rem = divmod(u, 3600 * 10**9)
        m, rem = divmod(rem, 60 * 10**9)
        s = (f"{h}h" if h else "") + (f"{m}m" if h or m else "") + _frac(rem, 10**9) + "s"
    return "-" + s if ns < 0 else s


# --------------------------------------------------------------------------------------------------
# Name formats (apimachinery/pkg/api/validate/content: IsLabelKey, IsLabelValue, IsDNS1123Subdomain)

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_FMT = _DNS_LABEL_FMT + "(\\." + _DNS_LABEL_FMT + ")*"
_DNS_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_DNS_SUBDOMAIN_RE = re.compile(_DNS_SUBDOMAIN_FMT)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _blen(s: str) -> int:
    return len(s.encode())


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if _blen(value) > 253:
        errs.append("must be no more than 253 bytes")
    if not _DNS_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_regex_error(_DNS_SUBDOMAIN_ERR, _DNS_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_label_key(value: str) -> list[str]:
    """content.IsLabelKey (also validation.IsQualifiedName)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + _regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append(
            "name part " + _regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_label_value(value: str) -> list[str]:
    errs = []
    if _blen(value) > 63:
        errs.append("must be no more than 63 bytes")
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def validate_label_name(value: str, path: str, errs: ErrorList) -> None:
    """metav1validation.ValidateLabelName: one error per message."""
    for msg in is_label_key(value):
        errs.invalid(path, value, msg)
