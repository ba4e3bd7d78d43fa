"""Where a watched cluster's credentials come from, and the API client built from them.

Three sources:

- ``kubeconfig``: uploaded by a user. Only the chosen context, its cluster and its user are kept
  (encrypted at rest). It must not make the server run programs or read its files: ``exec``
  credential plugins and ``auth-provider``s are refused (they run commands or refresh tokens
  through other services), and so are file references (``tokenFile``, ``client-certificate``,
  ``client-key``, ``certificate-authority``: inline ``*-data`` fields are the way);
- ``path``: a kubeconfig file on the server, trusted as the operator's own (exec plugins allowed),
  only under the directories listed in ``SCHEDVIZ_KUBECONFIG_DIRS``;
- ``in-cluster``: the pod's ServiceAccount, when SchedViz runs inside Kubernetes.

Every error is a ``KubeconfigError`` naming the field and the problem.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config
from kubernetes.config.incluster_config import (
    SERVICE_CERT_FILENAME,
    SERVICE_HOST_ENV_NAME,
    SERVICE_PORT_ENV_NAME,
    SERVICE_TOKEN_FILENAME,
    InClusterConfigLoader,
)

from schedviz.engine import yamlbounds
from schedviz.engine.errors import SchedVizError
from schedviz.outbound import kube as outbound_kube
from schedviz.outbound.connect import Refused

from .kinds import STREAMS
from .watch import describe_exception

JSON = dict[str, Any]
SOURCES = ("kubeconfig", "path", "in-cluster")
MAX_KUBECONFIG_BYTES = 512 * 1024
DIRS_ENV = "SCHEDVIZ_KUBECONFIG_DIRS"
SA_DIR_ENV = "SCHEDVIZ_SERVICEACCOUNT_DIR"  # tests point it elsewhere than the pod's mount

# user fields that would run a program, or read a file, on the SchedViz server
REFUSED_USER_FIELDS = {
    "exec": "an exec credential plugin runs a program on the SchedViz server",
    "auth-provider": "an auth-provider runs commands or refreshes tokens from the SchedViz server",
    "tokenFile": "tokenFile reads a file on the SchedViz server (put the token in `token`)",
    "token-file": "token-file reads a file on the SchedViz server (put the token in `token`)",
    "client-certificate": "client-certificate reads a file on the SchedViz server (use client-certificate-data)",
    "client-key": "client-key reads a file on the SchedViz server (use client-key-data)",
}
REFUSED_CLUSTER_FIELDS = {
    "certificate-authority": "certificate-authority reads a file on the SchedViz server (use certificate-authority-data)",
    "proxy-url": "proxy-url makes the SchedViz server connect through a proxy the kubeconfig names",
}


class KubeconfigError(SchedVizError):
    """An unusable kubeconfig or source, or a cluster that cannot be reached with it."""

    def __init__(self, message: str, field: str = "kubeconfig", code: str = "invalid_kubeconfig") -> None:
        super().__init__(message)
        self.field = field
        self.code = code


def _named(items: Any, what: str) -> dict[str, JSON]:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise KubeconfigError(f"kubeconfig: {what} must be a list")
    out: dict[str, JSON] = {}
    for i, entry in enumerate(items):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise KubeconfigError(f"kubeconfig: {what}[{i}] needs a name")
        body = entry.get(what[:-1] if what != "users" else "user")
        if not isinstance(body, dict):
            raise KubeconfigError(f"kubeconfig: {what}[{i}] ({entry['name']}) has no {what[:-1]} object")
        out[entry["name"]] = entry
    return out


def parse(text: str | bytes) -> JSON:
    """A kubeconfig's YAML (or JSON), checked for shape."""
    if isinstance(text, bytes):
        if len(text) > MAX_KUBECONFIG_BYTES:
            raise KubeconfigError(f"kubeconfig: larger than {MAX_KUBECONFIG_BYTES // 1024} KiB")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise KubeconfigError("kubeconfig: not UTF-8 text") from None
    if len(text) > MAX_KUBECONFIG_BYTES:
        raise KubeconfigError(f"kubeconfig: larger than {MAX_KUBECONFIG_BYTES // 1024} KiB")
    try:
        yamlbounds.check(text)
        cfg = yaml.safe_load(text)
    except yamlbounds.YamlBoundsError as exc:
        raise KubeconfigError(f"kubeconfig: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise KubeconfigError(
            f"kubeconfig: invalid YAML{where}: {getattr(exc, 'problem', None) or exc}"
        ) from None
    if not isinstance(cfg, dict):
        raise KubeconfigError("kubeconfig: expected a Config object (apiVersion: v1, kind: Config)")
    if cfg.get("kind") not in (None, "Config"):
        raise KubeconfigError(f"kubeconfig: kind is {cfg.get('kind')!r}, expected Config")
    for what in ("clusters", "users", "contexts"):
        _named(cfg.get(what), what)
    return cfg


