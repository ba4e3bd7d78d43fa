"""Resolve once, vet every address, connect to a vetted one; say what failed in three words."""

from __future__ import annotations

import socket
import ssl

from .addresses import AllowList, IPAddress, parse_ip, why_not_public


class Refused(ConnectionError):
    """The destination is not one the server may reach for a user (nothing was sent)."""


def vetted_addresses(host: str, port: int, allow: AllowList) -> list[tuple[int, IPAddress]]:
    """Every address ``host`` resolves to, as (family, address), once each; raises Refused when any
    of them is not public and the allow-list names neither the host nor the address. A name that
    resolves to a mix of public and other addresses is refused whole: which one a later lookup
    returns is the name server's choice, not ours."""
    name = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not name:
        raise Refused("refused: no host")
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        raise OSError("unreachable") from None
    out: list[tuple[int, IPAddress]] = []
    named = allow.names_host(name)
    for family, _type, _proto, _canon, sockaddr in infos:
        ip = parse_ip(str(sockaddr[0]))
        if ip is None:
            continue
        if not named and not allow.allows_address(ip):
            reason = why_not_public(ip)
            if reason:
                what = f"{name} is {reason}" if _is_literal(name) else f"{name} resolves to {reason}"
                raise Refused(f"refused: {what} (allow it with {allow.setting})")
        if (family, ip) not in out:
            out.append((family, ip))
    if not out:
        raise OSError("unreachable")
    return out


def _is_literal(name: str) -> bool:
    """An address written as such, in any spelling the resolver accepts (127.1, 2130706433, 0x7f000001)."""
    if parse_ip(name) is not None:
        return True
    try:
        socket.inet_aton(name)
    except OSError:
        return False
    return True


def open_connection(host: str, port: int, timeout: float | None, allow: AllowList) -> socket.socket:
    """A TCP connection to a vetted address of ``host`` (see ``vetted_addresses``)."""
    last: OSError | None = None
    for family, ip in vetted_addresses(host, port, allow):
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            if timeout is not None:
                sock.settimeout(timeout)
            sock.connect((str(ip), port))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    assert last is not None
    raise last


def describe(exc: BaseException) -> str:
    """What a user is told of a failed outbound request: refused, unreachable or timed out; a TLS
    verification failure says so. Never the errno, the address tried or the socket's own words."""
    if isinstance(exc, Refused):
        return str(exc)
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return "unreachable: the server's TLS certificate could not be verified"
    if isinstance(exc, ssl.SSLError):
        return "unreachable: the TLS handshake failed"
    return "unreachable"
