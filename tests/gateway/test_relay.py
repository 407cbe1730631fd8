"""Sampling and elicitation requests of downstream servers, relayed to the client whose call it is.

Through `mcpyard serve` (GW-1: the gateway is not tools-only) and through `Host.call(on_input=...)`;
what is relayed is redacted (SEC-3) and a call's clock waits while a person answers (CALL-2).
The conformance fixture asks in the new era's way (an input-required result, answered inside
the call); npm's server-everything asks in the handshake era's way (a request of its own, related
to no call), which mcpyard sends on only when every call in flight comes from one client.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Mapping
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.shared.exceptions import MCPError

from mcpyard import InputRelay
from mcpyard.connect import MAX_OPEN_QUESTIONS
from tests.conftest import Home, fixture_server
from tests.gateway.test_serve import (
    cancellations_reach,
    give_up_on_a_running_call,
    in_process_gateway,
    serve_params,
    text_of,
)
from tests.interop.conftest import TOOLS

pytestmark = pytest.mark.anyio

SECRET = "relay-secret-9f2c41d7"


async def answer_sampling(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    del context
    asked = params.messages[0].content
    text = asked.text if isinstance(asked, types.TextContent) else "?"
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"answer to {text}"), model="test-model"
    )


async def answer_elicitation(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    del context, params
    return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.org"})


async def test_gateway_relays_sampling_and_elicitation_to_a_handshake_era_client(home: Home) -> None:
    config = str(home.write_config({"conf": fixture_server("conformance_server")}, mode="auto"))
    async with Client(
        serve_params(home, config, "--share-all"),
        mode="legacy",
        sampling_callback=answer_sampling,
        elicitation_callback=answer_elicitation,
    ) as client:
        sampled = await client.call_tool("conf__test_sampling", {"prompt": "what is 2+2?"})
        assert not sampled.is_error, text_of(sampled)
        assert "LLM response: answer to what is 2+2?" in text_of(sampled)
        elicited = await client.call_tool("conf__test_elicitation", {"message": "who are you?"})
        assert not elicited.is_error, text_of(elicited)
        assert '"username": "ada"' in text_of(elicited)


@pytest.mark.long
async def test_gateway_tells_the_server_when_its_client_cannot_answer(home: Home) -> None:
    config = str(home.write_config({"conf": fixture_server("conformance_server")}, mode="auto"))
    async with Client(serve_params(home, config, "--share-all"), mode="legacy") as client:
        result = await client.call_tool("conf__test_sampling", {"prompt": "hello"})
        assert result.is_error
        assert "does not support sampling/createMessage" in text_of(result)
    async with Client(serve_params(home, config, "--share-all"), elicitation_callback=answer_elicitation) as modern:
        assert modern.protocol_version == "2026-07-28"
        result = await modern.call_tool("conf__test_sampling", {"prompt": "hello"})
        assert result.is_error
        assert "does not support sampling/createMessage" in text_of(result)
    async with Client(serve_params(home, config, "--share-all")) as bare:
        result = await bare.call_tool("conf__test_sampling", {"prompt": "hello"})
        assert result.is_error
        assert "does not take such requests" in text_of(result)


async def test_gateway_relays_to_a_new_era_client_through_input_required_results(home: Home) -> None:
    config = str(home.write_config({"conf": fixture_server("conformance_server")}, mode="auto"))
    async with Client(
        serve_params(home, config, "--share-all"),
        sampling_callback=answer_sampling,
        elicitation_callback=answer_elicitation,
    ) as client:
        assert client.protocol_version == "2026-07-28"
        sampled, elicited = await _both(
            client.call_tool("conf__test_sampling", {"prompt": "what is 2+2?"}),
            client.call_tool("conf__test_elicitation", {"message": "who are you?"}),
        )
        assert "LLM response: answer to what is 2+2?" in text_of(sampled), text_of(sampled)
        assert '"username": "ada"' in text_of(elicited), text_of(elicited)
        plain = await client.call_tool("conf__test_simple_text", {})
        assert not plain.is_error, text_of(plain)
        with pytest.raises(MCPError, match="requestState"):
            await client.session.call_tool("conf__test_sampling", {"prompt": "x"}, request_state="forged")


async def _both(first: Awaitable[types.CallToolResult], second: Awaitable[types.CallToolResult]) -> list[Any]:
    """Two calls at once: each waits on its own answers."""
    results: list[Any] = [None, None]

    async def run(index: int, call: Awaitable[types.CallToolResult]) -> None:
        results[index] = await call

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, 0, first)
        tg.start_soon(run, 1, second)
    return results


def everything_entry() -> dict[str, Any]:
    command = TOOLS / "node_modules" / ".bin" / "mcp-server-everything"
    if not command.exists():
        pytest.fail(f"server-everything is not installed at {command}; run scripts/check, which installs it")
    return {"command": str(command), "args": ["stdio"]}


@pytest.mark.interop
async def test_gateway_relays_a_handshake_era_servers_own_sampling_request(home: Home) -> None:
    config = str(home.write_config({"ev": everything_entry()}, mode="auto"))
    async with Client(serve_params(home, config, "--share-all"), mode="legacy", sampling_callback=answer_sampling) as c:
        assert "ev__trigger-sampling-request" in {tool.name for tool in (await c.list_tools()).tools}
        result = await c.call_tool("ev__trigger-sampling-request", {"prompt": "name a colour"})
        assert not result.is_error, text_of(result)
        assert "answer to Resource trigger-sampling-request context: name a colour" in text_of(result)


class Asker:
    """An `on_input` that records what it was asked and answers after `delay` seconds."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.asked: list[tuple[str, Mapping[str, Any]]] = []
        self.release = anyio.Event()

    async def __call__(self, method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        self.asked.append((method, params))
        # The time itself is the behaviour: a person slower than the call's time limit (no event stands in).
        await anyio.sleep(self.delay)
        return {"role": "assistant", "content": {"type": "text", "text": "relayed"}, "model": "m"}


async def test_host_relays_redacted_requests_and_pauses_the_call_clock(home: Home) -> None:
    entry = {**fixture_server("conformance_server"), "env": {"TOKEN": "${secret:TOKEN}"}, "call_timeout_secs": 1}
    config = home.write_config({"conf": entry}, mode="auto")
    asker = Asker(delay=1.5)
    async with home.open(config, secrets={"TOKEN": SECRET}, relay_input=True, approver=_once) as host:
        result = await host.call(
            "conf__test_sampling", {"prompt": f"the token is {SECRET}"}, on_input=InputRelay("me", asker)
        )
    assert result.ok, result.text
    assert "LLM response: relayed" in result.text, "a person's answer may take longer than call_timeout_secs"
    (method, params), *_ = asker.asked
    assert method == "sampling/createMessage"
    assert SECRET not in json.dumps(params), "server text is redacted before it reaches the client"


async def _once(card: Any) -> str:
    del card
    return "once"


async def test_host_without_relay_declares_no_sampling(home: Home) -> None:
    config = home.write_config({"conf": fixture_server("conformance_server")}, mode="auto")
    async with home.open(config) as host:
        result = await host.call("conf__test_sampling", {"prompt": "hi"}, on_input=InputRelay("me", Asker()))
    assert not result.ok
    assert "does not support sampling" in result.text


@pytest.mark.interop
async def test_a_request_that_could_belong_to_two_clients_goes_to_neither(home: Home) -> None:
    config = home.write_config({"ev": everything_entry()}, mode="auto")
    first = Asker()
    first_started = anyio.Event()

    async def hold(method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        first_started.set()
        await first.release.wait()
        return await first(method, params)

    second = Asker()
    async with home.open(config, relay_input=True) as host:
        results: dict[str, Any] = {}

        async def call(key: str, relay: InputRelay) -> None:
            results[key] = await host.call("ev__trigger-sampling-request", {"prompt": key}, on_input=relay)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "a", InputRelay("client-a", hold))
            with anyio.fail_after(15):
                await first_started.wait()
            await call("b", InputRelay("client-b", second))
            first.release.set()
    assert results["a"].ok, results["a"].text
    assert "relayed" in results["a"].text
    assert not second.asked, "client b never sees a request that may be client a's"
    assert "several clients" in results["b"].text


async def test_log_messages_go_to_no_one_while_calls_of_two_clients_are_in_flight(home: Home) -> None:
    config = home.write_config({"conf": fixture_server("conformance_server")}, mode="auto")
    holding = anyio.Event()
    release = anyio.Event()

    async def hold(method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        del method, params
        holding.set()
        await release.wait()
        return {"role": "assistant", "content": {"type": "text", "text": "done"}, "model": "m"}

    heard: list[str] = []

    async def on_log(message: types.LoggingMessageNotificationParams) -> None:
        heard.append(str(message.data))

    async with home.open(config, relay_input=True) as host:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: host.call("conf__test_sampling", {"prompt": "x"}, on_input=InputRelay("a", hold)))
            with anyio.fail_after(15):
                await holding.wait()
            shared = await host.call("conf__test_tool_with_logging", {}, on_log=on_log, on_input=InputRelay("b", None))
            assert shared.ok, shared.text
            assert heard == [], "a message that may be about client a's call never reaches client b"
            release.set()
        alone = await host.call("conf__test_tool_with_logging", {}, on_log=on_log, on_input=InputRelay("b", None))
        assert alone.ok, alone.text
    assert heard == ["Tool execution started", "Tool processing data", "Tool execution completed"]


async def test_a_new_era_answer_of_the_wrong_kind_is_refused(home: Home) -> None:
    async with (
        in_process_gateway(home, {"conf": fixture_server("conformance_server")}) as (_, gateway),
        Client(gateway.server, sampling_callback=answer_sampling) as client,
    ):
        first = await client.session.call_tool("conf__test_sampling", {"prompt": "x"}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert first.input_requests is not None
        (key,) = first.input_requests
        wrong = types.ElicitResult(action="accept", content={})
        final = await client.session.call_tool(
            "conf__test_sampling",
            {"prompt": "x"},
            input_responses={key: wrong},
            request_state=first.request_state,
            allow_input_required=True,
        )
        assert isinstance(final, types.CallToolResult)
        assert final.is_error
        assert "answered sampling/createMessage with a ElicitResult" in text_of(final)
        assert gateway.waiting_calls == 0


async def test_a_new_era_call_the_client_gives_up_on_is_cancelled_downstream(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}, mode="auto"))
    async with Client(serve_params(home, config, "--share-all"), sampling_callback=answer_sampling) as client:
        await give_up_on_a_running_call(client)
        assert "\n1\n" in await cancellations_reach(client, 1)


