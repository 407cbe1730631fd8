"""The outbound guard: which URLs a host may reach, resolved once and checked (NET-1, NET-2).

`parse_remote_url` and `check_answers` are pure: the URL as the HTTP client parses it, then
the addresses its name resolves to. `EgressGuard` holds the policy (development mode, the
resolver, the dialer, the deadline, the response cap); `EgressGuard.check_url` is what a
service calls before it registers a URL, and a host opened with a guard sends every remote
server's HTTP through it (see `_guarded`).
"""

from __future__ import annotations

import ipaddress
import re
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio
import httpx2

from mcpyard.config import shown_url as config_shown_url
from mcpyard.connect._addresses import address_problem, is_loopback
from mcpyard.connect._network import Dialer, Resolver, SystemResolver, TcpDialer
from mcpyard.errors import UrlRefused, UsageError

__all__ = [
    "DEFAULT_DEADLINE_SECS",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "CheckedUrl",
    "EgressGuard",
    "RemoteUrl",
    "check_answers",
    "parse_remote_url",
    "shown_url",
]

DEFAULT_DEADLINE_SECS = 30.0
DEFAULT_MAX_RESPONSE_BYTES = 1_048_576

_METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "metadata.azure.internal",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
        "metadata.platformequinix.com",
    }
)
_PRIVATE_SUFFIXES = ("internal", "intranet", "lan", "home", "corp", "private", "localdomain", "home.arpa", "local")
_RESERVED_SUFFIXES = ("test", "example", "invalid", "onion", "alt")
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
_DEFAULT_PORTS = {"https": 443, "http": 80}


@dataclass(frozen=True, slots=True)
class RemoteUrl:
    """A URL that passed the checks that need no network: the scheme, user info, host and port."""

    url: httpx2.URL
    """The URL as the HTTP client parsed it, its host normalized (lower case, IDNA, no trailing dot)."""
    host: str
    """The host as it is resolved: an IDNA (ASCII) name, or an IP address without brackets."""
    port: int
    literal: bool
    """The host is an IP address: it is checked as it is, not resolved."""

    @property
    def scheme(self) -> str:
        return self.url.scheme


@dataclass(frozen=True, slots=True)
class CheckedUrl:
    """A URL the guard accepts, with the addresses its name resolved to when it was checked."""

    url: str
    """The normalized URL: the one to register and connect to."""
    host: str
    port: int
    addresses: tuple[str, ...]


def shown_url(url: httpx2.URL) -> str:
    """The URL as messages show it: no user info, query or fragment, nor a key in its path (SEC-2)."""
    return config_shown_url(str(url), marked=False)


def parse_remote_url(url: str | httpx2.URL, *, dev: bool = False) -> RemoteUrl:
    """Check a URL without touching the network: `https` (plain `http` only in development mode,
    and then only to this machine, which `check_answers` enforces), no user info, a host that is
    a public-looking DNS name or a canonical IP address that may be reached, a port in range.

    Raises:
        UrlRefused: the URL cannot be reached through the guard; the message says why.
    """
    if isinstance(url, str):
        try:
            url = httpx2.URL(url)
        except httpx2.InvalidURL:
            raise UrlRefused("the URL", "it is not a valid URL") from None
    shown = shown_url(url)
    if url.scheme != "https" and not (dev and url.scheme == "http"):
        words = "plain http" if url.scheme == "http" else f"the scheme {url.scheme or '(none)'!r}"
        raise UrlRefused(shown, f"{words} is not allowed, only https")
    if url.userinfo:
        raise UrlRefused(shown, "it carries a user name or password (send credentials in a header instead)")
    port = url.port if url.port is not None else _DEFAULT_PORTS[url.scheme]
    if not 0 < port < 65536:
        raise UrlRefused(shown, f"port {port} is not a valid port")
    host = url.raw_host.decode("ascii", errors="replace").lower()
    if ":" in host:
        problem = address_problem(host, allow_loopback=dev)
        if problem is not None:
            raise UrlRefused(shown, f"it is {problem}")
        return RemoteUrl(url, host, port, literal=True)
    if host.endswith("."):
        host = host[:-1]
        url = url.copy_with(host=host)
    if not host:
        raise UrlRefused(shown, "it has no host")
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        pass
    else:
        problem = address_problem(host, allow_loopback=dev)
        if problem is not None:
            raise UrlRefused(shown, f"it is {problem}")
        return RemoteUrl(url, host, port, literal=True)
    problem = _name_problem(host, dev=dev)
    if problem is not None:
        raise UrlRefused(shown, problem)
    return RemoteUrl(url, host, port, literal=False)