def contexts(cfg: JSON) -> dict[str, Any]:
    """The contexts to choose from: name, cluster, server, user, namespace."""
    clusters = _named(cfg.get("clusters"), "clusters")
    out = []
    for name, entry in _named(cfg.get("contexts"), "contexts").items():
        ctx = entry["context"]
        cluster = clusters.get(str(ctx.get("cluster") or ""), {}).get("cluster") or {}
        out.append(
            {
                "name": name,
                "cluster": ctx.get("cluster") or "",
                "server": cluster.get("server") or "",
                "user": ctx.get("user") or "",
                "namespace": ctx.get("namespace") or "",
            }
        )
    return {"current": cfg.get("current-context") or "", "contexts": out}


def select(cfg: JSON, context: str | None) -> tuple[JSON, str]:
    """The minimal kubeconfig of one context (refusing what would run or read on the server)."""
    ctxs = _named(cfg.get("contexts"), "contexts")
    name = context or str(cfg.get("current-context") or "")
    if not name:
        if len(ctxs) == 1:
            name = next(iter(ctxs))
        else:
            raise KubeconfigError(
                f"context: the kubeconfig has no current-context; choose one of {', '.join(ctxs) or 'none'}",
                "context",
            )
    if name not in ctxs:
        raise KubeconfigError(
            f"context: no context {name!r} in the kubeconfig (contexts: {', '.join(ctxs) or 'none'})",
            "context",
        )
    ctx = ctxs[name]["context"]
    cluster_name, user_name = str(ctx.get("cluster") or ""), str(ctx.get("user") or "")
    clusters, users = _named(cfg.get("clusters"), "clusters"), _named(cfg.get("users"), "users")
    if cluster_name not in clusters:
        raise KubeconfigError(
            f"kubeconfig: context {name!r} names cluster {cluster_name!r}, which is not defined"
        )
    cluster = clusters[cluster_name]["cluster"]
    server = cluster.get("server")
    if not isinstance(server, str) or not server.startswith(("https://", "http://")):
        raise KubeconfigError(
            f"kubeconfig: cluster {cluster_name!r}: server must be an http(s) URL, got {server!r}"
        )
    for fld, why in REFUSED_CLUSTER_FIELDS.items():
        if cluster.get(fld):
            raise KubeconfigError(
                f"kubeconfig: cluster {cluster_name!r}: {why}; refused in an uploaded kubeconfig"
            )
    user: JSON = {}
    if user_name:
        if user_name not in users:
            raise KubeconfigError(
                f"kubeconfig: context {name!r} names user {user_name!r}, which is not defined"
            )
        user = users[user_name]["user"]
        for fld, why in REFUSED_USER_FIELDS.items():
            if user.get(fld):
                raise KubeconfigError(
                    f"kubeconfig: user {user_name!r}: {why}; refused in an uploaded kubeconfig. Use a token or "
                    "a client certificate (e.g. the token of the ServiceAccount in deploy/kubernetes/rbac.yaml), "
                    "or run SchedViz in the cluster"
                )
    minimal: JSON = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": dict(cluster)}],
        "users": [{"name": user_name or "anonymous", "user": dict(user)}],
        "contexts": [
            {
                "name": name,
                "context": {"cluster": cluster_name, "user": user_name or "anonymous"},
            }
        ],
        "current-context": name,
    }
    return minimal, name


def credential_kind(minimal: JSON) -> str:
    user = (minimal.get("users") or [{}])[0].get("user") or {}
    if user.get("token"):
        return "token"
    if user.get("client-certificate-data"):
        return "client-certificate"
    if user.get("username"):
        return "basic"
    if user.get("exec") or user.get("auth-provider"):
        return "exec"
    return "none"


def server_of(minimal: JSON) -> str:
    return str(((minimal.get("clusters") or [{}])[0].get("cluster") or {}).get("server") or "")


# ----- building clients ---------------------------------------------------------------------------
# the client library is untyped
_from_dict: Any = config.new_client_from_config_dict
_load_file: Any = config.load_kube_config
_tmp_lock = threading.Lock()
_tmp_dir: str | None = None


def _private_tmp() -> str:
    """A 0700 directory for the certificate files the client library writes from ``*-data``."""
    global _tmp_dir
    with _tmp_lock:
        if _tmp_dir is None or not os.path.isdir(_tmp_dir):
            _tmp_dir = tempfile.mkdtemp(prefix="schedviz-kube-")
        return _tmp_dir


def _configuration() -> Any:
    c = client.Configuration()
    # one long-lived connection per watched stream, plus lists and the connection check
    c.connection_pool_maxsize = len(STREAMS) + 4
    c.retries = False  # the reflectors retry themselves, with backoff
    return c


