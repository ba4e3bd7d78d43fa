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

Lists are read ``page_size`` items at a time (500 by default, as kubectl does). A continue token the
API server no longer honours (410 Expired: the list's revision was compacted between two pages)
restarts that kind's list from its first page, as kubectl and the informers do, dropping the pages
read before; a kind restarted ``MAX_RESTARTS`` times fails the read. ``write_cluster`` writes the
objects to a file as a ``kind: List`` page by page (each kind's pages spooled to a temporary file until
the kind is complete), so a cluster of any size is read in the memory of one page;
``read_cluster_report`` keeps them in memory.

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
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from schedviz.engine.errors import SchedVizError
from schedviz.ingestion.parsing import Limits

from .kinds import KINDS, Kind

log = logging.getLogger(__name__)

PAGE_SIZE = 500
MAX_RESTARTS = 5  # lists of one kind restarted after 410 Expired before the read fails
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
    out = ClusterRead(objects=[])
    current, start = "", 0
    for kind, obj in _objects(kubeconfig, context, namespaces, limits or Limits(), page_size, out):
        if kind == _RESTART:  # listed again from the start: what was read of the kind goes
            del out.objects[start:]
            continue
        if kind != current:
            current, start = kind, len(out.objects)
        out.objects.append(obj)
    return out


def write_cluster(
    kubeconfig: str,
    out: IO[str],
    context: str | None = None,
    namespaces: list[str] | None = None,
    *,
    limits: Limits | None = None,
    page_size: int = PAGE_SIZE,
) -> ClusterRead:
    """Write the cluster's objects to ``out`` as one ``kind: List`` (compact JSON, one object a line),
    holding one page in memory: each kind's pages go to a temporary file until the kind's list is
    complete (a 410 Expired restart drops them), then to ``out``. The report's ``objects`` stays empty;
    ``counts`` says how many of each kind were written."""
    report = ClusterRead(objects=[])
    out.write('{"apiVersion":"v1","kind":"List","items":[')
    first = True
    spool: IO[str] | None = None
    current = ""

    def flush() -> None:
        nonlocal first
        if spool is None:
            return
        spool.seek(0)
        for line in spool:
            out.write(("\n" if first else ",\n") + line.rstrip("\n"))
            first = False
        spool.close()

    try:
        for kind, obj in _objects(kubeconfig, context, namespaces, limits or Limits(), page_size, report):
            if kind == _RESTART:  # the kind's list starts again: what was spooled of it goes
                if spool is not None:
                    spool.seek(0)
                    spool.truncate()
                continue
            if kind != current:
                flush()
                spool = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed by flush
                current = kind
            assert spool is not None
            spool.write(json.dumps(obj, separators=(",", ":")) + "\n")
        flush()
        spool = None
    finally:
        if spool is not None:
            spool.close()
    out.write('\n],"metadata":{"resourceVersion":""}}\n')
    return report


_RESTART = "\x00restart"


def _objects(
    kubeconfig: str,
    context: str | None,
    namespaces: list[str] | None,
    limits: Limits,
    page_size: int,
    out: ClusterRead,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(kind, object) for every object, kind after kind, page by page; (``_RESTART``, {}) when a kind's
    list restarts after 410 Expired (what was yielded of that kind is to be dropped)."""
    api_client = _client(kubeconfig, context)
    server = str(api_client.configuration.host)
    out.server = server
    wanted = list(dict.fromkeys(namespaces)) if namespaces else None
    total = 0
    try:
        for res in RESOURCES:
            api = getattr(client, res.api)(api_client)
            count = 0
            restarts = 0
            try:
                while True:
                    restarted = False
                    for page in _kind_pages(api, res, wanted, page_size, server):
                        if page is None:
                            restarted = True
                            break
                        for item in page:
                            if not isinstance(item, dict):
                                raise ClusterReadError(
                                    f"{server}: listing {res.kind} objects: the API server returned a non-object item"
                                )
                            obj: dict[str, Any] = {"apiVersion": res.api_version, "kind": res.kind}
                            obj.update(item)
                            obj["apiVersion"], obj["kind"] = res.api_version, res.kind
                            count += 1
                            total += 1
                            if total > limits.max_objects:
                                raise ClusterReadError(
                                    f"{server}: the cluster has more than {limits.max_objects} objects, the limit"
                                )
                            yield res.kind, obj
                    if not restarted:
                        break
                    restarts += 1
                    if restarts > MAX_RESTARTS:
                        raise ClusterReadError(
                            f"{server}: listing {res.kind} objects: the continue token expired {restarts} "
                            "times (410 Expired: the cluster changes faster than it can be listed); "
                            "try a larger --page-size"
                        )
                    log.warning(
                        "listing %s: the continue token expired (410); listing again from the start", res.kind
                    )
                    total -= count
                    count = 0
                    yield _RESTART, {}
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
            out.counts[res.kind] = count
    except (urllib3.exceptions.HTTPError, OSError) as exc:  # unreachable, refused, timed out
        raise ClusterReadError(f"cannot read the cluster at {server}: {_reason(exc)}") from None
    finally:
        api_client.close()


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


def _kind_pages(
    api: Any, res: Kind, wanted: list[str] | None, page_size: int, server: str
) -> Iterator[list[Any] | None]:
    """The pages of one kind's list (over the namespaces asked for); None, last, when a continue
    token expired: the kind is to be listed again from the start."""
    if res.kind == "Namespace" and wanted is not None:
        yield [_read_namespace(api, ns, server) for ns in wanted]
    elif wanted is not None and res.list_namespaced is not None:
        method = getattr(api, res.list_namespaced)
        for ns in wanted:
            for page in _pages(functools.partial(method, namespace=ns), page_size):
                yield page
                if page is None:
                    return
    else:
        yield from _pages(getattr(api, res.list_all), page_size)


def _pages(call: Callable[..., Any], page_size: int) -> Iterator[list[Any] | None]:
    """The pages of a list endpoint, following ``metadata.continue``; None, last, when the continue
    token expired (410)."""
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {
            "limit": page_size,
            "_preload_content": False,
            "_request_timeout": REQUEST_TIMEOUT,
        }
        if token:
            kwargs["_continue"] = token
        try:
            body = _json(call(**kwargs))
        except ApiException as exc:
            if exc.status == 410 and token:
                yield None
                return
            raise
        page = body.get("items") or []
        if not isinstance(page, list):
            raise ClusterReadError("the API server returned a list whose items are not a list")
        yield page
        meta = body.get("metadata") or {}
        token = meta.get("continue") if isinstance(meta, dict) else None
        if not token:
            return


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
