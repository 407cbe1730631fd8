"""Which IP addresses the outbound guard refuses, and why, in words (NET-1).

A pure function of one address. `ipaddress` alone is not the rule: its `is_private` and
`is_global` change between Python releases, so the ranges are listed here, each with the
words the refusal uses, and `is_global` only catches what the table leaves out.
"""

from __future__ import annotations

import ipaddress
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

__all__ = ["address_problem", "is_loopback"]

IPAddress = IPv4Address | IPv6Address

METADATA = "the address of a cloud metadata service"
_METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle…
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.253",  # AWS VPC DNS
        "169.254.0.23",  # Tencent Cloud
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud
        "168.63.129.16",  # Azure WireServer: a public address every Azure VM reaches
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::253",  # AWS DNS over IPv6
        "fd20:ce::254",  # GCP metadata over IPv6
    )
)

_V4: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(net), words)
    for net, words in (
        ("255.255.255.255/32", "the broadcast address"),
        ("0.0.0.0/8", "an unspecified address (0.0.0.0/8, 'this network')"),
        ("10.0.0.0/8", "a private address"),
        ("100.64.0.0/10", "a carrier-grade NAT address (100.64.0.0/10)"),
        ("127.0.0.0/8", "a loopback address (this machine)"),
        ("169.254.0.0/16", "a link-local address"),
        ("172.16.0.0/12", "a private address"),
        ("192.0.0.0/24", "a reserved address (IETF protocol assignments)"),
        ("192.0.2.0/24", "a documentation address"),
        ("192.88.99.0/24", "a reserved address (the retired 6to4 relay range)"),
        ("192.168.0.0/16", "a private address"),
        ("198.18.0.0/15", "a reserved address (network benchmarking)"),
        ("198.51.100.0/24", "a documentation address"),
        ("203.0.113.0/24", "a documentation address"),
        ("224.0.0.0/4", "a multicast address"),
        ("240.0.0.0/4", "a reserved address (240.0.0.0/4)"),
    )
)

_V6: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(net), words)
    for net, words in (
        ("::/128", "the unspecified address (::)"),
        ("::1/128", "the loopback address (this machine)"),
        ("::ffff:0:0/96", "an IPv4-mapped IPv6 address"),
        ("::/96", "an IPv4-compatible IPv6 address (deprecated)"),
        ("64:ff9b:1::/48", "a local-use NAT64 address"),
        ("100::/64", "a reserved address (discard only)"),
        ("2001::/32", "a Teredo tunnel address"),
        ("2001:db8::/32", "a documentation address"),
        ("3fff::/20", "a documentation address"),
        ("2001::/23", "a reserved address (IETF protocol assignments)"),
        ("fc00::/7", "a unique-local (private) IPv6 address"),
        ("fec0::/10", "a site-local IPv6 address (deprecated)"),
        ("fe80::/10", "a link-local address"),
        ("ff00::/8", "a multicast address"),
    )
)
_NAT64 = IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR = IPv6Network("2002::/16")
_GLOBAL_UNICAST = IPv6Network("2000::/3")
_LOOPBACK_V4 = IPv4Network("127.0.0.0/8")
_LOOPBACK_V6 = IPv6Address("::1")


def address_problem(address: str, *, allow_loopback: bool = False) -> str | None:
    """Why the guard refuses to connect to `address`, or None when it may.

    `address` is an IP address as a resolver answers it (a scoped IPv6 address as
    `fe80::1%eth0`). `allow_loopback` is development mode: this machine may be reached.
    Wrapped forms are judged by what they wrap (NAT64 and 6to4 carry an IPv4 address that
    is checked in turn); IPv4-mapped, IPv4-compatible and Teredo addresses are refused as such.
    """
    if "%" in address:
        return "a scoped IPv6 address (it names a network interface of this machine)"
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return "not an IP address"
    return _problem(parsed, allow_loopback=allow_loopback)


def is_loopback(address: str) -> bool:
    """Whether `address` is this machine (127.0.0.0/8 or ::1)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    return parsed in _LOOPBACK_V4 if isinstance(parsed, IPv4Address) else parsed == _LOOPBACK_V6


def _problem(address: IPAddress, *, allow_loopback: bool) -> str | None:
    if address in _METADATA_ADDRESSES:
        return METADATA
    if isinstance(address, IPv4Address):
        if allow_loopback and address in _LOOPBACK_V4:
            return None
        for network4, words in _V4:
            if address in network4:
                return words
    else:
        if allow_loopback and address == _LOOPBACK_V6:
            return None
        if address in _NAT64 or address in _SIX_TO_FOUR:
            kind = "a NAT64" if address in _NAT64 else "a 6to4"
            inner = IPv4Address(int(address) & 0xFFFFFFFF) if address in _NAT64 else address.sixtofour
            assert inner is not None  # every address in 2002::/16 has one
            wrapped = _problem(inner, allow_loopback=False)
            return f"{kind} address wrapping {wrapped}" if wrapped is not None else None
        for network, words in _V6:
            if address in network:
                return words
        if address not in _GLOBAL_UNICAST:
            return "a reserved IPv6 address (outside the global unicast range 2000::/3)"
    if not address.is_global:
        return "a reserved address (not globally reachable)"
    return None
