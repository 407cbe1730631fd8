"""The outbound guard's URL check: which URLs and resolved addresses it refuses, and how it says so (NET-1).

The resolver here is the in-memory one: each name answers what the table says, and a name it
does not know fails as an unknown name does. The policy is the production one (`dev` only where
a row says so).
"""

from __future__ import annotations

import socket
from collections.abc import Sequence

import anyio
import pytest

from mcpyard.connect import EgressGuard, MemoryResolver, address_problem, parse_remote_url
from mcpyard.errors import CallError, UrlRefused, UsageError

pytestmark = pytest.mark.anyio

PUBLIC_V4 = "93.184.215.14"
PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c"

ANSWERS = {
    "mcp.example.com": [PUBLIC_V4],
    "v6.example.com": [PUBLIC_V6],
    "both.example.com": [PUBLIC_V4, PUBLIC_V6],
    "xn--bcher-kva.example.com": [PUBLIC_V4],
    "private.example.com": ["10.1.2.3"],
    "home.example.com": ["192.168.1.10"],
    "mixed.example.com": [PUBLIC_V4, "172.20.0.5"],
    "loop.example.com": ["127.0.0.1"],
    "loop6.example.com": ["::1"],
    "meta.example.com": ["169.254.169.254"],
    "alibaba.example.com": ["100.100.100.200"],
    "cgnat.example.com": ["100.64.1.1"],
    "link.example.com": ["169.254.10.10"],
    "mapped.example.com": ["::ffff:127.0.0.1"],
    "mappedpublic.example.com": [f"::ffff:{PUBLIC_V4}"],
    "nat64.example.com": ["64:ff9b::a9fe:a9fe"],
    "dns64.example.com": ["64:ff9b::5db8:d70e"],
    "sixtofour.example.com": ["2002:a00:1::1"],
    "teredo.example.com": ["2001:0:4136:e378:8000:63bf:3fff:fdd2"],
    "ula.example.com": ["fd12:3456::1"],
    "awsv6.example.com": ["fd00:ec2::254"],
    "site.example.com": ["fec0::1"],
    "zone.example.com": ["fe80::1%2"],
    "multicast.example.com": ["239.1.2.3"],
    "doc.example.com": ["198.51.100.7"],
    "bench.example.com": ["198.18.0.1"],
    "reserved.example.com": ["240.0.0.1"],
    "broadcast.example.com": ["255.255.255.255"],
    "zero.example.com": ["0.0.0.0"],
    "empty.example.com": [],
    "localhost": ["127.0.0.1", "::1"],
}

OK = ""
"""The URL is accepted."""

