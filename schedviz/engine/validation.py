"""What the Kubernetes API server would refuse, refused: validation of the objects a snapshot holds.

A snapshot is what ``kubectl get -o yaml|json`` printed, or something written by hand or by a tool.
An object that kube-apiserver v1.35.4 would never have stored cannot be replayed faithfully: the
scheduler never sees it, so any verdict about it would be invented. This module checks each object
of the kinds the engine reads against the API server's own validation, for the fields the
scheduler's plugins read, and reports every problem in the API server's ``field.ErrorList`` wording
(``<field path>: <type>: <value>: <detail>``). docs/validation.md lists the rules.

It is a re-implementation of, and cites, the upstream validation code of Kubernetes v1.35.4:

- k8s.io/kubernetes pkg/apis/core/validation/validation.go (Pod, Node, Namespace, Service,
  ReplicationController, PersistentVolume, PersistentVolumeClaim, node selectors, tolerations,
  taints, topology spread constraints, resource requirements, ...);
- k8s.io/apimachinery pkg/apis/meta/v1/validation/validation.go (label selectors, labels),
  pkg/api/validation/objectmeta.go and generic.go (object metadata, names),
  pkg/api/validate/content (label keys and values, DNS names), pkg/util/validation/field/errors.go
  (the wording of each error);
- pkg/apis/apps/validation (ReplicaSet, StatefulSet, Deployment selectors),
  pkg/apis/policy/validation (PodDisruptionBudget), pkg/apis/scheduling/validation (PriorityClass),
  pkg/apis/storage/validation (StorageClass, CSINode, CSIDriver, CSIStorageCapacity,
  VolumeAttachment), pkg/apis/resource/validation (ResourceClaim, ResourceClaimTemplate,
  DeviceClass, ResourceSlice: the structure the DynamicResources plugin reads).

What is validated is the object as the API server would hold it, after its defaulting: a field the
API server fills in when it is absent (a toleration's operator, a port's protocol, a storage class's
volumeBindingMode, ...) is not required here. Values that v1.35.4 lets objects created by older
releases keep (the "ratcheting" validation options, e.g. invalid label values in selectors) are not
refused either: the API server still holds such objects, and so may a snapshot. Where an upstream
field path does not point at the offending value (node taints are reported under ``metadata.taints``
upstream), the path here names the field as it appears in the object.

Type errors (a string where a list belongs) are left to the engine's object views, which already
report them naming the field; this module skips values of the wrong type.

Cost: label keys and values, DNS names and quantities are checked once per distinct string
(memoised); a pod's scheduling-related spec sections are validated once per distinct content
(keyed on their repr), so the pods of one template cost little more than one pod.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import ROUND_UP, Decimal
from typing import Any

from . import quantity as _quantity
from .config import is_dns1123_subdomain, is_label_key, is_label_value
from .contentkey import content_key
from .errors import InputError
from .objects import TEMPLATE_SECTIONS as _SHARED_SECTIONS
from .objects import PodTemplate
from .resources import (
    is_extended_resource_name,
    is_hugepage_resource_name,
    is_native_resource,
    is_overcommit_allowed,
)

JSON = dict[str, Any]

# The kinds validated here (Node, Pod and loader.KEPT_KINDS); any other kind is not looked at.
NAMESPACED_KINDS = frozenset(
    {
        "Pod",
        "Service",
        "ReplicaSet",
        "StatefulSet",
        "ReplicationController",
        "Deployment",
        "PodDisruptionBudget",
        "PersistentVolumeClaim",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "PodGroup",
        "CSIStorageCapacity",
    }
)

# field.Error wording (apimachinery/pkg/util/validation/field/errors.go ErrorType.String)
_REQUIRED = "Required value"
_INVALID = "Invalid value"
_UNSUPPORTED = "Unsupported value"
_FORBIDDEN = "Forbidden"
_DUPLICATE = "Duplicate value"
_TOO_LONG = "Too long"
_NOT_FOUND = "Not found"


# --------------------------------------------------------------------------------------------------
# field.Error and its rendering


class FieldError:
    """One ``field.Error``: the field path and the body (``Type: value: detail``)."""

    __slots__ = ("body", "field")

    def __init__(self, field: str, body: str) -> None:
        self.field = field
        self.body = body

    def __str__(self) -> str:
        return f"{self.field}: {self.body}"

    def __repr__(self) -> str:
        return f"FieldError({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldError) and (self.field, self.body) == (other.field, other.body)

    def __hash__(self) -> int:
        return hash((self.field, self.body))

    def under(self, prefix: str) -> FieldError:
        """The same error with ``prefix`` put before its (relative) path."""
        if not self.field:
            return FieldError(prefix, self.body)
        sep = "" if self.field.startswith("[") else "."
        return FieldError(f"{prefix}{sep}{self.field}", self.body)


class Named(str):
    """A value of a Go named string type (an operator, an effect, ...): field.Error renders it with
    json.Marshal, not with %q as it does a plain string."""

    __slots__ = ()


class GoJSON:
    """A value already rendered as Go's json.Marshal would (a Go struct without json tags)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(s: str) -> str:
    """strconv.Quote (what %q prints): printable runes kept, others escaped."""
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch.isprintable():
            out.append(ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        else:
            o = ord(ch)
            if o < 0x80:
                out.append(f"\\x{o:02x}")
            elif o < 0x10000:
                out.append(f"\\u{o:04x}")
            else:
                out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _json_string(s: str) -> str:
    """encoding/json's string encoding (HTML-safe: <, > and & escaped, as json.Marshal does)."""
    out = ['"']
    for ch in s:
        esc = _JSON_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch < " " or ch in "<>&\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_json(value: Any) -> str:
    """json.Marshal of a decoded JSON value (map keys sorted, as Go sorts them)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, GoJSON):
        return value.text
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return (
            "{"
            + ",".join(f"{_json_string(str(k))}:{go_json(value[k])}" for k in sorted(value, key=str))
            + "}"
        )
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return _json_string(str(value))


def bad_value(value: Any) -> str:
    """How field.Error.ErrorBody prints a bad value: simple types with %v, a string with %q,
    anything else (named string types, structs, maps, slices, pointers) with json.Marshal."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, Named | GoJSON):
        return go_json(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return go_json(value)


def _go_struct(*fields: tuple[str, Any]) -> GoJSON:
    """json.Marshal of an internal (untagged) Go struct: its field names, in declaration order."""
    return GoJSON("{" + ",".join(f"{_json_string(k)}:{go_json(v)}" for k, v in fields) + "}")


class Errs(list[FieldError]):
    """A field.ErrorList being built; the constructors mirror field.Required, field.Invalid, ..."""

    def required(self, path: str, detail: str = "") -> None:
        self.append(FieldError(path, f"{_REQUIRED}: {detail}" if detail else _REQUIRED))

    def invalid(self, path: str, value: Any, detail: str) -> None:
        body = f"{_INVALID}: {bad_value(value)}"
        self.append(FieldError(path, f"{body}: {detail}" if detail else body))

    def not_supported(self, path: str, value: Any, valid: Iterable[str]) -> None:
        body = f"{_UNSUPPORTED}: {bad_value(value)}"
        shown = [go_quote(v) for v in valid]
        self.append(FieldError(path, f"{body}: supported values: {', '.join(shown)}" if shown else body))

    def forbidden(self, path: str, detail: str) -> None:
        self.append(FieldError(path, f"{_FORBIDDEN}: {detail}" if detail else _FORBIDDEN))

    def duplicate(self, path: str, value: Any, detail: str = "") -> None:
        body = f"{_DUPLICATE}: {bad_value(value)}"
        self.append(FieldError(path, f"{body}: {detail}" if detail else body))

    def too_long(self, path: str, max_length: int) -> None:
        unit = "byte" if max_length == 1 else "bytes"
        self.append(FieldError(path, f"{_TOO_LONG}: may not be more than {max_length} {unit}"))

    def not_found(self, path: str, value: Any, detail: str) -> None:
        body = f"{_NOT_FOUND}: {bad_value(value)}"
        self.append(FieldError(path, f"{body}: {detail}" if detail else body))


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# --------------------------------------------------------------------------------------------------
# Reading raw JSON values leniently (wrong types are left to the object views)


def _map(v: object) -> JSON:
    return v if isinstance(v, dict) else {}


def _items(v: object) -> list[Any]:
    return v if isinstance(v, list) else []


def _str(v: object) -> str | None:
    """A string field as the engine's views read it: numbers and booleans as text, null as ""."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    return None


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str_list(v: object) -> list[str]:
    out: list[str] = []
    for x in _items(v):
        s = _str(x)
        if s is not None:
            out.append(s)
    return out


# --------------------------------------------------------------------------------------------------
# Name formats (apimachinery pkg/api/validate/content, pkg/util/validation, pkg/api/validation)

_MEMO_LIMIT = 200_000
_KEY_MEMO: dict[str, tuple[str, ...]] = {}
_VALUE_MEMO: dict[str, tuple[str, ...]] = {}
_SUBDOMAIN_MEMO: dict[str, tuple[str, ...]] = {}
_LABEL_MEMO: dict[str, tuple[str, ...]] = {}

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*")
_DNS1123_LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT)
_DNS1035_LABEL_ERR = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_PERCENT_FMT = "[0-9]+%"
_PERCENT_RE = re.compile(_PERCENT_FMT)


def _memo(cache: dict[str, tuple[str, ...]], fn: Callable[[str], list[str]], value: str) -> tuple[str, ...]:
    hit = cache.get(value)
    if hit is None:
        hit = tuple(fn(value))
        if len(cache) < _MEMO_LIMIT:
            cache[value] = hit
    return hit


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """content.RegexError."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def label_key_msgs(key: str) -> tuple[str, ...]:
    """content.IsLabelKey (validation.IsQualifiedName)."""
    return _memo(_KEY_MEMO, is_label_key, key)


def label_value_msgs(value: str) -> tuple[str, ...]:
    """content.IsLabelValue."""
    return _memo(_VALUE_MEMO, is_label_value, value)


def dns1123_subdomain_msgs(value: str) -> tuple[str, ...]:
    """content.IsDNS1123Subdomain. A valid name answers without the memo: object names are
    mostly unique (a pod's generated suffix), so remembering them would only cost memory."""
    if len(value) <= 253 and value.isascii() and _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        return ()
    return _memo(_SUBDOMAIN_MEMO, is_dns1123_subdomain, value)


def _is_dns1123_label(value: str) -> list[str]:
    errs: list[str] = []
    if len(value.encode()) > 63:
        errs.append("must be no more than 63 bytes")
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_DNS1123_LABEL_ERR, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_label_msgs(value: str) -> tuple[str, ...]:
    """content.IsDNS1123Label."""
    return _memo(_LABEL_MEMO, _is_dns1123_label, value)


def dns1035_label_msgs(value: str) -> list[str]:
    """validation.IsDNS1035Label."""
    errs: list[str] = []
    if len(value.encode()) > 63:
        errs.append("must be no more than 63 bytes")
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(_regex_error(_DNS1035_LABEL_ERR, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def path_segment_msgs(name: str) -> list[str]:
    """path.IsValidPathSegmentName: what every object name must satisfy (rest.BeforeCreate)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


NameFn = Callable[[str], Iterable[str]]


def validate_label_name(key: str, path: str, errs: Errs) -> None:
    """metav1validation.ValidateLabelName."""
    for msg in label_key_msgs(key):
        errs.invalid(path, key, msg)


def _label_problems(labels: Mapping[Any, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for k, v in labels.items():
        key = str(k)
        out.extend((key, msg) for msg in label_key_msgs(key))
        value = _str(v)
        if value is not None:
            out.extend((value, msg) for msg in label_value_msgs(value))
    return out


_LABELS_MEMO: dict[tuple[tuple[Any, Any], ...], list[tuple[str, str]]] = {}


def validate_labels(labels: object, path: str, errs: Errs) -> None:
    """metav1validation.ValidateLabels (errors at the map's path, as upstream reports them)."""
    if not isinstance(labels, dict) or not labels:
        return
    key = tuple(labels.items())
    try:
        found = _LABELS_MEMO.get(key)
    except TypeError:  # an unhashable value (a list where a string belongs): the views report it
        found = _label_problems(labels)
    else:
        if found is None:
            found = _label_problems(labels)
            if len(_LABELS_MEMO) < _MEMO_LIMIT:
                _LABELS_MEMO[key] = found
    for value, msg in found:
        errs.invalid(path, value, msg)


def validate_label_selector(sel: object, path: str, errs: Errs, *, check_values: bool = True) -> None:
    """metav1validation.ValidateLabelSelector / ValidateLabelSelectorRequirement.

    ``check_values=False`` is LabelSelectorValidationOptions.AllowInvalidLabelValueInSelector, which
    the API server turns on for objects that already hold such values."""
    if not isinstance(sel, dict):
        return
    validate_labels(sel.get("matchLabels"), _child(path, "matchLabels"), errs)
    for i, e in enumerate(_items(sel.get("matchExpressions"))):
        if not isinstance(e, dict):
            continue
        p = f"{path}.matchExpressions[{i}]"
        op = _str(e.get("operator")) or ""
        values = _str_list(e.get("values"))
        if op in ("In", "NotIn"):
            if not values:
                errs.required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.forbidden(
                    f"{p}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
        else:
            errs.invalid(f"{p}.operator", Named(op), "not a valid selector operator")
        validate_label_name(_str(e.get("key")) or "", f"{p}.key", errs)
        if check_values:
            for j, v in enumerate(values):
                for msg in label_value_msgs(v):
                    errs.invalid(f"{p}.values[{j}]", v, msg)


def _selector_is_empty(sel: JSON) -> bool:
    return not _map(sel.get("matchLabels")) and not _items(sel.get("matchExpressions"))


# --------------------------------------------------------------------------------------------------
# Object metadata (apimachinery pkg/api/validation/objectmeta.go ValidateObjectMetaAccessor)

_TOTAL_ANNOTATION_SIZE = 256 * 1024  # TotalAnnotationSizeLimitB


def validate_object_meta(raw: JSON, namespaced: bool, name_fn: NameFn, errs: Errs) -> None:
    """Name (per kind), namespace, labels and annotations of an object's metadata."""
    md = _map(raw.get("metadata"))
    name = _str(md.get("name")) or ""
    if not name:
        errs.required("metadata.name", "name or generateName is required")
    elif name_fn is _subdomain and len(name) <= 253 and _DNS1123_SUBDOMAIN_RE.fullmatch(name):
        pass  # a valid subdomain is a valid path segment too (no '/', '%', and not '.' or '..')
    else:
        for msg in name_fn(name):
            errs.invalid("metadata.name", name, msg)
        for msg in path_segment_msgs(name):
            errs.invalid("metadata.name", name, msg)
    ns = _str(md.get("namespace")) or ""
    if namespaced:
        # an absent namespace is the request's namespace ("default" here, as the loader reads it)
        if ns:
            for msg in dns1123_label_msgs(ns):
                errs.invalid("metadata.namespace", ns, msg)
    elif ns:
        errs.forbidden("metadata.namespace", "not allowed on this type")
    validate_labels(md.get("labels"), "metadata.labels", errs)
    annotations = _map(md.get("annotations"))
    if annotations:
        total = 0
        for k, v in annotations.items():
            key = str(k)
            for msg in label_key_msgs(key.lower()):
                errs.invalid("metadata.annotations", key, msg)
            total += len(key.encode()) + len((_str(v) or "").encode())
        if total > _TOTAL_ANNOTATION_SIZE:
            errs.too_long("metadata.annotations", _TOTAL_ANNOTATION_SIZE)


def _subdomain(name: str) -> Iterable[str]:
    return dns1123_subdomain_msgs(name)


def _dns_label(name: str) -> Iterable[str]:
    return dns1123_label_msgs(name)


def _any_name(name: str) -> Iterable[str]:
    return ()


# --------------------------------------------------------------------------------------------------
# Quantities (k8s.io/apimachinery/pkg/api/resource): parsing and the canonical String()

_DEC_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BIN_SUFFIX = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_BIN_SUFFIXES = frozenset(_BIN_SUFFIX[1:])
_NUMBER_PART = re.compile(r"[+-]?[0-9.]*")
_MILLI = Decimal("0.001")
_NANO = Decimal("0.000000001")


class Qty:
    """A parsed resource.Quantity: its exact value and its format (DecimalSI, BinarySI or
    DecimalExponent, from the suffix it was written with)."""

    __slots__ = ("fmt", "value")

    def __init__(self, value: Decimal, fmt: str) -> None:
        self.value = value
        self.fmt = fmt

    def milli_rounded(self) -> Qty:
        """SetDefaults_ResourceList: every quantity of a ResourceList rounded up to milli precision."""
        return Qty(
            self.value.quantize(_MILLI, rounding=ROUND_UP) if self.value != 0 else self.value, self.fmt
        )

    def __str__(self) -> str:
        return canonical(self.value, self.fmt)


_QTY_MEMO: dict[object, Qty | None] = {}


def parse_qty(raw: object) -> Qty | None:
    """resource.ParseQuantity of a string or JSON number; None when it does not parse (the engine's
    views report that)."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        return None
    key = (type(raw), raw)
    if key in _QTY_MEMO:
        return _QTY_MEMO[key]
    out: Qty | None
    try:
        value = _quantity.parse(raw)
    except InputError:
        out = None
    else:
        text = raw if isinstance(raw, str) else str(raw)
        suffix = text.strip()[_NUMBER_PART.match(text.strip()).end() :]  # type: ignore[union-attr]
        if suffix in _BIN_SUFFIXES:
            fmt = "BinarySI"
        elif suffix[:1] in ("e", "E"):
            fmt = "DecimalExponent"
        else:
            fmt = "DecimalSI"
        if value != 0 and value != value.quantize(_NANO, rounding=ROUND_UP):
            value = value.quantize(_NANO, rounding=ROUND_UP)  # ParseQuantity rounds up to nano units
        if fmt == "BinarySI" and 0 < abs(value) < 1:
            fmt = "DecimalSI"
        out = Qty(value, fmt)
    if len(_QTY_MEMO) < _MEMO_LIMIT:
        _QTY_MEMO[key] = out
    return out


def canonical(value: Decimal, fmt: str) -> str:
    """Quantity.String(): CanonicalizeBytes (quantity.go) with AsCanonicalBytes /
    AsCanonicalBase1024Bytes (amount.go)."""
    if value == 0:
        return "0"
    if fmt == "BinarySI":
        if -1024 < value < 1024 or value != value.to_integral_value():
            fmt = "DecimalSI"
        else:
            mantissa = int(value)
            exp = 0
            while exp < len(_BIN_SUFFIX) - 1 and mantissa % 1024 == 0:
                mantissa //= 1024
                exp += 1
            return f"{mantissa}{_BIN_SUFFIX[exp]}"
    sign, digits, exponent = value.normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = int("".join(map(str, digits)) or "0")
    r = exponent % 3
    if r:  # make the exponent a multiple of 3, growing the mantissa
        mantissa *= 10**r
        exponent -= r
    number = f"-{mantissa}" if sign else str(mantissa)
    if fmt == "DecimalExponent":
        return number if exponent == 0 else f"{number}e{exponent}"
    return number + _DEC_SUFFIX.get(exponent, "")


# --------------------------------------------------------------------------------------------------
# Resource requirements (validation.go validateResourceRequirements and friends)

_INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "count/resourcequotas",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_STANDARD_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_IS_NEGATIVE = "must be greater than or equal to 0"


def _is_integer_resource(name: str) -> bool:
    """helper.IsIntegerResourceName."""
    return name in _INTEGER_RESOURCES or is_extended_resource_name(name)


def _validate_resource_name(name: str, path: str, errs: Errs) -> bool:
    """validateResourceName; False when it reported a problem."""
    before = len(errs)
    for msg in label_key_msgs(name):
        errs.invalid(path, Named(name), msg)
    if len(errs) != before:
        return False
    if "/" not in name and not (
        name in _STANDARD_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))
    ):
        errs.invalid(path, Named(name), "must be a standard resource type or fully qualified")
        return False
    return True


def _validate_container_resource_name(name: str, path: str, errs: Errs) -> None:
    """validateContainerResourceName."""
    _validate_resource_name(name, path, errs)
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER_RESOURCES or is_hugepage_resource_name(name)):
            errs.invalid(path, Named(name), "must be a standard resource for containers")
    elif not is_native_resource(name) and not is_extended_resource_name(name):
        errs.invalid(path, Named(name), "doesn't follow extended resource name standard")


def _validate_pod_resource_name(name: str, path: str, errs: Errs) -> None:
    """validatePodResourceName (pod-level resources: cpu, memory, hugepages-*)."""
    if not _validate_resource_name(name, path, errs):
        return
    if name not in ("cpu", "memory") and not name.startswith("hugepages-"):
        errs.not_supported(path, Named(name), ["cpu", "hugepages-", "memory"])


def _validate_quantity_value(name: str, q: Qty, path: str, errs: Errs) -> None:
    """ValidateResourceQuantityValue: not negative; a whole number for integer resources."""
    if q.value < 0:
        errs.invalid(path, str(q), _IS_NEGATIVE)
    if _is_integer_resource(name) and (q.value * 1000) % 1000 != 0:
        errs.invalid(path, str(q), "must be an integer")


def _resource_list(raw: object) -> list[tuple[str, Qty]]:
    out: list[tuple[str, Qty]] = []
    for k, v in _map(raw).items():
        q = parse_qty(v)
        if q is not None:
            out.append((str(k), q.milli_rounded()))
    return out


def validate_resource_requirements(
    res: object,
    path: str,
    errs: Errs,
    claim_names: frozenset[str],
    name_fn: Callable[[str, str, Errs], None] = _validate_container_resource_name,
) -> None:
    """validateResourceRequirements, on the resources as the API server defaults them (a limit
    without a request is also the request)."""
    res = _map(res)
    lim_path = _child(path, "limits")
    req_path = _child(path, "requests")
    limits = _resource_list(res.get("limits"))
    requests = _resource_list(res.get("requests"))
    limit_of = dict(limits)
    given = {n for n, _ in requests}
    requests += [(n, q) for n, q in limits if n not in given]  # SetDefaults_Pod
    lim_cpu_mem = req_cpu_mem = lim_huge = req_huge = False
    for name, q in limits:
        p = f"{lim_path}[{name}]"
        name_fn(name, p, errs)
        _validate_quantity_value(name, q, p, errs)
        if is_hugepage_resource_name(name):
            lim_huge = True
        if name in ("cpu", "memory"):
            lim_cpu_mem = True
    for name, q in requests:
        p = f"{req_path}[{name}]"
        if name in given:
            name_fn(name, p, errs)
            _validate_quantity_value(name, q, p, errs)
        lim = limit_of.get(name)
        if lim is not None:
            if q.value != lim.value and not is_overcommit_allowed(name):
                errs.invalid(req_path, str(q), f"must be equal to {name} limit of {lim}")
            elif q.value > lim.value:
                errs.invalid(req_path, str(q), f"must be less than or equal to {name} limit of {lim}")
        elif not is_overcommit_allowed(name):
            errs.required(lim_path, "Limit must be set for non overcommitable resources")
        if is_hugepage_resource_name(name):
            req_huge = True
        if name in ("cpu", "memory"):
            req_cpu_mem = True
    if not lim_cpu_mem and not req_cpu_mem and (req_huge or lim_huge):
        errs.forbidden(path, "HugePages require cpu or memory")
    _validate_resource_claim_names(res.get("claims"), _child(path, "claims"), claim_names, errs)


def _validate_resource_claim_names(raw: object, path: str, pod_claims: frozenset[str], errs: Errs) -> None:
    """validateResourceClaimNames: containers' resources.claims refer to the pod's resourceClaims."""
    names: set[str] = set()
    for i, claim in enumerate(_items(raw)):
        if not isinstance(claim, dict):
            continue
        p = f"{path}[{i}]"
        name = _str(claim.get("name")) or ""
        request = _str(claim.get("request")) or ""
        if not name:
            errs.required(p)
            continue
        if name in names:
            errs.duplicate(p, name)
        else:
            key = name
            if request:
                for msg in dns1123_label_msgs(request):
                    errs.invalid(f"{p}.request", request, msg)
                key += "/" + request
            if key in names:
                errs.duplicate(p, key)
            elif not request:
                for other in names:
                    if "/" in other and other.split("/", 1)[0] == name:
                        errs.duplicate(p, name)
            names.add(key)
        if name not in pod_claims:
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += " which is empty" if not pod_claims else ": " + ", ".join(sorted(pod_claims))
            errs.not_found(p, name, detail)


# --------------------------------------------------------------------------------------------------
# Node selectors (validation.go ValidateNodeSelector, ValidateNodeSelectorTerm,
# ValidateNodeSelectorRequirement, ValidateNodeFieldSelectorRequirement)


def validate_node_selector_requirement(req: JSON, path: str, errs: Errs, *, check_values: bool) -> None:
    """ValidateNodeSelectorRequirement; ``check_values`` is !allowInvalidLabelValueInRequiredNodeAffinity."""
    op = _str(req.get("operator")) or ""
    values = _str_list(req.get("values"))
    if op in ("In", "NotIn"):
        if not values:
            errs.required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.forbidden(
                f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
    else:
        errs.invalid(f"{path}.operator", Named(op), "not a valid selector operator")
    validate_label_name(_str(req.get("key")) or "", f"{path}.key", errs)
    if check_values:
        for i, v in enumerate(values):
            for msg in label_value_msgs(v):
                errs.invalid(f"{path}.values[{i}]", v, msg)


def validate_node_field_selector_requirement(req: JSON, path: str, errs: Errs) -> None:
    """ValidateNodeFieldSelectorRequirement: metadata.name In/NotIn exactly one node name."""
    op = _str(req.get("operator")) or ""
    values = _str_list(req.get("values"))
    if op in ("In", "NotIn"):
        if len(values) != 1:
            errs.required(
                f"{path}.values",
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
    else:
        errs.invalid(f"{path}.operator", Named(op), "not a valid selector operator")
    key = _str(req.get("key")) or ""
    if key != "metadata.name":
        errs.invalid(f"{path}.key", key, "not a valid field selector key")
    else:
        for i, v in enumerate(values):
            for msg in dns1123_subdomain_msgs(v):
                errs.invalid(f"{path}.values[{i}]", v, msg)


def validate_node_selector_term(term: object, path: str, errs: Errs, *, check_values: bool) -> None:
    """ValidateNodeSelectorTerm."""
    term = _map(term)
    for j, req in enumerate(_items(term.get("matchExpressions"))):
        if isinstance(req, dict):
            validate_node_selector_requirement(
                req, f"{path}.matchExpressions[{j}]", errs, check_values=check_values
            )
    for j, req in enumerate(_items(term.get("matchFields"))):
        if isinstance(req, dict):
            validate_node_field_selector_requirement(req, f"{path}.matchFields[{j}]", errs)


def validate_node_selector(sel: object, path: str, errs: Errs, *, check_values: bool) -> None:
    """ValidateNodeSelector: at least one term, each valid."""
    terms = _items(_map(sel).get("nodeSelectorTerms"))
    tpath = f"{path}.nodeSelectorTerms"
    if not terms:
        errs.required(tpath, "must have at least one node selector term")
        return
    for i, term in enumerate(terms):
        validate_node_selector_term(term, f"{tpath}[{i}]", errs, check_values=check_values)


def validate_topology_selector_term(term: object, path: str, errs: Errs) -> dict[str, frozenset[str]]:
    """ValidateTopologySelectorTerm (a StorageClass's allowedTopologies)."""
    exprs: dict[str, frozenset[str]] = {}
    for i, req in enumerate(_items(_map(term).get("matchLabelExpressions"))):
        if not isinstance(req, dict):
            continue
        p = f"{path}.matchLabelExpressions[{i}]"
        values = _str_list(req.get("values"))
        if not values:
            errs.required(f"{p}.values")
        seen: set[str] = set()
        for j, v in enumerate(values):
            if v in seen:
                errs.duplicate(f"{p}.values[{j}]", v)
            seen.add(v)
        key = _str(req.get("key")) or ""
        validate_label_name(key, f"{p}.key", errs)
        if key in exprs:
            errs.duplicate(f"{p}.key", key)
        exprs[key] = frozenset(seen)
    return exprs


# --------------------------------------------------------------------------------------------------
# Affinity (validation.go validateAffinity, validateNodeAffinity, validatePodAffinity,
# validatePodAntiAffinity, validatePodAffinityTerm, validateWeightedPodAffinityTerms)


def _validate_weight(raw: JSON, path: str, errs: Errs) -> None:
    w = _int(raw.get("weight"))
    if w is None:
        w = 0 if raw.get("weight") is None else None
    if w is not None and (w <= 0 or w > 100):
        errs.invalid(f"{path}.weight", w, "must be in the range 1-100")


def validate_node_affinity(na: JSON, path: str, errs: Errs) -> None:
    """validateNodeAffinity / ValidatePreferredSchedulingTerms.

    Label values of required terms are not checked: v1.35.4 still holds pods created before they
    were (AllowInvalidLabelValueInRequiredNodeAffinity); preferred terms never check them."""
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, dict):
        validate_node_selector(
            req, f"{path}.requiredDuringSchedulingIgnoredDuringExecution", errs, check_values=False
        )
    ppath = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(_items(na.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        if not isinstance(term, dict):
            continue
        _validate_weight(term, f"{ppath}[{i}]", errs)
        validate_node_selector_term(
            term.get("preference"), f"{ppath}[{i}].preference", errs, check_values=False
        )


def validate_match_label_keys(
    sel: object, match: list[str], mismatch: list[str], path: str, errs: Errs
) -> None:
    """ValidateMatchLabelKeysAndMismatchLabelKeys (the path of a key found in both matchLabelKeys and
    labelSelector is given as ``<path>.matchLabelKeys[i]``; upstream says ``<path>[i]``)."""
    for key_path, keys in ((f"{path}.matchLabelKeys", match), (f"{path}.mismatchLabelKeys", mismatch)):
        if not keys:
            continue
        if not isinstance(sel, dict):
            errs.forbidden(key_path, "must not be specified when labelSelector is not set")
            continue
        for i, key in enumerate(keys):
            validate_label_name(key, f"{key_path}[{i}]", errs)
    if isinstance(sel, dict):
        index = {k: i for i, k in enumerate(match)}
        seen = {str(k) for k in _map(sel.get("matchLabels"))}
        for e in _items(sel.get("matchExpressions")):
            if not isinstance(e, dict):
                continue
            key = _str(e.get("key")) or ""
            at = index.get(key)
            if at is not None and key in seen:
                errs.invalid(
                    f"{path}.matchLabelKeys[{at}]", key, "exists in both matchLabelKeys and labelSelector"
                )
            seen.add(key)
    mismatched = set(mismatch)
    for i, key in enumerate(match):
        if key in mismatched:
            errs.invalid(
                f"{path}.matchLabelKeys[{i}]", key, "exists in both matchLabelKeys and mismatchLabelKeys"
            )


def validate_pod_affinity_term(term: JSON, path: str, errs: Errs) -> None:
    """validatePodAffinityTerm. Label values in the selectors are not checked (v1.35.4 grandfathers
    them: AllowInvalidLabelValueInSelector)."""
    validate_label_selector(term.get("labelSelector"), f"{path}.labelSelector", errs, check_values=False)
    validate_label_selector(
        term.get("namespaceSelector"), f"{path}.namespaceSelector", errs, check_values=False
    )
    for i, ns in enumerate(_str_list(term.get("namespaces"))):
        for msg in dns1123_label_msgs(ns):
            errs.invalid(f"{path}.namespaces[{i}]", ns, msg)
    validate_match_label_keys(
        term.get("labelSelector"),
        _str_list(term.get("matchLabelKeys")),
        _str_list(term.get("mismatchLabelKeys")),
        path,
        errs,
    )
    key = _str(term.get("topologyKey")) or ""
    if not key:
        errs.required(f"{path}.topologyKey", "can not be empty")
    validate_label_name(key, f"{path}.topologyKey", errs)


def _validate_pod_affinity(pa: JSON, path: str, errs: Errs) -> None:
    """validatePodAffinity and validatePodAntiAffinity (the same rules)."""
    rpath = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(_items(pa.get("requiredDuringSchedulingIgnoredDuringExecution"))):
        if isinstance(term, dict):
            validate_pod_affinity_term(term, f"{rpath}[{i}]", errs)
    ppath = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, wt in enumerate(_items(pa.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        if not isinstance(wt, dict):
            continue
        _validate_weight(wt, f"{ppath}[{i}]", errs)
        validate_pod_affinity_term(_map(wt.get("podAffinityTerm")), f"{ppath}[{i}].podAffinityTerm", errs)


def validate_affinity(affinity: object, errs: Errs) -> None:
    """validateAffinity, paths relative to spec.affinity."""
    affinity = _map(affinity)
    na = affinity.get("nodeAffinity")
    if isinstance(na, dict):
        validate_node_affinity(na, "nodeAffinity", errs)
    for key in ("podAffinity", "podAntiAffinity"):
        pa = affinity.get(key)
        if isinstance(pa, dict):
            _validate_pod_affinity(pa, key, errs)


# --------------------------------------------------------------------------------------------------
# Taints and tolerations (validation.go ValidateTolerations, validateTaintEffect, validateNodeTaints)

_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_DECIMAL_INT = re.compile(r"0|-?[1-9][0-9]*", flags=re.ASCII)


def _decimal_integer_msgs(value: str) -> list[str]:
    """content.IsDecimalInteger: canonical decimal form (no sign but "-", no leading zeros)."""
    if not value:
        return ["must be non-empty"]
    if not _DECIMAL_INT.fullmatch(value):
        return ["must be a valid decimal integer in canonical form"]
    return []


def _parse_int64_error(value: str) -> str:
    """The error text of strconv.ParseInt(value, 10, 64), "" when it parses."""
    if not re.fullmatch(r"[+-]?[0-9]+", value, flags=re.ASCII):
        return f"strconv.ParseInt: parsing {go_quote(value)}: invalid syntax"
    if not -(2**63) <= int(value) < 2**63:
        return f"strconv.ParseInt: parsing {go_quote(value)}: value out of range"
    return ""


def _validate_taint_effect(effect: str, allow_empty: bool, path: str, errs: Errs) -> None:
    """validateTaintEffect."""
    if not allow_empty and not effect:
        errs.required(path)
        return
    if effect not in _TAINT_EFFECTS:
        errs.not_supported(path, Named(effect), _TAINT_EFFECTS)


def validate_tolerations(tolerations: object, errs: Errs) -> None:
    """ValidateTolerations, paths relative to spec.tolerations.

    The Lt and Gt operators are accepted (with a decimal integer value): the API server accepts them
    when its TaintTolerationComparisonOperators feature gate is on, and keeps pods that use them."""
    for i, t in enumerate(_items(tolerations)):
        if not isinstance(t, dict):
            continue
        p = f"[{i}]"
        key = _str(t.get("key")) or ""
        op = _str(t.get("operator")) or ""
        value = _str(t.get("value")) or ""
        effect = _str(t.get("effect")) or ""
        if key:
            validate_label_name(key, f"{p}.key", errs)
        if not key and op != "Exists":
            errs.invalid(
                f"{p}.operator",
                Named(op),
                'operator must be Exists when `key` is empty, which means "match all values and all keys"',
            )
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.invalid(
                f"{p}.effect", Named(effect), "effect must be 'NoExecute' when `tolerationSeconds` is set"
            )
        if op in ("Equal", ""):
            msgs = label_value_msgs(value)
            if msgs:  # upstream reports this under .operator
                errs.invalid(f"{p}.value", value, ";".join(msgs))
        elif op == "Exists":
            if value:  # upstream reports this under .operator
                errs.invalid(f"{p}.value", value, "value must be empty when `operator` is 'Exists'")
        elif op in ("Lt", "Gt"):
            for msg in _decimal_integer_msgs(value):
                errs.invalid(f"{p}.value", value, msg)
            parse_error = _parse_int64_error(value)
            if parse_error:
                errs.invalid(f"{p}.value", value, parse_error)
        else:
            errs.not_supported(f"{p}.operator", Named(op), ["Equal", "Exists"])
        if effect:
            _validate_taint_effect(effect, True, f"{p}.effect", errs)


def _taint_struct(t: JSON) -> GoJSON:
    added = t.get("timeAdded")
    return _go_struct(
        ("Key", _str(t.get("key")) or ""),
        ("Value", _str(t.get("value")) or ""),
        ("Effect", _str(t.get("effect")) or ""),
        ("TimeAdded", added if isinstance(added, str) and added else None),
    )


def validate_node_taints(taints: list[Any], path: str, errs: Errs) -> None:
    """validateNodeTaints (upstream reports these under metadata.taints; here under spec.taints)."""
    unique: dict[str, set[str]] = {}
    for i, t in enumerate(taints):
        if not isinstance(t, dict):
            continue
        p = f"{path}[{i}]"
        key = _str(t.get("key")) or ""
        value = _str(t.get("value")) or ""
        effect = _str(t.get("effect")) or ""
        validate_label_name(key, f"{p}.key", errs)
        msgs = label_value_msgs(value)
        if msgs:
            errs.invalid(f"{p}.value", value, ";".join(msgs))
        _validate_taint_effect(effect, False, f"{p}.effect", errs)
        keys = unique.setdefault(effect, set())
        if key in keys:
            errs.duplicate(p, _taint_struct(t), "taints must be unique by key and effect pair")
            continue
        keys.add(key)


# --------------------------------------------------------------------------------------------------
# Topology spread constraints (validation.go validateTopologySpreadConstraints)

_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_NODE_INCLUSION_POLICIES = ("Honor", "Ignore")


def validate_topology_spread_constraints(constraints: object, errs: Errs) -> None:
    """validateTopologySpreadConstraints, paths relative to spec.topologySpreadConstraints.

    matchLabelKeys follow ValidateMatchLabelKeysAndMismatchLabelKeys (the rule of v1.35.4's default
    feature gates, MatchLabelKeysInPodTopologySpreadSelectorMerge on, where the API server has merged
    the keys into labelSelector); label values in labelSelector are not checked (v1.35.4 keeps pods
    created before they were: AllowInvalidTopologySpreadConstraintLabelSelector)."""
    items = [c if isinstance(c, dict) else {} for c in _items(constraints)]
    for i, c in enumerate(items):
        p = f"[{i}]"
        skew = _int(c.get("maxSkew"))
        if skew is None and c.get("maxSkew") is None:
            skew = 0
        if skew is not None and skew <= 0:
            errs.invalid(f"{p}.maxSkew", skew, "must be greater than zero")
        key = _str(c.get("topologyKey")) or ""
        if not key:
            errs.required(f"{p}.topologyKey", "can not be empty")
        action = _str(c.get("whenUnsatisfiable")) or ""
        if action not in _WHEN_UNSATISFIABLE:
            errs.not_supported(f"{p}.whenUnsatisfiable", Named(action), _WHEN_UNSATISFIABLE)
        for rest in items[i + 1 :]:
            if (_str(rest.get("topologyKey")) or "") == key and (
                _str(rest.get("whenUnsatisfiable")) or ""
            ) == action:
                errs.duplicate(f"{p}.{{topologyKey, whenUnsatisfiable}}", f"{{{key}, {action}}}")
                break
        if c.get("minDomains") is not None:
            md = _int(c.get("minDomains"))
            if md is not None and md <= 0:
                errs.invalid(f"{p}.minDomains", md, "must be greater than zero")
            if action != "DoNotSchedule" and md is not None:
                errs.invalid(
                    f"{p}.minDomains",
                    md,
                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}",
                )
        for policy_field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if c.get(policy_field) is not None:
                policy = _str(c.get(policy_field)) or ""
                if policy not in _NODE_INCLUSION_POLICIES:
                    errs.not_supported(f"{p}.{policy_field}", Named(policy), _NODE_INCLUSION_POLICIES)
        validate_match_label_keys(c.get("labelSelector"), _str_list(c.get("matchLabelKeys")), [], p, errs)
        validate_label_selector(c.get("labelSelector"), f"{p}.labelSelector", errs, check_values=False)


# --------------------------------------------------------------------------------------------------
# Containers: resources, ports, restart policy (validation.go validateContainers,
# validateInitContainers, validateContainerPorts, checkHostPortConflicts)

_PROTOCOLS = ("SCTP", "TCP", "UDP")
_CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")


def _validate_ports(ports: object, path: str, errs: Errs, host_network: bool) -> None:
    """validateContainerPorts (port names aside) and validatePodHostNetworkDeps."""
    for i, port in enumerate(_items(ports)):
        if not isinstance(port, dict):
            continue
        p = f"{path}[{i}]"
        cp = _int(port.get("containerPort"))
        if port.get("containerPort") is None or cp == 0:
            errs.required(f"{p}.containerPort")
        elif cp is not None and not 1 <= cp <= 65535:
            errs.invalid(f"{p}.containerPort", cp, "must be between 1 and 65535, inclusive")
        hp = _int(port.get("hostPort"))
        if hp and not 1 <= hp <= 65535:
            errs.invalid(f"{p}.hostPort", hp, "must be between 1 and 65535, inclusive")
        proto = _str(port.get("protocol")) or ""
        if proto and proto not in _PROTOCOLS:  # an empty protocol is defaulted to TCP
            errs.not_supported(f"{p}.protocol", Named(proto), _PROTOCOLS)
        if host_network and hp and cp is not None and hp != cp:
            errs.invalid(f"{p}.hostPort", hp, "must match `containerPort` when `hostNetwork` is true")


def _host_port_conflicts(containers: list[JSON], path: str, errs: Errs, first: int = 0) -> None:
    """checkHostPortConflicts / AccumulateUniqueHostPorts (``first``: the index of containers[0])."""
    seen: set[str] = set()
    for ci, c in enumerate(containers, start=first):
        for pi, port in enumerate(_items(c.get("ports"))):
            if not isinstance(port, dict):
                continue
            hp = _int(port.get("hostPort"))
            if not hp:
                continue
            key = f"{_str(port.get('protocol')) or 'TCP'}/{_str(port.get('hostIP')) or ''}/{hp}"
            if key in seen:
                errs.duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key)
            else:
                seen.add(key)


def _validate_container_list(
    raw: object, path: str, errs: Errs, claims: frozenset[str], host_network: bool, init: bool
) -> list[JSON]:
    containers = [c for c in _items(raw) if isinstance(c, dict)]
    for i, c in enumerate(_items(raw)):
        if not isinstance(c, dict):
            continue
        p = f"{path}[{i}]"
        _validate_ports(c.get("ports"), f"{p}.ports", errs, host_network)
        validate_resource_requirements(c.get("resources"), f"{p}.resources", errs, claims)
        policy = c.get("restartPolicy")
        if init and policy is not None:
            # validateInitContainerRestartPolicy with ContainerRestartRules (Always, OnFailure, Never)
            value = _str(policy) or ""
            if value not in _CONTAINER_RESTART_POLICIES:
                errs.not_supported(f"{p}.restartPolicy", Named(value), _CONTAINER_RESTART_POLICIES)
        if init:  # each init container on its own (upstream names every one initContainers[0])
            _host_port_conflicts([c], path, errs, first=i)
    return containers


# --------------------------------------------------------------------------------------------------
# Pods (validation.go ValidatePodCreate, validatePodMetadataAndSpec, ValidatePodSpec)

_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
_MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
# The volume sources of a core.VolumeSource (k8s.io/api/core/v1 VolumeSource json names)
_VOLUME_SOURCES = (  # in the order validateVolumeSource checks them
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
)


_VOLUME_SOURCE_ORDER = {name: i for i, name in enumerate(_VOLUME_SOURCES)}


def _validate_volumes(raw: object, errs: Errs) -> None:
    """ValidateVolumes / validateVolumeSource for what the scheduler reads: exactly one source, a
    persistentVolumeClaim's claimName, an ephemeral volume's claim template, unique DNS-label names.
    Paths relative to spec.volumes."""
    names: set[str] = set()
    for i, v in enumerate(_items(raw)):
        if not isinstance(v, dict):
            continue
        p = f"[{i}]"
        el = Errs()
        sources = sorted(
            (k for k in v if k in _VOLUME_SOURCE_ORDER and v[k] is not None),
            key=_VOLUME_SOURCE_ORDER.__getitem__,
        )
        for extra in sources[1:]:
            el.forbidden(f"{p}.{extra}", "may not specify more than 1 volume type")
        if not sources:
            el.required(p, "must specify a volume type")
        pvc = v.get("persistentVolumeClaim")
        if isinstance(pvc, dict) and not (_str(pvc.get("claimName")) or ""):
            el.required(f"{p}.persistentVolumeClaim.claimName")
        eph = v.get("ephemeral")
        if isinstance(eph, dict):
            tmpl = eph.get("volumeClaimTemplate")
            if not isinstance(tmpl, dict):
                el.required(f"{p}.ephemeral.volumeClaimTemplate")
            else:
                validate_pvc_spec(_map(tmpl.get("spec")), f"{p}.ephemeral.volumeClaimTemplate.spec", el)
        name = _str(v.get("name")) or ""
        if not name:
            el.required(f"{p}.name")
        else:
            for msg in dns1123_label_msgs(name):
                el.invalid(f"{p}.name", name, msg)
        if name in names:
            el.duplicate(f"{p}.name", name)
        if not el:
            names.add(name)
        errs.extend(el)


_PLAIN_VOLUME_SOURCES = frozenset(_VOLUME_SOURCES) - {"persistentVolumeClaim", "ephemeral"}


def _plain_volumes(raw: object) -> bool:
    """Whether ``_validate_volumes`` would find nothing, known cheaply: every volume a valid, unique
    name and one source of a kind it does not look into (the common case: service-account tokens,
    config maps, secrets, emptyDirs)."""
    if type(raw) is not list:
        return False
    names: set[str] = set()
    for v in raw:
        if type(v) is not dict or len(v) != 2:
            return False
        name = v.get("name")
        if type(name) is not str or name in names or len(name) > 63 or not _DNS1123_LABEL_RE.fullmatch(name):
            return False
        names.add(name)
        for k, val in v.items():
            if k != "name" and (k not in _PLAIN_VOLUME_SOURCES or val is None):
                return False
    return True


def _validate_ephemeral_references(raw: object, pod_name: str, errs: Errs) -> None:
    """ValidateVolumes: a persistentVolumeClaim volume may not name the PVC of an ephemeral volume."""
    volumes = [v for v in _items(raw) if isinstance(v, dict)]
    created = {f"{pod_name}-{_str(v.get('name')) or ''}" for v in volumes if v.get("ephemeral") is not None}
    if not created or not pod_name:
        return
    for i, v in enumerate(_items(raw)):
        pvc = _map(v).get("persistentVolumeClaim") if isinstance(v, dict) else None
        claim = _str(_map(pvc).get("claimName")) or ""
        if isinstance(pvc, dict) and claim in created:
            errs.invalid(
                f"spec.volumes[{i}].persistentVolumeClaim.claimName",
                claim,
                "must not reference a PVC that gets created for an ephemeral volume",
            )


def _validate_pod_resource_claims(raw: object, annotations: JSON, errs: Errs) -> frozenset[str]:
    """validatePodResourceClaims / validatePodResourceClaim. Paths relative to spec.resourceClaims."""
    names: set[str] = set()
    for i, claim in enumerate(_items(raw)):
        if not isinstance(claim, dict):
            continue
        if _MIRROR_POD_ANNOTATION in annotations:
            errs.forbidden("", "static pods do not support resource claims")
            continue
        p = f"[{i}]"
        name = _str(claim.get("name")) or ""
        if not name:
            errs.required(f"{p}.name")
        elif name in names:
            errs.duplicate(f"{p}.name", name)
        else:
            for msg in dns1123_label_msgs(name):
                errs.invalid(f"{p}.name", name, msg)
            names.add(name)
        rc = claim.get("resourceClaimName")
        tmpl = claim.get("resourceClaimTemplateName")
        shown = _go_struct(("Name", name), ("ResourceClaimName", rc), ("ResourceClaimTemplateName", tmpl))
        if rc is not None and tmpl is not None:
            errs.invalid(
                p, shown, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
            )
        if rc is None and tmpl is None:
            errs.invalid(p, shown, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        for fld, value in (("resourceClaimName", rc), ("resourceClaimTemplateName", tmpl)):
            text = _str(value) if value is not None else None
            if text is not None:
                for msg in dns1123_subdomain_msgs(text):
                    errs.invalid(f"{p}.{fld}", text, msg)
    return frozenset(n for n in (_str(_map(c).get("name")) for c in _items(raw)) if n)


def _validate_containers_section(spec: JSON, annotations: JSON, errs: Errs) -> None:
    """Containers, init containers, pod-level resources, overhead and resource claims (paths relative
    to spec): one cache entry for them all, since claims link containers to spec.resourceClaims."""
    sub = Errs()
    claims = _validate_pod_resource_claims(spec.get("resourceClaims"), annotations, sub)
    errs.extend(e.under("resourceClaims") for e in sub)
    host_network = spec.get("hostNetwork") is True
    containers = spec.get("containers")
    if not _items(containers):
        errs.required("containers")
    else:
        cs = _validate_container_list(containers, "containers", errs, claims, host_network, init=False)
        _host_port_conflicts(cs, "containers", errs)
    _validate_container_list(
        spec.get("initContainers"), "initContainers", errs, claims, host_network, init=True
    )
    if isinstance(spec.get("resources"), dict):
        res = spec["resources"]
        if res.get("claims") is not None:
            errs.forbidden("resources.claims", "claims may not be set for Resources at pod-level")
        validate_resource_requirements(
            {k: v for k, v in res.items() if k != "claims"},
            "resources",
            errs,
            claims,
            _validate_pod_resource_name,
        )
    if spec.get("overhead") is not None:
        validate_resource_requirements({"limits": spec.get("overhead")}, "overhead", errs, frozenset())


def _validate_pod_scalars(spec: JSON, errs: Errs) -> None:
    """The single-valued scheduling fields of a pod spec (paths relative to spec)."""
    _validate_node_name(spec, errs)
    _validate_template_scalars(spec, errs)


def _validate_node_name(spec: JSON, errs: Errs) -> None:
    sn = spec.get("nodeName")
    node_name = _str(sn) if sn is not None else None
    if node_name and not (len(node_name) <= 253 and _DNS1123_SUBDOMAIN_RE.fullmatch(node_name)):
        for msg in dns1123_subdomain_msgs(node_name):
            errs.invalid("nodeName", node_name, msg)


def _validate_template_scalars(spec: JSON, errs: Errs) -> None:
    """The single-valued fields a pod has from its template (all but the node name)."""
    pcn = _str(spec.get("priorityClassName")) or ""
    if pcn:
        for msg in dns1123_subdomain_msgs(pcn):
            errs.invalid("priorityClassName", pcn, msg)
    if "preemptionPolicy" in spec and spec["preemptionPolicy"] is not None:
        policy = _str(spec["preemptionPolicy"]) or ""
        if not policy:
            errs.required("preemptionPolicy")
        elif policy not in _PREEMPTION_POLICIES:
            errs.not_supported("preemptionPolicy", Named(policy), _PREEMPTION_POLICIES)
    prio = _int(spec.get("priority"))
    if prio is not None and not -(2**31) <= prio < 2**31:
        errs.invalid("priority", prio, "must be a 32-bit integer")
    gates: set[str] = set()
    for i, g in enumerate(_items(spec.get("schedulingGates"))):
        if not isinstance(g, dict):
            continue
        name = _str(g.get("name")) or ""
        for msg in label_key_msgs(name):
            errs.invalid(f"schedulingGates[{i}]", name, msg)
        if name in gates:
            errs.duplicate(f"schedulingGates[{i}]", name)
        gates.add(name)


def _extend_under(errs: Errs, prefix: str, found: Iterable[FieldError]) -> None:
    if found:
        errs.extend(e.under(prefix) for e in found)


def _plain_pod_scalars(spec: JSON) -> bool:
    """Whether ``_validate_pod_scalars`` would find nothing, known cheaply for the usual pod: a
    valid node name (or none), no priority class or gates, a known preemption policy and an int32
    priority."""
    node_name = spec.get("nodeName")
    if node_name is not None and (
        type(node_name) is not str or len(node_name) > 253 or not _DNS1123_SUBDOMAIN_RE.fullmatch(node_name)
    ):
        return False
    if spec.get("priorityClassName") or spec.get("schedulingGates"):
        return False
    policy = spec.get("preemptionPolicy")
    if policy is not None and (type(policy) is not str or policy not in _PREEMPTION_POLICIES):
        return False
    prio = spec.get("priority")
    return prio is None or (type(prio) is int and -(2**31) <= prio < 2**31)


def _container_key(raw: object) -> object:
    """What the validation of containers reads (not env, probes, volume mounts, which differ per
    pod in a dense dump, e.g. the kube-api-access-xxxxx mount)."""
    if not isinstance(raw, list):
        return raw
    return [
        [c.get("ports"), c.get("resources"), c.get("restartPolicy")] if isinstance(c, dict) else c
        for c in raw
    ]


class Validator:
    """Validates objects one at a time; keeps caches for the snapshot being read (make one per
    snapshot: a cache entry's key is the repr of a spec section, so it grows with distinct content)."""

    CACHE_LIMIT = 50_000

    def __init__(self, *, share_sections: bool = False) -> None:
        """``share_sections``: a pod's affinity, tolerations, spread constraints and node selector
        are replaced by the first equal one seen (the validated object is changed), so that the
        thousands of pods of one template hold one copy, and what the plugins derive from a section
        can be kept with it (``objects.Pod.shared``)."""
        self._cache: dict[tuple[str, bytes | str], tuple[FieldError, ...]] = {}
        self._share = share_sections
        self._canonical: dict[tuple[str, bytes | str], Any] = {}

    # ----- the cache --------------------------------------------------------------------------------
    def _section(self, spec: JSON, section: str) -> bytes | str:
        """The key of ``spec[section]`` (``contentkey``); with ``share_sections``, the section
        becomes the first equal one seen."""
        value = spec[section]
        key = content_key(value)
        if self._share:
            canon = self._canonical.get((section, key))
            if canon is None:
                if len(self._canonical) < self.CACHE_LIMIT:
                    self._canonical[(section, key)] = value
            elif canon is not value:
                spec[section] = canon
        return key

    def _cached(
        self, section: str, key_value: Any, fn: Callable[[Errs], None], *, key_text: bytes | str | None = None
    ) -> tuple[FieldError, ...]:
        key = (section, content_key(key_value) if key_text is None else key_text)
        hit = self._cache.get(key)
        if hit is None:
            sub = Errs()
            fn(sub)
            hit = tuple(sub)
            if len(self._cache) < self.CACHE_LIMIT:
                self._cache[key] = hit
        return hit

    # ----- entry point ------------------------------------------------------------------------------
    def validate(self, obj: JSON) -> list[FieldError]:
        """The problems the API server would report for ``obj`` (empty when it would accept it, or
        when its kind is not one the engine reads)."""
        kind = obj.get("kind")
        fn = _VALIDATORS.get(kind) if isinstance(kind, str) else None
        if fn is None:
            return []
        errs = Errs()
        fn(self, obj, errs)
        return list(errs)

    # ----- per kind ---------------------------------------------------------------------------------
    def pod(self, obj: JSON, errs: Errs) -> None:
        """ValidatePodCreate for the fields the scheduler reads."""
        self._pod_instance(obj, errs)
        spec = _map(obj.get("spec"))
        self._pod_template(obj, spec, errs)
        if not _plain_pod_scalars(spec):
            sub = Errs()
            _validate_pod_scalars(spec, sub)
            _extend_under(errs, "spec", sub)

    def validate_pod(self, obj: JSON, template: PodTemplate) -> list[FieldError]:
        """``validate`` for a pod whose template (``objects.PodTemplates.key_of``) is known: what
        the pod has of its template is validated with the first pod of that template, and the
        sections ``share_sections`` shares come from it too; the rest (metadata, volumes, node name)
        is the pod's own. The same errors, in the same order, as ``validate``."""
        errs = Errs()
        self._pod_instance(obj, errs)
        spec = _map(obj.get("spec"))
        found = template.errors
        if found is None:
            head = Errs()
            self._pod_template(obj, spec, head)
            tail = Errs()
            if not _plain_pod_scalars(spec):
                _validate_template_scalars(spec, tail)
            found = template.errors = (tuple(head), tuple(e.under("spec") for e in tail))
            if self._share:
                template.sections = {s: spec[s] for s in _SHARED_SECTIONS if s in spec}
        elif template.sections:
            spec.update(template.sections)
        errs.extend(found[0])
        node = Errs()
        _validate_node_name(spec, node)
        _extend_under(errs, "spec", node)
        errs.extend(found[1])
        return list(errs)

    def _pod_instance(self, obj: JSON, errs: Errs) -> None:
        """What differs between the pods of one template: metadata and volumes."""
        validate_object_meta(obj, True, _subdomain, errs)
        spec = _map(obj.get("spec"))
        vols = spec.get("volumes")
        if vols is not None and not _plain_volumes(vols):
            # not cached: volume names differ per pod (kube-api-access-xxxxx)
            sub = Errs()
            _validate_volumes(vols, sub)
            _extend_under(errs, "spec.volumes", sub)
            _validate_ephemeral_references(vols, _str(_map(obj.get("metadata")).get("name")) or "", errs)

    def _pod_template(self, obj: JSON, spec: JSON, errs: Errs) -> None:
        """Containers, node selector, affinity, spread constraints and tolerations."""
        annotations = _map(_map(obj.get("metadata")).get("annotations"))
        claims = spec.get("resourceClaims")
        key = (
            _container_key(spec.get("containers")),
            _container_key(spec.get("initContainers")),
            spec.get("resources"),
            spec.get("overhead"),
            claims,
            spec.get("hostNetwork"),
            _MIRROR_POD_ANNOTATION in annotations if claims else False,
        )
        _extend_under(
            errs,
            "spec",
            self._cached("containers", key, lambda s: _validate_containers_section(spec, annotations, s)),
        )
        node_selector = spec.get("nodeSelector")
        if node_selector:
            if self._share and isinstance(node_selector, dict):
                self._section(spec, "nodeSelector")
            validate_labels(node_selector, "spec.nodeSelector", errs)
        affinity = spec.get("affinity")
        if isinstance(affinity, dict) and affinity:
            key_text = self._section(spec, "affinity")
            _extend_under(
                errs,
                "spec.affinity",
                self._cached("affinity", None, lambda s: validate_affinity(affinity, s), key_text=key_text),
            )
        tsc = spec.get("topologySpreadConstraints")
        if tsc:
            key_text = self._section(spec, "topologySpreadConstraints")
            _extend_under(
                errs,
                "spec.topologySpreadConstraints",
                self._cached(
                    "tsc", None, lambda s: validate_topology_spread_constraints(tsc, s), key_text=key_text
                ),
            )
        tolerations = spec.get("tolerations")
        if tolerations:
            key_text = self._section(spec, "tolerations")
            _extend_under(
                errs,
                "spec.tolerations",
                self._cached(
                    "tolerations", None, lambda s: validate_tolerations(tolerations, s), key_text=key_text
                ),
            )

    def node(self, obj: JSON, errs: Errs) -> None:
        """ValidateNode: name, labels, taints, capacity and allocatable quantities."""
        validate_object_meta(obj, False, _subdomain, errs)
        spec = _map(obj.get("spec"))
        taints = _items(spec.get("taints"))
        if taints:
            validate_node_taints(taints, "spec.taints", errs)
        status = _map(obj.get("status"))
        for fld in ("capacity", "allocatable"):
            for name, q in _resource_list(status.get(fld)):
                _validate_quantity_value(name, q, f"status.{fld}.{name}", errs)

    def namespace(self, obj: JSON, errs: Errs) -> None:
        """ValidateNamespace: a DNS-label name; labels (namespace selectors read them)."""
        validate_object_meta(obj, False, _dns_label, errs)

    def service(self, obj: JSON, errs: Errs) -> None:
        """ValidateService for spec.selector (the spreading plugins read it)."""
        validate_object_meta(obj, True, dns1035_label_msgs, errs)
        selector = _map(obj.get("spec")).get("selector")
        if selector:
            validate_labels(selector, "spec.selector", errs)

    def replication_controller(self, obj: JSON, errs: Errs) -> None:
        """ValidateReplicationController for spec.selector."""
        validate_object_meta(obj, True, _subdomain, errs)
        spec = _map(obj.get("spec"))
        validate_labels(spec.get("selector"), "spec.selector", errs)
        replicas = _int(spec.get("replicas"))
        if replicas is not None and replicas < 0:
            errs.invalid("spec.replicas", replicas, _IS_NEGATIVE)

    def _apps(self, obj: JSON, errs: Errs, what: str) -> None:
        """ValidateReplicaSetSpec / ValidateStatefulSetSpec / ValidateDeploymentSpec for spec.selector
        and spec.replicas."""
        validate_object_meta(obj, True, _subdomain, errs)
        spec = _map(obj.get("spec"))
        replicas = _int(spec.get("replicas"))
        if replicas is not None and replicas < 0:
            errs.invalid("spec.replicas", replicas, _IS_NEGATIVE)
        sel = spec.get("selector")
        if not isinstance(sel, dict):
            errs.required("spec.selector")
            return
        validate_label_selector(sel, "spec.selector", errs)
        if _selector_is_empty(sel):
            errs.invalid("spec.selector", GoJSON("{}"), f"empty selector is invalid for {what}")

    def replica_set(self, obj: JSON, errs: Errs) -> None:
        self._apps(obj, errs, "deployment")  # ValidateReplicaSetSpec's wording says "deployment"

    def stateful_set(self, obj: JSON, errs: Errs) -> None:
        self._apps(obj, errs, "statefulset")

    def deployment(self, obj: JSON, errs: Errs) -> None:
        self._apps(obj, errs, "deployment")

    def priority_class(self, obj: JSON, errs: Errs) -> None:
        """ValidatePriorityClass (pkg/apis/scheduling/validation): system names, the user maximum,
        preemptionPolicy."""
        validate_object_meta(obj, False, _subdomain, errs)
        name = _str(_map(obj.get("metadata")).get("name")) or ""
        value = _int(obj.get("value"))
        value = 0 if value is None else value
        global_default = obj.get("globalDefault") is True
        if name.startswith("system-"):
            known = _SYSTEM_PRIORITY_CLASSES.get(name)
            if known is None:
                problem = f"{name} is not a known system priority class"
            elif known != value:
                problem = f"value of {name} PriorityClass must be {known}"
            elif global_default:
                problem = f"globalDefault of {name} PriorityClass must be false"
            else:
                problem = ""
            if problem:
                errs.forbidden(
                    "metadata.name",
                    "priority class names with 'system-' prefix are reserved for system use only. error: "
                    + problem,
                )
        elif value > _HIGHEST_USER_PRIORITY:
            errs.forbidden(
                "value", f"maximum allowed value of a user defined priority is {_HIGHEST_USER_PRIORITY}"
            )
        if obj.get("preemptionPolicy") is not None:
            policy = _str(obj.get("preemptionPolicy")) or ""
            if not policy:
                errs.required("preemptionPolicy")
            elif policy not in _PREEMPTION_POLICIES:
                errs.not_supported("preemptionPolicy", Named(policy), _PREEMPTION_POLICIES)

    def pod_disruption_budget(self, obj: JSON, errs: Errs) -> None:
        """ValidatePodDisruptionBudget (pkg/apis/policy/validation) and the status fields the
        preemption plugin reads (ValidatePodDisruptionBudgetStatusUpdate)."""
        validate_object_meta(obj, True, _any_name, errs)
        spec = _map(obj.get("spec"))
        min_a = spec.get("minAvailable")
        max_u = spec.get("maxUnavailable")
        if min_a is not None and max_u is not None:
            shown = _go_struct(
                ("MinAvailable", min_a),
                ("Selector", spec.get("selector")),
                ("MaxUnavailable", max_u),
                ("UnhealthyPodEvictionPolicy", spec.get("unhealthyPodEvictionPolicy")),
            )
            errs.invalid("spec", shown, "minAvailable and maxUnavailable cannot be both set")
        for fld, v in (("minAvailable", min_a), ("maxUnavailable", max_u)):
            if v is not None:
                _validate_int_or_percent(v, f"spec.{fld}", errs)
        validate_label_selector(spec.get("selector"), "spec.selector", errs, check_values=False)
        policy = spec.get("unhealthyPodEvictionPolicy")
        if policy is not None:
            text = _str(policy) or ""
            if text not in ("AlwaysAllow", "IfHealthyBudget"):
                errs.not_supported(
                    "spec.unhealthyPodEvictionPolicy", text, ["AlwaysAllow", "IfHealthyBudget"]
                )
        status = _map(obj.get("status"))
        for fld in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
            n = _int(status.get(fld))
            if n is not None and n < 0:
                errs.invalid(f"status.{fld}", n, _IS_NEGATIVE)

    def persistent_volume_claim(self, obj: JSON, errs: Errs) -> None:
        """ValidatePersistentVolumeClaim."""
        validate_object_meta(obj, True, _subdomain, errs)
        validate_pvc_spec(_map(obj.get("spec")), "spec", errs)

    def persistent_volume(self, obj: JSON, errs: Errs) -> None:
        """ValidatePersistentVolume / ValidatePersistentVolumeSpec for what the volume plugins read."""
        validate_object_meta(obj, False, _subdomain, errs)
        spec = _map(obj.get("spec"))
        modes = _str_list(spec.get("accessModes"))
        if not modes:
            errs.required("spec.accessModes")
        _validate_access_modes(modes, "spec.accessModes", errs)
        capacity = _map(spec.get("capacity"))
        if not capacity:
            errs.required("spec.capacity")
        if "storage" not in capacity or len(capacity) > 1:
            errs.not_supported("spec.capacity", capacity, ["storage"])
        for name, q in _resource_list(capacity):
            if q.value < 0:
                errs.invalid(f"spec.capacity[{name}]", int(q.value), "must be a valid resource quantity")
            if q.value <= 0:
                errs.invalid(f"spec.capacity[{name}]", str(q), "must be greater than zero")
        policy = spec.get("persistentVolumeReclaimPolicy")
        if policy:
            text = _str(policy) or ""
            if text not in ("Delete", "Recycle", "Retain"):
                errs.not_supported(
                    "spec.persistentVolumeReclaimPolicy", Named(text), ["Delete", "Recycle", "Retain"]
                )
        affinity_set = False
        na = spec.get("nodeAffinity")
        if isinstance(na, dict):
            affinity_set = True
            required = na.get("required")
            if isinstance(required, dict):
                validate_node_selector(required, "spec.nodeAffinity.required", errs, check_values=False)
            else:
                errs.required("spec.nodeAffinity.required", "must specify required node constraints")
        sources = [s for s in _PV_SOURCES if spec.get(s) is not None]
        if not sources:
            errs.required("spec", "must specify a volume type")
        for extra in sources[1:]:
            if extra != "flexVolume":  # ValidatePersistentVolumeSpec does not check it against the others
                errs.forbidden(f"spec.{extra}", "may not specify more than 1 volume type")
        if sources and sources[0] == "local" and not affinity_set:
            errs.required("spec.nodeAffinity", "Local volume requires node affinity")
        csi = spec.get("csi")
        if isinstance(csi, dict):
            _validate_driver_name(_str(csi.get("driver")) or "", "spec.csi.driver", errs)
            if not (_str(csi.get("volumeHandle")) or ""):
                errs.required("spec.csi.volumeHandle")
        _validate_class_name(spec.get("storageClassName"), "spec.storageClassName", errs)
        _validate_volume_mode(spec.get("volumeMode"), "spec.volumeMode", errs)

    def storage_class(self, obj: JSON, errs: Errs) -> None:
        """ValidateStorageClass (pkg/apis/storage/validation)."""
        validate_object_meta(obj, False, _subdomain, errs)
        provisioner = _str(obj.get("provisioner")) or ""
        if not provisioner:
            errs.required("provisioner")
        else:
            for msg in label_key_msgs(provisioner.lower()):
                errs.invalid("provisioner", provisioner, msg)
        policy = obj.get("reclaimPolicy")
        if policy:
            text = _str(policy) or ""
            if text not in ("Delete", "Retain"):
                errs.not_supported("reclaimPolicy", Named(text), ["Delete", "Retain"])
        mode = obj.get("volumeBindingMode")
        if mode is not None:  # absent: defaulted to Immediate
            text = _str(mode) or ""
            if text not in ("Immediate", "WaitForFirstConsumer"):
                errs.not_supported("volumeBindingMode", Named(text), ["Immediate", "WaitForFirstConsumer"])
        seen: list[dict[str, frozenset[str]]] = []
        for i, term in enumerate(_items(obj.get("allowedTopologies"))):
            exprs = validate_topology_selector_term(term, f"allowedTopologies[{i}]", errs)
            if exprs in seen:
                errs.duplicate(f"allowedTopologies[{i}].matchLabelExpressions", "")
            seen.append(exprs)

    def csi_node(self, obj: JSON, errs: Errs) -> None:
        """ValidateCSINode (pkg/apis/storage/validation)."""
        validate_object_meta(obj, False, _subdomain, errs)
        names: set[str] = set()
        for i, d in enumerate(_items(_map(obj.get("spec")).get("drivers"))):
            if not isinstance(d, dict):
                continue
            p = f"spec.drivers[{i}]"
            name = _str(d.get("name")) or ""
            _validate_driver_name(name, f"{p}.name", errs)
            node_id = _str(d.get("nodeID")) or ""
            if not node_id:
                errs.required(f"{p}.nodeID", "")
            elif len(node_id.encode()) > 256:
                errs.invalid(f"{p}.nodeID", node_id, "must be 256 characters or less")
            count = _int(_map(d.get("allocatable")).get("count"))
            if count is not None and count < 0:
                errs.invalid(f"{p}.allocatable.count", count, _IS_NEGATIVE)
            if name in names:
                errs.duplicate(f"{p}.name", name)
            names.add(name)
            keys: set[str] = set()
            for key in _str_list(d.get("topologyKeys")):
                if not key:
                    errs.required(p, "")
                if key in keys:
                    errs.duplicate(p, key)
                keys.add(key)
                for msg in label_key_msgs(key):
                    errs.invalid(p, key, msg)

    def csi_driver(self, obj: JSON, errs: Errs) -> None:
        """ValidateCSIDriver: the name; the defaulted booleans are not required here."""
        validate_object_meta(obj, False, _subdomain, errs)

    def csi_storage_capacity(self, obj: JSON, errs: Errs) -> None:
        """ValidateCSIStorageCapacity."""
        validate_object_meta(obj, True, _subdomain, errs)
        validate_label_selector(obj.get("nodeTopology"), "nodeTopology", errs, check_values=False)
        name = _str(obj.get("storageClassName")) or ""
        for msg in dns1123_subdomain_msgs(name):
            errs.invalid("storageClassName", name, msg)
        for fld in ("capacity", "maximumVolumeSize"):
            if obj.get(fld) is not None:
                q = parse_qty(obj.get(fld))
                if q is not None and q.value < 0:
                    errs.invalid(fld, str(q), _IS_NEGATIVE)

    def volume_attachment(self, obj: JSON, errs: Errs) -> None:
        """ValidateVolumeAttachment / ValidateVolumeAttachmentV1."""
        validate_object_meta(obj, False, _subdomain, errs)
        spec = _map(obj.get("spec"))
        attacher = _str(spec.get("attacher")) or ""
        if not attacher:
            errs.required("spec.attacher", "")
        source = _map(spec.get("source"))
        pv = source.get("persistentVolumeName")
        inline = source.get("inlineVolumeSpec")
        if pv is None and inline is None:
            errs.required(
                "spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
            )
        elif pv is not None and inline is not None:
            errs.forbidden(
                "spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
            )
        elif pv is not None and not (_str(pv) or ""):
            errs.required("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName")
        node = _str(spec.get("nodeName")) or ""
        for msg in dns1123_subdomain_msgs(node):
            errs.invalid("spec.nodeName", node, msg)
        if attacher:
            _validate_driver_name(attacher, "spec.attacher", errs)
        if pv:
            for msg in dns1123_subdomain_msgs(_str(pv) or ""):
                errs.invalid("spec.source.persistentVolumeName", _str(pv) or "", msg)

    def resource_claim(self, obj: JSON, errs: Errs) -> None:
        """ValidateResourceClaim (pkg/apis/resource/validation) for spec.devices."""
        validate_object_meta(obj, True, _subdomain, errs)
        _validate_device_claim(obj, _map(_map(obj.get("spec")).get("devices")), "spec.devices", errs)

    def resource_claim_template(self, obj: JSON, errs: Errs) -> None:
        """ValidateResourceClaimTemplate for spec.spec.devices."""
        validate_object_meta(obj, True, _subdomain, errs)
        inner = _map(_map(obj.get("spec")).get("spec"))
        _validate_device_claim(obj, _map(inner.get("devices")), "spec.spec.devices", errs)

    def device_class(self, obj: JSON, errs: Errs) -> None:
        """ValidateDeviceClass: a DNS-subdomain name; each selector holds a CEL selector."""
        validate_object_meta(obj, False, _subdomain, errs)
        _validate_selectors(_map(obj.get("spec")).get("selectors"), "spec", errs)

    def resource_slice(self, obj: JSON, errs: Errs) -> None:
        """ValidateResourceSlice / validateResourceSliceSpec: driver, pool, where the devices are,
        device names."""
        validate_object_meta(obj, False, _subdomain, errs)
        spec = _map(obj.get("spec"))
        _validate_driver_name(_str(spec.get("driver")) or "", "spec.driver", errs)
        pool = _map(spec.get("pool"))
        _validate_pool_name(_str(pool.get("name")) or "", "spec.pool.name", errs)
        count = _int(pool.get("resourceSliceCount"))
        count = 0 if count is None and pool.get("resourceSliceCount") is None else count
        if count is not None and count <= 0:
            errs.invalid("spec.pool.resourceSliceCount", count, "must be greater than zero")
        gen = _int(pool.get("generation"))
        if gen is not None and gen < 0:
            errs.invalid("spec.pool.generation", gen, "must be greater than or equal to zero")
        set_fields: list[str] = []
        if spec.get("nodeName") is not None:
            node = _str(spec.get("nodeName")) or ""
            if node:
                set_fields.append("`nodeName`")
                for msg in dns1123_subdomain_msgs(node):
                    errs.invalid("spec.nodeName", node, msg)
            else:
                errs.invalid("spec.nodeName", node, "must be either unset or set to a non-empty string")
        if isinstance(spec.get("nodeSelector"), dict):
            set_fields.append("`nodeSelector`")
            validate_node_selector(spec["nodeSelector"], "spec.nodeSelector", errs, check_values=True)
            terms = _items(spec["nodeSelector"].get("nodeSelectorTerms"))
            if len(terms) != 1:
                errs.invalid(
                    "spec.nodeSelector.nodeSelectorTerms", terms, "must have exactly one node selector term"
                )
        for fld in ("allNodes", "perDeviceNodeSelection"):
            if spec.get(fld) is not None:
                if spec.get(fld) is True:
                    set_fields.append(f"`{fld}`")
                else:
                    errs.invalid(f"spec.{fld}", spec.get(fld), "must be either unset or set to true")
        one_of = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
        if not set_fields:
            errs.required("spec", one_of)
        elif len(set_fields) > 1:
            errs.invalid("spec", "{" + ", ".join(set_fields) + "}", one_of + ", but multiple fields are set")
        if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
            errs.invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed")
        per_device = spec.get("perDeviceNodeSelection") is True
        names: set[str] = set()
        for i, d in enumerate(_items(spec.get("devices"))):
            if not isinstance(d, dict):
                continue
            p = f"spec.devices[{i}]"
            name = _str(d.get("name")) or ""
            _validate_short_name(name, f"{p}.name", errs)
            if name in names:
                errs.duplicate(p, name)
            names.add(name)
            body = _map(d.get("basic")) if isinstance(d.get("basic"), dict) else d  # v1beta1
            if not per_device and any(
                body.get(f) is not None for f in ("nodeName", "nodeSelector", "allNodes")
            ):
                errs.invalid(
                    p,
                    None,
                    "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set "
                    "to true in the ResourceSlice spec",
                )
            elif per_device:
                _validate_per_device_node(body, p, errs)

    def pod_group(self, obj: JSON, errs: Errs) -> None:
        """A PodGroup (scheduling.x-k8s.io, a custom resource): only the generic metadata rules."""
        validate_object_meta(obj, True, _any_name, errs)


_VALIDATORS: dict[str, Callable[[Validator, JSON, Errs], None]] = {
    "Pod": Validator.pod,
    "Node": Validator.node,
    "Namespace": Validator.namespace,
    "Service": Validator.service,
    "ReplicationController": Validator.replication_controller,
    "ReplicaSet": Validator.replica_set,
    "StatefulSet": Validator.stateful_set,
    "Deployment": Validator.deployment,
    "PriorityClass": Validator.priority_class,
    "PodDisruptionBudget": Validator.pod_disruption_budget,
    "PersistentVolumeClaim": Validator.persistent_volume_claim,
    "PersistentVolume": Validator.persistent_volume,
    "StorageClass": Validator.storage_class,
    "CSINode": Validator.csi_node,
    "CSIDriver": Validator.csi_driver,
    "CSIStorageCapacity": Validator.csi_storage_capacity,
    "VolumeAttachment": Validator.volume_attachment,
    "ResourceClaim": Validator.resource_claim,
    "ResourceClaimTemplate": Validator.resource_claim_template,
    "DeviceClass": Validator.device_class,
    "ResourceSlice": Validator.resource_slice,
    "PodGroup": Validator.pod_group,
}

VALIDATED_KINDS = frozenset(_VALIDATORS)

# pkg/apis/scheduling: SystemPriorityClasses and HighestUserDefinablePriority
_SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
_HIGHEST_USER_PRIORITY = 1_000_000_000

_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")
# core.PersistentVolumeSource members, in the order ValidatePersistentVolumeSpec checks them
_PV_SOURCES = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
)


def validate_pvc_spec(spec: JSON, path: str, errs: Errs) -> None:
    """ValidatePersistentVolumeClaimSpec for what the volume plugins read: access modes, the storage
    request, storageClassName, volumeMode, the selector (label values grandfathered)."""
    modes = _str_list(spec.get("accessModes"))
    if not modes:
        errs.required(f"{path}.accessModes", "at least 1 access mode is required")
    if isinstance(spec.get("selector"), dict):
        validate_label_selector(spec["selector"], f"{path}.selector", errs, check_values=False)
    _validate_access_modes(modes, f"{path}.accessModes", errs)
    storage = _map(_map(spec.get("resources")).get("requests")).get("storage")
    spath = f"{path}.resources[storage]"
    if storage is None:
        errs.required(spath)
    else:
        q = parse_qty(storage)
        if q is not None:
            q = q.milli_rounded()
            if q.value <= 0:
                errs.invalid(spath, str(q), "must be greater than zero")
    _validate_class_name(spec.get("storageClassName"), f"{path}.storageClassName", errs)
    _validate_volume_mode(spec.get("volumeMode"), f"{path}.volumeMode", errs)


def _validate_access_modes(modes: list[str], path: str, errs: Errs) -> None:
    rwop = other = False
    for mode in modes:
        if mode not in _ACCESS_MODES:
            errs.not_supported(path, Named(mode), _ACCESS_MODES)
        elif mode == "ReadWriteOncePod":
            rwop = True
        else:
            other = True
    if rwop and other:
        errs.forbidden(path, "may not use ReadWriteOncePod with other access modes")


def _validate_class_name(raw: object, path: str, errs: Errs) -> None:
    name = _str(raw) if raw is not None else None
    if name:
        for msg in dns1123_subdomain_msgs(name):
            errs.invalid(path, name, msg)


def _validate_volume_mode(raw: object, path: str, errs: Errs) -> None:
    if raw is not None:
        mode = _str(raw) or ""
        if mode not in _VOLUME_MODES:
            errs.not_supported(path, Named(mode), _VOLUME_MODES)


def _validate_driver_name(name: str, path: str, errs: Errs) -> None:
    """ValidateCSIDriverName (CSI and DRA driver names)."""
    if not name:
        errs.required(path)
        return
    if len(name.encode()) > 63:
        errs.too_long(path, 63)
    for msg in dns1123_subdomain_msgs(name.lower()):
        errs.invalid(path, name, msg)


def _validate_short_name(name: str, path: str, errs: Errs) -> None:
    """ValidateDNS1123Label (DRA request and device names)."""
    for msg in dns1123_label_msgs(name):
        errs.invalid(path, name, msg)


def _validate_pool_name(name: str, path: str, errs: Errs) -> None:
    """validatePoolName (pkg/apis/resource/validation)."""
    if not name:
        errs.required(path)
        return
    if len(name.encode()) > 253:
        errs.too_long(path, 253)
    for part in name.split("/"):
        for msg in dns1123_subdomain_msgs(part):
            errs.invalid(path, part, msg)


def _validate_int_or_percent(v: object, path: str, errs: Errs) -> None:
    """appsvalidation.ValidatePositiveIntOrPercent and IsNotMoreThan100Percent."""
    if isinstance(v, str):
        if not _PERCENT_RE.fullmatch(v):
            errs.invalid(
                path,
                v,
                _regex_error(
                    "a valid percent string must be a numeric string followed by an ending '%'",
                    _PERCENT_FMT,
                    "1%",
                    "93%",
                ),
            )
        elif int(v[:-1]) > 100:
            errs.invalid(path, v, "must not be greater than 100%")
    elif isinstance(v, int) and not isinstance(v, bool) and v < 0:
        errs.invalid(path, v, _IS_NEGATIVE)


def _validate_per_device_node(body: JSON, path: str, errs: Errs) -> None:
    set_fields: list[str] = []
    if body.get("nodeName") is not None:
        node = _str(body.get("nodeName")) or ""
        if node:
            set_fields.append("`nodeName`")
            for msg in dns1123_subdomain_msgs(node):
                errs.invalid(f"{path}.nodeName", node, msg)
        else:
            errs.invalid(f"{path}.nodeName", node, "must not be empty")
    if isinstance(body.get("nodeSelector"), dict):
        set_fields.append("`nodeSelector`")
        validate_node_selector(body["nodeSelector"], f"{path}.nodeSelector", errs, check_values=True)
    if body.get("allNodes") is not None:
        if body.get("allNodes") is True:
            set_fields.append("`allNodes`")
        else:
            errs.invalid(f"{path}.allNodes", body.get("allNodes"), "must be either unset or set to true")
    detail = (
        "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` "
        "is set to true in the ResourceSlice spec"
    )
    if not set_fields:
        errs.required(path, detail)
    elif len(set_fields) > 1:
        errs.invalid(path, "{" + ", ".join(set_fields) + "}", detail)


_FLAT_REQUEST_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
)


def _validate_device_claim(obj: JSON, devices: JSON, path: str, errs: Errs) -> None:
    """validateDeviceClaim: requests (names, exactly one of exactly/firstAvailable, device class,
    allocation mode and count, selectors holding CEL) and constraints' request references. CEL
    expressions are not compiled here (the DynamicResources plugin reports those it cannot use)."""
    flat = str(obj.get("apiVersion") or "").endswith("/v1beta1")
    requests = [r for r in _items(devices.get("requests")) if isinstance(r, dict)]
    known: dict[str, set[str] | None] = {}
    for r in requests:
        name = _str(r.get("name")) or ""
        subs = [_str(_map(s).get("name")) or "" for s in _items(r.get("firstAvailable"))]
        known[name] = set(subs) if subs else None
    seen: set[str] = set()
    for i, r in enumerate(_items(devices.get("requests"))):
        if not isinstance(r, dict):
            continue
        p = f"{path}.requests[{i}]"
        name = _str(r.get("name")) or ""
        _validate_short_name(name, f"{p}.name", errs)
        exactly = r.get("exactly")
        if flat and exactly is None and any(r.get(f) is not None for f in _FLAT_REQUEST_FIELDS):
            exactly = {f: r[f] for f in _FLAT_REQUEST_FIELDS if f in r}  # v1beta1: converted into exactly
        first = _items(r.get("firstAvailable"))
        kinds = int(bool(first)) + int(isinstance(exactly, dict))
        if kinds == 0:
            errs.required(p, "exactly one of `exactly` or `firstAvailable` is required")
        elif kinds > 1:
            errs.invalid(
                p,
                None,
                "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            )
        elif first:
            sub_seen: set[str] = set()
            for j, sub in enumerate(first):
                if not isinstance(sub, dict):
                    continue
                sp = f"{p}.firstAvailable[{j}]"
                sub_name = _str(sub.get("name")) or ""
                _validate_short_name(sub_name, f"{sp}.name", errs)
                _validate_exact_request(sub, sp, errs)
                if sub_name in sub_seen:
                    errs.duplicate(sp, sub_name)
                sub_seen.add(sub_name)
        elif isinstance(exactly, dict):
            _validate_exact_request(exactly, f"{p}.exactly", errs)
        if name in seen:
            errs.duplicate(p, name)
        seen.add(name)
    for i, c in enumerate(_items(devices.get("constraints"))):
        if not isinstance(c, dict):
            continue
        cp = f"{path}.constraints[{i}]"
        for j, ref in enumerate(_str_list(c.get("requests"))):
            _validate_request_ref(ref, f"{cp}.requests[{j}]", known, errs)
        attr = c.get("matchAttribute")
        distinct = c.get("distinctAttribute")
        if attr is None and distinct is None:
            errs.required(f"{cp}.matchAttribute")


def _validate_request_ref(ref: str, path: str, known: Mapping[str, set[str] | None], errs: Errs) -> None:
    """validateRequestNameRef."""
    detail = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
    parts = ref.split("/")
    if len(parts) > 2:
        errs.invalid(path, ref, detail)
        return
    for part in parts:
        _validate_short_name(part, path, errs)
    if parts[0] not in known:
        errs.invalid(path, ref, detail)
        return
    subs = known[parts[0]]
    if len(parts) == 2 and (subs is None or parts[1] not in subs):
        errs.invalid(path, ref, detail)


def _validate_selectors(selectors: Any, path: str, errs: Errs) -> None:
    """Device selectors: each holds a CEL selector within the API server's limits (validation.go
    validateCELSelector: CELSelectorExpressionMaxLength, and the estimated cost against
    CELSelectorExpressionMaxCost; engine/cel). Expressions that do not compile are left to the
    DynamicResources plugin, which reports them in the cycle as kube-scheduler's cache does."""
    # imported when a snapshot has device selectors: most have none, and the CEL engine takes a
    # tenth of a second to import
    from .cel import CelCompileError, CelRefused, CelUnsupported, compile_selector

    for i, s in enumerate(_items(selectors)):
        if not isinstance(s, dict):
            continue
        if s.get("cel") is None:
            errs.required(f"{path}.selectors[{i}].cel")
            continue
        expression = _map(s.get("cel")).get("expression")
        if not isinstance(expression, str):
            continue
        try:
            compile_selector(expression, validate=True)
        except CelRefused as refused:
            errs.append(FieldError(f"{path}.selectors[{i}].cel.expression", str(refused)))
        except (CelCompileError, CelUnsupported):
            pass


def _validate_exact_request(r: JSON, path: str, errs: Errs) -> None:
    """validateExactDeviceRequest / validateDeviceSubRequest (selectors' CEL not compiled)."""
    cls = _str(r.get("deviceClassName")) or ""
    if not cls:
        errs.required(f"{path}.deviceClassName")
    else:
        for msg in dns1123_subdomain_msgs(cls):
            errs.invalid(f"{path}.deviceClassName", cls, msg)
    _validate_selectors(r.get("selectors"), path, errs)
    mode_raw = r.get("allocationMode")
    mode = "ExactCount" if mode_raw is None or mode_raw == "" else (_str(mode_raw) or "")
    count = _int(r.get("count"))
    if r.get("count") is None:
        count = 1 if mode == "ExactCount" else 0  # SetDefaults_ExactDeviceRequest
    if mode == "All":
        if count:
            errs.invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'")
    elif mode == "ExactCount":
        if count is not None and count <= 0:
            errs.invalid(f"{path}.count", count, "must be greater than zero")
    else:
        errs.not_supported(f"{path}.allocationMode", Named(mode), ["All", "ExactCount"])


# --------------------------------------------------------------------------------------------------
# Reporting


def object_ident(obj: JSON) -> str:
    """How the engine names an object (``Pod default/web``, ``Node n1``); "" without a name."""
    kind = obj.get("kind")
    md = _map(obj.get("metadata"))
    name = md.get("name")
    if not isinstance(kind, str) or not isinstance(name, str) or not name:
        return ""
    ns = md.get("namespace")
    if kind in NAMESPACED_KINDS:
        return f"{kind} {ns if isinstance(ns, str) and ns else 'default'}/{name}"
    return f"{kind} {name}"


class ObjectProblem(InputError):
    """One API-server validation error of one object: ``<file>: <object>: <field path>: <error>``."""

    def __init__(self, error: FieldError, *, source: str = "", obj: str = "") -> None:
        self.error = error
        super().__init__(str(error), source=source, obj=obj, field=error.field)

    def _render(self) -> str:
        return ": ".join(w for w in (self.source, self.obj, self.problem) if w)

    def with_source(self, source: str) -> InputError:
        if self.source:
            return self
        return ObjectProblem(self.error, source=source, obj=self.obj)


class InvalidSnapshot(InputError):
    """Every problem found in a snapshot (up to a bound), raised together; ``problems`` lists them,
    each an InputError naming its file, object and field."""

    def __init__(self, problems: list[InputError], *, truncated: bool = False) -> None:
        self.problems = problems
        self.truncated = truncated
        first = problems[0]
        super().__init__(first.problem, source=first.source, obj=first.obj, field=first.field)

    def _render(self) -> str:
        if len(self.problems) == 1 and not self.truncated:
            return str(self.problems[0])
        more = " (and more; stopped counting)" if self.truncated else ""
        head = f"{len(self.problems)} problems{more}; the API server would refuse this snapshot:"
        return "\n".join([head, *(f"  {p}" for p in self.problems)])

    def with_source(self, source: str) -> InputError:
        return self

    def __iter__(self) -> Iterator[InputError]:
        return iter(self.problems)


class ProblemCollector:
    """Problems of a snapshot being loaded, at most ``limit`` (then loading stops)."""

    def __init__(self, limit: int = 100) -> None:
        self.limit = limit
        self.items: list[InputError] = []
        self.truncated = False

    def add(self, problem: InputError) -> None:
        if len(self.items) >= self.limit:
            self.truncated = True
            raise InvalidSnapshot(self.items, truncated=True)
        self.items.append(problem)

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise InvalidSnapshot(self.items, truncated=self.truncated)
