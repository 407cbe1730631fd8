"""GW-1, GW-4, OBS-1 over HTTP: tool calls the HTTP front answers on parsed JSON (the fast path) read as the SDK's
answers, and are taken only from a requester like the one whose call the SDK's app accepted.

`mcpyard serve --transport http` as a process, driven with plain HTTP. Which path answered is read from the
gateway's `/metrics` (`mcpyard_fast_calls_total`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest

from mcpyard.secrets import FileSecretStore
from tests._scrape import samples, value
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
TOKEN = "gateway-token-123456"
LOGGED = ["Tool execution started", "Tool processing data", "Tool execution completed"]
"""What `conf__test_tool_with_logging` logs while it runs."""


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


def without_id(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "id"}


class Gateway:
    """A gateway process, its MCP endpoint posted to as a new-era client, and its fast-call count."""

    def __init__(self, http: httpx2.AsyncClient, url: str, token: str | None) -> None:
        self.http = http
        self.url = url
        self.headers = {"Accept": ACCEPT, "MCP-Protocol-Version": MODERN}
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"

    async def post(
        self,
        request_id: Any,
        name: str,
        arguments: dict[str, Any],
        meta: dict[str, Any] | None = MODERN_META,
        headers: dict[str, str] | None = None,
    ) -> httpx2.Response:
        named = {"Mcp-Method": "tools/call", "Mcp-Name": name}
        sent = {**self.headers, **named, **(headers or {})}
        return await self.http.post(self.url, json=call(request_id, name, arguments, meta), headers=sent)

    async def fast_calls(self) -> float:
        scraped = await self.http.get(self.url.removesuffix("/mcp") + "/metrics", headers=self.headers)
        return value(samples(scraped.text), "mcpyard_fast_calls_total")


@asynccontextmanager
async def gateway(home: Home, *, token: str | None = None, **env: str) -> AsyncIterator[Gateway]:
    servers = {"basic": {**fixture_server("basic"), "env": env}, "conf": fixture_server("conformance_server")}
    config = str(home.write_config(servers, mode="auto"))
    extra = ("--token-secret", "GW") if token is not None else ()
    if token is not None:
        FileSecretStore(home.data_home / "secrets.json").set("GW", token)
    async with http_gateway(home, config, "--share-all", *extra) as url, httpx2.AsyncClient(timeout=30) as http:
        yield Gateway(http, url, token)


async def test_gw1_a_call_on_the_http_fast_path_reads_as_on_the_sdk_path(home: Home) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("basic__echo", {"text": "héllo ✓"}),
        ("basic__fail", {}),
        ("basic__tiny_png", {}),
        ("basic__echo", {"text": 7}),
        ("basic__nothing_like_it", {}),
    ]
    async with gateway(home) as front:
        for index, (name, arguments) in enumerate(calls):
            answer_of(await front.post(f"arm-{index}", "basic__echo", {"text": "arm"}))
            with_token = {**MODERN_META, "progressToken": f"p-{index}"}
            counted = await front.fast_calls()
            by_sdk = answer_of(await front.post(f"sdk-{index}", name, arguments, with_token))
            assert await front.fast_calls() == counted, "a call asking for progress is the SDK's"
            fast = await front.post(f"fast-{index}", name, arguments)
            assert await front.fast_calls() == counted + 1, "a repeated call is the fast path's"
            assert fast.headers["content-type"].startswith("application/json")
            assert without_id(answer_of(fast)) == without_id(by_sdk), name


async def test_gw4_the_http_fast_path_takes_only_what_the_sdks_app_would_have_taken_the_same_way(home: Home) -> None:
    async with gateway(home, token=TOKEN) as front:
        answer_of(await front.post(1, "basic__echo", {"text": "arm"}))
        assert await front.fast_calls() == 0, "the first call is the SDK's"
        assert "two" in json.dumps(answer_of(await front.post(2, "basic__echo", {"text": "two"})))
        assert await front.fast_calls() == 1

        wrong_token = await front.post(3, "basic__echo", {"text": "x"}, headers={"Authorization": "Bearer x"})
        assert wrong_token.status_code == 401
        foreign_host = await front.post(4, "basic__echo", {"text": "x"}, headers={"Host": "attacker.example"})
        assert foreign_host.status_code != 200, "a foreign Host is refused as before"
        foreign_origin = await front.post(5, "basic__echo", {"text": "x"}, headers={"Origin": "http://evil.example"})
        assert foreign_origin.status_code != 200, "a foreign Origin is refused as before"
        mismatch = await front.post(6, "basic__echo", {"text": "x"}, headers={"Mcp-Name": "basic__add"})
        assert mismatch.status_code == 400, "a routing header that disagrees with the body is refused as before"
        other_version = await front.post(
            7, "basic__echo", {"text": "x"}, headers={"MCP-Protocol-Version": "1999-01-01"}
        )
        assert other_version.status_code != 200, other_version.text
        asks = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
        answer_of(await front.post(8, "basic__echo", {"text": "asks"}, asks))
        answer_of(await front.post(9, "basic__echo", {"text": "asks"}, asks))
        assert await front.fast_calls() == 1, "none of these was the fast path's"
        logs = {**MODERN_META, "io.modelcontextprotocol/logLevel": "info"}
        answer_of(await front.post(10, "basic__echo", {"text": "logs"}, logs))
        assert await front.fast_calls() == 1, "other metadata: the SDK's app answers first"
        answer_of(await front.post(11, "basic__echo", {"text": "logs"}, logs))
        assert await front.fast_calls() == 2


def stream_of(response: httpx2.Response) -> list[dict[str, Any]]:
    """Every message of an SSE answer, in order."""
    assert response.headers["content-type"].startswith("text/event-stream"), response.text
    return [
        json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()
    ]


async def test_gw1_a_handshake_era_sessions_repeated_calls_take_the_fast_path_with_their_log_messages(
    home: Home,
) -> None:
    async with gateway(home) as front:
        headers = await open_handshake_session(front)
        session = headers["mcp-session-id"]

        async def post(request_id: int, name: str) -> httpx2.Response:
            return await front.http.post(front.url, json=call(request_id, name, {}, None), headers=headers)

        by_sdk = stream_of(await post(1, "conf__test_tool_with_logging"))
        assert await front.fast_calls() == 0
        fast = await post(2, "conf__test_tool_with_logging")
        assert await front.fast_calls() == 1
        by_fast = stream_of(fast)
        assert fast.headers["mcp-session-id"] == session
        logged = [m["params"]["data"] for m in by_fast if m.get("method") == "notifications/message"]
        assert logged == LOGGED, "every message, in order, before the result"
        # Through the SDK's stacks the last message may come after the result (then it is not on the call's stream).
        by_sdk_logged = [m["params"]["data"] for m in by_sdk if m.get("method") == "notifications/message"]
        assert by_sdk_logged == LOGGED[: len(by_sdk_logged)]
        assert without_id(by_fast[-1]) == without_id(by_sdk[-1]), "the result comes last, alike"

        quiet = await post(3, "basic__tiny_png")
        assert quiet.headers["content-type"].startswith("application/json"), "nothing logged: one JSON body"
        assert answer_of(quiet)["result"]["content"][1]["type"] == "image"

        assert (await front.http.delete(front.url, headers=headers)).status_code in (200, 204)
        ended = await post(4, "basic__tiny_png")
        assert ended.status_code == 404, "an ended session is not served by the fast path either"
        assert await front.fast_calls() == 2


async def test_gw1_a_client_that_leaves_during_a_call_on_the_http_fast_path_cancels_it(home: Home) -> None:
    started = home.root / "slow-started"
    async with gateway(home, BASIC_SLOW_STARTED=str(started)) as front:
        answer_of(await front.post(1, "basic__echo", {"text": "arm"}))
        async with anyio.create_task_group() as tg:
            tg.start_soon(front.post, 2, "basic__slow", {"seconds": 60})
            # The server writes the file once the call sleeps; nothing this process can wait on announces it.
            await eventually(started.exists, within=30, what="the slow call to start")
            tg.cancel_scope.cancel()  # the client leaves: its connection closes
        counted = await front.post(3, "basic__cancellations", {"at_least": 1})
        assert "1" in answer_of(counted)["result"]["content"][0]["text"]
        assert await front.fast_calls() == 1, "a call given up is not counted"


async def test_gw1_a_new_era_call_asking_for_log_messages_gets_them_on_the_fast_path_too(home: Home) -> None:
    logs = {**MODERN_META, "io.modelcontextprotocol/logLevel": "info"}
    async with gateway(home) as front:
        by_sdk = stream_of(await front.post(1, "conf__test_tool_with_logging", {}, logs))
        fast = await front.post(2, "conf__test_tool_with_logging", {}, logs)
        assert await front.fast_calls() == 1
        by_fast = stream_of(fast)
        logged = [m["params"]["data"] for m in by_fast if m.get("method") == "notifications/message"]
        assert logged == LOGGED, "every message, in order, before the result"
        # Through the SDK's stacks the last message may come after the result (then it is not on the call's stream).
        by_sdk_logged = [m["params"]["data"] for m in by_sdk if m.get("method") == "notifications/message"]
        assert by_sdk_logged == LOGGED[: len(by_sdk_logged)]
        assert without_id(by_fast[-1]) == without_id(by_sdk[-1])
        answer_of(await front.post(3, "conf__test_tool_with_logging", {}, MODERN_META))
        unasked = await front.post(4, "conf__test_tool_with_logging", {}, MODERN_META)
        assert await front.fast_calls() == 2
        assert unasked.headers["content-type"].startswith("application/json"), "no log messages were asked for"


async def open_handshake_session(front: Gateway) -> dict[str, str]:
    """A handshake-era session's headers, initialized."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    opened = await front.http.post(front.url, json=init, headers={"Accept": ACCEPT})
    headers = {"Accept": ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": HANDSHAKE}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await front.http.post(front.url, json=initialized, headers=headers)).status_code == 202
    return headers


async def test_gw1_a_handshake_era_cancel_reaches_a_call_on_the_http_fast_path(home: Home) -> None:
    started = home.root / "slow-started"
    async with gateway(home, BASIC_SLOW_STARTED=str(started)) as front:
        headers = await open_handshake_session(front)
        arm = await front.http.post(front.url, json=call(1, "basic__echo", {"text": "arm"}, None), headers=headers)
        answer_of(arm)
        async with anyio.create_task_group() as tg:
            slow: list[httpx2.Response] = []

            async def run_slow() -> None:
                body = call(2, "basic__slow", {"seconds": 60}, None)
                slow.append(await front.http.post(front.url, json=body, headers=headers))

            tg.start_soon(run_slow)
            # The server writes the file once the call sleeps; nothing this process can wait on announces it.
            await eventually(started.exists, within=30, what="the slow call to start")
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
            assert (await front.http.post(front.url, json=cancel, headers=headers)).status_code == 202
        counted = await front.http.post(
            front.url, json=call(3, "basic__cancellations", {"at_least": 1}, None), headers=headers
        )
        assert "1" in answer_of(counted)["result"]["content"][0]["text"]
        assert slow[0].status_code == 200
        assert answer_of(slow[0])["error"]["code"] == -32800, "ended as the SDK's app ends a cancelled call's stream"


async def test_gw1_a_request_with_a_header_given_twice_is_the_sdks_to_judge(home: Home) -> None:
    async with gateway(home) as front:
        answer_of(await front.post(1, "basic__echo", {"text": "arm"}))
        assert await front.fast_calls() == 0
        answer_of(await front.post(2, "basic__echo", {"text": "fast"}))
        assert await front.fast_calls() == 1
        named = {"Mcp-Method": "tools/call", "Mcp-Name": "basic__echo"}
        twice = [*front.headers.items(), *named.items(), ("Mcp-Name", "basic__echo")]
        await front.http.post(front.url, json=call(3, "basic__echo", {"text": "x"}, MODERN_META), headers=twice)
        assert await front.fast_calls() == 1


@pytest.mark.long
async def test_gw1_a_long_call_on_the_http_fast_path_is_kept_alive_with_pings(home: Home) -> None:
    async with gateway(home) as front:
        answer_of(await front.post(1, "basic__echo", {"text": "arm"}))
        slow = await front.post(2, "basic__slow", {"seconds": 16})  # past the 15 s between pings
        assert slow.headers["content-type"].startswith("text/event-stream")
        assert ": ping" in slow.text
        assert "slept 16" in json.dumps(stream_of(slow)[-1])
        assert await front.fast_calls() == 1