@pytest.mark.interop
async def test_a_relay_that_fails_gives_the_server_an_error_not_the_call(home: Home) -> None:
    config = home.write_config({"ev": everything_entry()}, mode="auto")

    async def broken(method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        del method, params
        raise RuntimeError("the client went away")

    async with home.open(config, relay_input=True) as host:
        result = await host.call("ev__trigger-sampling-request", {"prompt": "x"}, on_input=InputRelay("a", broken))
    assert not result.ok
    assert "mcpyard could not relay sampling/createMessage: the client went away" in result.text


async def test_a_server_asking_too_many_questions_at_once_is_refused(home: Home) -> None:
    config = home.write_config({"many": fixture_server("asks_many")}, mode="auto")
    asked = 0

    async def answer(method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        nonlocal asked
        del method, params
        asked += 1
        await anyio.sleep_forever()  # a person who has not answered yet
        raise AssertionError("unreachable")

    async with home.open(config, relay_input=True) as host:
        fine = await host.call("many__ask_many", {"n": 2}, on_input=InputRelay("a", _accept))
        assert fine.ok, fine.text
        assert "2 answers" in fine.text
        with anyio.fail_after(15):
            flood = await host.call("many__ask_many", {"n": 50}, on_input=InputRelay("a", answer))
    assert not flood.ok
    assert f"{MAX_OPEN_QUESTIONS} questions of this call are open already" in flood.text
    assert asked <= MAX_OPEN_QUESTIONS


async def _accept(method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
    del method, params
    return {"action": "accept", "content": {"ok": True}}


async def test_a_round_trip_given_up_on_ends_and_its_request_state_with_it(home: Home) -> None:
    config = str(home.write_config({"many": fixture_server("asks_many")}, mode="auto"))
    async with Client(serve_params(home, config, "--share-all"), elicitation_callback=answer_elicitation) as client:
        arguments = {"seconds": 30}
        first = await client.session.call_tool("many__ask_then_wait", arguments, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert first.input_requests is not None
        answers = {key: types.ElicitResult(action="accept", content={"ok": True}) for key in first.input_requests}
        working = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            working.set()

        async with anyio.create_task_group() as tg:

            async def answer() -> None:
                await client.session.call_tool(
                    "many__ask_then_wait",
                    arguments,
                    progress_callback=on_progress,
                    input_responses=dict(answers),
                    request_state=first.request_state,
                    allow_input_required=True,
                )

            tg.start_soon(answer)
            with anyio.fail_after(10):
                await working.wait()
            tg.cancel_scope.cancel()  # the client gives up while the tool works

        async def again() -> str:
            try:
                result = await client.session.call_tool(
                    "many__ask_then_wait", arguments, request_state=first.request_state, allow_input_required=True
                )
            except MCPError as exc:
                return exc.message
            return text_of(result) if isinstance(result, types.CallToolResult) else repr(result)

        with anyio.fail_after(10):  # no longer a round to wait on
            said = await again()
        assert "requestState" in said or "cancelled" in said, said
