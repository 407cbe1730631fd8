"""MOD-2, CALL-1: what a model writes that cannot be sent (lone surrogates in its text, a tool call's arguments that
cannot be encoded) never breaks a turn: the call is refused with `invalid_arguments`, the model reads why, and the
turn goes on, against our OpenAI-compatible HTTP endpoint and a real stdio server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anyio
import pytest

from mcpyard.agent import run_turn
from mcpyard.model import Event, Message, OpenAIModel, TextEvent, ToolCallEvent, ToolResultEvent
from tests.conftest import Home, fixture_server
from tests.model.openai_fixture import ModelFixture, serve_model

pytestmark = pytest.mark.anyio


@pytest.fixture
async def endpoint() -> AsyncIterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "whole"])
async def test_mod2_a_model_writing_lone_surrogates_is_refused_with_invalid_arguments_and_the_turn_goes_on(
    home: Home, endpoint: ModelFixture, stream: bool
) -> None:
    endpoint.replies += [
        {"text": "Looking \ud800 up.", "tool_calls": [{"name": "t__lookup", "arguments": {"city": "\ud800"}}]},
        {"tool_calls": [{"name": "t__lookup", "arguments": {"\udc00": "Oslo"}}]},
        {"tool_calls": [{"name": "t__lookup", "arguments": {"city": "Oslo"}}]},
        {"text": "Sunny \udfff in Oslo."},
    ]
    seen: list[Event] = []

    async def on_event(event: Event) -> None:
        seen.append(event)

    model = OpenAIModel(base_url=endpoint.base_url, model="fixture-model", stream=stream)
    config = home.write_config({"t": fixture_server("turns")})
    try:
        async with home.open(config, mode="auto") as host:
            with anyio.fail_after(30):
                turn = await run_turn(host, model, [Message.user("Weather in Oslo?")], on_event=on_event)
            history = host.history()
    finally:
        await model.close()
    assert turn.status == "done", turn
    assert turn.reply == "Sunny \ufffd in Oslo."
    codes = [result.error["code"] if result.error else None for _, result in turn.results]
    assert codes == ["invalid_arguments", "invalid_arguments", None]
    first, second, third = (m["content"] for m in endpoint.tool_messages())
    assert "arguments.city: holds a lone surrogate (U+D800), which cannot be sent as UTF-8" in first
    assert 'arguments["\\udc00"]: its key holds a lone surrogate (U+DC00)' in second
    assert "sunny in Oslo" in third, "the server's connection is as healthy as before"
    assert [record.status for record in history] == ["ran"], "only the call that could be sent reached the host"
    for event in seen:  # every event can be printed, stored and sent
        json.dumps(event.to_json(), ensure_ascii=False).encode("utf-8")
    assert "".join(e.text for e in seen if isinstance(e, TextEvent)) == "Looking \ufffd up.Sunny \ufffd in Oslo."
    assert [e.error["code"] if e.error else None for e in seen if isinstance(e, ToolResultEvent)] == codes
    assert len([e for e in seen if isinstance(e, ToolCallEvent)]) == 3
