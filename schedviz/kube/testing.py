"""A stand-in for kube-apiserver that speaks its wire protocol, driven by scripted cluster histories.

It is what the live-mode tests (and ``manage.py live_demo``) run the real ``kubernetes`` client
against, since no API server binary can be installed here: a testing module, never used against a
real cluster. It is a faithful stand-in for the read side of the API, not a mock of the client:

- one global ``resourceVersion`` counter (etcd's revision): every write gets the next one, and
  every object carries its own in ``metadata.resourceVersion``;
- list: ``GET /api/v1/pods``, ``/apis/<group>/<version>/<plural>``, per namespace too, with
  ``limit``/``continue`` (a consistent snapshot; a continue token older than the compacted
  revision answers ``410 Expired``), ``resourceVersion`` (``""``/``"0"``: the latest; ``N``: not
  older than N, ``504`` when N is in the future) and equality ``fieldSelector``s; the list's
  ``metadata.resourceVersion`` is the revision it was read at, and items come without
  ``apiVersion``/``kind`` as kube-apiserver serves them;
- watch (``watch=true``): a chunked ``application/json`` stream of ``{"type", "object"}`` lines.
  Without ``resourceVersion`` (or ``0``) it starts with synthetic ``ADDED`` events for the current
  objects; from ``N`` it sends every change after N, or, when N is older than the compacted
  revision, an ``ERROR`` event carrying a ``Status`` with code ``410`` (reason ``Expired``, "too
  old resource version") and ends the stream. ``allowWatchBookmarks=true`` receives ``BOOKMARK``
  events (only ``metadata.resourceVersion``) when the script sends them; ``timeoutSeconds`` ends
  the stream cleanly;
- errors are ``Status`` objects: ``401`` for a missing or wrong bearer token, ``403`` for resources
  the script forbids, ``404`` for unknown paths and resources not served (an uninstalled CRD);
- anything but GET answers ``405`` and is recorded in ``writes`` (SchedViz must never write).

The script mutates the cluster (``create``, ``update``, ``modify``, ``delete``, ``bind``,
``fail_scheduling``) and the server's life: ``compact`` (history before now is gone),
``expire_watches`` (every open watch receives the 410 ERROR mid-stream, after a compaction),
``drop_connections`` (open watch sockets are cut without the final chunk, as a network failure
does), ``send_bookmarks``, ``hold_watches`` (one kind's watch requests wait unanswered until
released: a slow watch, so another kind's watch comes back first), ``hold_lists``, and ``restart``
(listening socket and every connection closed, the store kept as etcd keeps it, optionally
compacted as a fresh watch cache is). ``clock_skew`` sets the cluster's clock off this machine's:
every time it writes (creation, conditions, events) and its ``Date`` header. ``tls=True`` serves
HTTPS with a self-signed certificate whose PEM is ``ca_pem``.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import socket
import ssl
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .kinds import KINDS, Kind, kind

JSON = dict[str, Any]


@dataclass(frozen=True)
class ApiResource:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"


def _r(group: str, version: str, plural: str, kind: str, namespaced: bool) -> ApiResource:
    return ApiResource(group, version, plural, kind, namespaced)


def _served(k: Kind) -> ApiResource:
    return _r(k.group, k.version, k.plural, k.kind, k.namespaced)


# the kinds SchedViz reads (kinds.py), the events and the ConfigMaps
BUILTIN: tuple[ApiResource, ...] = (
    *(_served(k) for k in KINDS if not k.custom),
    _r("", "v1", "events", "Event", True),
    _r("", "v1", "configmaps", "ConfigMap", True),
)
# A custom resource: served only once the script installs its CRD.
PODGROUPS = _served(kind("PodGroup"))


VERSION = {
    "major": "1",
    "minor": "35",
    "emulationMajor": "1",
    "emulationMinor": "35",
    "gitVersion": "v1.35.4",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-04-15T00:00:00Z",
    "goVersion": "go1.25.9",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def status(code: int, reason: str, message: str, details: JSON | None = None) -> JSON:
    out: JSON = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        out["details"] = details
    return out


def now_rfc3339(micro: bool = False, skew: float = 0.0) -> str:
    """Now as kube-apiserver writes times; ``skew`` seconds added (a cluster whose clock is off)."""
    t = datetime.fromtimestamp(time.time() + skew, UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


def _lookup(obj: JSON, path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    return str(cur).lower() if isinstance(cur, bool) else str(cur)


def parse_field_selector(text: str) -> list[tuple[str, bool, str]]:
    """``a.b=v,c!=w`` -> [(path, equal, value)]; ValueError on anything else."""
    out = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        if "!=" in term:
            path, _, value = term.partition("!=")
            out.append((path.strip(), False, value.strip()))
        elif "==" in term or "=" in term:
            path, _, value = term.partition("==") if "==" in term else term.partition("=")
            out.append((path.strip(), True, value.strip()))
        else:
            raise ValueError(f"invalid selector: {term!r}")
    return out


def _matches(obj: JSON, namespace: str | None, selector: list[tuple[str, bool, str]]) -> bool:
    if namespace is not None and (obj.get("metadata") or {}).get("namespace") != namespace:
        return False
    return all((_lookup(obj, path) == value) == equal for path, equal, value in selector)


def _strip(obj: JSON) -> JSON:
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


@dataclass
class _Entry:
    rv: int
    resource: ApiResource
    type: str
    obj: JSON


@dataclass
class _Watch:
    resource: ApiResource
    namespace: str | None
    selector: list[tuple[str, bool, str]]
    bookmarks: bool
    pos: int
    deadline: float
    conn: socket.socket
    expire: bool = False
    drop: bool = False
    bookmark: bool = False


class _Stop(Exception):
    """The connection is to be cut (drop or shutdown): no final chunk."""


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    watch: bool
    authorization: str


@dataclass
class TestApiServer:
    """The stand-in. ``start()`` it (or use it as a context manager), point a kubeconfig at ``url``."""

    __test__ = False  # not a pytest test class

    token: str = "test-token"
    tls: bool = False
    history: int = 10_000
    default_watch_timeout: float = 1800.0
    resources: list[ApiResource] = field(default_factory=lambda: list(BUILTIN))
    forbidden: set[str] = field(default_factory=set)  # plurals that answer 403
    # seconds the cluster's clock is ahead of this machine's (negative: behind): every time the
    # server and the scheduler it stands in for write, and the HTTP Date header
    clock_skew: float = 0.0
    requests: list[Request] = field(default_factory=list)
    writes: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._cond = threading.Condition()
        self._rv = 1
        self._compacted = 0  # watches from an rv below this answer 410
        self._store: dict[str, dict[tuple[str, str], JSON]] = {}
        self._log: deque[_Entry] = deque()
        self._watches: list[_Watch] = []
        self._lists: dict[int, tuple[int, list[JSON]]] = {}
        self._waiting_lists = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self._certdir: tempfile.TemporaryDirectory[str] | None = None
        self.ca_pem = b""
        self._ssl: ssl.SSLContext | None = None
        self._lists_open = threading.Event()
        self._lists_open.set()
        self._held_watches: set[str] = set()  # plurals whose watch requests wait (hold_watches)
        self._waiting_watches = 0
        self._life = 0  # bumped by every stop: requests held across it are cut
        self._garbage_lists = 0
        if self.tls:
            self._make_certificate()

    # ----- life --------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self._port}"

    def start(self) -> TestApiServer:
        owner = self

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False
            allow_reuse_address = True
            request_queue_size = 128  # a client opens a watch per kind at once

            def get_request(self) -> tuple[socket.socket, Any]:
                conn, addr = super().get_request()
                if owner._ssl is not None:
                    conn = owner._ssl.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
                return conn, addr

        httpd = Server(("127.0.0.1", self._port), _handler(self))
        self._port = httpd.server_address[1]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="test-apiserver"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close the listening socket and cut every open connection (a crash, as clients see it)."""
        with self._cond:
            self._life += 1
            for w in self._watches:
                w.drop = True
            self._cond.notify_all()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            with self._cond:
                if not self._watches:
                    break
            time.sleep(0.01)

    def restart(self, *, compact: bool = False, down_for: float = 0.0) -> None:
        """Stop, then serve again on the same port with the same store (etcd survives).

        ``compact``: the new watch cache starts at the current revision, so watches from older
        revisions answer 410 and clients must list again.
        """
        self.stop()
        if down_for:
            time.sleep(down_for)
        if compact:
            self.compact()
        self.start()

    def close(self) -> None:
        self.stop()
        if self._certdir is not None:
            self._certdir.cleanup()
            self._certdir = None

    def __enter__(self) -> TestApiServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ----- the kubeconfig clients use ----------------------------------------------------------
    def kubeconfig(
        self, *, token: str | None = None, context: str = "test", server: str | None = None
    ) -> JSON:
        cluster: JSON = {"server": server or self.url}
        if self.tls:
            cluster["certificate-authority-data"] = base64.b64encode(self.ca_pem).decode()
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": cluster}],
            "users": [{"name": f"{context}-user", "user": {"token": self.token if token is None else token}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": f"{context}-user"}}],
            "current-context": context,
        }

    # ----- the script's view of the store -------------------------------------------------------
    def now(self, micro: bool = False) -> str:
        """The cluster's time now (its clock, ``clock_skew`` off this machine's)."""
        return now_rfc3339(micro, self.clock_skew)

    @property
    def resource_version(self) -> int:
        with self._cond:
            return self._rv

    def install(self, resource: ApiResource) -> None:
        """Serve a resource (install a CRD)."""
        with self._cond:
            if resource not in self.resources:
                self.resources.append(resource)

    def resource_for(self, obj: JSON) -> ApiResource:
        kind, api_version = obj.get("kind"), obj.get("apiVersion")
        for r in self.resources:
            if r.kind == kind and (api_version is None or r.api_version == api_version):
                return r
        raise KeyError(f"the test API server does not serve {api_version} {kind}")

    def get(self, kind: str, name: str, namespace: str = "") -> JSON | None:
        res = self._by_kind(kind)
        with self._cond:
            obj = self._store.get(res.plural, {}).get((namespace if res.namespaced else "", name))
            return copy.deepcopy(obj) if obj is not None else None

    def objects(self, kind: str) -> list[JSON]:
        res = self._by_kind(kind)
        with self._cond:
            return [copy.deepcopy(o) for _, o in sorted(self._store.get(res.plural, {}).items())]

    def create(self, obj: JSON) -> JSON:
        res = self.resource_for(obj)
        obj = copy.deepcopy(obj)
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        md = obj.setdefault("metadata", {})
        if res.namespaced:
            md.setdefault("namespace", "default")
        else:
            md.pop("namespace", None)
        md.setdefault("uid", str(uuid.uuid4()))
        md.setdefault("creationTimestamp", self.now())
        with self._cond:
            key = (md.get("namespace", ""), md["name"])
            if key in self._store.get(res.plural, {}):
                raise KeyError(f"{res.kind} {key} already exists")
            self._write(res, "ADDED", obj)
        return copy.deepcopy(obj)

    def update(self, obj: JSON) -> JSON:
        res = self.resource_for(obj)
        obj = copy.deepcopy(obj)
        md = obj["metadata"]
        with self._cond:
            key = (md.get("namespace", "") if res.namespaced else "", md["name"])
            if key not in self._store.get(res.plural, {}):
                raise KeyError(f"{res.kind} {key} does not exist")
            self._write(res, "MODIFIED", obj)
        return copy.deepcopy(obj)

    def modify(self, kind: str, name: str, namespace: str, change: Callable[[JSON], None]) -> JSON:
        """Apply ``change`` to a copy of the stored object and store it (one MODIFIED event)."""
        res = self._by_kind(kind)
        with self._cond:
            key = (namespace if res.namespaced else "", name)
            current = self._store.get(res.plural, {}).get(key)
            if current is None:
                raise KeyError(f"{kind} {key} does not exist")
            obj = copy.deepcopy(current)
            change(obj)
            self._write(res, "MODIFIED", obj)
            return copy.deepcopy(obj)

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        res = self._by_kind(kind)
        with self._cond:
            key = (namespace if res.namespaced else "", name)
            current = self._store.get(res.plural, {}).get(key)
            if current is None:
                raise KeyError(f"{kind} {key} does not exist")
            self._write(res, "DELETED", copy.deepcopy(current))

    def bind(
        self,
        namespace: str,
        name: str,
        node: str,
        *,
        scheduler: str = "default-scheduler",
        event: bool = True,
    ) -> JSON:
        """What the scheduler's Bind does: the binding subresource sets spec.nodeName and the
        PodScheduled condition; then it records a ``Scheduled`` event."""

        def change(pod: JSON) -> None:
            pod.setdefault("spec", {})["nodeName"] = node
            st = pod.setdefault("status", {})
            conds = [c for c in st.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": self.now()})
            st["conditions"] = conds

        pod = self.modify("Pod", name, namespace, change)
        if event:
            self.record_event(
                pod, "Scheduled", f"Successfully assigned {namespace}/{name} to {node}", scheduler=scheduler
            )
        return pod

    def fail_scheduling(
        self, namespace: str, name: str, message: str, *, scheduler: str = "default-scheduler"
    ) -> JSON:
        """What a failed scheduling cycle writes: the PodScheduled=False condition (when it changes)
        and a ``FailedScheduling`` event (an isomorphic one is a series: its count goes up)."""

        def change(pod: JSON) -> None:
            st = pod.setdefault("status", {})
            conds = [c for c in st.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conds.append(
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
            )
            st["conditions"] = conds

        pod = self.get("Pod", name, namespace)
        if pod is None:
            raise KeyError(f"Pod {namespace}/{name} does not exist")
        cond = next(
            (c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"),
            None,
        )
        if cond is None or cond.get("message") != message:
            pod = self.modify("Pod", name, namespace, change)
        return self.record_event(pod, "FailedScheduling", message, scheduler=scheduler, type_="Warning")

    def record_event(
        self,
        pod: JSON,
        reason: str,
        message: str,
        *,
        scheduler: str = "default-scheduler",
        type_: str = "Normal",
    ) -> JSON:
        md = pod["metadata"]
        ns, name = md.get("namespace", "default"), md["name"]
        with self._cond:
            for ev in self._store.get("events", {}).values():
                io = ev.get("involvedObject") or {}
                if (
                    io.get("uid") == md.get("uid")
                    and ev.get("reason") == reason
                    and ev.get("message") == message
                    and ev.get("reportingComponent") == scheduler
                ):
                    repeat = copy.deepcopy(ev)
                    series = repeat.setdefault("series", {"count": 1})
                    series["count"] = int(series.get("count", 1)) + 1
                    series["lastObservedTime"] = self.now(micro=True)
                    self._write(self._by_kind("Event"), "MODIFIED", repeat)
                    return copy.deepcopy(repeat)
        return self.create(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": f"{name}.{uuid.uuid4().hex[:16]}", "namespace": ns},
                "involvedObject": {
                    "kind": "Pod",
                    "namespace": ns,
                    "name": name,
                    "uid": md.get("uid", ""),
                    "apiVersion": "v1",
                    "resourceVersion": md.get("resourceVersion", ""),
                },
                "reason": reason,
                "message": message,
                "type": type_,
                "action": "Binding" if reason == "Scheduled" else "Scheduling",
                "reportingComponent": scheduler,
                "reportingInstance": f"{scheduler}-control-plane",
                "eventTime": self.now(micro=True),
                "source": {},
            }
        )

    # ----- the server's life, as the script drives it -------------------------------------------
    def compact(self) -> None:
        """Forget the history up to now: watches and continue tokens from older revisions get 410."""
        with self._cond:
            self._compacted = self._rv
            self._log.clear()
            self._cond.notify_all()

    def expire_watches(self) -> int:
        """Every open watch receives ``ERROR`` 410 mid-stream (its revision was compacted)."""
        with self._cond:
            self._compacted = self._rv
            self._log.clear()
            for w in self._watches:
                w.expire = True
            self._cond.notify_all()
            return len(self._watches)

    def drop_connections(self) -> int:
        """Cut every open watch connection without ending the stream (a network failure)."""
        with self._cond:
            for w in self._watches:
                w.drop = True
            self._cond.notify_all()
            return len(self._watches)

    def send_bookmarks(self) -> None:
        with self._cond:
            for w in self._watches:
                w.bookmark = True
            self._cond.notify_all()

    def hold_lists(self) -> None:
        """List requests wait (a slow list) until ``release_lists``: lets a script change the
        cluster while a client is between a 410 and its relist."""
        self._lists_open.clear()

    def release_lists(self) -> None:
        self._lists_open.set()

    def hold_watches(self, *plurals: str) -> None:
        """Watch requests for ``plurals`` wait, unanswered, until ``release_watches`` (a slow watch:
        an API server whose watch cache for that resource is not ready after a restart, a
        congested connection). Lets a script bring one kind's watch back after another's."""
        with self._cond:
            self._held_watches.update(plurals)
            self._cond.notify_all()

    def release_watches(self, *plurals: str) -> None:
        """Answer the held watch requests (all of them when no plural is named)."""
        with self._cond:
            if plurals:
                self._held_watches.difference_update(plurals)
            else:
                self._held_watches.clear()
            self._cond.notify_all()

    def waiting_watches(self) -> int:
        with self._cond:
            return self._waiting_watches

    def garble_lists(self, count: int) -> None:
        """The next ``count`` list requests are answered 200 with a body that is not JSON (a proxy's
        error page, a half-written answer)."""
        with self._cond:
            self._garbage_lists = count

    def waiting_lists(self) -> int:
        with self._cond:
            return self._waiting_lists

    def open_watches(self, plural: str | None = None) -> int:
        with self._cond:
            return sum(1 for w in self._watches if plural is None or w.resource.plural == plural)

    def wait_for_watches(self, count: int, plural: str | None = None, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self.open_watches(plural) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.open_watches(plural)} open watches, expected {count}")
            time.sleep(0.01)

    # ----- internals ----------------------------------------------------------------------------
    def _by_kind(self, kind: str) -> ApiResource:
        for r in self.resources:
            if r.kind == kind:
                return r
        raise KeyError(kind)

    def _write(self, res: ApiResource, type_: str, obj: JSON) -> None:
        """Store a change under the next revision (the caller holds the lock)."""
        self._rv += 1
        md = obj["metadata"]
        md["resourceVersion"] = str(self._rv)
        key = (md.get("namespace", "") if res.namespaced else "", md["name"])
        store = self._store.setdefault(res.plural, {})
        if type_ == "DELETED":
            store.pop(key, None)
        else:
            store[key] = obj
        self._log.append(_Entry(self._rv, res, type_, copy.deepcopy(obj)))
        while len(self._log) > self.history:
            self._compacted = self._log.popleft().rv
        self._cond.notify_all()

    def _make_certificate(self) -> None:
        import ipaddress
        from datetime import timedelta

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-apiserver")])
        now = datetime.now(UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256())
        )
        self.ca_pem = cert.public_bytes(serialization.Encoding.PEM)
        self._certdir = tempfile.TemporaryDirectory(prefix="test-apiserver-")
        cert_file = Path(self._certdir.name) / "tls.crt"
        key_file = Path(self._certdir.name) / "tls.key"
        cert_file.write_bytes(self.ca_pem)
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(cert_file), str(key_file))
        self._ssl = ctx

    def _route(self, path: str) -> tuple[ApiResource | None, str | None, str | None, str]:
        """(resource, namespace, name, problem) for a request path."""
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 2 and parts[0] == "api" and parts[1] == "v1":
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None, None, None, "path"
        namespace: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 2:
            return None, None, None, "path"
        plural, name = rest[0], rest[1] if len(rest) == 2 else None
        with self._cond:
            res = next(
                (
                    r
                    for r in self.resources
                    if r.group == group and r.version == version and r.plural == plural
                ),
                None,
            )
        if res is None or (namespace is not None and not res.namespaced):
            return None, None, None, "path"
        return res, namespace, name, ""

    def _list(self, res: ApiResource, namespace: str | None, q: dict[str, str]) -> tuple[int, JSON]:
        try:
            selector = parse_field_selector(q.get("fieldSelector", ""))
        except ValueError as exc:
            return 400, status(400, "BadRequest", str(exc))
        limit = int(q["limit"]) if q.get("limit", "").isdigit() and int(q["limit"]) > 0 else None
        token = q.get("continue", "")
        with self._cond:
            if token:
                try:
                    cont = json.loads(base64.urlsafe_b64decode(token.encode()))
                    rv, start, list_id = int(cont["rv"]), int(cont["start"]), int(cont["id"])
                except (ValueError, KeyError, TypeError):
                    return 400, status(400, "BadRequest", "continue key is not valid")
                if rv < self._compacted or list_id not in self._lists:
                    return 410, status(
                        410,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent list result. "
                        "You can start a new list without the continue parameter.",
                    )
                _, items = self._lists[list_id]
            else:
                want = q.get("resourceVersion", "")
                if want not in ("", "0"):
                    if not want.isdigit():
                        return 400, status(400, "BadRequest", f"invalid resource version {want!r}")
                    if int(want) > self._rv:
                        return 504, status(
                            504, "Timeout", f"Too large resource version: {want}, current: {self._rv}"
                        )
                rv, start = self._rv, 0
                items = [
                    _strip(copy.deepcopy(o))
                    for _, o in sorted(self._store.get(res.plural, {}).items())
                    if _matches(o, namespace, selector)
                ]
                list_id = len(self._lists) + 1
                if limit is not None and len(items) > limit:
                    self._lists[list_id] = (rv, items)
        page = items[start : start + limit] if limit is not None else items[start:]
        more = limit is not None and start + limit < len(items)
        meta: JSON = {"resourceVersion": str(rv)}
        if more:
            assert limit is not None
            meta["continue"] = base64.urlsafe_b64encode(
                json.dumps({"rv": rv, "start": start + limit, "id": list_id}).encode()
            ).decode()
            meta["remainingItemCount"] = len(items) - start - limit
        return 200, {
            "kind": f"{res.kind}List",
            "apiVersion": res.api_version,
            "metadata": meta,
            "items": page,
        }


def _handler(srv: TestApiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "test-apiserver"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def date_time_string(self, timestamp: float | None = None) -> str:
            # the Date header, by the cluster's clock
            return super().date_time_string(
                (time.time() if timestamp is None else timestamp) + srv.clock_skew
            )

        def _send_json(self, code: int, body: JSON) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _refuse_write(self) -> None:
            req = self._request()
            srv.writes.append(req)
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self._send_json(
                405,
                status(405, "MethodNotAllowed", f"the test API server is read-only: {self.command} refused"),
            )

        do_POST = do_PUT = do_PATCH = do_DELETE = _refuse_write

        def _request(self) -> Request:
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            watch = (query.get("watch") or [""])[0] in ("true", "1")
            return Request(self.command, url.path, query, watch, self.headers.get("Authorization", ""))

        def do_GET(self) -> None:
            req = self._request()
            srv.requests.append(req)
            scheme, _, presented = req.authorization.partition(" ")
            # as kube-apiserver's bearer token authenticator: the scheme is case-insensitive
            if srv.token and (scheme.lower() != "bearer" or presented.strip() != srv.token):
                self._send_json(401, status(401, "Unauthorized", "Unauthorized"))
                return
            if req.path in ("/version", "/version/"):
                self._send_json(200, VERSION)
                return
            res, namespace, name, _problem = srv._route(req.path)
            if res is None:
                self._send_json(
                    404, status(404, "NotFound", "the server could not find the requested resource")
                )
                return
            if res.plural in srv.forbidden:
                scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
                verb = "watch" if req.watch else ("get" if name else "list")
                self._send_json(
                    403,
                    status(
                        403,
                        "Forbidden",
                        f'{res.plural}{"." + res.group if res.group else ""} is forbidden: User "test" cannot '
                        f'{verb} resource "{res.plural}" in API group "{res.group}" {scope}',
                    ),
                )
                return
            q = {k: v[0] for k, v in req.query.items() if v}
            if name is not None:
                with srv._cond:
                    obj = srv._store.get(res.plural, {}).get((namespace or "", name))
                    obj = copy.deepcopy(obj) if obj is not None else None
                if obj is None:
                    self._send_json(
                        404,
                        status(
                            404,
                            "NotFound",
                            f'{res.plural} "{name}" not found',
                            {"name": name, "kind": res.plural},
                        ),
                    )
                else:
                    self._send_json(200, obj)
                return
            if req.watch:
                self._watch(res, namespace, q)
                return
            if not srv._lists_open.is_set():
                with srv._cond:
                    srv._waiting_lists += 1
                try:
                    srv._lists_open.wait(30)
                finally:
                    with srv._cond:
                        srv._waiting_lists -= 1
            with srv._cond:
                garble = srv._garbage_lists > 0
                srv._garbage_lists -= 1 if garble else 0
            if garble:
                data = b'<html><body>502 Bad Gateway</body></html>{"kind": "PodLis'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            code, body = srv._list(res, namespace, q)
            self._send_json(code, body)

        # ----- watch --------------------------------------------------------------------------
        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

        def _event(self, type_: str, obj: JSON) -> None:
            self._chunk(json.dumps({"type": type_, "object": obj}).encode() + b"\n")

        def _end(self) -> None:
            self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True

        def _watch(self, res: ApiResource, namespace: str | None, q: dict[str, str]) -> None:
            try:
                selector = parse_field_selector(q.get("fieldSelector", ""))
            except ValueError as exc:
                self._send_json(400, status(400, "BadRequest", str(exc)))
                return
            want = q.get("resourceVersion", "")
            if want not in ("", "0") and not want.isdigit():
                self._send_json(400, status(400, "BadRequest", f"invalid resource version {want!r}"))
                return
            timeout = (
                float(q["timeoutSeconds"])
                if q.get("timeoutSeconds", "").isdigit()
                else srv.default_watch_timeout
            )
            with srv._cond:
                life = srv._life
                if res.plural in srv._held_watches:
                    srv._waiting_watches += 1
                    try:
                        while res.plural in srv._held_watches and srv._life == life:
                            srv._cond.wait(0.5)
                    finally:
                        srv._waiting_watches -= 1
                if srv._life != life:  # stopped while held: the connection is cut
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(socket.SHUT_RDWR)
                    return
            initial: list[JSON] = []
            too_old = ""
            with srv._cond:
                if want in ("", "0"):
                    pos = srv._rv
                    initial = [
                        copy.deepcopy(o)
                        for _, o in sorted(srv._store.get(res.plural, {}).items())
                        if _matches(o, namespace, selector)
                    ]
                else:
                    pos = int(want)
                    if pos < srv._compacted:
                        too_old = f"too old resource version: {pos} ({srv._compacted})"
                w = _Watch(
                    res,
                    namespace,
                    selector,
                    q.get("allowWatchBookmarks") in ("true", "1"),
                    pos,
                    time.monotonic() + timeout,
                    self.connection,
                )
                if not too_old:
                    srv._watches.append(w)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                if too_old:
                    self._event("ERROR", status(410, "Expired", too_old))
                    self._end()
                    return
                for obj in initial:
                    self._event("ADDED", obj)
                self._follow(w)
            except (_Stop, OSError):
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
            finally:
                with srv._cond:
                    if w in srv._watches:
                        srv._watches.remove(w)

        def _follow(self, w: _Watch) -> None:
            while True:
                with srv._cond:
                    while True:
                        if w.drop:
                            raise _Stop()
                        fresh = srv._log and srv._log[-1].rv > w.pos
                        left = w.deadline - time.monotonic()
                        if fresh or w.expire or w.bookmark or left <= 0:
                            break
                        srv._cond.wait(min(left, 1.0))
                    if w.pos < srv._compacted and not w.expire:
                        w.expire = True  # fell behind the history the server keeps
                    # an expired watch gets its 410 and nothing more: what changed since comes with
                    # the client's relist, whenever the expiry and the change happened to race
                    events = [
                        (e.type, copy.deepcopy(e.obj))
                        for e in srv._log
                        if not w.expire
                        and e.rv > w.pos
                        and e.resource == w.resource
                        and _matches(e.obj, w.namespace, w.selector)
                    ]
                    if srv._log:
                        w.pos = max(w.pos, srv._log[-1].rv)
                    expire, bookmark = w.expire, w.bookmark
                    w.bookmark = False
                    pos = w.pos
                for type_, obj in events:
                    self._event(type_, obj)
                if expire:
                    self._event(
                        "ERROR", status(410, "Expired", f"too old resource version: {pos} ({srv._compacted})")
                    )
                    self._end()
                    return
                if bookmark and w.bookmarks:
                    self._event(
                        "BOOKMARK",
                        {
                            "kind": w.resource.kind,
                            "apiVersion": w.resource.api_version,
                            "metadata": {"resourceVersion": str(pos)},
                        },
                    )
                if time.monotonic() >= w.deadline:
                    self._end()
                    return

    return Handler


def load_objects(server: TestApiServer, objects: Iterable[JSON]) -> None:
    """Create every object (a scripted cluster's starting state)."""
    for obj in objects:
        server.create(obj)
