"""The outbound guard's two seams: a resolver (names to addresses) and a dialer (a TCP connection to one address).

Production uses the system's resolver and a plain TCP connection; tests pass `MemoryResolver`,
which answers from a table and records every question, and their own dialer.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import anyio
import anyio.lowlevel
import httpcore2

__all__ = ["Dialer", "MemoryResolver", "Resolver", "SystemResolver", "TcpDialer"]


class Resolver(Protocol):
    """Turns a host name into the IP addresses to connect to."""

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        """Every address `host` has, as text (a scoped IPv6 address as `fe80::1%eth0`).

        Raises:
            OSError: the name could not be resolved (as `getaddrinfo` does).
        """
        ...


class Dialer(Protocol):
    """Opens a TCP connection to one IP address the guard has checked (never to a name)."""

    async def dial(self, address: str, port: int) -> httpcore2.AsyncNetworkStream:
        """A connected stream to `address:port` (the caller bounds the time it takes).

        Raises:
            httpcore2.ConnectError: the connection was refused or failed.
        """
        ...


class SystemResolver:
    """The operating system's resolver (`getaddrinfo`, in a worker thread)."""

    async def resolve(self, host: str, port: int) -> list[str]:
        answers = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
        addresses: list[str] = []
        for family, _, _, _, sockaddr in answers:
            address = str(sockaddr[0])
            scope: Any = sockaddr[3] if len(sockaddr) >= 4 else 0  # typed as two-tuples, but IPv6 has four
            if family == socket.AF_INET6 and scope:
                address = f"{address}%{scope}"  # a scope the answer carries is kept, so it is refused
            if family in (socket.AF_INET, socket.AF_INET6) and address not in addresses:
                addresses.append(address)
        return addresses


class MemoryResolver:
    """Answers from a table; a name it does not know fails as an unknown name does.

    Each name answers its first answer; `then` queues another for the next question about
    that name (a record that changes between two questions, as in DNS rebinding). The last
    answer queued repeats. Every question is recorded in `queries`, in order.
    """

    def __init__(self, answers: Mapping[str, Sequence[str]] | None = None) -> None:
        self._answers: dict[str, list[tuple[str, ...]]] = {
            name: [tuple(addresses)] for name, addresses in (answers or {}).items()
        }
        self.queries: list[str] = []

    def then(self, name: str, addresses: Sequence[str]) -> MemoryResolver:
        """Answer `addresses` for `name` once the answers before have been given."""
        self._answers.setdefault(name, []).append(tuple(addresses))
        return self

    async def resolve(self, host: str, port: int) -> tuple[str, ...]:
        del port
        await anyio.lowlevel.checkpoint()
        self.queries.append(host)
        answers = self._answers.get(host)
        if not answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers.pop(0) if len(answers) > 1 else answers[0]


class TcpDialer:
    """A plain TCP connection, through anyio (asyncio or trio)."""

    def __init__(self) -> None:
        self._backend = httpcore2.AnyIOBackend()

    async def dial(self, address: str, port: int) -> httpcore2.AsyncNetworkStream:
        return await self._backend.connect_tcp(address, port)
