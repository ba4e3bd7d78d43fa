"""Scheduler extenders: real HTTP calls to the webhooks a configuration's ``extenders`` name.

Mirrors pkg/scheduler/extender.go (HTTPExtender), the extender parts of schedule_one.go
(findNodesThatPassExtenders, prioritizeNodes, extendersBinding), scheduler.go (buildExtenders) and
framework/preemption/preemption.go (callExtenders). Wire types: kube-scheduler/extender/v1/types.go,
whose structs carry no JSON tags, so the keys are the Go field names ("Pod", "NodeNames", "Host"...)
and answers are decoded as encoding/json does: keys matched case-insensitively, unknown keys ignored,
``null`` leaving a field unset, only the first JSON value of the body read.

What this port does differently (documented in docs/trace-format.md):
- requests are plain HTTP/1.1 through ``http.client``, one connection per call, without the
  ``HTTP(S)_PROXY`` environment variables Go's transport honours;
- how a request reaches the network is the process's :class:`Transport`: the default connects
  directly, follows redirects and reads ``tlsConfig`` files as kube-scheduler does (the command
  line); a server that replays other people's configurations installs a guarded one
  (``set_transport``) that vets each URL and address, follows no redirect, reads no file and words
  network failures without socket detail;
- the objects sent are the snapshot's as loaded (``raw``), not re-encoded from Go structs;
- error texts for network failures and malformed JSON imitate Go's common ones (connection refused,
  timeouts, "invalid character ...", "unexpected EOF"); rarer ones carry Python's wording;
- nodes an extender names that are not nodes of the snapshot: a filter answer listing one is an
  error (upstream would carry a node object it does not know); failure maps naming one are ignored
  (recorded in the stage details); node objects an extender sends back are matched by name, their
  content is not used.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import ipaddress
import json
import os
import socket
import ssl
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..apimachinery import parse_duration_ns
from ..cluster import ClusterState
from ..config import ProfileConfig, SchedulerConfig
from ..errors import ConfigError
from ..framework import Code, Status
from ..framework.extender import ExtenderError as ExtenderError  # re-exported
from ..objects import Pod
from .framework import Stage

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# extender.go DefaultExtenderTimeout
DEFAULT_EXTENDER_TIMEOUT = 5.0
# kube-scheduler/extender/v1/types.go
MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10
# framework.MaxNodeScore / extenderv1.MaxExtenderPriority, integer division as upstream
EXTENDER_SCORE_SCALE = 100 // MAX_EXTENDER_PRIORITY
# framework/types.go ExtenderName: what UnschedulablePlugins records when extenders reject nodes
EXTENDER_PLUGIN_NAME = "Extender"

_MAX_REDIRECTS = 10  # net/http Client default policy


@dataclass(frozen=True)
class Transport:
    """How extender requests reach the network.

    ``connect(host, port, timeout)`` opens the TCP connection (None: ``socket.create_connection``);
    ``permit(url)`` returns why a URL may not be called, or None; ``follow_redirects`` false answers a
    redirect as its status code (the extender then fails with it, as for any non-200 answer);
    ``read_files`` false refuses ``tlsConfig`` file paths; ``describe(exc)`` words a network failure
    for the trace (None: Go's net/http wording, which names addresses and socket errors)."""

    connect: Callable[[str, int, float | None], socket.socket] | None = None
    permit: Callable[[str], str | None] | None = None
    follow_redirects: bool = True
    read_files: bool = True
    describe: Callable[[BaseException], str] | None = None


DIRECT = Transport()
_transport: Transport = DIRECT


def set_transport(transport: Transport) -> Transport:
    """Install the process's transport for extenders built from now on; returns the previous one."""
    global _transport
    previous, _transport = _transport, transport
    return previous


def current_transport() -> Transport:
    return _transport
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

NOT_INTERESTED = "not interested: the pod requests none of the extender's managedResources"




# --------------------------------------------------------------------------------------------------
# Decoding answers as encoding/json does


class _GoNumber(str):
    """A JSON number kept as its literal, so int64 targets can reject "5.5" or "1e2" as Go does."""


class _Object(list[tuple[str, Any]]):
    """A JSON object as its (key, value) pairs in document order (a repeated key appears twice)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


_DECODER = json.JSONDecoder(
    parse_float=_GoNumber, parse_int=_GoNumber, parse_constant=_reject_constant, object_pairs_hook=_Object
)
_WS = " \t\r\n"


def _quote_char(c: str) -> str:
    """encoding/json quoteChar."""
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    return "'" + json.dumps(c)[1:-1] + "'"


def _container_at(doc: str, pos: int) -> str:
    """The innermost open bracket before ``pos`` ('{' or '['), strings skipped."""
    stack: list[str] = []
    in_str = esc = False
    for ch in doc[:pos]:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def _syntax_error(doc: str, err: json.JSONDecodeError) -> str:
    pos = err.pos
    if pos >= len(doc) or err.msg.startswith("Unterminated string"):
        return "unexpected EOF"
    c = _quote_char(doc[pos])
    msg = err.msg
    if msg.startswith("Expecting property name"):
        return f"invalid character {c} looking for beginning of object key string"
    if msg.startswith("Expecting ':'"):
        return f"invalid character {c} after object key"
    if msg.startswith("Expecting ','"):
        where = "object key:value pair" if _container_at(doc, pos) == "{" else "array element"
        return f"invalid character {c} after {where}"
    if msg.startswith("Invalid control character"):
        return f"invalid character {c} in string literal"
    if msg.startswith("Invalid \\"):
        return f"invalid character {c} in string escape code"
    return f"invalid character {c} looking for beginning of value"


def go_json_value(body: bytes) -> Any:
    """json.Decoder.Decode's first value of ``body`` (trailing bytes are not read): objects as
    _Object pairs, numbers as their literal. Raises ExtenderError with Go's message on bad JSON."""
    doc = body.decode("utf-8", errors="replace")
    start = len(doc) - len(doc.lstrip(_WS))
    if start == len(doc):
        raise ExtenderError("EOF")
    try:
        value, _end = _DECODER.raw_decode(doc, start)
    except json.JSONDecodeError as exc:
        raise ExtenderError(_syntax_error(doc, exc)) from None
    except ValueError as exc:  # NaN, Infinity: not JSON for Go
        pos = doc.find(str(exc), start)
        raise ExtenderError(
            f"invalid character {_quote_char(doc[max(pos, 0)])} looking for beginning of value"
        ) from None
    return value


# A target type: ("string"|"int64"|"bool"|"any", go name) leaves, ("struct", name, fields),
# ("slice", elem, go name), ("map", elem, go name), ("ptr", elem).
_Type = tuple[Any, ...]

_STRING: _Type = ("string", "string")
_INT64: _Type = ("int64", "int64")
_ANY: _Type = ("any", "interface {}")


def _struct(go_name: str, /, **fields: _Type) -> _Type:
    return ("struct", go_name, fields)


def _go_type_name(t: _Type) -> str:
    kind = t[0]
    if kind == "struct":
        return f"v1.{t[1]}"
    if kind == "ptr":
        return _go_type_name(t[1])
    if kind in ("slice", "map"):
        return str(t[2])
    return str(t[1])


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, _GoNumber):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, _Object):
        return "object"
    return "array"


