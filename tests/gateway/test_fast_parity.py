"""GW-1, GW-4: what the fast path takes and how it answers stay the SDK path's, for messages a client or an
attacker crafts: cancels the SDK would not act on (or would), ids and names its parser refuses, bodies read as
the SDK's app reads them for their era.

`mcpyard serve` as a real process, over stdio (raw JSON lines) and streamable HTTP (raw bodies); which path
answered an HTTP call is read from `/metrics`.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest

from tests._waiting import eventually
from tests.conftest import Home
from tests.gateway.test_fast_http import answer_of, call, gateway, open_handshake_session
from tests.gateway.test_fast_path import serving

pytestmark = pytest.mark.anyio

CANCEL = "notifications/cancelled"


@pytest.mark.parametrize(
    "cancel",
    [
        {"jsonrpc": "2.0", "method": CANCEL, "params": {"requestId": True}},
        {"jsonrpc": "1.0", "method": CANCEL, "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "id": "asks", "method": CANCEL, "params": {"requestId": 1}},
    ],
    ids=["true-is-no-id", "not-json-rpc-2", "a-request-not-a-notification"],
)
async def test_gw1_a_cancel_the_sdk_would_not_act_on_leaves_a_fast_call_running(
    home: Home, cancel: dict[str, Any]
) -> None:
    async with serving(home) as wire:
        await wire.handshake()
        await wire.call(0, "basic__add", {"a": 1, "b": 1})
        await wire.answer(0)
        await wire.call(1, "basic__slow", {"seconds": 0.2})  # the fast path's (armed by call 0)
        await wire.send(cancel)
        assert "slept" in (await wire.answer(1))["result"]["content"][0]["text"]
        if "id" in cancel:
            await wire.call(2, "basic__echo", {"text": "by the SDK"}, {"progressToken": "t"})
            await wire.answer(2)
            asks = [message for message in wire.seen if message.get("id") == "asks"]
            assert [message["error"]["code"] for message in asks] == [-32601], "answered as the SDK answers it"


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"tools/call","params":{"name":"basic__echo","arguments":{"text":"x"}}}',
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"basic__echo\\udc00","arguments":{"text":"x"}}}',
    ],
    ids=["id", "name"],
)
async def test_gw1_a_call_whose_id_or_name_holds_a_lone_surrogate_is_left_to_the_sdk(home: Home, line: bytes) -> None:
    """The SDK's parser refuses such a line (the client hears nothing); the fast path answered it."""
    async with serving(home) as wire:
        await wire.handshake()
        await wire.call(1, "basic__add", {"a": 1, "b": 1})
        await wire.answer(1)
        await wire.send(line)
        await wire.call(6, "basic__echo", {"text": "after"})
        assert "after" in (await wire.answer(6))["result"]["content"][0]["text"]
        await wire.call(7, "basic__echo", {"text": "by the SDK"}, {"progressToken": "t"})
        await wire.answer(7)
        assert [message.get("id") for message in wire.seen] == ["init", 1, 6, 7]


@pytest.mark.parametrize(
    "arguments",
    ['{"text":"\\ud800"}', '{"text":' + "[" * 300 + "]" * 300 + "}"],
    ids=["lone-surrogate", "deep-nesting"],
)
async def test_gw1_a_handshake_era_body_the_sdks_app_cannot_parse_is_refused_as_it_refuses_it(
    home: Home, arguments: str
) -> None:
    async with gateway(home) as front:
        headers = await open_handshake_session(front)
        answer_of(await front.http.post(front.url, json=call(1, "basic__echo", {"text": "arm"}, None), headers=headers))
        body = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"basic__echo","arguments":%s}}'
        sent = {**headers, "Content-Type": "application/json"}
        refused = await front.http.post(front.url, content=body % arguments, headers=sent)
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == -32700
        assert await front.fast_calls() == 0


async def test_gw4_a_new_era_posted_cancel_never_cancels_a_call_the_sdks_app_would_let_run(home: Home) -> None:
    """The SDK's new-era entry acts on no posted notification: one anonymous caller cannot cancel another's call
    by its id, even with the same headers."""
    started = home.root / "slow-started"
    async with gateway(home, BASIC_SLOW_STARTED=str(started)) as front:
        answer_of(await front.post(1, "basic__echo", {"text": "arm"}))
        slow: list[httpx2.Response] = []

        async def run_slow() -> None:
            slow.append(await front.post(2, "basic__slow", {"seconds": 1}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_slow)
            # The server writes the file once the call sleeps; nothing this process can wait on announces it.
            await eventually(started.exists, within=30, what="the slow call to start")
            cancel = {"jsonrpc": "2.0", "method": CANCEL, "params": {"requestId": 2}}
            routed = {**front.headers, "Mcp-Method": CANCEL, "Mcp-Name": "basic__slow"}
            assert (await front.http.post(front.url, json=cancel, headers=routed)).status_code == 202
        assert "slept 1" in json.dumps(answer_of(slow[0]))
        assert await front.fast_calls() == 1


async def test_gw1_a_handshake_era_call_cancelled_on_the_http_fast_path_is_answered_request_cancelled(
    home: Home,
) -> None:
    started = home.root / "slow-started"
    async with gateway(home, BASIC_SLOW_STARTED=str(started)) as front:
        headers = await open_handshake_session(front)
        answer_of(await front.http.post(front.url, json=call(1, "basic__echo", {"text": "arm"}, None), headers=headers))
        slow: list[httpx2.Response] = []

        async def run_slow() -> None:
            slow.append(
                await front.http.post(front.url, json=call(2, "basic__slow", {"seconds": 60}, None), headers=headers)
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_slow)
            # The server writes the file once the call sleeps; nothing this process can wait on announces it.
            await eventually(started.exists, within=30, what="the slow call to start")
            cancel = {"jsonrpc": "2.0", "method": CANCEL, "params": {"requestId": "2"}}
            acknowledged = await front.http.post(front.url, json=cancel, headers=headers)
            assert acknowledged.status_code == 202
            assert acknowledged.headers["mcp-session-id"] == headers["mcp-session-id"], "as the SDK's app answers"
        assert slow[0].headers["x-accel-buffering"] == "no"
        assert answer_of(slow[0])["error"] == {"code": -32800, "message": "Request cancelled"}, "as the SDK answers"