# (url, development mode, what the refusal says: a piece of its reason, or OK)
TABLE: list[tuple[str, bool, str]] = [
    # Accepted: public names and addresses over https.
    ("https://mcp.example.com/mcp", False, OK),
    ("HTTPS://MCP.Example.COM/mcp", False, OK),
    ("https://mcp.example.com./mcp", False, OK),
    ("https://mcp.example.com:8443/mcp", False, OK),
    ("https://v6.example.com/mcp", False, OK),
    ("https://both.example.com/mcp", False, OK),
    ("https://bücher.example.com/mcp", False, OK),
    ("https://dns64.example.com/mcp", False, OK),
    (f"https://{PUBLIC_V4}/mcp", False, OK),
    (f"https://[{PUBLIC_V6}]/mcp", False, OK),
    ("https://mcp.example.com/mcp?token=abc", False, OK),
    # Schemes.
    ("http://mcp.example.com/mcp", False, "plain http is not allowed"),
    ("ftp://mcp.example.com/", False, "the scheme 'ftp'"),
    ("file:///etc/passwd", False, "the scheme 'file'"),
    ("wss://mcp.example.com/ws", False, "the scheme 'wss'"),
    ("gopher://mcp.example.com:70/", False, "the scheme 'gopher'"),
    ("//mcp.example.com/mcp", False, "the scheme '(none)'"),
    # User info.
    ("https://user:secret@mcp.example.com/mcp", False, "user name or password"),
    ("https://user@mcp.example.com/mcp", False, "user name or password"),
    ("https://mcp.example.com\\@evil.example.com/", False, "user name or password"),
    # Hosts that are not hosts.
    ("https:///mcp", False, "no host"),
    ("https://:443/mcp", False, "no host"),
    ("https://exa mple.com/", False, "not a valid host name"),
    ("https://ex%41mple.com/", False, "not a valid host name"),
    ("https://a..b.example.com/", False, "not a valid host name"),
    ("https://ＥＸＡＭＰＬＥ.com/", False, "not a valid URL"),
    ("not a url at all", False, "the scheme '(none)'"),
    # Ports.
    ("https://mcp.example.com:0/", False, "port 0"),
    ("https://mcp.example.com:65536/", False, "port 65536"),
    ("https://[::1]:99999/", False, "port 99999"),
    # IPv4 forms `getaddrinfo` reads as loopback but `ipaddress` does not.
    ("http://2130706433/", True, "non-standard form"),
    ("https://2130706433/", False, "non-standard form"),
    ("https://0177.0.0.1/", False, "not a valid URL"),
    ("https://0x7f.0.0.1/", False, "non-standard form"),
    ("https://127.1/", False, "non-standard form"),
    ("https://0/", False, "non-standard form"),
    ("https://1.2.3.4.5/", False, "non-standard form"),
    # IP literals.
    ("https://127.0.0.1/", False, "loopback"),
    ("https://[::1]/", False, "loopback"),
    ("https://0.0.0.0/", False, "unspecified"),
    ("https://[::]/", False, "unspecified"),
    ("https://10.0.0.1/", False, "private"),
    ("https://192.168.1.1/", False, "private"),
    ("https://172.31.255.255/", False, "private"),
    ("https://100.64.0.1/", False, "carrier-grade NAT"),
    ("https://169.254.1.1/", False, "link-local"),
    ("https://224.0.0.1/", False, "multicast"),
    ("https://255.255.255.255/", False, "broadcast"),
    ("https://192.0.2.1/", False, "documentation"),
    ("https://[2001:db8::1]/", False, "documentation"),
    ("https://[fe80::1%25eth0]/", False, "scoped IPv6"),
    ("https://[fe80::1]/", False, "link-local"),
    ("https://[fc00::1]/", False, "unique-local"),
    ("https://[fec0::1]/", False, "site-local"),
    ("https://[ff02::1]/", False, "multicast"),
    ("https://[::ffff:127.0.0.1]/", False, "IPv4-mapped"),
    ("https://[::ffff:8.8.8.8]/", False, "IPv4-mapped"),
    ("https://[::127.0.0.1]/", False, "IPv4-compatible"),
    ("https://[64:ff9b::7f00:1]/", False, "NAT64 address wrapping a loopback"),
    ("https://[64:ff9b::a9fe:a9fe]/", False, "NAT64 address wrapping the address of a cloud metadata"),
    ("https://[2002:7f00:1::1]/", False, "6to4 address wrapping a loopback"),
    ("https://[2002:c0a8:101::1]/", False, "6to4 address wrapping a private"),
    ("https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", False, "Teredo"),
    ("https://[4000::1]/", False, "outside the global unicast range"),
    # Cloud metadata, by address and by name.
    ("https://169.254.169.254/latest/meta-data/", False, "cloud metadata"),
    ("https://100.100.100.200/latest/meta-data/", False, "cloud metadata"),
    ("https://192.0.0.192/opc/v2/", False, "cloud metadata"),
    ("https://168.63.129.16/", False, "cloud metadata"),
    ("https://[fd00:ec2::254]/latest/meta-data/", False, "cloud metadata"),
    ("https://metadata.google.internal/computeMetadata/v1/", False, "cloud metadata"),
    ("https://METADATA.GOOGLE.INTERNAL./computeMetadata/v1/", False, "cloud metadata"),
    ("https://metadata/computeMetadata/v1/", False, "cloud metadata"),
    ("https://metadata.azure.com/metadata/instance", False, "cloud metadata"),
    ("https://instance-data.ec2.internal/", False, "cloud metadata"),
    # Names for local networks.
    ("https://localhost/mcp", False, "this machine (localhost)"),
    ("https://api.localhost/mcp", False, "this machine (localhost)"),
    ("https://printer.local/", False, "(.local)"),
    ("https://db.internal/", False, "(.internal)"),
    ("https://nas.home.arpa/", False, "(.home.arpa)"),
    ("https://mcp.test/", False, "reserved"),
    ("https://wiki/", False, "single-label"),
    # Names whose answers are denied: one denied answer refuses the name.
    ("https://private.example.com/mcp", False, "its name resolves to a private address"),
    ("https://home.example.com/mcp", False, "its name resolves to a private address"),
    ("https://mixed.example.com/mcp", False, "its name resolves to a private address"),
    ("https://loop.example.com/mcp", False, "its name resolves to a loopback"),
    ("https://loop6.example.com/mcp", False, "its name resolves to the loopback"),
    ("https://meta.example.com/mcp", False, "its name resolves to the address of a cloud metadata"),
    ("https://alibaba.example.com/mcp", False, "cloud metadata"),
    ("https://cgnat.example.com/mcp", False, "carrier-grade NAT"),
    ("https://link.example.com/mcp", False, "link-local"),
    ("https://mapped.example.com/mcp", False, "IPv4-mapped"),
    ("https://mappedpublic.example.com/mcp", False, "IPv4-mapped"),
    ("https://nat64.example.com/mcp", False, "NAT64 address wrapping"),
    ("https://sixtofour.example.com/mcp", False, "6to4 address wrapping a private"),
    ("https://teredo.example.com/mcp", False, "Teredo"),
    ("https://ula.example.com/mcp", False, "unique-local"),
    ("https://awsv6.example.com/mcp", False, "cloud metadata"),
    ("https://site.example.com/mcp", False, "site-local"),
    ("https://zone.example.com/mcp", False, "scoped IPv6"),
    ("https://multicast.example.com/mcp", False, "multicast"),
    ("https://doc.example.com/mcp", False, "documentation"),
    ("https://bench.example.com/mcp", False, "benchmarking"),
    ("https://reserved.example.com/mcp", False, "reserved"),
    ("https://broadcast.example.com/mcp", False, "broadcast"),
    ("https://zero.example.com/mcp", False, "unspecified"),
    ("https://empty.example.com/mcp", False, "resolves to no address"),
    ("https://unknown.example.com/mcp", False, "could not be resolved"),
    # Development mode: this machine, over https or plain http; nothing else changes.
    ("http://127.0.0.1:8000/mcp", True, OK),
    ("http://[::1]:8000/mcp", True, OK),
    ("http://localhost:8000/mcp", True, OK),
    ("https://127.0.0.1:8443/mcp", True, OK),
    ("https://loop.example.com/mcp", True, OK),
    ("http://loop.example.com/mcp", True, OK),
    ("http://mcp.example.com/mcp", True, "plain http is allowed only to this machine"),
    ("http://10.0.0.1/mcp", True, "private"),
    ("https://169.254.169.254/", True, "cloud metadata"),
    ("http://[::ffff:127.0.0.1]/", True, "IPv4-mapped"),
    ("http://[64:ff9b::7f00:1]/", True, "NAT64 address wrapping a loopback"),
    ("http://127.0.0.1:8000/mcp", False, "plain http is not allowed"),
    ("https://127.0.0.1:8443/mcp", False, "loopback"),
]