class _TypeError(Exception):
    pass


def _type_error(value: Any, t: _Type, struct: str, path: list[str]) -> _TypeError:
    kind = _json_kind(value)
    shown = f"number {value}" if kind == "number" and t[0] == "int64" else kind
    target = _go_type_name(t)
    if struct:
        return _TypeError(
            f"json: cannot unmarshal {shown} into Go struct field {struct}.{'.'.join(path)} of type {target}"
        )
    return _TypeError(f"json: cannot unmarshal {shown} into Go value of type {target}")


def _decode(value: Any, t: _Type, struct: str = "", path: list[str] | None = None) -> Any:
    """Decode into ``t``: structs become dicts keyed by Go field name (fields absent or null are left
    out), pointers/slices/maps decode ``null`` as None."""
    path = path or []
    kind = t[0]
    if value is None:
        return None
    if kind == "ptr":
        return _decode(value, t[1], struct, path)
    if kind == "any":
        return value
    if kind == "string":
        if isinstance(value, str) and not isinstance(value, _GoNumber):
            return str(value)
        raise _type_error(value, t, struct, path)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        raise _type_error(value, t, struct, path)
    if kind == "int64":
        if isinstance(value, _GoNumber):
            text = str(value)
            if text.lstrip("-").isdigit():
                n = int(text)
                if _INT64_MIN <= n <= _INT64_MAX:
                    return n
        raise _type_error(value, t, struct, path)
    is_object = isinstance(value, _Object)
    if kind == "slice":
        if isinstance(value, list) and not is_object:
            return [_decode(v, t[1], struct, path) for v in value]
        raise _type_error(value, t, struct, path)
    if kind == "map":
        if is_object:
            out: dict[str, Any] = {}
            for k, v in value:
                out[k] = _decode(v, t[1], struct, path)
            return out
        raise _type_error(value, t, struct, path)
    if kind == "struct":
        if not is_object:
            raise _type_error(value, t, struct, path)
        fields: dict[str, _Type] = t[2]
        folded = {name.lower(): name for name in fields}
        obj: dict[str, Any] = {}
        for k, v in value:
            name = k if k in fields else folded.get(k.lower())
            if name is None:
                continue
            decoded = _decode(v, fields[name], t[1], [*path, name])
            if decoded is None:
                obj.pop(name, None)
            elif fields[name][0] == "map" and isinstance(obj.get(name), dict):
                obj[name].update(decoded)  # a repeated key fills the same Go map
            else:
                obj[name] = decoded
        return obj
    raise AssertionError(kind)  # pragma: no cover


def decode_answer(body: bytes, t: _Type) -> Any:
    value = go_json_value(body)
    try:
        return _decode(value, t)
    except _TypeError as exc:
        raise ExtenderError(str(exc)) from None


