"""MOD-2, CAT-2: a turn's call runs only on the definition its model was offered, not on one that changed since."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import pytest

from mcpyard import Host
from mcpyard.agent import run_turn
from mcpyard.model import Message, ModelTools, Reply, ScriptedModel, TextSink, ToolFormat, ToolResultEvent, reply
from mcpyard.pipeline import CallResult
from mcpyard.policy import Approver
from tests.conftest import Home, fixture_server

pytestmark = pytest.mark.anyio

PROBE = "dyn__probe"
NEW_DESCRIPTION = "Probe, described anew: it now does something else."


def probe_hash(host: Host) -> str | None:
    return next((tool.definition_hash for tool in host.tools() if tool.name == PROBE), None)


class ChangedWhileThinking:
    """A model that answers from its script, while the server gives the tool a new definition during its first
    reply (as a server that updates while a real model takes its seconds to answer)."""

    def __init__(self, host: Host, script: ScriptedModel) -> None:
        self.host, self.script = host, script
        self.tool_format = script.tool_format

    async def complete(
        self, messages: Sequence[Message], tools: ModelTools, *, on_text: TextSink | None = None
    ) -> Reply:
        if not self.script.requests:
            offered = probe_hash(self.host)
            described = await self.host.call("dyn__describe", {"name": "probe", "description": NEW_DESCRIPTION})
            assert described.ok, described.error
            with anyio.fail_after(10):
                await self.host.wait_until(lambda h: probe_hash(h) not in (offered, None))
        return await self.script.complete(messages, tools, on_text=on_text)


class Events:
    def __init__(self) -> None:
        self.results: list[ToolResultEvent] = []

    async def __call__(self, event: object) -> None:
        if isinstance(event, ToolResultEvent):
            self.results.append(event)


async def test_mod2_cat2_a_tool_changed_after_the_model_read_it_is_refused_then_offered_anew_and_runs(
    home: Home,
) -> None:
    config = home.write_config({"dyn": fixture_server("list_changed")}, mode="auto")
    script = ScriptedModel(
        [reply("", ("dyn__probe", {})), reply("", ("dyn__probe", {})), reply("done")], tool_format="openai"
    )
    events = Events()
    async with home.open(config) as host:
        assert (await host.call("dyn__add_tool", {"name": "probe"})).ok
        with anyio.fail_after(10):
            await host.wait_until(lambda h: probe_hash(h) is not None)
        first_hash = probe_hash(host)
        with anyio.fail_after(30):
            turn = await run_turn(host, ChangedWhileThinking(host, script), [Message.user("probe")], on_event=events)
        history = host.history()
    assert turn.status == "done", turn.messages[-1].text
    refused, ran = events.results
    assert refused.error is not None
    assert refused.error["code"] == "tool_changed", refused.error
    assert "not the tool that was offered" in refused.error["message"]
    assert ran.ok, ran.error
    assert ran.result is not None
    assert "I am probe" in ran.result.text
    # The model was offered the old definition first, then the new one; nothing was sent to the server the first time.
    (_, first), (_, second), _ = script.requests
    assert first.definition_hash(PROBE) == first_hash
    assert second.definition_hash(PROBE) not in (None, first_hash)
    assert any(NEW_DESCRIPTION in str(tool) for tool in second)
    probes = [record.status for record in history if record.tool == PROBE]
    assert probes == ["refused", "ran"]


class OlderFacade:
    """A caller's own host facade written before calls took `definition_hash` (as `TurnHost` was then)."""

    def __init__(self, host: Host) -> None:
        self.host = host

    @property
    def approver(self) -> Approver | None:
        return self.host.approver

    def tools_for_model(self, format: ToolFormat = "mcp", *, conversation: str | None = None) -> ModelTools:
        return self.host.tools_for_model(format, conversation=conversation)

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        conversation: str | None = None,
        approver: Approver | None = None,
    ) -> CallResult:
        return await self.host.call(name, arguments, conversation=conversation, approver=approver)

    def redact_json(self, value: Any) -> Any:
        return self.host.redact_json(value)


async def test_mod2_a_host_whose_call_takes_no_definition_hash_is_called_as_before(home: Home) -> None:
    config = home.write_config({"dyn": fixture_server("list_changed")}, mode="auto")
    script = ScriptedModel([reply("", ("dyn__add_tool", {"name": "probe"})), reply("done")], tool_format="openai")
    events = Events()
    async with home.open(config) as host:
        with anyio.fail_after(30):
            older = OlderFacade(host)
            turn = await run_turn(older, script, [Message.user("add")], on_event=events)  # type: ignore[arg-type]
    assert turn.status == "done", turn.messages[-1].text
    [added] = events.results
    assert added.ok, added.error
