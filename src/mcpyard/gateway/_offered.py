"""What a face offers each client, and what each client was last listed: a call binds to the definition its client
read (CAT-2).

A client that listed the tools and then calls one whose definition changed since (its server updated it; the
face told the client, which has not listed them again) is refused once with `tool_changed`, nothing sent, as a
lazy host's listing kept from the last run binds a call; its next call of that tool runs on the definition there
is now. A client that never listed the tools (it named one itself) is bound to nothing: the live definition
decides, and deny rules and pins still apply to it. A client is its handshake-era connection (a stdio client, an
HTTP session) or its new-era stream (a stdio client: each request has a connection of its own, all on one stream);
a new-era HTTP request stands alone, so its calls are bound to nothing.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from mcp.server import ServerRequestContext
from mcp.server.connection import NotifyOnlyOutbound
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpyard import ToolInfo
from mcpyard.gateway._context import connection_of
from mcpyard.pipeline import CallResult

__all__ = ["Listed", "Offer"]


@dataclass(frozen=True, slots=True)
class Offer:
    """The tools offered to one client: each as `ToolInfo`, and under the name the client sees."""

    basis: tuple[object, ...]
    """What it was worked out from (compared by identity, to work it out again only when that changed)."""
    tools: tuple[ToolInfo, ...]
    names: Mapping[str, str]
    """Offered name → the catalog's name."""
    by_catalog: Mapping[str, ToolInfo]
    hashes: Mapping[str, str] = field(init=False)
    """Each listed tool's definition hash, by the catalog's name: what a client listed this offer is bound to (made
    once per offer, and shared by every client listed it)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "hashes", MappingProxyType({tool.name: tool.definition_hash for tool in self.tools}))


class Listed:
    """The definition hash of each tool a client was last listed, by the catalog's name, per client: the hashes of
    the offer it was listed (`Offer.hashes`, shared), and the tools it was told changed since (its own)."""

    def __init__(self) -> None:
        self._by_client: weakref.WeakKeyDictionary[object, _Listing] = weakref.WeakKeyDictionary()

    def note(self, ctx: ServerRequestContext[Any], offer: Offer) -> None:
        """The client of `ctx` was listed `offer`."""
        client = _client(ctx)
        if client is not None:
            self._by_client[client] = _Listing(offer.hashes, set())

    def bound(self, ctx: ServerRequestContext[Any], name: str) -> str | None:
        """The definition of the catalog's tool `name` a call from the client of `ctx` runs on (None: any)."""
        listing = self._listing(ctx)
        return None if listing is None or name in listing.told else listing.hashes.get(name)

    def told(self, ctx: ServerRequestContext[Any], name: str, result: CallResult) -> None:
        """A call of `name` ended with `result`: once refused as changed, the client was told, and is bound no more."""
        if result.error is not None and result.error["code"] == "tool_changed":
            listing = self._listing(ctx)
            if listing is not None:
                listing.told.add(name)

    def _listing(self, ctx: ServerRequestContext[Any]) -> _Listing | None:
        client = _client(ctx)
        return self._by_client.get(client) if client is not None else None


class _Listing(NamedTuple):
    hashes: Mapping[str, str]
    """The hashes of the offer it was listed (shared, never changed)."""
    told: set[str]
    """Tools the client was refused once as changed: no longer bound."""


def _client(ctx: ServerRequestContext[Any]) -> object | None:
    """Who sent the request of `ctx`, for as long as it stays connected; None for a request that stands alone."""
    connection = connection_of(ctx)
    if connection is None:
        return None
    if connection.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return connection
    outbound = connection.outbound  # a new-era stream's requests share its channel; an HTTP request has none
    return outbound if isinstance(outbound, NotifyOnlyOutbound) else None