def allowed_dirs() -> list[Path]:
    return [
        Path(d).resolve()
        for d in os.environ.get(DIRS_ENV, "").replace(",", os.pathsep).split(os.pathsep)
        if d.strip()
    ]


def check_path(path: str) -> Path:
    dirs = allowed_dirs()
    if not dirs:
        raise KubeconfigError(
            f"path: kubeconfig paths on the server are disabled; set {DIRS_ENV} to the directories SchedViz may read them from",
            "path",
        )
    p = Path(path).resolve()
    if not any(p == d or d in p.parents for d in dirs):
        raise KubeconfigError(
            f"path: {path} is not under {os.pathsep.join(map(str, dirs))} ({DIRS_ENV})", "path"
        )
    if not p.is_file():
        raise KubeconfigError(f"path: {path}: no such file", "path")
    return p


def in_cluster_available(environ: Any = None) -> bool:
    env = os.environ if environ is None else environ
    return bool(env.get(SERVICE_HOST_ENV_NAME)) and bool(env.get(SERVICE_PORT_ENV_NAME))


def _sa_files(environ: Any) -> tuple[str, str]:
    base = environ.get(SA_DIR_ENV)
    if base:
        return os.path.join(base, "token"), os.path.join(base, "ca.crt")
    return SERVICE_TOKEN_FILENAME, SERVICE_CERT_FILENAME


@dataclass(frozen=True)
class Source:
    """How to reach one cluster (what the worker and the connection check build a client from)."""

    kind: str  # kubeconfig, path, in-cluster
    kubeconfig: JSON | None = None  # the minimal kubeconfig (source "kubeconfig")
    path: str = ""
    context: str | None = None

    def client(self, environ: Any = None) -> Any:
        env = os.environ if environ is None else environ
        c = _configuration()
        try:
            if self.kind == "kubeconfig":
                assert self.kubeconfig is not None
                _from_dict(
                    config_dict=self.kubeconfig,
                    context=self.context,
                    persist_config=False,
                    temp_file_path=_private_tmp(),
                    client_configuration=c,
                )
                # a server an uploader named: reached only through the guard (SCHEDVIZ_CLUSTER_HOSTS)
                return outbound_kube.guard(client.ApiClient(configuration=c))
            elif self.kind == "path":
                p = check_path(self.path)
                _load_file(
                    config_file=str(p), context=self.context, client_configuration=c, persist_config=False
                )
            elif self.kind == "in-cluster":
                if not in_cluster_available(env):
                    raise KubeconfigError(
                        f"source: SchedViz is not running inside Kubernetes ({SERVICE_HOST_ENV_NAME} is not set)",
                        "source",
                    )
                token, cert = _sa_files(env)
                loader: Any = InClusterConfigLoader
                loader(token_filename=token, cert_filename=cert, environ=env).load_and_set(c)
            else:
                raise KubeconfigError(f"source: one of {', '.join(SOURCES)}", "source")
        except KubeconfigError:
            raise
        except Refused as exc:
            raise KubeconfigError(f"{self._what()}: {exc}", "kubeconfig", "cluster_unreachable") from None
        except config.ConfigException as exc:
            raise KubeconfigError(f"{self._what()}: {exc}") from None
        except OSError as exc:
            raise KubeconfigError(f"{self._what()}: {exc.strerror or exc}") from None
        except Exception as exc:  # malformed fields surface as key, type or value errors from the loader
            raise KubeconfigError(f"{self._what()}: cannot use it: {type(exc).__name__}: {exc}") from None
        return client.ApiClient(configuration=c)

    def _what(self) -> str:
        if self.kind == "path":
            return f"kubeconfig {self.path}"
        if self.kind == "in-cluster":
            return "in-cluster configuration"
        return "kubeconfig"


def check_connection(api_client: Any, timeout: float = 10.0) -> JSON:
    """Reach the API server and list one namespace: its version, or a KubeconfigError saying why not."""
    host = str(api_client.configuration.host)
    try:
        resp: Any = client.VersionApi(api_client).get_code(
            _preload_content=False, _request_timeout=(timeout, timeout)
        )
        try:
            version = json.loads(resp.data)
        finally:
            resp.release_conn()
        core: Any = client.CoreV1Api(api_client)
        listed = core.list_namespace(limit=1, _preload_content=False, _request_timeout=(timeout, timeout))
        try:
            listed.read()  # to the end: the connection goes back to the pool clean
        finally:
            listed.release_conn()
    except Exception as exc:
        f = describe_exception(exc, host, "checking the connection")
        code = {
            "unauthorized": "cluster_unauthorized",
            "forbidden": "cluster_forbidden",
            "network": "cluster_unreachable",
        }
        raise KubeconfigError(str(f), "kubeconfig", code.get(f.kind, "cluster_error")) from None
    return {
        "server": host,
        "version": str(version.get("gitVersion") or "") if isinstance(version, dict) else "",
    }