def _name_problem(host: str, *, dev: bool) -> str | None:
    labels = host.split(".")
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return "its host is not a valid host name"
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        # `getaddrinfo` reads these as IPv4 (127.1, 2130706433, 0x7f.1); `ipaddress` does not.
        return "its host is an IPv4 address in a non-standard form (decimal, octal, hex or shortened)"
    if host in _METADATA_NAMES:
        return "it names a cloud metadata service"
    if host == "localhost" or host.endswith(".localhost"):
        return None if dev else "it names this machine (localhost)"
    for suffix in _PRIVATE_SUFFIXES:
        if host == suffix or host.endswith(f".{suffix}"):
            return f"it names a host on a private or local network (.{suffix})"
    for suffix in _RESERVED_SUFFIXES:
        if host == suffix or host.endswith(f".{suffix}"):
            return f"its name is reserved and not on the public internet (.{suffix})"
    if len(labels) == 1:
        return "its host is a single-label name (local search domains would complete it)"
    return None


def check_answers(target: RemoteUrl, answers: Sequence[str], *, dev: bool = False) -> tuple[str, ...]:
    """The addresses to connect to, if every one the name resolved to may be reached.

    One denied answer refuses the whole name: which answer a connection would use is not ours
    to choose. Plain http (development mode) must resolve to this machine only.

    Raises:
        UrlRefused: no answer, a denied answer, or plain http to another machine.
    """
    shown = shown_url(target.url)
    addresses = tuple(dict.fromkeys(answers))
    if not addresses:
        raise UrlRefused(shown, "its name resolves to no address")
    for address in addresses:
        problem = address_problem(address, allow_loopback=dev)
        if problem is not None:
            subject = "it is" if target.literal else "its name resolves to"
            raise UrlRefused(shown, f"{subject} {problem}")
    if target.scheme == "http" and not all(is_loopback(address) for address in addresses):
        raise UrlRefused(shown, "plain http is allowed only to this machine, in development mode")
    return addresses


@dataclass(frozen=True, slots=True, kw_only=True)
class EgressGuard:
    """The outbound guard: the policy for URLs a host reaches, and the settings of its connections.

    A host opened with `egress=EgressGuard(...)` sends every streamable HTTP and SSE server's
    requests through it: each name is resolved once per connection and checked, connections
    go to the checked addresses (TLS still verifies the name), redirects and responses over
    `max_response_bytes` are refused, and every connection attempt and call ends within
    `deadline_secs`. Websocket servers are refused.

    Attributes:
        dev: development mode: this machine may be reached, over https or plain http.
        resolver: turns names into addresses (default: the system's).
        dialer: opens TCP connections to checked addresses (default: plain TCP).
        verify: the TLS context certificates are verified with (default: the system's roots).
        deadline_secs: the total time one connection attempt, and one call, may take.
        max_response_bytes: the largest response accepted: a JSON body, or one event of an event stream.
    """

    dev: bool = False
    resolver: Resolver = field(default_factory=SystemResolver)
    dialer: Dialer = field(default_factory=TcpDialer)
    verify: ssl.SSLContext | None = None
    deadline_secs: float = DEFAULT_DEADLINE_SECS
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    def __post_init__(self) -> None:
        if not self.deadline_secs > 0:
            raise UsageError(f"deadline_secs must be more than 0, not {self.deadline_secs!r}")
        if self.max_response_bytes < 1:
            raise UsageError(f"max_response_bytes must be at least 1, not {self.max_response_bytes!r}")

    def parse(self, url: str | httpx2.URL) -> RemoteUrl:
        """`parse_remote_url` under this guard's mode (no network).

        Raises:
            UrlRefused: see `parse_remote_url`.
        """
        return parse_remote_url(url, dev=self.dev)

    async def addresses(self, target: RemoteUrl) -> tuple[str, ...]:
        """Resolve `target`'s name once (within the deadline) and check every answer.

        Raises:
            UrlRefused: the name does not resolve (DNS errors fail closed), or an answer is denied.
        """
        if target.literal:
            return check_answers(target, [target.host], dev=self.dev)
        try:
            with anyio.fail_after(self.deadline_secs):
                answers = await self.resolver.resolve(target.host, target.port)
        except TimeoutError:
            raise UrlRefused(
                shown_url(target.url), f"its name did not resolve within {self.deadline_secs:g} s"
            ) from None
        except OSError:
            raise UrlRefused(shown_url(target.url), "its name could not be resolved") from None
        return check_answers(target, answers, dev=self.dev)

    async def check_url(self, url: str) -> CheckedUrl:
        """Check a URL before it is registered: the URL itself, then every address its name resolves to.

        Returns the normalized URL and the addresses it resolved to now; a host opened with this
        guard resolves and checks again on each connection attempt.

        Raises:
            UrlRefused: the URL, or an address it resolves to, may not be reached; the message says why.
        """
        target = self.parse(url)
        addresses = await self.addresses(target)
        return CheckedUrl(str(target.url), target.host, target.port, addresses)