def guard(*, dev: bool = False, answers: dict[str, Sequence[str]] | None = None) -> EgressGuard:
    return EgressGuard(dev=dev, resolver=MemoryResolver(answers if answers is not None else ANSWERS))


def test_the_table_is_large_and_its_urls_are_distinct() -> None:
    assert len(TABLE) >= 40
    assert len({(url, dev) for url, dev, _ in TABLE}) == len(TABLE)


@pytest.mark.parametrize(("url", "dev", "expected"), TABLE)
async def test_net1_url_verdicts(url: str, dev: bool, expected: str) -> None:
    """NET-1: each URL is accepted or refused, for the reason given, as the HTTP client parses it."""
    if expected == OK:
        checked = await guard(dev=dev).check_url(url)
        assert checked.addresses
        return
    with pytest.raises(UrlRefused) as refused:
        await guard(dev=dev).check_url(url)
    assert refused.value.code == "url_refused"
    assert expected in refused.value.reason
    # One message for every reason: the URL as shown, that it is refused, and why.
    assert refused.value.message.startswith(f"{refused.value.url} is refused: {refused.value.reason}")
    assert "secret" not in refused.value.message


async def test_net1_the_check_returns_the_normalized_url_and_the_addresses_checked() -> None:
    """NET-1: case, a trailing dot and IDNA are normalized once; the answers come back in order, once each."""
    checked = await guard().check_url("HTTPS://Bücher.Example.COM.:8443/mcp?x=1")
    assert checked.url == "https://xn--bcher-kva.example.com:8443/mcp?x=1"
    assert checked.host == "xn--bcher-kva.example.com"
    assert checked.port == 8443
    assert checked.addresses == (PUBLIC_V4,)
    both = await guard(answers={"both.example.com": [PUBLIC_V4, PUBLIC_V6, PUBLIC_V4]}).check_url(
        "https://both.example.com/"
    )
    assert both.addresses == (PUBLIC_V4, PUBLIC_V6)


async def test_net1_an_ip_literal_is_checked_as_it_is_without_asking_the_resolver() -> None:
    resolver = MemoryResolver()
    checked = await EgressGuard(resolver=resolver).check_url(f"https://[{PUBLIC_V6}]:8443/mcp")
    assert checked.addresses == (PUBLIC_V6,)
    assert resolver.queries == []


