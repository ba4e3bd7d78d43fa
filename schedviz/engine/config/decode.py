"""Reading a KubeSchedulerConfiguration: strict YAML/JSON parsing and strict decoding against the v1
types (kube-scheduler/config/v1 types.go, apimachinery's strict JSON decoder): unknown fields, wrong
types and duplicate keys are errors, worded as upstream's decoder words them.

A plugin's typed args are decoded against the ``args_type`` its class declares (plugin_args.py).
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from .. import yamlbounds
from ..apimachinery import child_path, go_quote, parse_duration_ns
from ..errors import ConfigError
from ..plugin_args import ArgsType, list_of, obj
from .types import API_VERSION, EXTENSION_POINTS, KIND, MAX_INT32, MAX_INT64

# --------------------------------------------------------------------------------------------------
# Strict decoding against a schema of the v1 types
#
# A spec is a leaf name ("str", "bool", "int32", "int64", "float32", "duration", "bytes", "any"),
# ("list", spec), ("map", spec) or ("obj", go type name, {json field: spec}).

BAD = object()
_GO_LEAF = {
    "str": "string",
    "bool": "bool",
    "int32": "int32",
    "int64": "int64",
    "float32": "float32",
    "duration": "v1.Duration",
    "bytes": "[]uint8",
}


def _go_type(spec: ArgsType) -> str:
    if isinstance(spec, str):
        return _GO_LEAF.get(spec, "interface {}")
    if spec[0] == "list":
        return "[]" + _go_type(spec[1])
    if spec[0] == "map":
        return "map[string]" + _go_type(spec[1])
    return str(spec[1])


def json_kind(v: Any) -> str:
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


class Decoder:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def _type_error(self, value: Any, spec: ArgsType, path: str) -> object:
        shown = json_kind(value)
        if shown == "number":
            shown = f"number {value}"
        self.problems.append(
            f"json: cannot unmarshal {shown} into Go struct field {path} of type {_go_type(spec)}"
        )
        return BAD

    def decode(self, value: Any, spec: ArgsType, path: str) -> Any:
        if isinstance(spec, str):
            return self._leaf(value, spec, path)
        kind = spec[0]
        if kind == "list":
            if not isinstance(value, list):
                return self._type_error(value, spec, path)
            out = []
            for i, item in enumerate(value):
                d = self.decode(item, spec[1], f"{path}[{i}]") if item is not None else _zero(spec[1])
                if d is not BAD:
                    out.append(d)
            return out
        if kind == "map":
            if not isinstance(value, dict):
                return self._type_error(value, spec, path)
            res: dict[str, Any] = {}
            for k, item in value.items():
                d = self.decode(item, spec[1], f"{path}[{k}]") if item is not None else _zero(spec[1])
                if d is not BAD:
                    res[str(k)] = d
            return res
        # obj
        if not isinstance(value, dict):
            return self._type_error(value, spec, path)
        fields: dict[str, ArgsType] = spec[2]
        obj: dict[str, Any] = {}
        for k, item in value.items():
            key = str(k)
            if key not in fields:
                self.problems.append(f"strict decoding error: unknown field {go_quote(child_path(path, key))}")
                continue
            if item is None:  # JSON null: the field keeps its zero value (nil for pointers)
                continue
            d = self.decode(item, fields[key], child_path(path, key))
            if d is not BAD:
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
            bound = MAX_INT32 if spec == "int32" else MAX_INT64
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
                return BAD
            return value
        if spec == "bytes":
            if not isinstance(value, str):
                return self._type_error(value, spec, path)
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                self.problems.append(f"{path}: illegal base64 data")
                return BAD
            return value
        raise AssertionError(spec)  # pragma: no cover


def _zero(spec: ArgsType) -> Any:
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
_PLUGIN = obj("v1.Plugin", name="str", weight="int32")
_PLUGIN_SET = obj("v1.PluginSet", enabled=list_of(_PLUGIN), disabled=list_of(_PLUGIN))
_PLUGINS = obj("v1.Plugins", multiPoint=_PLUGIN_SET, **dict.fromkeys(EXTENSION_POINTS, _PLUGIN_SET))
_PLUGIN_CONFIG = obj("v1.PluginConfig", name="str", args="any")
_PROFILE = obj(
    "v1.KubeSchedulerProfile",
    schedulerName="str",
    percentageOfNodesToScore="int32",
    plugins=_PLUGINS,
    pluginConfig=list_of(_PLUGIN_CONFIG),
)
_EXTENDER = obj(
    "v1.Extender",
    urlPrefix="str",
    filterVerb="str",
    preemptVerb="str",
    prioritizeVerb="str",
    weight="int64",
    bindVerb="str",
    enableHTTPS="bool",
    tlsConfig=obj(
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
    managedResources=list_of(obj("v1.ExtenderManagedResource", name="str", ignoredByScheduler="bool")),
    ignorable="bool",
)
_LEADER_ELECTION = obj(
    "v1alpha1.LeaderElectionConfiguration",
    leaderElect="bool",
    leaseDuration="duration",
    renewDeadline="duration",
    retryPeriod="duration",
    resourceLock="str",
    resourceName="str",
    resourceNamespace="str",
)
_CLIENT_CONNECTION = obj(
    "v1alpha1.ClientConnectionConfiguration",
    kubeconfig="str",
    acceptContentTypes="str",
    contentType="str",
    qps="float32",
    burst="int32",
)
_CONFIGURATION = obj(
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
    profiles=list_of(_PROFILE),
    extenders=list_of(_EXTENDER),
    delayCacheUntilActive="bool",
)

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
                None, None, f"key {go_quote(str(key))} already set in map", key_node.start_mark
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
            [f"couldn't decode as KubeSchedulerConfiguration: expected an object, got {json_kind(data)}"],
            source,
        )
    return data


def read_source(source: str | Path | dict[str, Any] | None, name: str) -> tuple[str, dict[str, Any] | None]:
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


def decode_configuration(
    raw: dict[str, Any] | None, dec: Decoder, args_type: Callable[[str], ArgsType | None]
) -> dict[str, Any]:
    """The configuration decoded, typed plugin args included (``args_type(name)``: the plugin's
    declared args type, None for untyped args); problems go to ``dec.problems``."""
    if raw is None:
        return {}
    cfg = dec.decode(raw, _CONFIGURATION, "")
    if cfg is BAD:  # pragma: no cover - raw is a dict
        return {}
    api_version, kind = cfg.get("apiVersion", ""), cfg.get("kind", "")
    if not api_version or not kind:
        if not api_version:
            dec.problems.append(f"apiVersion: Required value: must be {go_quote(API_VERSION)}")
        if not kind:
            dec.problems.append(f"kind: Required value: must be {go_quote(KIND)}")
    elif api_version != API_VERSION or kind != KIND:
        dec.problems.append(f"no kind {go_quote(kind)} is registered for version {go_quote(api_version)}")
    # typed plugin args (PluginConfig.decodeNestedObjects)
    for i, prof in enumerate(cfg.get("profiles", [])):
        for j, pc in enumerate(prof.get("pluginConfig", [])):
            name = pc.get("name", "")
            typ = args_type(name) if "args" in pc else None
            if typ is None:
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
            decoded = dec.decode(args, typ, path)
            if decoded is not BAD:
                pc["args"] = decoded
    return cfg  # type: ignore[no-any-return]
