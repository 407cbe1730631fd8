"""Resource subscriptions through `mcpyard serve` (GW-1: resources pass through, updates included).

Both eras on both sides: handshake-era clients use `resources/subscribe`, new-era clients
`subscriptions/listen`; the fixture `watched.py` is a new-era server, npm's server-everything
a handshake-era one.
"""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import ResourceUpdated

from mcpyard import Host
from tests._waiting import eventually
from tests.conftest import Home, fixture_server
from tests.gateway.test_relay import everything_entry
from tests.gateway.test_serve import in_process_gateway, serve_params, text_of

pytestmark = pytest.mark.anyio

A = "test://watched/a"
B = "test://watched/b"
WATCHED = {"w": fixture_server("watched")}


async def subscribe(client: Client, uri: str, *, unsubscribe: bool = False) -> None:
    """`resources/(un)subscribe`, which the SDK marks deprecated: they are the handshake era's way."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        if unsubscribe:
            await client.unsubscribe_resource(uri)
        else:
            await client.subscribe_resource(uri)


class Updates:
    """A message handler that keeps the URIs of `notifications/resources/updated`."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self._arrived = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(str(message.params.uri))
            self._arrived.set()
            self._arrived = anyio.Event()

    async def wait_for(self, uri: str, seconds: float = 15) -> None:
        with anyio.fail_after(seconds):
            while uri not in self.uris:
                await self._arrived.wait()


async def test_a_handshake_era_client_hears_updates_of_what_it_subscribed_to(home: Home) -> None:
    config = str(home.write_config({"w": fixture_server("watched")}, mode="auto"))
    updates = Updates()
    async with Client(serve_params(home, config, "--share-all"), mode="legacy", message_handler=updates) as client:
        assert client.server_capabilities.resources is not None
        assert client.server_capabilities.resources.subscribe
        await subscribe(client, A)
        assert not (await client.call_tool("w__touch", {"uri": B})).is_error
        touched = await client.call_tool("w__touch", {"uri": A})
        assert not touched.is_error, text_of(touched)
        await updates.wait_for(A)
        assert B not in updates.uris, "only subscribed resources are announced"
        await subscribe(client, B)
        await subscribe(client, A, unsubscribe=True)
        updates.uris.clear()
        await client.call_tool("w__touch", {"uri": A})
        await client.call_tool("w__touch", {"uri": B})
        await updates.wait_for(B)  # updates come in order: one for A would have come first
        assert updates.uris == [B], f"no updates after unsubscribing: {updates.uris}"


async def test_a_new_era_client_hears_updates_on_its_listen_stream(home: Home) -> None:
    config = str(home.write_config({"w": fixture_server("watched")}, mode="auto"))
    async with Client(serve_params(home, config, "--share-all")) as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(resource_subscriptions=[A]) as subscription:
            assert not (await client.call_tool("w__touch", {"uri": A})).is_error
            with anyio.fail_after(15):
                event = await anext(aiter(subscription))
            assert event == ResourceUpdated(uri=A)


async def test_subscribing_to_a_resource_no_shared_server_lists_is_refused(home: Home) -> None:
    config = str(home.write_config({"w": fixture_server("watched")}, mode="auto"))
    async with Client(serve_params(home, config), mode="legacy") as client:
        with pytest.raises(MCPError, match="no shared resource"):
            await subscribe(client, A)
        with pytest.raises(MCPError, match="no shared resource"):
            await subscribe(client, "test://nowhere")


@pytest.mark.interop
async def test_updates_of_a_handshake_era_server_reach_the_client(home: Home) -> None:
    config = str(home.write_config({"ev": everything_entry()}, mode="auto"))
    updates = Updates()
    async with Client(serve_params(home, config, "--share-all"), mode="legacy", message_handler=updates) as client:
        uri = str((await client.list_resources()).resources[0].uri)
        await subscribe(client, uri)
        toggled = await client.call_tool("ev__toggle-subscriber-updates", {})
        assert not toggled.is_error, text_of(toggled)
        await updates.wait_for(uri)


def watched_at_server(host: Host) -> frozenset[str]:
    server = host.server("w")
    return server.watched if server is not None else frozenset()


async def settle(host: Host, expected: frozenset[str]) -> None:
    # What a server watches announces no change (no host event, no notification): checked again.
    await eventually(lambda: watched_at_server(host) == expected, within=10, what=f"the server watches {expected}")


async def test_a_client_that_leaves_without_unsubscribing_stops_the_watch(home: Home) -> None:
    async with in_process_gateway(home, WATCHED) as (host, gateway):
        async with Client(gateway.server, mode="legacy") as first, Client(gateway.server, mode="legacy") as second:
            await subscribe(first, A)
            await subscribe(second, A)
            await subscribe(second, A)  # twice is once
            assert watched_at_server(host) == {A}
            await subscribe(first, A, unsubscribe=True)
            assert watched_at_server(host) == {A}, "the other client still watches it"
        await settle(host, frozenset())


async def test_a_listen_stream_watches_its_resources_while_it_is_open(home: Home) -> None:
    async with in_process_gateway(home, WATCHED) as (host, gateway), Client(gateway.server) as client:
        async with client.listen(resource_subscriptions=[A, B, "test://nowhere"]):
            assert watched_at_server(host) == {A, B}
        await settle(host, frozenset())
        with pytest.raises(MCPError, match="at most"):
            async with client.listen(resource_subscriptions=[f"test://r/{i}" for i in range(300)]):
                pass
