"""Scheduler configurations uploaded to the server: no file paths, extenders only where allowed.

An uploaded ``KubeSchedulerConfiguration`` is someone's input, and the server replays it: its
extenders would have the server POST to any URL, its ``tlsConfig`` file fields would have it read
its own files. In the web application (API, Celery worker, live-cluster worker):

- file paths are refused wherever a configuration enters (``extenders[*].tlsConfig.caFile``,
  ``certFile``, ``keyFile``; ``clientConnection.kubeconfig``): certificates come inline
  (``caData``, ``certData``, ``keyData``);
- an extender is called only when its ``urlPrefix`` is under one of the URL prefixes of
  ``SCHEDVIZ_EXTENDER_URLS`` (empty by default: none is). Otherwise the configuration is refused,
  naming the extender and the setting, unless the user chose ``extenders: "skip"``: the replay then
  runs without the extenders that may not be called, and names them as not called;
- the extenders that are called go through :func:`transport`: the host resolved once and connected
  to by address (a host the operator's prefixes name may resolve anywhere; any other must be
  public), no redirect followed, no file read, failures worded without socket detail.
"""

from __future__ import annotations

import copy
import os
import posixpath
import urllib.parse
from dataclasses import dataclass
from typing import Any

from schedviz.engine.config import SchedulerConfig, load_config
from schedviz.engine.errors import ConfigError
from schedviz.engine.runtime import extenders as engine_extenders

from .addresses import AllowList
from .connect import describe, open_connection

SETTING = "SCHEDVIZ_EXTENDER_URLS"
MODES = ("call", "skip")
TLS_FILE_FIELDS = {"caFile": "caData", "certFile": "certData", "keyFile": "keyData"}


@dataclass(frozen=True)
class _Url:
    scheme: str
    host: str
    port: int
    path: str


def _parse(url: str) -> _Url | None:
    """The URL's parts, normalised; None when it cannot be compared safely (credentials, dot
    segments, encoded separators, a scheme other than http(s))."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname or parts.username is not None:
        return None
    raw_path = parts.path or "/"
    lowered = raw_path.lower()
    if any(bad in lowered for bad in ("%2e", "%2f", "%5c", "\\")):
        return None
    segments = raw_path.split("/")
    if any(seg in (".", "..") for seg in segments):
        return None
    path = posixpath.normpath(raw_path) if raw_path != "/" else "/"
    if raw_path.endswith("/") and not path.endswith("/"):
        path += "/"
    return _Url(scheme, parts.hostname.lower().rstrip("."), port or (443 if scheme == "https" else 80), path)


@dataclass(frozen=True)
class ExtenderPolicy:
    """The URL prefixes extenders may be called under (``SCHEDVIZ_EXTENDER_URLS``)."""

    prefixes: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, environ: Any = None) -> ExtenderPolicy:
        env = os.environ if environ is None else environ
        return cls(tuple(p for p in str(env.get(SETTING, "")).replace(",", " ").split() if p))

    def allows(self, url: str) -> bool:
        target = _parse(url)
        if target is None:
            return False
        for prefix in self.prefixes:
            p = _parse(prefix)
            if p is None or (p.scheme, p.host, p.port) != (target.scheme, target.host, target.port):
                continue
            base = p.path if p.path.endswith("/") else p.path + "/"
            if target.path == p.path or target.path.startswith(base) or p.path == "/":
                return True
        return False

    def refusal(self, url: str) -> str | None:
        if self.allows(url):
            return None
        return f"{url} is not under {SETTING} ({', '.join(self.prefixes) or 'empty'})"

    def allow_list(self) -> AllowList:
        """The hosts the prefixes name: the operator vouched for them, wherever they resolve."""
        hosts = [p.host for p in (_parse(x) for x in self.prefixes) if p is not None]
        return AllowList.parse(" ".join(hosts), SETTING)


def transport(policy: ExtenderPolicy | None = None) -> engine_extenders.Transport:
    """The engine's extender transport for the server (see the module docstring). Without a
    ``policy``, ``SCHEDVIZ_EXTENDER_URLS`` is read at each call."""

    def current() -> ExtenderPolicy:
        return policy or ExtenderPolicy.from_env()

    def connect(host: str, port: int, timeout: float | None) -> Any:
        return open_connection(host, port, timeout, current().allow_list())

    def permit(url: str) -> str | None:
        return current().refusal(url)

    return engine_extenders.Transport(
        connect=connect, permit=permit, follow_redirects=False, read_files=False, describe=describe
    )


def install(policy: ExtenderPolicy | None = None) -> None:
    """Make every extender this process builds from now on use the server's transport."""
    engine_extenders.set_transport(transport(policy))


