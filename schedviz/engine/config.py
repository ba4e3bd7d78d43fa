"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): decoding, defaulting, validation and the
final plugin lists of each profile.

The pipeline follows kube-scheduler v1.35:
- strict decoding (unknown fields and wrong types are errors), top level and typed plugin args
  (kube-scheduler/config/v1 types.go, apimachinery's strict JSON decoder);
- defaulting (pkg/scheduler/apis/config/v1/defaults.go, default_plugins.go mergePlugins);
- validation (pkg/scheduler/apis/config/validation/validation.go and validation_pluginargs.go);
- per profile, what the framework builds (pkg/scheduler/framework/runtime/framework.go NewFramework,
  updatePluginList, expandMultiPointPlugins, getScoreWeights) and pkg/scheduler/profile/profile.go.

Every problem is collected and raised together as a ``ConfigError``, each naming its field path in
upstream's wording (``field.Error`` rendering: ``<path>: Invalid value: <value>: <detail>``).
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import yamlbounds
from .errors import ConfigError

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)

# Go interface names, for upstream's framework error messages.
_INTERFACE = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
}

# framework.go getExtensionPoints order: the order upstream builds (and fails on) extension points.
_BUILD_ORDER = (
    "preFilter",
    "filter",
    "postFilter",
    "reserve",
    "preScore",
    "score",
    "preBind",
    "bind",
    "postBind",
    "permit",
    "preEnqueue",
    "queueSort",
)

# Feature gates that change configuration defaults or validation, at their v1.35 defaults
# (pkg/features/kube_features.go).
DEFAULT_FEATURES: Mapping[str, bool] = {
    "DynamicResourceAllocation": True,
    "NodeDeclaredFeatures": False,
    "GangScheduling": False,
    "StorageCapacityScoring": False,
    "DRASchedulerFilterTimeout": True,
    "DRADeviceBindingConditions": False,
    "DRAResourceClaimDeviceStatus": True,
}

# validation.go invalidPluginsByVersion: removed plugins that v1 rejects by name.
_REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

_MAX_INT32 = 2**31 - 1
_MAX_INT64 = 2**63 - 1
_MAX_NODE_SCORE = 100  # framework.MaxNodeScore
_MAX_TOTAL_SCORE = _MAX_INT64  # framework.MaxTotalScore
_MAX_CUSTOM_PRIORITY_SCORE = 10  # config.MaxCustomPriorityScore

# Plugins whose args are validated by the plugin's constructor (NewFit, coscheduling.New), so only
# when the plugin is enabled.
_CHECKED_WHEN_BUILT = frozenset({"NodeResourcesFit", "Coscheduling"})


# --------------------------------------------------------------------------------------------------
# Public types


@dataclass
class PluginRef:
    """A plugin at an extension point; ``weight`` is only meaningful at ``score`` (0 elsewhere)."""

    name: str
    weight: int = 0


@dataclass
class ProfileConfig:
    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    # extension point -> ordered plugins, final (after multiPoint expansion)
    plugins: dict[str, list[PluginRef]]
    # plugin name -> defaulted, validated args (camelCase keys); {} for plugins without args
    plugin_args: dict[str, dict[str, Any]]

    def score_weights(self) -> dict[str, int]:
        return {r.name: r.weight for r in self.plugins.get("score", [])}


@dataclass
class SchedulerConfig:
    profiles: list[ProfileConfig]
    percentage_of_nodes_to_score: int | None  # global; None = adaptive (same as 0)
    parallelism: int
    pod_initial_backoff_seconds: int
    pod_max_backoff_seconds: int
    extenders: list[dict[str, Any]]  # decoded and validated, camelCase keys
    raw: dict[str, Any]  # the configuration as given ({} for the default one)
    features: dict[str, bool] = field(default_factory=dict)

    def profile(self, scheduler_name: str) -> ProfileConfig | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None


# --------------------------------------------------------------------------------------------------
# field.Error rendering (apimachinery/pkg/util/validation/field/errors.go)


def _go_quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, str):
        return _go_quote(v)
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


class _Errs:
    def __init__(self) -> None:
        self.items: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, msg: str) -> None:
        self.items.append(msg)

    def invalid(self, path: str, value: Any, detail: str) -> None:
        s = f"{path}: Invalid value: {_fmt_value(value)}"
        self.items.append(f"{s}: {detail}" if detail else s)

    def required(self, path: str, detail: str = "") -> None:
        self.items.append(f"{path}: Required value: {detail}" if detail else f"{path}: Required value")

    def duplicate(self, path: str, value: Any) -> None:
        self.items.append(f"{path}: Duplicate value: {_fmt_value(value)}")

    def not_supported(self, path: str, value: Any, valid: list[str]) -> None:
        s = f"{path}: Unsupported value: {_fmt_value(value)}"
        if valid:
            s += ": supported values: " + ", ".join(_go_quote(v) for v in valid)
        self.items.append(s)

    def forbidden(self, path: str, detail: str) -> None:
        self.items.append(f"{path}: Forbidden: {detail}")

    def not_found(self, path: str, value: Any, detail: str) -> None:
        self.items.append(f"{path}: Not found: {_fmt_value(value)}: {detail}")


def _child(path: str, name: str) -> str:
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
    bad = ValueError(f"time: invalid duration {_go_quote(orig)}")
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
            raise ValueError(f"time: missing unit in duration {_go_quote(orig)}")
        if unit not in _UNIT_NS:
            raise ValueError(f"time: unknown unit {_go_quote(unit)} in duration {_go_quote(orig)}")
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


def _validate_label_name(value: str, path: str, errs: _Errs) -> None:
    """metav1validation.ValidateLabelName: one error per message."""
    for msg in is_label_key(value):
        errs.invalid(path, value, msg)


def _is_extended_resource_name(name: str) -> bool:
    """pkg/apis/core/v1/helper IsExtendedResourceName."""
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return not is_label_key("requests." + name)


# --------------------------------------------------------------------------------------------------
# Strict decoding against a schema of the v1 types
#
# A spec is a leaf name ("str", "bool", "int32", "int64", "float32", "duration", "bytes", "any"),
# ("list", spec), ("map", spec) or ("obj", go type name, {json field: spec}).

_Spec = Any
_BAD = object()
_GO_LEAF = {
    "str": "string",
    "bool": "bool",
    "int32": "int32",
    "int64": "int64",
    "float32": "float32",
    "duration": "v1.Duration",
    "bytes": "[]uint8",
}


def _obj(go_type: str, **fields: _Spec) -> tuple[str, str, dict[str, _Spec]]:
    return ("obj", go_type, fields)


def _list(item: _Spec) -> tuple[str, _Spec]:
    return ("list", item)


def _map(item: _Spec) -> tuple[str, _Spec]:
    return ("map", item)


def _go_type(spec: _Spec) -> str:
    if isinstance(spec, str):
        return _GO_LEAF.get(spec, "interface {}")
    if spec[0] == "list":
        return "[]" + _go_type(spec[1])
    if spec[0] == "map":
        return "map[string]" + _go_type(spec[1])
    return str(spec[1])


def _json_kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


