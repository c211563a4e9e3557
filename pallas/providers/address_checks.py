"""Which addresses an image fetch may connect to, and how a URL host is parsed and resolved.

Used by `image_fetch.ImageFetcher` (SSRF-hardened downloads): `blocked_reason` names why an
address is refused (every non-public range, with IPv4-mapped / NAT64 / 6to4 IPv6 forms checked
by their embedded IPv4 address), `parse_ip_literal` reads IP literals in any notation (including
the legacy `inet_aton` forms), `system_resolver` resolves without blocking the event loop.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

# Named ranges checked explicitly, so refusals carry a readable reason and do not depend on the
# exact `is_global` table of the running Python version.
_BLOCKED_V4: tuple[tuple[ipaddress.IPv4Network, str], ...] = (
    (_V4("0.0.0.0/8"), "this_network"),
    (_V4("10.0.0.0/8"), "private"),
    (_V4("100.64.0.0/10"), "shared_cgnat"),
    (_V4("127.0.0.0/8"), "loopback"),
    (_V4("169.254.0.0/16"), "link_local"),
    (_V4("172.16.0.0/12"), "private"),
    (_V4("192.0.0.0/24"), "ietf_protocol"),
    (_V4("192.0.2.0/24"), "documentation"),
    (_V4("192.88.99.0/24"), "6to4_relay"),
    (_V4("192.168.0.0/16"), "private"),
    (_V4("198.18.0.0/15"), "benchmarking"),
    (_V4("198.51.100.0/24"), "documentation"),
    (_V4("203.0.113.0/24"), "documentation"),
    (_V4("224.0.0.0/4"), "multicast"),
    (_V4("240.0.0.0/4"), "reserved"),  # includes 255.255.255.255
)
_BLOCKED_V6: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (_V6("::/128"), "unspecified"),
    (_V6("::1/128"), "loopback"),
    (_V6("::/96"), "ipv4_compatible"),  # deprecated ::a.b.c.d
    (_V6("64:ff9b:1::/48"), "nat64_local"),
    (_V6("100::/64"), "discard"),
    (_V6("2001::/32"), "teredo"),
    (_V6("2001::/23"), "ietf_protocol"),
    (_V6("2001:db8::/32"), "documentation"),
    (_V6("3fff::/20"), "documentation"),
    (_V6("5f00::/16"), "srv6_sid"),
    (_V6("fc00::/7"), "unique_local"),
    (_V6("fe80::/10"), "link_local"),
    (_V6("fec0::/10"), "site_local"),
    (_V6("ff00::/8"), "multicast"),
)
_NAT64_WELL_KNOWN = _V6("64:ff9b::/96")
_SIXTOFOUR = _V6("2002::/16")
_GLOBAL_UNICAST_V6 = _V6("2000::/3")  # everything else in IPv6 is not public unicast


def blocked_reason(ip: IPAddress) -> str | None:
    """Why connecting to `ip` is refused, or None when it is a public unicast address."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return "scoped_ipv6"
        mapped = ip.ipv4_mapped
        if mapped is not None:  # ::ffff:a.b.c.d is a.b.c.d on a dual-stack socket
            inner = blocked_reason(mapped)
            return f"ipv4_mapped_{inner}" if inner else None
        if ip in _NAT64_WELL_KNOWN:  # 64:ff9b::a.b.c.d reaches a.b.c.d through NAT64
            inner = blocked_reason(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
            return f"nat64_{inner}" if inner else None
        if ip in _SIXTOFOUR and ip.sixtofour is not None:
            inner = blocked_reason(ip.sixtofour)
            if inner:
                return f"6to4_{inner}"
        for net6, name6 in _BLOCKED_V6:
            if ip in net6:
                return name6
        if ip not in _GLOBAL_UNICAST_V6:
            return "not_global_unicast"
    else:
        for net4, name4 in _BLOCKED_V4:
            if ip in net4:
                return name4
    # Catch-alls for anything the tables above missed (future IANA assignments).
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link_local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "not_global"
    return None


_INET_ATON_PART = re.compile(r"^(?:0x[0-9a-f]+|0[0-7]*|[1-9][0-9]*)$")


def _inet_aton_number(part: str) -> int:
    if part.startswith("0x"):
        return int(part, 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8)
    return int(part, 10)


def _parse_inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """Legacy numeric IPv4 forms accepted by C resolvers: 2130706433, 0x7f.1, 0177.0.0.1, 127.1."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_INET_ATON_PART.match(p) for p in parts):
        return None
    values = [_inet_aton_number(p) for p in parts]
    *head, last = values
    if any(v > 0xFF for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = last
    for index, value in enumerate(head):
        number |= value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def normalise_host(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host.rstrip(".") if ":" not in host else host


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a URL host denotes when it is an IP literal in any notation, else None."""
    host = normalise_host(host)
    if not host:
        return None
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host)
        except ValueError:
            return None
    try:
        return ipaddress.IPv4Address(host)
    except ValueError:
        return _parse_inet_aton(host)


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve with the event loop's executor-backed getaddrinfo (never blocks the loop)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    seen: dict[str, None] = {}
    for _family, _type, _proto, _canon, sockaddr in infos:
        seen.setdefault(str(sockaddr[0]), None)
    return list(seen)