# The answers' Go types (kube-scheduler/extender/v1/types.go); node objects (v1.NodeList) are read
# down to metadata.name, which is all the engine uses of them.
_NODE = _struct("Node", metadata=("ptr", _struct("ObjectMeta", name=_STRING)))
_NODE_LIST = _struct("NodeList", items=("slice", _NODE, "[]v1.Node"))
FILTER_RESULT = _struct(
    "ExtenderFilterResult",
    Nodes=("ptr", _NODE_LIST),
    NodeNames=("ptr", ("slice", _STRING, "[]string")),
    FailedNodes=("map", _STRING, "v1.FailedNodesMap"),
    FailedAndUnresolvableNodes=("map", _STRING, "v1.FailedNodesMap"),
    Error=_STRING,
)
HOST_PRIORITY_LIST = ("slice", _struct("HostPriority", Host=_STRING, Score=_INT64), "v1.HostPriorityList")
BINDING_RESULT = _struct("ExtenderBindingResult", Error=_STRING)
PREEMPTION_RESULT = _struct(
    "ExtenderPreemptionResult",
    NodeNameToMetaVictims=(
        "map",
        (
            "ptr",
            _struct(
                "MetaVictims",
                Pods=("slice", ("ptr", _struct("MetaPod", UID=_STRING)), "[]*v1.MetaPod"),
                NumPDBViolations=_INT64,
            ),
        ),
        "map[string]*v1.MetaVictims",
    ),
)


# --------------------------------------------------------------------------------------------------
# Transport: TLS (rest.TLSConfigFor) and one POST with a whole-exchange timeout (http.Client.Timeout)