class _Decoder:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def _type_error(self, value: Any, spec: _Spec, path: str) -> object:
        shown = _json_kind(value)
        if shown == "number":
            shown = f"number {value}"
        self.problems.append(
            f"json: cannot unmarshal {shown} into Go struct field {path} of type {_go_type(spec)}"
        )
        return _BAD

    def decode(self, value: Any, spec: _Spec, path: str) -> Any:
        if isinstance(spec, str):
            return self._leaf(value, spec, path)
        kind = spec[0]
        if kind == "list":
            if not isinstance(value, list):
                return self._type_error(value, spec, path)
            out = []
            for i, item in enumerate(value):
                d = self.decode(item, spec[1], f"{path}[{i}]") if item is not None else _zero(spec[1])
                if d is not _BAD:
                    out.append(d)
            return out
        if kind == "map":
            if not isinstance(value, dict):
                return self._type_error(value, spec, path)
            res: dict[str, Any] = {}
            for k, item in value.items():
                d = self.decode(item, spec[1], f"{path}[{k}]") if item is not None else _zero(spec[1])
                if d is not _BAD:
                    res[str(k)] = d
            return res
        # obj
        if not isinstance(value, dict):
            return self._type_error(value, spec, path)
        fields: dict[str, _Spec] = spec[2]
        obj: dict[str, Any] = {}
        for k, item in value.items():
            key = str(k)
            if key not in fields:
                self.problems.append(f"strict decoding error: unknown field {_go_quote(_child(path, key))}")
                continue
            if item is None:  # JSON null: the field keeps its zero value (nil for pointers)
                continue
            d = self.decode(item, fields[key], _child(path, key))
            if d is not _BAD:
                obj[key] = d
        return obj

    def _leaf(self, value: Any, spec: str, path: str) -> Any:
        if spec == "any":
            return copy.deepcopy(value)
        if spec == "str":
            return value if isinstance(value, str) else self._type_error(value, spec, path)
        if spec == "bool":
            return value if isinstance(value, bool) else self._type_error(value, spec, path)
        if spec in ("int32", "int64"):
            if isinstance(value, float) and not isinstance(value, bool) and value.is_integer():
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool):
                return self._type_error(value, spec, path)
            bound = _MAX_INT32 if spec == "int32" else _MAX_INT64
            if not -bound - 1 <= value <= bound:
                return self._type_error(value, spec, path)
            return value
        if spec == "float32":
            if isinstance(value, int | float) and not isinstance(value, bool):
                return value
            return self._type_error(value, spec, path)
        if spec == "duration":
            if not isinstance(value, str):
                return self._type_error(value, spec, path)
            try:
                parse_duration_ns(value)
            except ValueError as exc:
                self.problems.append(f"{path}: {exc}")
                return _BAD
            return value
        if spec == "bytes":
            if not isinstance(value, str):
                return self._type_error(value, spec, path)
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                self.problems.append(f"{path}: illegal base64 data")
                return _BAD
            return value
        raise AssertionError(spec)  # pragma: no cover


def _zero(spec: _Spec) -> Any:
    if isinstance(spec, str):
        return {
            "str": "",
            "bool": False,
            "int32": 0,
            "int64": 0,
            "float32": 0,
            "duration": "0s",
            "bytes": "",
        }.get(spec)
    return [] if spec[0] == "list" else {}


# kube-scheduler/config/v1 types.go
_PLUGIN = _obj("v1.Plugin", name="str", weight="int32")
_PLUGIN_SET = _obj("v1.PluginSet", enabled=_list(_PLUGIN), disabled=_list(_PLUGIN))
_PLUGINS = _obj("v1.Plugins", multiPoint=_PLUGIN_SET, **dict.fromkeys(EXTENSION_POINTS, _PLUGIN_SET))
_PLUGIN_CONFIG = _obj("v1.PluginConfig", name="str", args="any")
_PROFILE = _obj(
    "v1.KubeSchedulerProfile",
    schedulerName="str",
    percentageOfNodesToScore="int32",
    plugins=_PLUGINS,
    pluginConfig=_list(_PLUGIN_CONFIG),
)
_EXTENDER = _obj(
    "v1.Extender",
    urlPrefix="str",
    filterVerb="str",
    preemptVerb="str",
    prioritizeVerb="str",
    weight="int64",
    bindVerb="str",
    enableHTTPS="bool",
    tlsConfig=_obj(
        "v1.ExtenderTLSConfig",
        insecure="bool",
        serverName="str",
        certFile="str",
        keyFile="str",
        caFile="str",
        certData="bytes",
        keyData="bytes",
        caData="bytes",
    ),
    httpTimeout="duration",
    nodeCacheCapable="bool",
    managedResources=_list(_obj("v1.ExtenderManagedResource", name="str", ignoredByScheduler="bool")),
    ignorable="bool",
)
_LEADER_ELECTION = _obj(
    "v1alpha1.LeaderElectionConfiguration",
    leaderElect="bool",
    leaseDuration="duration",
    renewDeadline="duration",
    retryPeriod="duration",
    resourceLock="str",
    resourceName="str",
    resourceNamespace="str",
)
_CLIENT_CONNECTION = _obj(
    "v1alpha1.ClientConnectionConfiguration",
    kubeconfig="str",
    acceptContentTypes="str",
    contentType="str",
    qps="float32",
    burst="int32",
)
_CONFIGURATION = _obj(
    "v1.KubeSchedulerConfiguration",
    apiVersion="str",
    kind="str",
    parallelism="int32",
    leaderElection=_LEADER_ELECTION,
    clientConnection=_CLIENT_CONNECTION,
    enableProfiling="bool",
    enableContentionProfiling="bool",
    percentageOfNodesToScore="int32",
    podInitialBackoffSeconds="int64",
    podMaxBackoffSeconds="int64",
    profiles=_list(_PROFILE),
    extenders=_list(_EXTENDER),
    delayCacheUntilActive="bool",
)

# core/v1 pieces used by plugin args
_LABEL_SELECTOR = _obj(
    "v1.LabelSelector",
    matchLabels=_map("str"),
    matchExpressions=_list(
        _obj("v1.LabelSelectorRequirement", key="str", operator="str", values=_list("str"))
    ),
)
_TOPOLOGY_SPREAD_CONSTRAINT = _obj(
    "v1.TopologySpreadConstraint",
    maxSkew="int32",
    topologyKey="str",
    whenUnsatisfiable="str",
    labelSelector=_LABEL_SELECTOR,
    minDomains="int32",
    nodeAffinityPolicy="str",
    nodeTaintsPolicy="str",
    matchLabelKeys=_list("str"),
)
_NODE_SELECTOR_REQUIREMENT = _obj(
    "v1.NodeSelectorRequirement", key="str", operator="str", values=_list("str")
)
_NODE_SELECTOR_TERM = _obj(
    "v1.NodeSelectorTerm",
    matchExpressions=_list(_NODE_SELECTOR_REQUIREMENT),
    matchFields=_list(_NODE_SELECTOR_REQUIREMENT),
)
_NODE_AFFINITY = _obj(
    "v1.NodeAffinity",
    requiredDuringSchedulingIgnoredDuringExecution=_obj(
        "v1.NodeSelector", nodeSelectorTerms=_list(_NODE_SELECTOR_TERM)
    ),
    preferredDuringSchedulingIgnoredDuringExecution=_list(
        _obj("v1.PreferredSchedulingTerm", weight="int32", preference=_NODE_SELECTOR_TERM)
    ),
)
_RESOURCE_SPEC = _obj("v1.ResourceSpec", name="str", weight="int64")
_SHAPE_POINT = _obj("v1.UtilizationShapePoint", utilization="int32", score="int32")

