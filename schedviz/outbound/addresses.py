"""Which addresses the server may connect to for a user, and the operators' allow-lists."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, 6to4, Teredo's client, NAT64's
    well-known prefix), which is where a connection to it may really go."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in ipaddress.IPv6Network("64:ff9b::/96"):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def why_not_public(ip: IPAddress) -> str | None:
    """None for a public (globally routable unicast) address, else what kind of address it is."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_v4(ip)
        if inner is not None:
            reason = why_not_public(inner)
            if reason:
                return reason
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global:
        return "not a public address"
    return None


def parse_ip(text: str) -> IPAddress | None:
    """An IP address literal (brackets and an IPv6 zone allowed), or None."""
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        t = t[1:-1]
    t = t.split("%", 1)[0]
    try:
        return ipaddress.ip_address(t)
    except ValueError:
        return None


@dataclass(frozen=True)
class AllowList:
    """Hosts and networks an operator allows beyond the public Internet (``setting`` names it).

    Entries, separated by commas or spaces: a host name (matched exactly, case-insensitively, against
    the host a user gave: every address it resolves to is then allowed), an IP address, or a network
    in CIDR form (any host resolving only into it is allowed)."""

    setting: str
    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = field(default_factory=tuple)

    @classmethod
    def parse(cls, text: str, setting: str) -> AllowList:
        hosts: set[str] = set()
        nets: list[IPNetwork] = []
        for raw in text.replace(",", " ").split():
            entry = raw.strip()
            if not entry:
                continue
            ip = parse_ip(entry)
            if ip is not None:
                nets.append(ipaddress.ip_network(ip))
                continue
            if "/" in entry:
                try:
                    nets.append(ipaddress.ip_network(entry, strict=False))
                except ValueError:
                    raise ValueError(f"{setting}: {entry!r} is neither a host name, an address nor a network") from None
                continue
            hosts.add(entry.lower().rstrip("."))
        return cls(setting, frozenset(hosts), tuple(nets))

    def names_host(self, host: str) -> bool:
        return host.lower().rstrip(".") in self.hosts

    def allows_address(self, ip: IPAddress) -> bool:
        candidates: list[IPAddress] = [ip]
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            candidates.append(ip.ipv4_mapped)
        return any(c in net for c in candidates for net in self.networks if c.version == net.version)

    def __bool__(self) -> bool:
        return bool(self.hosts or self.networks)