async def test_net1_the_resolver_is_asked_the_normalized_name_once() -> None:
    resolver = MemoryResolver(ANSWERS)
    await EgressGuard(resolver=resolver).check_url("https://MCP.example.com./mcp")
    assert resolver.queries == ["mcp.example.com"]


async def test_net1_a_refusal_never_shows_user_info_or_the_query() -> None:
    with pytest.raises(UrlRefused) as refused:
        await guard().check_url("https://alice:hunter2@private.example.com/mcp?token=s3cr3t#frag")
    assert "hunter2" not in refused.value.message
    assert "alice" not in refused.value.message
    assert "s3cr3t" not in refused.value.message
    assert refused.value.url == "https://private.example.com/mcp"
    with pytest.raises(UrlRefused) as private:
        await guard().check_url("https://private.example.com/mcp?token=s3cr3t")
    assert "s3cr3t" not in private.value.message
    assert "10.1.2.3" not in private.value.message  # an internal address is not told back


class _FailingResolver:
    def __init__(self, error: OSError) -> None:
        self.error = error

    async def resolve(self, host: str, port: int) -> list[str]:
        raise self.error


class _SilentResolver:
    async def resolve(self, host: str, port: int) -> list[str]:
        await anyio.Event().wait()
        raise AssertionError("never answers")


@pytest.mark.parametrize(
    "error",
    [
        socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"),
        socket.gaierror(socket.EAI_FAIL, "Non-recoverable failure in name resolution"),
        OSError("network is unreachable"),
    ],
)
async def test_net1_dns_errors_fail_closed(error: OSError) -> None:
    with pytest.raises(UrlRefused) as refused:
        await EgressGuard(resolver=_FailingResolver(error)).check_url("https://mcp.example.com/mcp")
    assert "could not be resolved" in refused.value.reason


async def test_net2_a_resolver_that_never_answers_is_given_up_on_within_the_deadline() -> None:
    with anyio.fail_after(10), pytest.raises(UrlRefused) as refused:
        await EgressGuard(resolver=_SilentResolver(), deadline_secs=0.2).check_url("https://mcp.example.com/")
    assert "did not resolve within 0.2 s" in refused.value.reason


def test_net1_the_pure_check_needs_no_network() -> None:
    target = parse_remote_url("https://Mcp.Example.com./mcp")
    assert (target.host, target.port, target.literal, str(target.url)) == (
        "mcp.example.com",
        443,
        False,
        "https://mcp.example.com/mcp",
    )
    with pytest.raises(UrlRefused):
        parse_remote_url("https://169.254.169.254/")


@pytest.mark.parametrize(
    ("address", "dev", "words"),
    [
        (PUBLIC_V4, False, None),
        (PUBLIC_V6, False, None),
        ("8.8.8.8", False, None),
        ("64:ff9b::808:808", False, None),
        ("2002:808:808::1", False, None),
        ("127.0.0.53", False, "loopback"),
        ("127.0.0.53", True, None),
        ("::1", True, None),
        ("::ffff:127.0.0.1", True, "IPv4-mapped"),
        ("169.254.169.254", True, "cloud metadata"),
        ("not-an-address", False, "not an IP address"),
    ],
)
def test_net1_address_verdicts(address: str, dev: bool, words: str | None) -> None:
    problem = address_problem(address, allow_loopback=dev)
    if words is None:
        assert problem is None
    else:
        assert problem is not None
        assert words in problem


@pytest.mark.parametrize(
    ("field", "value"), [("deadline_secs", 0.0), ("deadline_secs", -1.0), ("max_response_bytes", 0)]
)
def test_a_guard_with_a_bad_limit_is_a_usage_error(field: str, value: float) -> None:
    with pytest.raises(UsageError):
        EgressGuard(**{field: value})  # type: ignore[arg-type]  # each field takes a number


def test_a_refusal_is_a_call_error_with_a_stable_code() -> None:
    assert issubclass(UrlRefused, CallError)
    assert UrlRefused("https://x.example.com/", "why").code == "url_refused"


async def test_net1_the_system_resolver_answers_localhost_with_this_machine_only() -> None:
    """NET-1: the production resolver: `localhost` resolves (from the hosts file) to loopback addresses only."""
    with anyio.fail_after(10):
        checked = await EgressGuard(dev=True).check_url("http://localhost:8000/mcp")
    assert checked.addresses
    assert all(address.startswith("127.") or address == "::1" for address in checked.addresses)
    with pytest.raises(UrlRefused, match="this machine"):
        await EgressGuard().check_url("https://localhost/mcp")