# kube-scheduler/config/v1 types_pluginargs.go, by plugin name
_ARGS_SCHEMA: dict[str, _Spec] = {
    "DefaultPreemption": _obj(
        "v1.DefaultPreemptionArgs", minCandidateNodesPercentage="int32", minCandidateNodesAbsolute="int32"
    ),
    "InterPodAffinity": _obj(
        "v1.InterPodAffinityArgs", hardPodAffinityWeight="int32", ignorePreferredTermsOfExistingPods="bool"
    ),
    "NodeResourcesFit": _obj(
        "v1.NodeResourcesFitArgs",
        ignoredResources=_list("str"),
        ignoredResourceGroups=_list("str"),
        scoringStrategy=_obj(
            "v1.ScoringStrategy",
            type="str",
            resources=_list(_RESOURCE_SPEC),
            requestedToCapacityRatio=_obj("v1.RequestedToCapacityRatioParam", shape=_list(_SHAPE_POINT)),
        ),
    ),
    "PodTopologySpread": _obj(
        "v1.PodTopologySpreadArgs",
        defaultConstraints=_list(_TOPOLOGY_SPREAD_CONSTRAINT),
        defaultingType="str",
    ),
    "NodeResourcesBalancedAllocation": _obj(
        "v1.NodeResourcesBalancedAllocationArgs", resources=_list(_RESOURCE_SPEC)
    ),
    "VolumeBinding": _obj("v1.VolumeBindingArgs", bindTimeoutSeconds="int64", shape=_list(_SHAPE_POINT)),
    "NodeAffinity": _obj("v1.NodeAffinityArgs", addedAffinity=_NODE_AFFINITY),
    "DynamicResources": _obj("v1.DynamicResourcesArgs", filterTimeout="duration", bindingTimeout="duration"),
    # kubernetes-sigs/scheduler-plugins apis/config/v1 (same group and version as the configuration)
    "Coscheduling": _obj(
        "v1.CoschedulingArgs",
        permitWaitingTimeSeconds="int64",
        podGroupBackoffSeconds="int64",
        podGroupRejectPercentage="int32",
    ),
}


# --------------------------------------------------------------------------------------------------
# Reading


