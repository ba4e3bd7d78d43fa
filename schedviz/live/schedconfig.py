"""The scheduler configuration live replays use: the default, an uploaded one, or the cluster's own.

The cluster's own is read (one ``get``) from a ConfigMap the user names (``namespace/name``, and
the key when it holds several files), as kubeadm and most distributions mount it into
kube-scheduler. Whatever its source, the configuration is made safe and runnable for replays of a
live cluster:

- ``extenders`` are removed: an extender is a web service the real scheduler calls, and one with a
  ``bindVerb`` binds pods: SchedViz never writes to a watched cluster. Divergences are then
  explained by the extenders SchedViz did not call;
- plugins SchedViz does not have (out-of-tree plugins it was not given, see docs/plugins.md) are
  removed from every extension point and from ``pluginConfig``, and named in the notes.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client

from schedviz.engine.config import SchedulerConfig, load_config, parse_config_text
from schedviz.engine.runtime import registry
from schedviz.kube.kubeconfig import KubeconfigError
from schedviz.kube.watch import describe_exception

JSON = dict[str, Any]
CONFIG_SOURCES = ("default", "uploaded", "configmap")


@dataclass
class LiveConfig:
    raw: JSON | None  # the configuration replays run with (None: the v1.35 default)
    config: SchedulerConfig
    source: str = "default"
    unknown_plugins: list[str] = field(default_factory=list)
    extenders: list[str] = field(default_factory=list)
    config_map: str = ""
    key: str = ""

    @property
    def profiles(self) -> list[str]:
        return [p.scheduler_name for p in self.config.profiles]

    def notes(self) -> JSON:
        return {
            "source": self.source,
            "configMap": self.config_map or None,
            "key": self.key or None,
            "profiles": self.profiles,
            "unknownPlugins": self.unknown_plugins,
            "extenders": self.extenders,
        }


def sanitize(raw: JSON, implements: Any = None) -> tuple[JSON, list[str], list[str]]:
    """(runnable copy, plugins removed, extenders removed)."""
    known = implements if implements is not None else registry.implements_table()
    out = copy.deepcopy(raw)
    extenders: list[str] = []
    if isinstance(out.get("extenders"), list):  # anything else is left for validation to report
        extenders = [
            str(e.get("urlPrefix") or f"extender {i + 1}") if isinstance(e, dict) else f"extender {i + 1}"
            for i, e in enumerate(out.pop("extenders"))
        ]
    unknown: list[str] = []

    def keep(entry: Any) -> bool:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or name == "*" or name in known:
            return True
        if name not in unknown:
            unknown.append(name)
        return False

    profiles = out.get("profiles")
    for prof in profiles if isinstance(profiles, list) else []:
        if not isinstance(prof, dict):
            continue
        plugins = prof.get("plugins")
        if isinstance(plugins, dict):
            for point in plugins.values():
                if not isinstance(point, dict):
                    continue
                for which in ("enabled", "disabled"):
                    if isinstance(point.get(which), list):
                        point[which] = [e for e in point[which] if keep(e)]
        if isinstance(prof.get("pluginConfig"), list):
            prof["pluginConfig"] = [e for e in prof["pluginConfig"] if keep(e)]
    return out, unknown, extenders


def build(raw: JSON | None, source: str = "default", *, config_map: str = "", key: str = "") -> LiveConfig:
    """A LiveConfig from a parsed configuration (None: the default); raises ConfigError."""
    implements = registry.implements_table()
    if raw is None:
        return LiveConfig(None, load_config(None, implements=implements), source)
    clean, unknown, extenders = sanitize(raw, implements)
    cfg = load_config(clean, implements=implements, name=config_map or source)
    return LiveConfig(clean, cfg, source, unknown, extenders, config_map, key)


def from_text(text: str, source: str = "uploaded", **kw: Any) -> LiveConfig:
    return build(parse_config_text(text, kw.get("config_map") or source), source, **kw)


def read_config_map(api_client: Any, ref: str, key: str = "") -> tuple[str, str]:
    """(the configuration's text, the key it was under) from ConfigMap ``namespace/name``."""
    namespace, _, name = ref.partition("/")
    if not namespace or not name or "/" in name:
        raise KubeconfigError(f"config_map: expected namespace/name, got {ref!r}", "config_map", "invalid")
    host = str(api_client.configuration.host)
    try:
        core: Any = client.CoreV1Api(api_client)
        resp = core.read_namespaced_config_map(
            name, namespace, _preload_content=False, _request_timeout=(10, 30)
        )
        try:
            body = json.loads(resp.data)
        finally:
            resp.release_conn()
    except Exception as exc:
        f = describe_exception(exc, host, f"reading ConfigMap {ref}")
        hint = ""
        if f.kind == "forbidden":
            hint = " (grant get on it: see the Role in deploy/kubernetes/rbac.yaml)"
        elif f.kind == "not-found":
            hint = f" (no ConfigMap {ref})"
        raise KubeconfigError(f"config_map: {f}{hint}", "config_map", "config_map_unreadable") from None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, dict) or not data:
        raise KubeconfigError(f"config_map: ConfigMap {ref} has no data", "config_map", "invalid")
    if key:
        if key not in data:
            raise KubeconfigError(
                f"config_map_key: ConfigMap {ref} has no key {key!r} (keys: {', '.join(sorted(data))})",
                "config_map_key",
                "invalid",
            )
        return str(data[key]), key
    candidates = [k for k in data if k.endswith((".yaml", ".yml", ".json"))] or list(data)
    if len(candidates) != 1:
        raise KubeconfigError(
            f"config_map_key: ConfigMap {ref} has several keys ({', '.join(sorted(data))}): name the one to use",
            "config_map_key",
            "invalid",
        )
    return str(data[candidates[0]]), candidates[0]


def from_config_map(api_client: Any, ref: str, key: str = "") -> LiveConfig:
    text, used = read_config_map(api_client, ref, key)
    return from_text(text, "configmap", config_map=ref, key=used)