def _tls_bytes(tls_cfg: dict[str, Any], data_key: str, file_key: str, read_files: bool = True) -> bytes:
    """dataFromSliceOrFile: the base64-decoded data field, else the file's content."""
    data = tls_cfg.get(data_key) or ""
    if data:
        return base64.b64decode(data)
    path = tls_cfg.get(file_key) or ""
    if path:
        if not read_files:
            raise ExtenderError(f"tlsConfig.{file_key}: files are not read here; use tlsConfig.{data_key}")
        try:
            with open(os.path.normpath(path), "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            raise ExtenderError(f"open {path}: no such file or directory") from None
        except OSError as exc:
            raise ExtenderError(f"open {path}: {exc.strerror or exc}") from None
    return b""


def build_tls(ext: dict[str, Any], read_files: bool = True) -> tuple[ssl.SSLContext, str]:
    """extender.go makeTransport: the TLS context for https URLs and the server name to verify.
    The context checks the certificate chain; unless verification is off, the host name is checked
    after the handshake as crypto/x509 VerifyHostname does (``verify_hostname``).

    ``enableHTTPS`` without a CA turns verification off; a CA together with ``insecure`` is an
    error; a client certificate is used only when both a certificate and a key are given."""
    tls_cfg: dict[str, Any] = dict(ext.get("tlsConfig") or {})
    has_ca = bool(tls_cfg.get("caData") or tls_cfg.get("caFile"))
    insecure = bool(tls_cfg.get("insecure"))
    if ext.get("enableHTTPS") and not has_ca:
        insecure = True
    if has_ca and insecure:
        raise ExtenderError("specifying a root certificates file with the insecure flag is not allowed")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = False
    if insecure:
        ctx.verify_mode = ssl.CERT_NONE
    ca = _tls_bytes(tls_cfg, "caData", "caFile", read_files)
    if ca:
        # x509.CertPool.AppendCertsFromPEM skips what it cannot parse: an unusable CA bundle
        # leaves an empty pool, so every server certificate fails verification.
        with contextlib.suppress(ssl.SSLError, ValueError):
            ctx.load_verify_locations(cadata=ca.decode("ascii", errors="replace"))
    elif not insecure:
        ctx.load_default_certs()
    cert = _tls_bytes(tls_cfg, "certData", "certFile", read_files)
    key = _tls_bytes(tls_cfg, "keyData", "keyFile", read_files)
    if cert and key:
        _load_client_cert(ctx, cert, key)
    return ctx, str(tls_cfg.get("serverName") or "")


def _load_client_cert(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    paths: list[str] = []
    try:
        for blob in (cert, key):
            fd, path = tempfile.mkstemp(prefix="schedviz-extender-", suffix=".pem")
            paths.append(path)
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
        try:
            ctx.load_cert_chain(paths[0], paths[1])
        except ssl.SSLError as exc:
            raise ExtenderError(f"tls: {exc.reason or exc}") from None
    finally:
        for path in paths:
            with contextlib.suppress(OSError):
                os.unlink(path)


class _HostnameError(OSError):
    """crypto/x509 HostnameError."""


def _match_hostnames(pattern: str, host: str) -> bool:
    """crypto/x509 matchHostnames: label by label, a leading "*" label matching one label."""
    pattern, host = pattern.lower().rstrip("."), host.lower().rstrip(".")
    if not pattern or not host:
        return False
    p_labels, h_labels = pattern.split("."), host.split(".")
    if len(p_labels) != len(h_labels):
        return False
    return all(
        (i == 0 and p == "*") or p == h for i, (p, h) in enumerate(zip(p_labels, h_labels, strict=True))
    )


def verify_hostname(cert: dict[str, Any], host: str) -> None:
    """crypto/x509 Certificate.VerifyHostname over ssl.getpeercert()'s dict; raises _HostnameError
    worded as Go's HostnameError."""
    sans = cert.get("subjectAltName") or ()
    dns = [v for k, v in sans if k == "DNS"]
    ips = []
    for k, v in sans:
        if k == "IP Address":
            with contextlib.suppress(ValueError):
                ips.append(ipaddress.ip_address(v.strip()))
    candidate = host[1:-1] if len(host) >= 3 and host[0] == "[" and host[-1] == "]" else host
    try:
        ip = ipaddress.ip_address(candidate)
    except ValueError:
        ip = None
    if ip is not None:
        if ip in ips:
            return
        if not ips:
            raise _HostnameError(
                f"x509: cannot validate certificate for {candidate} because it doesn't contain any IP SANs"
            )
        raise _HostnameError(
            f"x509: certificate is valid for {', '.join(str(a) for a in ips)}, not {candidate}"
        )
    if any(_match_hostnames(d, host) for d in dns):
        return
    if not sans:
        cn = next((v for rdn in cert.get("subject") or () for k, v in rdn if k == "commonName"), "")
        if cn and _match_hostnames(cn, host):
            raise _HostnameError("x509: certificate relies on legacy Common Name field, use SANs instead")
    if not dns:
        raise _HostnameError(f"x509: certificate is not valid for any names, but wanted to match {host}")
    raise _HostnameError(f"x509: certificate is valid for {', '.join(dns)}, not {host}")


class _HTTPConnection(http.client.HTTPConnection):
    """Plain HTTP whose TCP connection the transport opens."""

    def __init__(self, host: str, port: int | None, timeout: float | None, transport: Transport) -> None:
        super().__init__(host, port, timeout=timeout)
        self._transport = transport

    def connect(self) -> None:
        opener = self._transport.connect
        if opener is None:
            super().connect()
            return
        self.sock = opener(self.host, self.port, self.timeout)


class _HTTPSConnection(http.client.HTTPSConnection):
    """HTTPS with tlsConfig.serverName as SNI and verified name (Go's tls.Config.ServerName)."""

    def __init__(
        self,
        host: str,
        port: int | None,
        timeout: float | None,
        context: ssl.SSLContext,
        server_name: str,
        transport: Transport = DIRECT,
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._server_name = server_name
        self._tls_context = context
        self._transport = transport

    def connect(self) -> None:
        opener = self._transport.connect
        if opener is None:
            http.client.HTTPConnection.connect(self)
        else:
            self.sock = opener(self.host, self.port, self.timeout)
        name = self._server_name or self.host
        sock = self._tls_context.wrap_socket(self.sock, server_hostname=name)
        self.sock = sock
        if self._tls_context.verify_mode != ssl.CERT_NONE:
            verify_hostname(sock.getpeercert() or {}, name)


def _timed_out(stage: str) -> ExtenderError:
    if stage == "body":
        return ExtenderError(
            "context deadline exceeded (Client.Timeout or context cancellation while reading body)"
        )
    return ExtenderError("context deadline exceeded (Client.Timeout exceeded while awaiting headers)")


def _network_error(exc: BaseException, host: str, port: int) -> str:
    """Go's net/http wording for the common failures."""
    if isinstance(exc, ConnectionRefusedError):
        return f"dial tcp {host}:{port}: connect: connection refused"
    if isinstance(exc, socket.gaierror):
        return f"dial tcp: lookup {host}: no such host"
    if isinstance(exc, _HostnameError):
        return f"tls: failed to verify certificate: {exc}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        code = getattr(exc, "verify_code", 0)
        if code in (2, 18, 19, 20, 21):
            return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        return f"tls: failed to verify certificate: x509: {getattr(exc, 'verify_message', '') or exc}"
    if isinstance(exc, ssl.SSLError):
        return f"remote error: tls: {exc.reason or exc}"
    if isinstance(exc, http.client.RemoteDisconnected | ConnectionAbortedError):
        return "EOF"
    if isinstance(exc, ConnectionResetError):
        return f"read tcp {host}:{port}: connection reset by peer"
    if isinstance(exc, http.client.HTTPException):
        return f"net/http: {exc}"
    return str(exc) or type(exc).__name__


def _split(url: str) -> tuple[str, str, int, str]:
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ExtenderError(f"unsupported protocol scheme {json.dumps(scheme)}")
    host = parts.hostname or ""
    if not host:
        raise ExtenderError("http: no Host in request URL")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise ExtenderError(f"invalid port in URL {json.dumps(url)}") from None
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return scheme, host, port, target


def post_json(
    url: str,
    payload: bytes,
    timeout: float | None,
    tls: ssl.SSLContext | None,
    server_name: str,
    transport: Transport = DIRECT,
) -> tuple[int, bytes]:
    """http.Client.Do of a JSON POST: follows redirects as Go's default policy does (301/302/303 turn
    into GET without a body, 307/308 repeat the POST), ``timeout`` bounding the whole exchange.
    Returns the final status and body; failures raise ExtenderError worded as Go's url.Error.
    The ``transport`` may refuse the URL, open the connection itself and not follow redirects."""
    deadline = None if timeout is None else time.monotonic() + timeout
    method, body = "POST", payload
    for _ in range(_MAX_REDIRECTS + 1):
        op = method[0] + method[1:].lower()
        where = f"{op} {json.dumps(url)}"
        try:
            scheme, host, port, target = _split(url)
        except ExtenderError as exc:
            raise ExtenderError(f"{where}: {exc}") from None
        if transport.permit is not None:
            refusal = transport.permit(url)
            if refusal:
                raise ExtenderError(f"{where}: refused: {refusal}")
        status, location, data = _exchange(
            scheme, host, port, target, method, body, deadline, tls, server_name, where, transport
        )
        if status in (301, 302, 303, 307, 308) and location and transport.follow_redirects:
            url = urllib.parse.urljoin(url, location)
            if status in (301, 302, 303):
                method, body = "GET", b""
            continue
        return status, data
    raise ExtenderError(f"{where}: stopped after {_MAX_REDIRECTS} redirects")


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    return deadline - time.monotonic()


def _exchange(
    scheme: str,
    host: str,
    port: int,
    target: str,
    method: str,
    body: bytes,
    deadline: float | None,
    tls: ssl.SSLContext | None,
    server_name: str,
    where: str,
    transport: Transport = DIRECT,
) -> tuple[int, str, bytes]:
    left = _remaining(deadline)
    if left is not None and left <= 0:
        raise ExtenderError(f"{where}: {_timed_out('headers')}")
    conn: http.client.HTTPConnection
    if scheme == "https":
        ctx = tls or ssl.create_default_context()
        conn = _HTTPSConnection(host, port, left, ctx, server_name, transport)
    else:
        conn = _HTTPConnection(host, port, left, transport)
    stage = "headers"
    try:
        headers = {"Content-Type": "application/json"} if method == "POST" else {}
        conn.request(method, target, body=body if method == "POST" else None, headers=headers)
        left = _remaining(deadline)
        if left is not None:
            if left <= 0:
                raise TimeoutError
            assert conn.sock is not None
            conn.sock.settimeout(left)
        resp = conn.getresponse()
        status = resp.status
        location = resp.getheader("Location") or ""
        if status != 200:
            return status, location, b""
        stage = "body"
        chunks: list[bytes] = []
        while True:
            left = _remaining(deadline)
            if left is not None:
                if left <= 0:
                    raise TimeoutError
                if conn.sock is not None:
                    conn.sock.settimeout(left)
            chunk = resp.read1(65536)
            if not chunk:
                break
            chunks.append(chunk)
        return status, location, b"".join(chunks)
    except TimeoutError:
        if stage == "body":
            raise _timed_out("body") from None
        raise ExtenderError(f"{where}: {_timed_out('headers')}") from None
    except (OSError, http.client.HTTPException) as exc:
        said = transport.describe(exc) if transport.describe is not None else _network_error(exc, host, port)
        if stage == "body":
            raise ExtenderError(said) from None
        raise ExtenderError(f"{where}: {said}") from None
    finally:
        conn.close()


# --------------------------------------------------------------------------------------------------
# HTTPExtender


def _raw_uid(pod: Pod) -> str:
    md = pod.raw.get("metadata")
    uid = md.get("uid") if isinstance(md, dict) else None
    return uid if isinstance(uid, str) else ""


def _container_resource_names(pod: Pod) -> set[str]:
    """Resource names in the requests and limits of the pod's containers and init containers."""
    names: set[str] = set()
    spec = pod.spec
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            res = c.get("resources") if isinstance(c, dict) else None
            if not isinstance(res, dict):
                continue
            for part in ("requests", "limits"):
                vals = res.get(part)
                if isinstance(vals, dict):
                    names.update(str(k) for k in vals)
    return names


@dataclass
class FilterAnswer:
    """HTTPExtender.Filter's result: the passing node names (None when the answer had neither
    list), whether they came back as node objects, and the two failure maps."""

    names: list[str] | None
    as_nodes: bool
    failed: dict[str, str]
    unresolvable: dict[str, str]


class HTTPExtender:
    """One configured extender (extender.go HTTPExtender)."""

    def __init__(
        self, cfg: dict[str, Any], display_name: str | None = None, transport: Transport | None = None
    ) -> None:
        self.config = cfg
        self.transport = transport if transport is not None else current_transport()
        self.url: str = str(cfg.get("urlPrefix", ""))
        # Name() is the URL prefix; ``name`` is made unique among the configured extenders for the trace.
        self.name: str = display_name or self.url
        self.filter_verb: str = str(cfg.get("filterVerb", ""))
        self.prioritize_verb: str = str(cfg.get("prioritizeVerb", ""))
        self.bind_verb: str = str(cfg.get("bindVerb", ""))
        self.preempt_verb: str = str(cfg.get("preemptVerb", ""))
        self.weight: int = int(cfg.get("weight", 0))
        self.node_cache_capable: bool = bool(cfg.get("nodeCacheCapable", False))
        self.ignorable: bool = bool(cfg.get("ignorable", False))
        self.managed_resources: frozenset[str] = frozenset(
            str(r.get("name", "")) for r in cfg.get("managedResources") or []
        )
        ns = parse_duration_ns(str(cfg.get("httpTimeout") or "0s"))
        # a zero timeout means the default; a negative one, as http.Client.Timeout, none at all
        self.timeout: float | None = DEFAULT_EXTENDER_TIMEOUT if ns == 0 else (ns / 1e9 if ns > 0 else None)
        self.tls, self.server_name = build_tls(cfg, self.transport.read_files)

    # ----- capabilities -----------------------------------------------------------------------
    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def is_interested(self, pod: Pod) -> bool:
        """Every pod when managedResources is empty, else pods whose containers or init containers
        request or limit one of them."""
        if not self.managed_resources:
            return True
        return not self.managed_resources.isdisjoint(_container_resource_names(pod))

    # ----- transport ---------------------------------------------------------------------------
    def send(self, verb: str, args: Any, result_type: _Type) -> Any:
        """HTTPExtender.send: POST ``args`` as JSON to urlPrefix/verb; a non-200 answer is an error."""
        payload = json.dumps(args, separators=(",", ":")).encode()
        url = self.url.rstrip("/") + "/" + verb
        status, body = post_json(url, payload, self.timeout, self.tls, self.server_name, self.transport)
        if status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {status}")
        return decode_answer(body, result_type)

    def _node_args(self, pod: Pod, cluster: ClusterState, nodes: Sequence[int]) -> dict[str, Any]:
        if self.node_cache_capable:
            return {"Pod": pod.raw, "Nodes": None, "NodeNames": [cluster.names[i] for i in nodes]}
        items = [cluster.nodes[i].raw for i in nodes]
        return {"Pod": pod.raw, "Nodes": {"metadata": {}, "items": items}, "NodeNames": None}

    # ----- verbs ---------------------------------------------------------------------------------
    def filter(self, pod: Pod, cluster: ClusterState, nodes: Sequence[int]) -> FilterAnswer:
        """HTTPExtender.Filter."""
        if not self.filter_verb:
            return FilterAnswer([cluster.names[i] for i in nodes], False, {}, {})
        # a JSON null leaves the result at its zero value: no node list, no failures
        res = self.send(self.filter_verb, self._node_args(pod, cluster, nodes), FILTER_RESULT) or {}
        if res.get("Error"):
            raise ExtenderError(res["Error"])
        failed = res.get("FailedNodes") or {}
        unresolvable = res.get("FailedAndUnresolvableNodes") or {}
        if self.node_cache_capable and res.get("NodeNames") is not None:
            sent = {cluster.names[i] for i in nodes}
            for name in res["NodeNames"]:
                if name not in sent:
                    raise ExtenderError(
                        f"extender {json.dumps(self.url)} claims a filtered node {json.dumps(name)} "
                        "which is not found in the input node list"
                    )
            return FilterAnswer(list(res["NodeNames"]), False, failed, unresolvable)
        if res.get("Nodes") is not None:
            names = []
            for item in res["Nodes"].get("items") or []:
                md = (item or {}).get("metadata") or {}
                names.append(str(md.get("name", "")))
            return FilterAnswer(names, True, failed, unresolvable)
        return FilterAnswer(None, False, failed, unresolvable)

    def prioritize(
        self, pod: Pod, cluster: ClusterState, nodes: Sequence[int]
    ) -> tuple[list[tuple[str, int]], int]:
        """HTTPExtender.Prioritize: (host, score) pairs as answered, and the weight."""
        if not self.prioritize_verb:
            return [(cluster.names[i], 0) for i in nodes], 0
        res = self.send(self.prioritize_verb, self._node_args(pod, cluster, nodes), HOST_PRIORITY_LIST)
        # a JSON null element decodes to a zero HostPriority
        pairs = [(str((hp or {}).get("Host", "")), int((hp or {}).get("Score", 0))) for hp in res or []]
        return pairs, self.weight

    def bind(self, pod: Pod, node: str) -> None:
        """HTTPExtender.Bind."""
        if not self.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": _raw_uid(pod), "Node": node}
        res = self.send(self.bind_verb, args, BINDING_RESULT)
        if res is not None and res.get("Error"):
            raise ExtenderError(res["Error"])

    def process_preemption(
        self, pod: Pod, victims: dict[str, tuple[list[Pod], int]], cluster: ClusterState
    ) -> dict[str, tuple[list[Pod], int]]:
        """HTTPExtender.ProcessPreemption: the extender's victims per node, pods found by UID on
        the nodes they are named for."""
        if not self.preempt_verb:
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.url} but run into ProcessPreemption"
            )
        if self.node_cache_capable:
            per_node: dict[str, Any] = {
                n: {"Pods": [{"UID": _raw_uid(p)} for p in pods], "NumPDBViolations": pdb}
                for n, (pods, pdb) in victims.items()
            }
            args = {"Pod": pod.raw, "NodeNameToVictims": None, "NodeNameToMetaVictims": per_node}
        else:
            per_node = {
                n: {"Pods": [p.raw for p in pods], "NumPDBViolations": pdb}
                for n, (pods, pdb) in victims.items()
            }
            args = {"Pod": pod.raw, "NodeNameToVictims": per_node, "NodeNameToMetaVictims": None}
        res = self.send(self.preempt_verb, args, PREEMPTION_RESULT) or {}
        out: dict[str, tuple[list[Pod], int]] = {}
        for node, meta in (res.get("NodeNameToMetaVictims") or {}).items():
            idx = cluster.index.get(node)
            if idx is None:
                raise ExtenderError(f"nodeinfo not found for node name {json.dumps(node)}")
            if meta is None:
                # upstream dereferences the nil entry (a crash); reported as an error here
                raise ExtenderError(
                    f"extender {self.url} returned no victims object for node {json.dumps(node)}"
                )
            pods: list[Pod] = []
            for mp in meta.get("Pods") or []:
                uid = (mp or {}).get("UID", "")
                found = next((p for p in cluster.pods_on[idx] if _raw_uid(p) == uid), None)
                if found is None:
                    raise ExtenderError(
                        f"extender: {self.url} claims to preempt pod (UID: &{{{uid}}}) on node: {node}, "
                        "but the pod is not found on that node"
                    )
                pods.append(found)
            out[node] = (pods, int(meta.get("NumPDBViolations", 0)))
        return out


# --------------------------------------------------------------------------------------------------
# Building (scheduler.go buildExtenders)


def build_extenders(config: SchedulerConfig, transport: Transport | None = None) -> list[HTTPExtender]:
    """The configured extenders, non-ignorable ones first, each group in configuration order.
    A TLS setting that cannot be used is a ConfigError, as the scheduler would not start."""
    raws = list(config.extenders)
    counts: dict[str, int] = {}
    for e in raws:
        counts[str(e.get("urlPrefix", ""))] = counts.get(str(e.get("urlPrefix", "")), 0) + 1
    built: list[HTTPExtender] = []
    for k, e in enumerate(raws):
        url = str(e.get("urlPrefix", ""))
        display = url if counts[url] == 1 else f"{url}#{k + 1}"
        try:
            built.append(HTTPExtender(e, display, transport))
        except ExtenderError as exc:
            raise ConfigError([f"couldn't build extenders: {exc}"]) from None
    return [x for x in built if not x.ignorable] + [x for x in built if x.ignorable]


def profiles_with_ignored_resources(config: SchedulerConfig) -> list[ProfileConfig]:
    """buildExtenders: resources an extender manages with ignoredByScheduler replace every profile's
    NodeResourcesFit ignoredResources; a profile without NodeResourcesFit args is an error."""
    ignored = [
        str(r.get("name", ""))
        for e in config.extenders
        for r in e.get("managedResources") or []
        if r.get("ignoredByScheduler")
    ]
    if not ignored:
        return list(config.profiles)
    out = []
    for prof in config.profiles:
        if "NodeResourcesFit" not in prof.plugin_args:
            raise ConfigError(["couldn't build extenders: can't find NodeResourcesFitArgs in plugin config"])
        args = dict(prof.plugin_args["NodeResourcesFit"])
        args["ignoredResources"] = list(ignored)
        out.append(replace(prof, plugin_args={**prof.plugin_args, "NodeResourcesFit": args}))
    return out


# --------------------------------------------------------------------------------------------------
# The scheduling cycle's extender steps


def _micros(t0: float) -> int:
    return int((time.perf_counter() - t0) * 1_000_000)


@dataclass
class FilterRun:
    """findNodesThatPassExtenders over the nodes Filter plugins passed.

    ``statuses``: the node statuses extenders set (Status.plugin = the extender's name);
    ``silent``: nodes an extender dropped without naming them in a failure map, with that extender's
    name (upstream keeps no status for them: they count as "absent"); ``bare``: nodes whose NodeInfo a node-object answer replaced with a
    fresh one (no pods, no image states), which is what Score plugins then see in v1.35.
    """

    feasible: IntArray
    statuses: dict[int, Status] = field(default_factory=dict)
    silent: dict[int, str] = field(default_factory=dict)
    bare: BoolArray | None = None
    filtered_some: bool = False


def _passed_indices(ext: HTTPExtender, cluster: ClusterState, names: list[str]) -> list[int]:
    """The answer's node names as snapshot indices, first occurrence kept."""
    passed: list[int] = []
    seen: set[int] = set()
    for name in names:
        i = cluster.index.get(name)
        if i is None:
            raise ExtenderError(
                f"extender {json.dumps(ext.url)} claims a filtered node {json.dumps(name)} "
                "which is not a node of the snapshot"
            )
        if i not in seen:
            seen.add(i)
            passed.append(i)
    return passed


def run_filters(
    extenders: Sequence[HTTPExtender],
    pod: Pod,
    cluster: ClusterState,
    feasible: IntArray,
    stages: list[Stage],
) -> FilterRun:
    """Each interested extender filters what the previous ones passed, in order; an ignorable
    extender's failure is skipped, any other raises ExtenderError (the cycle's error)."""
    run = FilterRun(feasible)
    current = [int(i) for i in feasible.tolist()]
    for ext in extenders:
        if not current:
            break
        if not ext.is_filter():
            continue
        if not ext.is_interested(pod):
            stages.append(Stage("Filter", ext.name, "Skip", NOT_INTERESTED, 0, {"extender": "filter"}))
            continue
        t0 = time.perf_counter()
        details: dict[str, Any] = {
            "extender": "filter",
            "nodes": len(current),
            "nodeCacheCapable": ext.node_cache_capable,
        }
        try:
            answer = ext.filter(pod, cluster, current)
            passed = _passed_indices(ext, cluster, answer.names or [])
        except ExtenderError as exc:
            if ext.ignorable:
                details["ignorable"] = True
                stages.append(Stage("Filter", ext.name, "Skip", str(exc), _micros(t0), details))
                continue
            stages.append(Stage("Filter", ext.name, "Error", str(exc), _micros(t0), details))
            raise
        if answer.as_nodes:
            if run.bare is None:
                run.bare = np.zeros(cluster.n, dtype=bool)
            run.bare[passed] = True
        # statuses.Set for every name in the failure maps, the unresolvable one winning
        unknown: set[str] = set()
        for name, msg in answer.unresolvable.items():
            i = cluster.index.get(name)
            if i is None:
                unknown.add(name)
                continue
            run.statuses[i] = Status(Code.UnschedulableAndUnresolvable, msg, plugin=ext.name)
            run.silent.pop(i, None)
        for name, msg in answer.failed.items():
            if name in answer.unresolvable:
                continue
            i = cluster.index.get(name)
            if i is None:
                unknown.add(name)
                continue
            run.statuses[i] = Status(Code.Unschedulable, msg, plugin=ext.name)
            run.silent.pop(i, None)
        kept = set(passed)
        for i in current:
            if i not in kept and i not in run.statuses:
                run.silent[i] = ext.name
        details.update(
            passed=len(passed),
            failed=sum(1 for n in answer.failed if n not in answer.unresolvable),
            unresolvable=len(answer.unresolvable),
        )
        if answer.names is None:
            details["noNodeList"] = True
        if unknown:
            details["unknownNodes"] = sorted(unknown)
        sent = set(current)
        added = [cluster.names[i] for i in passed if i not in sent]
        if added:
            details["addedNodes"] = added
        stages.append(Stage("Filter", ext.name, "Success", "", _micros(t0), details))
        current = passed
    run.feasible = np.asarray(current, dtype=np.int64)
    run.filtered_some = len(current) != len(feasible)
    return run


@dataclass
class ScoreColumn:
    """One prioritizing extender's scores over the feasible nodes."""

    name: str
    weight: int
    raw: IntArray  # the extender's scores (summed when it names a node twice), 0 for nodes it omits
    ok: bool
    error: str = ""

    @property
    def normalized(self) -> IntArray:
        """Scaled to the framework's range: score * (MaxNodeScore / MaxExtenderPriority)."""
        return self.raw * EXTENDER_SCORE_SCALE

    @property
    def weighted(self) -> IntArray:
        return self.raw * self.weight * EXTENDER_SCORE_SCALE


def run_prioritize(
    extenders: Sequence[HTTPExtender],
    pod: Pod,
    cluster: ClusterState,
    feasible: IntArray,
    stages: list[Stage],
) -> list[ScoreColumn]:
    """prioritizeNodes' extender part: every interested prioritizer; a failing one gives no score
    (whether or not it is ignorable). Scores are neither clamped nor validated, as upstream."""
    nodes = [int(i) for i in feasible.tolist()]
    pos = {i: k for k, i in enumerate(nodes)}
    cols: list[ScoreColumn] = []
    for ext in extenders:
        if not ext.is_prioritizer():
            continue
        if not ext.is_interested(pod):
            stages.append(Stage("Score", ext.name, "Skip", NOT_INTERESTED, 0, {"extender": "prioritize"}))
            continue
        t0 = time.perf_counter()
        details: dict[str, Any] = {"extender": "prioritize", "weight": ext.weight}
        raw = np.zeros(len(nodes), dtype=np.int64)
        try:
            pairs, weight = ext.prioritize(pod, cluster, nodes)
        except ExtenderError as exc:
            stages.append(Stage("Score", ext.name, "Skip", str(exc), _micros(t0), details))
            cols.append(ScoreColumn(ext.name, ext.weight, raw, False, str(exc)))
            continue
        ignored: list[str] = []
        for host, score in pairs:
            i = cluster.index.get(host)
            k = pos.get(i) if i is not None else None
            if k is None:
                ignored.append(host)
                continue
            raw[k] += score
        if ignored:
            details["ignoredHosts"] = ignored
        stages.append(Stage("Score", ext.name, "Success", "", _micros(t0), details))
        cols.append(ScoreColumn(ext.name, weight, raw, True))
    return cols


def run_bind(extenders: Sequence[HTTPExtender], pod: Pod, node: str, stages: list[Stage]) -> Status | None:
    """extendersBinding: the first interested binder binds (None when none did); an ignorable
    binder's failure passes the pod on to the next binder, then to the Bind plugins."""
    for ext in extenders:
        if not ext.is_binder() or not ext.is_interested(pod):
            continue
        t0 = time.perf_counter()
        try:
            ext.bind(pod, node)
        except ExtenderError as exc:
            if ext.ignorable:
                stages.append(
                    Stage(
                        "Bind",
                        ext.name,
                        "Skip",
                        str(exc),
                        _micros(t0),
                        {"extender": "bind", "ignorable": True},
                    )
                )
                continue
            stages.append(Stage("Bind", ext.name, "Error", str(exc), _micros(t0), {"extender": "bind"}))
            return Status(Code.Error, str(exc), plugin=ext.name)
        stages.append(Stage("Bind", ext.name, "Success", "", _micros(t0), {"extender": "bind"}))
        return Status(Code.Success, plugin=ext.name)
    return None