class _StrictLoader(yaml.SafeLoader):
    """YAML loader that rejects duplicate keys, as the strict decoder does."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {_go_quote(str(key))} already set in map", key_node.start_mark
            )
        out[key] = loader.construct_object(value_node, deep=deep)
    return out


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def parse_config_text(text: str, source: str = "") -> dict[str, Any]:
    """Parses YAML or JSON text strictly (duplicate keys are errors); raises ConfigError."""
    try:
        yamlbounds.check(text)
        data = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass
    except yamlbounds.YamlBoundsError as exc:
        raise ConfigError([f"yaml: {exc}"], source) from None
    except yaml.YAMLError as exc:
        raise ConfigError([f"yaml: {exc}"], source) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            [f"couldn't decode as KubeSchedulerConfiguration: expected an object, got {_json_kind(data)}"],
            source,
        )
    return data


def _read(source: str | Path | dict[str, Any] | None, name: str) -> tuple[str, dict[str, Any] | None]:
    if source is None:
        return name, None
    if isinstance(source, dict):
        try:  # as a text's (parse_config_text): deep nesting would end in a RecursionError
            yamlbounds.check_value(source)
        except yamlbounds.YamlBoundsError as exc:
            raise ConfigError([f"json: {exc}"], name) from None
        return name, source
    if isinstance(source, str | Path):
        label = name or str(source)
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError([f"open {source}: {exc.strerror or exc}"], label) from None
        return label, parse_config_text(text, label)
    raise TypeError(f"load_config: unsupported source type {type(source).__name__}")


# --------------------------------------------------------------------------------------------------
# Default plugins and mergePlugins (v1/default_plugins.go)


@dataclass
class _Entry:
    name: str
    weight: int  # 0 when unset
    where: str  # field path of the entry in the user's config, "" for a default plugin


@dataclass
class _Set:
    enabled: list[_Entry] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


def default_plugins(features: Mapping[str, bool] | None = None) -> list[PluginRef]:
    """getDefaultPlugins: the v1.35 multiPoint list, feature gates applied."""
    gates = {**DEFAULT_FEATURES, **(features or {})}
    mp = [
        PluginRef("SchedulingGates"),
        PluginRef("PrioritySort"),
        PluginRef("NodeUnschedulable"),
        PluginRef("NodeName"),
        PluginRef("TaintToleration", 3),
        PluginRef("NodeAffinity", 2),
        PluginRef("NodePorts"),
        PluginRef("NodeResourcesFit", 1),
        PluginRef("VolumeRestrictions"),
        PluginRef("NodeVolumeLimits"),
        PluginRef("VolumeBinding"),
        PluginRef("VolumeZone"),
        PluginRef("PodTopologySpread", 2),
        PluginRef("InterPodAffinity", 2),
        PluginRef("DefaultPreemption"),
        PluginRef("NodeResourcesBalancedAllocation", 1),
        PluginRef("ImageLocality", 1),
        PluginRef("DefaultBinder"),
    ]
    # applyFeatureGates, in upstream's order
    if gates.get("NodeDeclaredFeatures"):
        mp.append(PluginRef("NodeDeclaredFeatures"))
    if gates.get("DynamicResourceAllocation"):
        # before DefaultPreemption: better to deallocate an idle claim than to evict a pod
        for i, ref in enumerate(mp):
            if ref.name == "DefaultPreemption":
                mp.insert(i, PluginRef("DynamicResources", 2))
                break
    if gates.get("GangScheduling"):
        mp.append(PluginRef("GangScheduling"))
    return mp


def merge_plugin_set(default: _Set, custom: _Set) -> _Set:
    """mergePluginSet: custom entries replace default ones in place; "*" drops every default."""
    disabled = [*custom.disabled, *default.disabled]
    disabled_set = set(disabled)
    last_index = {e.name: i for i, e in enumerate(custom.enabled)}  # a repeated name: the last one wins
    replaced: set[int] = set()
    enabled: list[_Entry] = []
    if "*" not in disabled_set:
        for d in default.enabled:
            if d.name in disabled_set:
                continue
            if d.name in last_index:
                idx = last_index[d.name]
                d = custom.enabled[idx]
                replaced.add(idx)
            enabled.append(d)
    # custom plugins that replaced nothing are appended (duplicates included: the framework rejects them)
    enabled.extend(e for i, e in enumerate(custom.enabled) if i not in replaced)
    return _Set(enabled, disabled)


def _custom_sets(plugins: dict[str, Any], ppath: str) -> dict[str, _Set]:
    out: dict[str, _Set] = {}
    for point in ("multiPoint", *EXTENSION_POINTS):
        ps = plugins.get(point, {})
        enabled = [
            _Entry(p.get("name", ""), p.get("weight", 0), f"{ppath}.plugins.{point}.enabled[{i}]")
            for i, p in enumerate(ps.get("enabled", []))
        ]
        disabled = [p.get("name", "") for p in ps.get("disabled", [])]
        out[point] = _Set(enabled, disabled)
    return out


def _merged_sets(plugins: dict[str, Any], ppath: str, gates: Mapping[str, bool]) -> dict[str, _Set]:
    defaults = {p: _Set() for p in ("multiPoint", *EXTENSION_POINTS)}
    defaults["multiPoint"] = _Set([_Entry(r.name, r.weight, "") for r in default_plugins(gates)])
    custom = _custom_sets(plugins, ppath)
    return {p: merge_plugin_set(defaults[p], custom[p]) for p in defaults}


# --------------------------------------------------------------------------------------------------
# Plugin args: defaulting (v1/defaults.go) and validation (validation/validation_pluginargs.go)


def _default_resources() -> list[dict[str, Any]]:
    return [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def _default_args(plugin: str, a: dict[str, Any], gates: Mapping[str, bool]) -> dict[str, Any]:
    """Fills defaults into decoded v1 args; returns the complete args."""
    if plugin == "DefaultPreemption":
        return {
            "minCandidateNodesPercentage": a.get("minCandidateNodesPercentage", 10),
            "minCandidateNodesAbsolute": a.get("minCandidateNodesAbsolute", 100),
        }
    if plugin == "InterPodAffinity":
        return {
            "hardPodAffinityWeight": a.get("hardPodAffinityWeight", 1),
            "ignorePreferredTermsOfExistingPods": a.get("ignorePreferredTermsOfExistingPods", False),
        }
    if plugin == "NodeResourcesFit":
        strategy = a.get("scoringStrategy")
        if strategy is None:
            strategy = {"type": "LeastAllocated", "resources": _default_resources()}
        strategy = dict(strategy)
        strategy.setdefault("type", "")
        resources = [dict(r) for r in strategy.get("resources", [])] or _default_resources()
        for r in resources:
            r.setdefault("name", "")
            if not r.get("weight"):
                r["weight"] = 1
        strategy["resources"] = resources
        return {
            "ignoredResources": a.get("ignoredResources", []),
            "ignoredResourceGroups": a.get("ignoredResourceGroups", []),
            "scoringStrategy": strategy,
        }
    if plugin == "PodTopologySpread":
        return {
            "defaultConstraints": a.get("defaultConstraints", []),
            "defaultingType": a.get("defaultingType") or "System",
        }
    if plugin == "NodeResourcesBalancedAllocation":
        resources = [dict(r) for r in a.get("resources", [])] or _default_resources()
        for r in resources:
            r.setdefault("name", "")
            if not r.get("weight"):
                r["weight"] = 1
        return {"resources": resources}
    if plugin == "VolumeBinding":
        out: dict[str, Any] = {"bindTimeoutSeconds": a.get("bindTimeoutSeconds", 600)}
        if "shape" in a:
            out["shape"] = a["shape"]
        if not a.get("shape") and gates.get("StorageCapacityScoring"):
            out["shape"] = [
                {"utilization": 0, "score": _MAX_CUSTOM_PRIORITY_SCORE},
                {"utilization": 100, "score": 0},
            ]
        return out
    if plugin == "NodeAffinity":
        return {"addedAffinity": a["addedAffinity"]} if "addedAffinity" in a else {}
    if plugin == "DynamicResources":
        out = {k: a[k] for k in ("filterTimeout", "bindingTimeout") if k in a}
        if "filterTimeout" not in out and gates.get("DRASchedulerFilterTimeout"):
            out["filterTimeout"] = "10s"  # DynamicResourcesFilterTimeoutDefault
        if (
            "bindingTimeout" not in out
            and gates.get("DRADeviceBindingConditions")
            and gates.get("DRAResourceClaimDeviceStatus")
        ):
            out["bindingTimeout"] = "10m0s"  # DynamicResourcesBindingTimeoutDefault
        return out
    if plugin == "Coscheduling":
        # scheduler-plugins apis/config/v1/defaults.go SetDefaults_CoschedulingArgs
        return {
            "permitWaitingTimeSeconds": a.get("permitWaitingTimeSeconds", 60),
            "podGroupBackoffSeconds": a.get("podGroupBackoffSeconds", 0),
            "podGroupRejectPercentage": a.get("podGroupRejectPercentage", 10),
        }
    raise AssertionError(plugin)  # pragma: no cover


def _validate_default_preemption(a: dict[str, Any], path: str, errs: _Errs) -> None:
    pct_path, abs_path = (
        _child(path, "minCandidateNodesPercentage"),
        _child(path, "minCandidateNodesAbsolute"),
    )
    pct, absolute = a["minCandidateNodesPercentage"], a["minCandidateNodesAbsolute"]
    if pct < 0 or pct > 100:
        errs.invalid(pct_path, pct, "not in valid range [0, 100]")
    if absolute < 0:
        errs.invalid(abs_path, absolute, "not in valid range [0, inf)")
    if pct == 0 and absolute == 0:
        errs.invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute")
        errs.invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage")


def _validate_inter_pod_affinity(a: dict[str, Any], path: str, errs: _Errs) -> None:
    w = a["hardPodAffinityWeight"]
    if w < 0 or w > 100:
        errs.invalid(_child(path, "hardPodAffinityWeight"), w, "not in valid range [0, 100]")


def _validate_pod_topology_spread(a: dict[str, Any], path: str, errs: _Errs) -> None:
    constraints: list[dict[str, Any]] = a["defaultConstraints"]
    dtype = a["defaultingType"]
    if dtype not in ("System", "List"):
        errs.not_supported(_child(path, "defaultingType"), dtype, ["System", "List"])
    elif dtype == "System" and constraints:
        errs.invalid(_child(path, "defaultingType"), dtype, "when .defaultConstraints are not empty")
    cpath = _child(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = f"{cpath}[{i}]"
        skew = c.get("maxSkew", 0)
        if skew <= 0:
            errs.invalid(f"{p}.maxSkew", skew, "not in valid range (0, inf)")
        key = c.get("topologyKey", "")
        if not key:
            errs.required(f"{p}.topologyKey", "can not be empty")
        else:
            _validate_label_name(key, f"{p}.topologyKey", errs)
        action = c.get("whenUnsatisfiable", "")
        if not action:
            errs.required(f"{p}.whenUnsatisfiable", "can not be empty")
        elif action not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.not_supported(f"{p}.whenUnsatisfiable", action, ["DoNotSchedule", "ScheduleAnyway"])
        if "labelSelector" in c:
            errs.forbidden(
                f"{p}.labelSelector", "constraint must not define a selector, as they deduced for each pod"
            )
        for other in constraints[:i]:
            if other.get("topologyKey", "") == key and other.get("whenUnsatisfiable", "") == action:
                errs.duplicate(p, f"{{{key}, {action}}}")
                break


def _validate_shape(shape: list[dict[str, Any]], path: str, errs: _Errs) -> None:
    """validateFunctionShape."""
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
        if s < 0 or s > _MAX_CUSTOM_PRIORITY_SCORE:
            errs.invalid(f"{path}[{i}].score", s, f"not in valid range [0, {_MAX_CUSTOM_PRIORITY_SCORE}]")


def _validate_node_resources_fit(a: dict[str, Any], path: str, errs: _Errs) -> None:
    for i, res in enumerate(a["ignoredResources"]):
        _validate_label_name(res, f"{_child(path, 'ignoredResources')}[{i}]", errs)
    for i, group in enumerate(a["ignoredResourceGroups"]):
        p = f"{_child(path, 'ignoredResourceGroups')}[{i}]"
        if "/" in group:
            errs.invalid(p, group, "resource group name can't contain '/'")
        _validate_label_name(group, p, errs)
    spath = _child(path, "scoringStrategy")
    strategy = a["scoringStrategy"]
    stype = strategy["type"]
    supported = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]
    if stype not in supported:
        errs.not_supported(f"{spath}.type", stype, supported)
    for i, r in enumerate(strategy["resources"]):
        w = r["weight"]
        if w <= 0 or w > 100:
            errs.invalid(
                f"{spath}.resources[{i}].weight",
                w,
                f"resource weight of {r['name']} not in valid range (0, 100]",
            )
    if "requestedToCapacityRatio" in strategy:
        # upstream names the path scoringStrategy.shape
        _validate_shape(strategy["requestedToCapacityRatio"].get("shape", []), f"{spath}.shape", errs)
    elif stype == "RequestedToCapacityRatio":
        # upstream validation lets this through and NewFit then dereferences a nil pointer
        errs.required(f"{spath}.shape", "at least one point must be specified")


def _validate_balanced_allocation(a: dict[str, Any], path: str, errs: _Errs) -> None:
    seen: set[str] = set()
    for i, r in enumerate(a["resources"]):
        p = f"{_child(path, 'resources')}[{i}]"
        if r["name"] in seen:
            errs.duplicate(f"{p}.name", r["name"])
        else:
            seen.add(r["name"])
        if r["weight"] != 1:
            errs.invalid(f"{p}.weight", r["weight"], "must be 1")


def _validate_volume_binding(a: dict[str, Any], path: str, errs: _Errs, gates: Mapping[str, bool]) -> None:
    t = a["bindTimeoutSeconds"]
    if t < 0:
        errs.invalid(
            _child(path, "bindTimeoutSeconds"),
            t,
            "invalid BindTimeoutSeconds, should not be a negative value",
        )
    if gates.get("StorageCapacityScoring"):
        _validate_shape(a.get("shape", []), _child(path, "shape"), errs)
    elif "shape" in a:
        errs.invalid(
            _child(path, "shape"),
            a["shape"],
            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
        )


_SELECTOR_OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


def _validate_requirement(req: dict[str, Any], path: str, errs: _Errs) -> None:
    """labels.NewRequirement (apimachinery/pkg/labels/selector.go) for a node selector requirement."""
    key = req.get("key", "")
    op = req.get("operator", "")
    values: list[str] = req.get("values", [])
    shown_values: Any = values if "values" in req else None
    msgs = is_label_key(key)
    if msgs:
        errs.invalid(f"{path}.key", key, "; ".join(msgs))
    vpath = f"{path}.values"
    if op in ("In", "NotIn"):
        if not values:
            errs.invalid(vpath, shown_values, "for 'in', 'notin' operators, values set can't be empty")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.invalid(vpath, values, "values set must be empty for exists and does not exist")
    else:  # Gt, Lt
        if len(values) != 1:
            errs.invalid(vpath, shown_values, "for 'Gt', 'Lt' operators, exactly one value is required")
        for i, v in enumerate(values):
            if not re.fullmatch(r"[+-]?[0-9]+", v) or not -(2**63) <= int(v) < 2**63:
                errs.invalid(f"{vpath}[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
    for i, v in enumerate(values):
        vmsgs = is_label_value(v)
        if vmsgs:
            errs.invalid(f"{vpath}[{i}][{key}]", v, "; ".join(vmsgs))


def _validate_node_selector_term(term: dict[str, Any], path: str, errs: _Errs) -> None:
    """newNodeSelectorTerm (component-helpers/scheduling/corev1/nodeaffinity)."""
    for i, req in enumerate(term.get("matchExpressions", [])):
        p = f"{path}.matchExpressions[{i}]"
        op = req.get("operator", "")
        if op not in _SELECTOR_OPS:
            errs.not_supported(f"{p}.operator", op, _SELECTOR_OPS)
            continue
        _validate_requirement(req, p, errs)
    for i, req in enumerate(term.get("matchFields", [])):
        p = f"{path}.matchFields[{i}]"
        op = req.get("operator", "")
        if op in ("In", "NotIn"):
            values = req.get("values", [])
            if len(values) != 1:
                errs.invalid(f"{p}.values", values if "values" in req else None, "must have one element")
        else:
            errs.not_supported(f"{p}.operator", op, ["In", "NotIn"])


def _empty_term(term: dict[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def _validate_node_affinity(a: dict[str, Any], path: str, errs: _Errs) -> None:
    affinity = a.get("addedAffinity")
    if affinity is None:
        return
    apath = _child(path, "addedAffinity")
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        tpath = f"{apath}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        for i, term in enumerate(required.get("nodeSelectorTerms", [])):
            if not _empty_term(term):
                _validate_node_selector_term(term, f"{tpath}[{i}]", errs)
    ppath = f"{apath}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, pref in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution", [])):
        term = pref.get("preference", {})
        if pref.get("weight", 0) == 0 or _empty_term(term):
            continue
        _validate_node_selector_term(term, f"{ppath}[{i}]", errs)


def _validate_dynamic_resources(a: dict[str, Any], path: str, errs: _Errs, gates: Mapping[str, bool]) -> None:
    if gates.get("DRASchedulerFilterTimeout"):
        if "filterTimeout" in a and parse_duration_ns(a["filterTimeout"]) < 0:
            errs.invalid(_child(path, "filterTimeout"), a["filterTimeout"], "must be zero or positive")
    elif "filterTimeout" in a:
        errs.forbidden(_child(path, "filterTimeout"), "DRASchedulingFilterTimeout feature gate is disabled")
    if gates.get("DRADeviceBindingConditions") and gates.get("DRAResourceClaimDeviceStatus"):
        if "bindingTimeout" in a and parse_duration_ns(a["bindingTimeout"]) < 1_000_000_000:
            errs.invalid(_child(path, "bindingTimeout"), a["bindingTimeout"], "must be at least 1 second")
    elif "bindingTimeout" in a:
        errs.forbidden(
            _child(path, "bindingTimeout"),
            "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
        )


def _validate_coscheduling(a: dict[str, Any], path: str, errs: _Errs) -> None:
    """scheduler-plugins apis/config/validation ValidateCoschedulingArgs (run when the plugin is built)."""
    for name in ("permitWaitingTimeSeconds", "podGroupBackoffSeconds"):
        if a[name] < 0:
            errs.invalid(_child(path, name), a[name], "must be greater than 0")
    pct = a["podGroupRejectPercentage"]
    if pct < 0 or pct > 100:
        errs.invalid(_child(path, "podGroupRejectPercentage"), pct, "must be between 0 and 100")


def _validate_args(plugin: str, a: dict[str, Any], path: str, errs: _Errs, gates: Mapping[str, bool]) -> None:
    validators: dict[str, Callable[[dict[str, Any], str, _Errs], None]] = {
        "DefaultPreemption": _validate_default_preemption,
        "InterPodAffinity": _validate_inter_pod_affinity,
        "PodTopologySpread": _validate_pod_topology_spread,
        "NodeResourcesFit": _validate_node_resources_fit,
        "NodeResourcesBalancedAllocation": _validate_balanced_allocation,
        "NodeAffinity": _validate_node_affinity,
        "Coscheduling": _validate_coscheduling,
    }
    if plugin in validators:
        validators[plugin](a, path, errs)
    elif plugin == "VolumeBinding":
        _validate_volume_binding(a, path, errs, gates)
    elif plugin == "DynamicResources":
        _validate_dynamic_resources(a, path, errs, gates)


# Custom plugins (runtime/registry.py): their classes may offer default_args(args) -> args and
# validate_args(args) -> list of messages, each starting with a field path relative to the args ("weight: ...",
# "labels[0]: ..."; ": ..." for the args as a whole).

_CustomHooks = tuple[Callable[[dict[str, Any]], Any] | None, Callable[[dict[str, Any]], Any] | None]


def _custom_hooks(implements: Mapping[str, frozenset[str]], name: str) -> _CustomHooks | None:
    """A custom plugin's (default_args, validate_args), when ``implements`` is the registry's table."""
    get = getattr(implements, "args_hooks", None)
    if get is None or name in _ARGS_SCHEMA:
        return None
    hooks: _CustomHooks | None = get(name)
    return hooks


def join_field(path: str, message: str) -> str:
    """``path`` (the args' field path) joined with a message that starts with a relative field path."""
    if message.startswith(("[", ":")):
        return path + message
    return f"{path}.{message}"


def _custom_args(
    name: str, args: Any, hooks: _CustomHooks, path: str, errs: _Errs, *, given: bool = True
) -> Any:
    """Defaults then validates a custom plugin's args; problems are added to ``errs``."""
    default, validate = hooks
    if args is None:
        args = {}
    if not isinstance(args, dict):
        errs.invalid(path, args, f"args of plugin {_go_quote(name)} must be an object")
        return args

    def report(message: str) -> None:
        if given:
            errs.add(join_field(path, message))
        else:
            errs.add(f"{path}: Required value: args of plugin {_go_quote(name)}: {message.lstrip(': ')}")

    if default is not None:
        try:
            out = default(copy.deepcopy(args))
        except Exception as exc:
            report(f": default_args of plugin {_go_quote(name)} failed: {type(exc).__name__}: {exc}")
            return args
        if not isinstance(out, dict):
            report(f": default_args of plugin {_go_quote(name)} returned {type(out).__name__}, not a dict")
            return args
        args = out
    if validate is not None:
        try:
            messages = validate(args)
        except Exception as exc:
            report(f": validate_args of plugin {_go_quote(name)} failed: {type(exc).__name__}: {exc}")
            return args
        if isinstance(messages, str) or not isinstance(messages, list | tuple):
            report(f": validate_args of plugin {_go_quote(name)} must return a list of messages")
            return args
        for m in messages:
            report(str(m))
    return args


# --------------------------------------------------------------------------------------------------
# Top-level defaulting and validation (v1/defaults.go, validation/validation.go)


def _validate_extenders(extenders: list[dict[str, Any]], errs: _Errs) -> None:
    binders = 0
    seen: set[str] = set()
    for i, ext in enumerate(extenders):
        path = f"extenders[{i}]"
        if ext.get("prioritizeVerb") and ext.get("weight", 0) <= 0:
            errs.invalid(f"{path}.weight", ext.get("weight", 0), "must have a positive weight applied to it")
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources", [])):
            rpath = f"{path}.managedResources[{j}].name"
            rname = res.get("name", "")
            msgs = is_label_key(rname)
            for msg in msgs:
                errs.invalid(rpath, rname, msg)
            if not msgs and not _is_extended_resource_name(rname):
                errs.invalid(rpath, rname, "is an invalid extended resource name")
            if rname in seen:
                errs.invalid(rpath, rname, "duplicate extender managed resource name")
            seen.add(rname)
    if binders > 1:
        errs.invalid(
            "extenders",
            f"found {binders} extenders implementing bind",
            "only one extender can implement bind",
        )


def _validate_leader_election(le: dict[str, Any], errs: _Errs) -> None:
    """componentbasevalidation.ValidateLeaderElectionConfiguration after the scheduler's defaults."""
    if not le.get("leaderElect", True):
        return
    durations = {}
    for key, default in (("leaseDuration", "15s"), ("renewDeadline", "10s"), ("retryPeriod", "2s")):
        text = le.get(key, "0s")
        ns = parse_duration_ns(text)
        durations[key] = ns if ns != 0 else parse_duration_ns(default)
    for key in ("leaseDuration", "renewDeadline", "retryPeriod"):
        if durations[key] <= 0:
            errs.invalid(
                f"leaderElection.{key}", format_duration(durations[key]), "must be greater than zero"
            )
    if durations["leaseDuration"] <= durations["renewDeadline"]:
        errs.invalid(
            "leaderElection.leaseDuration",
            format_duration(durations["renewDeadline"]),
            "must be greater than `RenewDeadline`",
        )
    lock = le.get("resourceLock") or "leases"
    if lock != "leases":
        errs.invalid("leaderElection.resourceLock", lock, 'resourceLock value must be "leases"')


def _validate_percentage(path: str, value: int | None, errs: _Errs) -> None:
    if value is not None and (value < 0 or value > 100):
        errs.invalid(path, value, "not in valid range [0-100]")


def _invalid_in_version(name: str) -> str | None:
    return (
        f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")'
        if (name in _REMOVED_PLUGINS)
        else None
    )


# --------------------------------------------------------------------------------------------------
# What the framework builds from a profile (framework/runtime/framework.go)


def _plugins_needed(sets: dict[str, _Set]) -> set[str]:
    return {e.name for s in sets.values() for e in s.enabled}


def _build_profile_plugins(
    sets: dict[str, _Set],
    implements: Mapping[str, frozenset[str]],
    scheduler_name: str,
    ppath: str,
    errs: _Errs,
    already_reported: set[str],
) -> dict[str, list[PluginRef]]:
    reported_unknown: set[tuple[str, str]] = set()

    def unknown(e: _Entry, point: str) -> None:
        key = (e.name, e.where)
        if key in reported_unknown or e.name in already_reported:
            return
        reported_unknown.add(key)
        iface = _INTERFACE.get(point, "MultiPoint")
        detail = f"unknown plugin ({iface} {_go_quote(e.name)} does not exist)"
        if e.where:
            errs.not_found(f"{e.where}.name", e.name, detail)
        else:
            errs.not_found(
                f"{ppath}.plugins.multiPoint", e.name, "default plugin is not registered; " + detail
            )

    # updatePluginList: the plugins named at each extension point
    specific: dict[str, list[str]] = {}
    for point in _BUILD_ORDER:
        names: list[str] = []
        for e in sets[point].enabled:
            if e.name not in implements:
                unknown(e, point)
                continue
            where = f"{e.where}.name" if e.where else f"{ppath}.plugins.{point}"
            if point not in implements[e.name]:
                errs.invalid(
                    where, e.name, f"plugin {_go_quote(e.name)} does not extend {_INTERFACE[point]} plugin"
                )
                continue
            if e.name in names:
                errs.invalid(
                    where,
                    e.name,
                    f"plugin {_go_quote(e.name)} already registered as {_go_quote(_INTERFACE[point])}",
                )
                continue
            names.append(e.name)
        specific[point] = names

    # expandMultiPointPlugins
    final: dict[str, list[str]] = dict(specific)
    multi_point = sets["multiPoint"].enabled
    if multi_point:
        for point in _BUILD_ORDER:
            disabled = set(sets[point].disabled)
            if "*" in disabled:
                continue
            enabled_names = specific[point]
            overrides: list[str] = []
            expanded: list[str] = []
            for e in multi_point:
                if e.name not in implements:
                    unknown(e, point)
                    continue
                if point not in implements[e.name] or e.name in disabled:
                    continue
                if e.name in enabled_names:
                    # explicitly configured at this extension point: that setting wins
                    if e.name not in overrides:
                        overrides.append(e.name)
                    continue
                if e.name in expanded:
                    where = f"{e.where}.name" if e.where else f"{ppath}.plugins.multiPoint"
                    errs.invalid(
                        where,
                        e.name,
                        f"plugin {_go_quote(e.name)} already registered as {_go_quote(_INTERFACE[point])}",
                    )
                    continue
                expanded.append(e.name)
            # order: overridden plugins (in their extension point order), multiPoint ones, the rest
            final[point] = (
                [n for n in enabled_names if n in overrides]
                + expanded
                + [n for n in enabled_names if n not in overrides]
            )

    if len(final["queueSort"]) != 1:
        errs.add(
            f"{ppath}.plugins.queueSort: only one queue sort plugin required for profile with scheduler name "
            f"{_go_quote(scheduler_name)}, but got {len(final['queueSort'])}"
        )
    if not final["bind"]:
        errs.add(
            f"{ppath}.plugins.bind: at least one bind plugin is needed for profile with scheduler name "
            f"{_go_quote(scheduler_name)}"
        )

    # getScoreWeights: score-specific weights first, then multiPoint ones; 0 means 1
    weights: dict[str, int] = {}
    total = 0
    for e in [*sets["score"].enabled, *multi_point]:
        if e.name not in implements or "score" not in implements[e.name] or e.name in weights:
            continue
        w = e.weight or 1
        weights[e.name] = w
        if w * _MAX_NODE_SCORE > _MAX_TOTAL_SCORE - total:
            errs.add(f"{ppath}.plugins: total score of Score plugins could overflow")
            break
        total += w * _MAX_NODE_SCORE

    return {
        point: [PluginRef(n, weights.get(n, 1) if point == "score" else 0) for n in final[point]]
        for point in EXTENSION_POINTS
    }


# --------------------------------------------------------------------------------------------------
# Entry point


@dataclass
class _PluginConfigItem:
    name: str
    args: Any  # decoded (typed plugins) or raw
    path: str
    typed: bool
    given: bool  # present in the user's configuration


def _decode(raw: dict[str, Any] | None, dec: _Decoder) -> dict[str, Any]:
    if raw is None:
        return {}
    cfg = dec.decode(raw, _CONFIGURATION, "")
    if cfg is _BAD:  # pragma: no cover - raw is a dict
        return {}
    api_version, kind = cfg.get("apiVersion", ""), cfg.get("kind", "")
    if not api_version or not kind:
        if not api_version:
            dec.problems.append(f"apiVersion: Required value: must be {_go_quote(API_VERSION)}")
        if not kind:
            dec.problems.append(f"kind: Required value: must be {_go_quote(KIND)}")
    elif api_version != API_VERSION or kind != KIND:
        dec.problems.append(f"no kind {_go_quote(kind)} is registered for version {_go_quote(api_version)}")
    # typed plugin args (PluginConfig.decodeNestedObjects)
    for i, prof in enumerate(cfg.get("profiles", [])):
        for j, pc in enumerate(prof.get("pluginConfig", [])):
            name = pc.get("name", "")
            if name not in _ARGS_SCHEMA or "args" not in pc:
                continue
            path = f"profiles[{i}].pluginConfig[{j}].args"
            args = pc["args"]
            if isinstance(args, dict):
                args = dict(args)
                gv, k = args.pop("apiVersion", None), args.pop("kind", None)
                want = name + "Args"
                if (gv is not None and gv != API_VERSION) or (k is not None and k != want):
                    dec.problems.append(
                        f"{path}: args for plugin {name} were not of type kubescheduler.config.k8s.io/{want}, "
                        f"got {gv or ''}, Kind={k or ''}"
                    )
                    continue
            decoded = dec.decode(args, _ARGS_SCHEMA[name], path)
            if decoded is not _BAD:
                pc["args"] = decoded
    return cfg  # type: ignore[no-any-return]


def load_config(
    source: str | Path | dict[str, Any] | None,
    *,
    implements: Mapping[str, frozenset[str]],
    name: str = "",
    features: Mapping[str, bool] | None = None,
) -> SchedulerConfig:
    """Loads, defaults and validates a KubeSchedulerConfiguration and builds each profile's plugin lists.

    ``source``: None for the default configuration, a path (str or Path) to a YAML/JSON file, or an
    already parsed dict. ``implements``: every known plugin name -> the extension points it implements;
    when it is the registry's table (``runtime.registry.implements_table()``), the args of enabled custom
    plugins are defaulted and validated by their classes' ``default_args``/``validate_args``.
    ``features``: feature gate overrides (defaults: ``DEFAULT_FEATURES``, as in v1.35).
    Raises ``ConfigError`` listing every problem found.
    """
    gates = {**DEFAULT_FEATURES, **(features or {})}
    label, raw = _read(source, name)
    dec = _Decoder()
    cfg = _decode(raw, dec)
    if dec.problems:
        raise ConfigError(dec.problems, label)
    errs = _Errs()

    # SetDefaults_KubeSchedulerConfiguration
    parallelism = cfg.get("parallelism", 16)
    profiles_in: list[dict[str, Any]] = cfg.get("profiles") or [{}]
    if len(profiles_in) == 1 and "schedulerName" not in profiles_in[0]:
        profiles_in[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    percentage = cfg.get("percentageOfNodesToScore")
    initial_backoff = cfg.get("podInitialBackoffSeconds", 1)
    max_backoff = cfg.get("podMaxBackoffSeconds", 10)
    extenders: list[dict[str, Any]] = cfg.get("extenders", [])

    # ValidateKubeSchedulerConfiguration
    burst = cfg.get("clientConnection", {}).get("burst", 0)
    if burst < 0:
        errs.invalid("clientConnection.burst", burst, "must be non-negative")
    _validate_leader_election(cfg.get("leaderElection", {}), errs)
    if parallelism <= 0:
        errs.invalid("parallelism", parallelism, "should be an integer value greater than zero")

    prepared = []
    seen_names: dict[str, int] = {}
    for i, prof in enumerate(profiles_in):
        ppath = f"profiles[{i}]"
        sched_name: str = prof.get("schedulerName", "")
        sets = _merged_sets(prof.get("plugins", {}), ppath, gates)
        needed = _plugins_needed(sets)

        # plugin configs: the given ones defaulted, then defaults for enabled plugins with args types
        items: list[_PluginConfigItem] = []
        for j, pc in enumerate(prof.get("pluginConfig", [])):
            pname = pc.get("name", "")
            path = f"{ppath}.pluginConfig[{j}]"
            typed = pname in _ARGS_SCHEMA
            args = pc.get("args", {}) if typed else pc.get("args")
            if typed:
                args = _default_args(pname, args, gates)
            elif pname in needed and (hooks := _custom_hooks(implements, pname)) is not None:
                # a custom plugin: built only when enabled, like upstream's out-of-tree factories
                args = _custom_args(pname, args, hooks, f"{path}.args", errs)
            items.append(_PluginConfigItem(pname, args, path, typed, True))
        configured = {it.name for it in items}
        for pname in sorted(needed):
            if pname in _ARGS_SCHEMA and pname not in configured:
                items.append(_PluginConfigItem(pname, _default_args(pname, {}, gates), "", True, False))
            elif pname not in configured and (hooks := _custom_hooks(implements, pname)) is not None:
                args = _custom_args(pname, {}, hooks, f"{ppath}.pluginConfig", errs, given=False)
                items.append(_PluginConfigItem(pname, args, "", False, False))

        # validateKubeSchedulerProfile
        if not sched_name:
            errs.required(f"{ppath}.schedulerName")
        pct = prof.get("percentageOfNodesToScore")
        _validate_percentage(f"{ppath}.percentageOfNodesToScore", pct, errs)
        removed_reported: set[str] = set()
        for point in EXTENSION_POINTS:
            for e in sets[point].enabled:
                detail = _invalid_in_version(e.name)
                if detail:
                    removed_reported.add(e.name)
                    errs.invalid(e.where or f"{ppath}.plugins.{point}.enabled", e.name, detail)
        seen_config: set[str] = set()
        for it in items:
            if not it.given:
                continue
            if it.name in seen_config:
                errs.duplicate(it.path, it.name)
            seen_config.add(it.name)
            detail = _invalid_in_version(it.name)
            if detail:
                errs.invalid(it.path, it.name, detail)
            elif it.typed and (it.name not in _CHECKED_WHEN_BUILT or it.name in needed):
                # NodeResourcesFit and Coscheduling args are checked only when the plugin is built
                _validate_args(it.name, it.args, f"{it.path}.args", errs, gates)
        if sched_name in seen_names:
            errs.add(
                f"{ppath}.schedulerName: Duplicate value: {_go_quote(sched_name)} "
                f"(already used by profiles[{seen_names[sched_name]}].schedulerName)"
            )
        seen_names.setdefault(sched_name, i)
        prepared.append((prof, sets, items, removed_reported, pct))

    # validateCommonQueueSort: the queueSort extension point (not multiPoint) must agree
    if prepared:
        canon = prepared[0][1]["queueSort"]
        if len(canon.enabled) > 1:
            errs.invalid(
                "profiles[0].plugins.queueSort.Enabled",
                len(canon.enabled),
                "only one queue sort plugin can be enabled",
            )
        qs_name = canon.enabled[0].name if canon.enabled else ""
        qs_args = next(
            (it.args for it in prepared[0][2] if it.given and qs_name and it.name == qs_name), None
        )
        canon_key = ([(e.name, e.weight) for e in canon.enabled], canon.disabled)
        for i, (_, sets, items, _, _) in enumerate(prepared[1:], start=1):
            cur = sets["queueSort"]
            if ([(e.name, e.weight) for e in cur.enabled], cur.disabled) != canon_key:
                errs.invalid(
                    f"profiles[{i}].plugins.queueSort",
                    {"Enabled": [e.name for e in cur.enabled], "Disabled": cur.disabled},
                    "must be the same for all profiles",
                )
            for it in items:
                if it.given and qs_name and it.name == qs_name and it.args != qs_args:
                    errs.invalid(
                        f"profiles[{i}].pluginConfig.args",
                        it.args,
                        "queueSort must be the same for all profiles",
                    )

    _validate_percentage("percentageOfNodesToScore", percentage, errs)
    if initial_backoff <= 0:
        errs.invalid("podInitialBackoffSeconds", initial_backoff, "must be greater than 0")
    if max_backoff < initial_backoff:
        errs.invalid(
            "podMaxBackoffSeconds", max_backoff, "must be greater than or equal to PodInitialBackoffSeconds"
        )
    _validate_extenders(extenders, errs)

    # profile.NewMap: build every profile's framework
    profiles: list[ProfileConfig] = []
    first_queue_sort: tuple[str, Any] | None = None
    for i, (prof, sets, items, removed_reported, pct) in enumerate(prepared):
        ppath = f"profiles[{i}]"
        sched_name = prof.get("schedulerName", "")
        plugins = _build_profile_plugins(sets, implements, sched_name, ppath, errs, removed_reported)
        plugin_args: dict[str, dict[str, Any]] = {}
        given_args: dict[str, Any] = {}
        for it in items:
            if it.name in plugin_args:
                continue
            args = it.args
            plugin_args[it.name] = args if isinstance(args, dict) else {}
            if it.given:
                given_args[it.name] = args
        for pname in sorted(_plugins_needed(sets)):
            plugin_args.setdefault(pname, {})
        # cfgValidator: one queue sort plugin, with the same args, for every profile
        if len(plugins["queueSort"]) == 1:
            qs = plugins["queueSort"][0].name
            if first_queue_sort is None:
                first_queue_sort = (qs, given_args.get(qs))
            elif first_queue_sort[0] != qs:
                errs.add(
                    f"{ppath}: different queue sort plugins for profile {_go_quote(sched_name)}: "
                    f"{_go_quote(qs)}, first: {_go_quote(first_queue_sort[0])}"
                )
            elif first_queue_sort[1] != given_args.get(qs):
                errs.add(f"{ppath}: different queue sort plugin args for profile {_go_quote(sched_name)}")
        profiles.append(ProfileConfig(sched_name, pct, plugins, plugin_args))

    if errs:
        raise ConfigError(errs.items, label)
    return SchedulerConfig(
        profiles=profiles,
        percentage_of_nodes_to_score=percentage,
        parallelism=parallelism,
        pod_initial_backoff_seconds=initial_backoff,
        pod_max_backoff_seconds=max_backoff,
        extenders=extenders,
        raw=copy.deepcopy(raw) if raw is not None else {},
        features=gates,
    )
