"""Reading a running cluster once through the Kubernetes API (what ``import-cluster`` uses).

``read_cluster(kubeconfig, context, namespaces)`` lists everything the scheduler reads (the
catalogue's built-in kinds, ``kinds.py``), with the official client (``config.new_client_from_config``
and the typed ``CoreV1Api``, ``AppsV1Api``, ``PolicyV1Api``, ``SchedulingV1Api``, ``StorageV1Api``,
``ResourceV1Api``), page by page (``limit``/``continue``), and returns the objects as ``kubectl get -o json`` prints them, each with
its ``apiVersion`` and ``kind`` (list items come without them).

Responses are read as the API server's JSON (``_preload_content=False``) rather than through the
client's generated models: the models would drop any field this client version does not know,
and SchedViz must see the objects exactly as the v1.35 scheduler does. This is equivalent to
serialising the models with ``ApiClient().sanitize_for_serialization``, minus that loss.

Finished pods (``Succeeded``/``Failed``) are kept; the engine ignores them as the scheduler does.
With ``namespaces``, namespaced kinds are read from those namespaces only (cluster-scoped kinds are
always read in full); pods elsewhere then do not count on their nodes.

Security: a kubeconfig can run programs (``exec`` credential plugins) and read local files; pass
only kubeconfigs the operator trusts, never one supplied by a web user.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from schedviz.engine.errors import SchedVizError
from schedviz.ingestion.parsing import Limits

from .kinds import KINDS, Kind

log = logging.getLogger(__name__)

PAGE_SIZE = 500
REQUEST_TIMEOUT = (10.0, 120.0)  # connect, read (seconds)


class ClusterReadError(SchedVizError):
    """The cluster could not be read: bad kubeconfig or context, unreachable or refusing API server."""


# what the reader lists, in output order: the catalogue's built-in kinds (a custom resource needs its CRD)
RESOURCES: tuple[Kind, ...] = tuple(k for k in KINDS if not k.custom)


@dataclass
class ClusterRead:
    """What ``read_cluster_report`` read: the objects, and the kinds it had to skip (kind -> why)."""

    objects: list[dict[str, Any]]
    skipped: dict[str, str] = field(default_factory=dict)
    server: str = ""
    counts: dict[str, int] = field(default_factory=dict)


def read_cluster(
    kubeconfig: str,
    context: str | None = None,
    namespaces: list[str] | None = None,
    *,
    limits: Limits | None = None,
    page_size: int = PAGE_SIZE,
) -> list[dict[str, Any]]:
    """The cluster's objects as ``kubectl get -o json`` prints them; raises ``ClusterReadError``."""
    return read_cluster_report(kubeconfig, context, namespaces, limits=limits, page_size=page_size).objects


def read_cluster_report(
    kubeconfig: str,
    context: str | None = None,
    namespaces: list[str] | None = None,
    *,
    limits: Limits | None = None,
    page_size: int = PAGE_SIZE,
) -> ClusterRead:
    """Like ``read_cluster``, also naming the kinds skipped because the cluster does not serve them
    (404) or the credentials may not list them (403). Nodes, Pods and Namespaces are never skipped."""
    limits = limits or Limits()
    api_client = _client(kubeconfig, context)
    server = str(api_client.configuration.host)
    wanted = list(dict.fromkeys(namespaces)) if namespaces else None
    out = ClusterRead(objects=[], server=server)
    try:
        for res in RESOURCES:
            api = getattr(client, res.api)(api_client)
            try:
                if res.kind == "Namespace" and wanted is not None:
                    items = [_read_namespace(api, ns, server) for ns in wanted]
                elif wanted is not None and res.list_namespaced is not None:
                    method = getattr(api, res.list_namespaced)
                    items = []
                    for ns in wanted:
                        items.extend(_list_pages(functools.partial(method, namespace=ns), page_size))
                else:
                    items = _list_pages(getattr(api, res.list_all), page_size)
            except ApiException as exc:
                if not res.required and exc.status in (403, 404):
                    why = (
                        "not served by this cluster"
                        if exc.status == 404
                        else "forbidden for these credentials"
                    )
                    log.warning("skipping %s: %s (HTTP %s)", res.kind, why, exc.status)
                    out.skipped[res.kind] = why
                    continue
                raise ClusterReadError(_api_message(exc, f"listing {res.kind} objects", server)) from None
            for item in items:
                if not isinstance(item, dict):
                    raise ClusterReadError(
                        f"{server}: listing {res.kind} objects: the API server returned a non-object item"
                    )
                obj: dict[str, Any] = {"apiVersion": res.api_version, "kind": res.kind}
                obj.update(item)
                obj["apiVersion"], obj["kind"] = res.api_version, res.kind
                out.objects.append(obj)
            out.counts[res.kind] = len(items)
            if len(out.objects) > limits.max_objects:
                raise ClusterReadError(
                    f"{server}: the cluster has more than {limits.max_objects} objects, the limit"
                )
    except (urllib3.exceptions.HTTPError, OSError) as exc:  # unreachable, refused, timed out
        raise ClusterReadError(f"cannot read the cluster at {server}: {_reason(exc)}") from None
    finally:
        api_client.close()
    return out