def path_problems(raw: Any) -> list[str]:
    """File paths in a configuration as uploaded (raw, before decoding), in kube-scheduler's style."""
    problems: list[str] = []
    if not isinstance(raw, dict):
        return problems
    conn = raw.get("clientConnection")
    if isinstance(conn, dict) and conn.get("kubeconfig"):
        problems.append(
            "clientConnection.kubeconfig: Forbidden: a file path on the SchedViz server; uploaded "
            "configurations may not name files (replays never use it: remove the field)"
        )
    exts = raw.get("extenders")
    for i, ext in enumerate(exts if isinstance(exts, list) else []):
        tls = ext.get("tlsConfig") if isinstance(ext, dict) else None
        if not isinstance(tls, dict):
            continue
        for file_field, data_field in TLS_FILE_FIELDS.items():
            if tls.get(file_field):
                problems.append(
                    f"extenders[{i}].tlsConfig.{file_field}: Forbidden: a file path on the SchedViz server; "
                    f"uploaded configurations carry certificates inline (tlsConfig.{data_field})"
                )
    return problems


def check_paths(raw: Any, source: str = "") -> None:
    problems = path_problems(raw)
    if problems:
        raise ConfigError(problems, source)


def not_allowed(cfg: SchedulerConfig, policy: ExtenderPolicy | None = None) -> list[str]:
    """The urlPrefix of every extender the server may not call, in configuration order."""
    pol = policy or ExtenderPolicy.from_env()
    return [str(e.get("urlPrefix", "")) for e in cfg.extenders if not all(pol.allows(u) for u in verb_urls(e))]


def verb_urls(ext: dict[str, Any]) -> list[str]:
    """The URLs an extender is called at (extender.go send: urlPrefix + "/" + verb)."""
    prefix = str(ext.get("urlPrefix", "")).rstrip("/")
    verbs = [str(ext.get(k) or "") for k in ("filterVerb", "prioritizeVerb", "bindVerb", "preemptVerb")]
    return [f"{prefix}/{v}" for v in verbs if v] or [prefix + "/"]


def check_extenders(
    cfg: SchedulerConfig, mode: str = "call", source: str = "", policy: ExtenderPolicy | None = None
) -> list[str]:
    """The extenders that will not be called (``mode`` "skip"); with ``mode`` "call", a ConfigError
    naming each extender that may not be called and the setting."""
    check_mode(mode, source)
    pol = policy or ExtenderPolicy.from_env()
    refused = not_allowed(cfg, pol)
    if refused and mode == "call":
        allowed = ", ".join(pol.prefixes) or "empty"
        problems = [
            f"extenders[{i}].urlPrefix: Forbidden: extender {url!r} is not called by this server: its URL "
            f"is not under {SETTING} ({allowed}); an operator may allow it, or replay with extenders "
            '"skip" to run without it'
            for i, url in enumerate(str(e.get("urlPrefix", "")) for e in cfg.extenders)
            if url in refused
        ]
        raise ConfigError(problems, source)
    return refused


def check_mode(mode: str, source: str = "") -> None:
    if mode not in MODES:
        raise ConfigError([f'extenders: Unsupported value: "{mode}": supported values: "call", "skip"'], source)


def without(raw: dict[str, Any], urls: list[str]) -> dict[str, Any]:
    """A copy of a raw configuration without the extenders whose urlPrefix is in ``urls``."""
    if not urls:
        return raw
    out = copy.deepcopy(raw)
    exts = out.get("extenders")
    if isinstance(exts, list):
        kept = [e for e in exts if not (isinstance(e, dict) and str(e.get("urlPrefix", "")) in urls)]
        if kept:
            out["extenders"] = kept
        else:
            out.pop("extenders")
    return out


def vet(
    raw: Any, mode: str = "call", source: str = "", policy: ExtenderPolicy | None = None
) -> tuple[dict[str, Any] | None, list[str]]:
    """An uploaded configuration (raw, decoded from YAML/JSON; None: the default) checked as the
    server runs it: valid, no file path, every extender callable (``mode`` "call") or the ones that
    are not named (``mode`` "skip"). Returns (the configuration to run, extenders not called)."""
    check_mode(mode, source)
    if raw is None:
        return None, []
    if not isinstance(raw, dict):
        raise ConfigError(["expected a KubeSchedulerConfiguration object"], source)
    check_paths(raw, source)

    cfg = load_config(raw, name=source or "config")
    skipped = check_extenders(cfg, mode, source, policy)
    return without(raw, skipped), skipped
