"""GW-1, GW-4 over HTTP: tool calls the HTTP front answers on parsed JSON (the fast path) read as the SDK's answers,
and are taken only from the requester whose call the SDK's app accepted.

`mcpyard serve --transport http` as a process, driven with plain HTTP. In the handshake era the SDK's app answers a
call on an SSE stream and the fast path with one JSON body, so the content type tells which path answered.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest

from tests._waiting import eventually
from tests.conftest import Home, fixture_server
from tests.gateway.test_serve import http_gateway

pytestmark = pytest.mark.anyio

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
}


def call(request_id: Any, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def answer_of(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC response in a JSON body or on an SSE stream."""
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("application/json"):
        found: dict[str, Any] = response.json()
        return found
    for line in response.text.splitlines():
        if line.startswith("data:") and '"id"' in line:
            message: dict[str, Any] = json.loads(line[5:])
            if "method" not in message:
                return message
    raise AssertionError(f"no response on the stream: {response.text[:500]}")


class Session:
    """One handshake-era session with the gateway."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.headers = {"Accept": ACCEPT}

    async def open(self) -> Session:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
        opened = await self.http.post(self.url, json=init, headers=self.headers)
        answer_of(opened)
        self.headers = {**self.headers, "mcp-session-id": opened.headers["mcp-session-id"]}
        self.headers["MCP-Protocol-Version"] = HANDSHAKE
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.http.post(self.url, json=initialized, headers=self.headers)).status_code == 202
        return self

    async def post(self, message: dict[str, Any], **headers: str) -> httpx2.Response:
        return await self.http.post(self.url, json=message, headers={**self.headers, **headers})


def without_id(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "id"}


@pytest.mark.parametrize("era", [HANDSHAKE, MODERN])
async def test_gw1_a_call_on_the_http_fast_path_reads_as_on_the_sdk_path(home: Home, era: str) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    async with http_gateway(home, config, "--share-all") as url, httpx2.AsyncClient(timeout=30) as http:
        session = Session(http, url)
        meta: dict[str, Any] | None = None
        if era == HANDSHAKE:
            await session.open()
        else:
            session.headers["MCP-Protocol-Version"] = MODERN
            meta = MODERN_META
        calls: list[tuple[str, dict[str, Any]]] = [
            ("basic__echo", {"text": "héllo ✓"}),
            ("basic__fail", {}),
            ("basic__tiny_png", {}),
            ("basic__echo", {"text": 7}),
            ("basic__nothing_like_it", {}),
        ]
        for index, (name, arguments) in enumerate(calls):
            # The new era names the method and the tool in headers too.
            named = {"Mcp-Method": "tools/call", "Mcp-Name": name} if era == MODERN else {}
            arm = {"Mcp-Method": "tools/call", "Mcp-Name": "basic__echo"} if era == MODERN else {}
            answer_of(await session.post(call(f"arm-{index}", "basic__echo", {"text": "arm"}, meta), **arm))
            with_token = {**(meta or {}), "progressToken": f"p-{index}"}
            by_sdk = answer_of(await session.post(call(f"sdk-{index}", name, arguments, with_token), **named))
            fast = await session.post(call(f"fast-{index}", name, arguments, meta), **named)
            assert fast.headers["content-type"].startswith("application/json")
            assert without_id(answer_of(fast)) == without_id(by_sdk), name


async def test_gw4_the_http_fast_path_takes_calls_only_from_the_session_that_armed_it_and_never_after_it_ends(
    home: Home,
) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    async with http_gateway(home, config, "--share-all") as url, httpx2.AsyncClient(timeout=30) as http:
        first = await Session(http, url).open()
        armed = await first.post(call(1, "basic__echo", {"text": "one"}, None))
        assert armed.headers["content-type"].startswith("text/event-stream"), "the SDK's app answered the first"
        fast = await first.post(call(2, "basic__echo", {"text": "two"}, None))
        assert fast.headers["content-type"].startswith("application/json"), "the fast path answered the second"
        assert "two" in answer_of(fast)["result"]["content"][0]["text"]

        second = await Session(http, url).open()
        other = await second.post(call(1, "basic__echo", {"text": "other"}, None))
        assert other.headers["content-type"].startswith("text/event-stream"), "another session's first is the SDK's"

        rebound = await first.post(call(3, "basic__echo", {"text": "x"}, None), Host="attacker.example")
        assert rebound.status_code != 200, "a foreign Host is refused as before"

        assert (await http.delete(url, headers=first.headers)).status_code in (200, 204)
        after = await first.post(call(4, "basic__echo", {"text": "after"}, None))
        assert after.status_code == 404, after.text
        forged = await first.post(call(5, "basic__echo", {"text": "y"}, None), **{"mcp-session-id": "not-a-session"})
        assert forged.status_code in (400, 404), forged.text


async def test_gw1_a_client_that_leaves_during_a_call_on_the_http_fast_path_cancels_it(home: Home) -> None:
    started = home.root / "slow-started"
    entry = {**fixture_server("basic"), "env": {"BASIC_SLOW_STARTED": str(started)}}
    config = str(home.write_config({"basic": entry}))
    async with http_gateway(home, config, "--share-all") as url, httpx2.AsyncClient(timeout=30) as http:
        session = await Session(http, url).open()
        answer_of(await session.post(call(1, "basic__echo", {"text": "arm"}, None)))
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.post, call(2, "basic__slow", {"seconds": 60}, None))
            # The server writes the file once the call sleeps; nothing this process can wait on announces it.
            await eventually(started.exists, within=30, what="the slow call to start")
            tg.cancel_scope.cancel()  # the client leaves: its connection closes
        async with httpx2.AsyncClient(timeout=30) as fresh:
            session.http = fresh
            counted = await session.post(call(3, "basic__cancellations", {"at_least": 1}, None))
        assert "1" in answer_of(counted)["result"]["content"][0]["text"]