def _client(kubeconfig: str, context: str | None) -> Any:
    """An ApiClient for the kubeconfig's context (the client library is untyped: Any)."""
    new_client: Any = config.new_client_from_config
    if not os.path.isfile(kubeconfig):
        raise ClusterReadError(f"kubeconfig {kubeconfig}: no such file")
    try:
        api_client = new_client(config_file=kubeconfig, context=context, persist_config=False)
    except config.ConfigException as exc:
        raise ClusterReadError(f"kubeconfig {kubeconfig}: {exc}") from None
    except OSError as exc:
        raise ClusterReadError(f"kubeconfig {kubeconfig}: {exc.strerror or exc}") from None
    except Exception as exc:  # malformed files surface as YAML, type or key errors from the loader
        raise ClusterReadError(
            f"kubeconfig {kubeconfig}: cannot use it: {type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(api_client, client.ApiClient):  # pragma: no cover - defensive
        raise ClusterReadError(f"kubeconfig {kubeconfig}: no API client")
    return api_client


def _list_pages(call: Callable[..., Any], page_size: int) -> list[dict[str, Any]]:
    """Every item of a list endpoint, following ``metadata.continue``."""
    items: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {
            "limit": page_size,
            "_preload_content": False,
            "_request_timeout": REQUEST_TIMEOUT,
        }
        if token:
            kwargs["_continue"] = token
        body = _json(call(**kwargs))
        page = body.get("items") or []
        if not isinstance(page, list):
            raise ClusterReadError("the API server returned a list whose items are not a list")
        items.extend(page)
        meta = body.get("metadata") or {}
        token = meta.get("continue") if isinstance(meta, dict) else None
        if not token:
            return items


def _read_namespace(api: Any, name: str, server: str) -> dict[str, Any]:
    try:
        resp = api.read_namespace(name, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
    except ApiException as exc:
        if exc.status == 404:
            raise ClusterReadError(f"{server}: namespace {name!r} does not exist") from None
        raise
    return _json(resp)


def _json(resp: Any) -> dict[str, Any]:
    data = resp.data if hasattr(resp, "data") else resp
    try:
        body = json.loads(data)
    except (ValueError, TypeError) as exc:
        raise ClusterReadError(f"the API server returned invalid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ClusterReadError("the API server returned JSON that is not an object")
    return body


def _api_message(exc: ApiException, doing: str, server: str) -> str:
    detail = ""
    body = getattr(exc, "body", None)
    if body:
        try:
            status = json.loads(body)
            if isinstance(status, dict) and status.get("message"):
                detail = f": {status['message']}"
        except (ValueError, TypeError):
            detail = f": {str(body)[:200]}"
    return f"{server}: {doing}: HTTP {exc.status} {exc.reason or ''}".rstrip() + detail


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    return str(reason or exc)


def kinds_read() -> Iterable[str]:
    """The kinds ``read_cluster`` lists, in output order."""
    return (r.kind for r in RESOURCES)
