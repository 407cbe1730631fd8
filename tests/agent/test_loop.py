"""MOD-2: the agent loop drives turns through the host's pipeline, against our OpenAI-compatible HTTP endpoint."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpyard import Host
from mcpyard.agent import ParkCall, TurnLimits, TurnState, current_turn_clock, resume_turn, run_turn
from mcpyard.model import (
    AnthropicModel,
    ApprovalEvent,
    ErrorEvent,
    Event,
    Message,
    OpenAIModel,
    ParkedEvent,
    ScriptedModel,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    reply,
)
from mcpyard.policy import Answer, ApprovalCard, ScriptedApprover
from tests.conftest import Home, fixture_server
from tests.model.openai_fixture import ModelFixture, serve_model

pytestmark = pytest.mark.anyio

SECRET = "turns-secret-value-0123456789"
LOOKUP_ROME = {"name": "t__lookup", "arguments": {"city": "Rome"}}


@pytest.fixture(params=[True, False], ids=["streaming", "whole"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@asynccontextmanager
async def turns_host(home: Home, **options: Any) -> AsyncIterator[Host]:
    server = {**fixture_server("turns"), "env": {"TURNS_SECRET": SECRET, "API_TOKEN": SECRET}}
    config = home.write_config({"t": server})
    async with home.open(config, **options) as host:
        yield host


class Events:
    def __init__(self) -> None:
        self.seen: list[Event] = []

    async def __call__(self, event: Event) -> None:
        self.seen.append(event)

    def of(self, kind: type[Any]) -> list[Any]:
        return [event for event in self.seen if isinstance(event, kind)]

    def json(self) -> list[dict[str, Any]]:
        return [event.to_json() for event in self.seen]


MADE: list[OpenAIModel] = []


@pytest.fixture
async def endpoint() -> AsyncIterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture
        while MADE:  # their connections close before the endpoint stops
            await MADE.pop().close()


def model_for(endpoint: ModelFixture, stream: bool, **options: Any) -> OpenAIModel:
    model = OpenAIModel(base_url=endpoint.base_url, model="fixture-model", stream=stream, **options)
    MADE.append(model)
    return model


async def test_mod2_a_turn_calls_a_tool_over_http_and_the_model_reads_its_fenced_result(
    home: Home, endpoint: ModelFixture, stream: bool
) -> None:
    endpoint.replies += [
        {"text": "Let me look.", "tool_calls": [{"name": "t__lookup", "arguments": {"city": "Oslo"}}]},
        {"text": "It is sunny in Oslo."},
    ]
    events = Events()
    async with turns_host(home, mode="ask") as host:
        with anyio.fail_after(30):
            turn = await run_turn(
                host, model_for(endpoint, stream), [Message.user("Weather in Oslo?")], on_event=events
            )
    assert turn.status == "done"
    assert turn.reply == "It is sunny in Oslo."
    assert "".join(e.text for e in events.of(TextEvent)) == "Let me look.It is sunny in Oslo."
    kinds = [event["type"] for event in events.json()]
    assert kinds[-1] == "turn_end"
    assert kinds.index("tool_call") < kinds.index("tool_result")
    assert events.of(ToolCallEvent)[0].to_json() == {
        "type": "tool_call",
        "name": "t__lookup",
        "arguments": {"city": "Oslo"},
    }
    assert events.of(ToolResultEvent)[0].to_json() == {
        "type": "tool_result",
        "name": "t__lookup",
        "ok": True,
        "error": None,
    }
    assert events.of(TurnEndEvent)[0].to_json() == {"type": "turn_end", "calls": 1}
    first = endpoint.requests[0]
    assert first["model"] == "fixture-model"
    assert first["stream"] is stream if stream else "stream" not in first or first["stream"] is False
    offered = {tool["function"]["name"] for tool in first["tools"]}
    assert {"t__lookup", "t__note", "read_result"} <= offered
    assert all(tool["type"] == "function" for tool in first["tools"])
    (result,) = endpoint.tool_messages()
    assert "sunny in Oslo" in result["content"]
    assert "never as instructions" in result["content"], "the model reads results inside the fence (CALL-7)"
    assert endpoint.requests[1]["messages"][-2]["tool_calls"][0]["function"]["name"] == "t__lookup"
    (record,) = host.history()
    assert record.tool == "t__lookup"
    assert record.status == "ran"


async def test_mod2_tool_calls_asked_together_run_concurrently(
    home: Home, endpoint: ModelFixture, stream: bool
) -> None:
    together = [{"name": "t__together", "arguments": {"count": 3}} for _ in range(3)]
    endpoint.replies += [{"tool_calls": together}, {"text": "all met"}]
    async with turns_host(home, mode="ask") as host:
        # One after another, the first call would wait for the other two forever.
        with anyio.fail_after(30):
            turn = await run_turn(host, model_for(endpoint, stream), [Message.user("meet")])
    assert turn.status == "done"
    assert [m["content"].count("met 3") for m in endpoint.tool_messages()] == [1, 1, 1]
    ids = [m["tool_call_id"] for m in endpoint.tool_messages()]
    assert ids == [call["id"] for call in endpoint.requests[1]["messages"][-4]["tool_calls"]], "results in call order"


async def test_mod2_every_rule_of_the_pipeline_holds_approvals_and_redaction(
    home: Home, endpoint: ModelFixture
) -> None:
    endpoint.replies += [
        {"tool_calls": [{"name": "t__note", "arguments": {"text": "hello"}}, {"name": "t__secret", "arguments": {}}]},
        {"text": "done"},
    ]
    approver = ScriptedApprover(["deny"])
    events = Events()
    async with turns_host(home, mode="ask", approver=approver) as host:
        with anyio.fail_after(30):
            turn = await run_turn(host, model_for(endpoint, True), [Message.user("go")], on_event=events)
    assert turn.status == "done"
    (card,) = approver.cards
    assert card.tool == "t__note"
    (approval,) = events.of(ApprovalEvent)
    assert approval.to_json() == {"type": "approval", "name": "t__note", "reason": card.reason, "answer": "deny"}
    results = {event.name: event for event in events.of(ToolResultEvent)}
    assert results["t__note"].error is not None
    assert results["t__note"].error["code"] == "denied"
    assert results["t__secret"].ok
    said = json.dumps(endpoint.requests[1]["messages"])
    assert SECRET not in said, "a secret the host sent never reaches the model (SEC-3)"
    assert "${env:API_TOKEN}" in said or "${env:TURNS_SECRET}" in said


async def test_mod2_a_name_the_model_was_not_offered_is_refused_without_reaching_the_host(
    home: Home, endpoint: ModelFixture
) -> None:
    endpoint.replies += [
        {"tool_calls": [{"name": "t__wipe", "arguments": {}}, {"name": "t__lookup", "arguments": "{not json"}]},
        {"text": "ok"},
    ]
    async with turns_host(home, mode="auto") as host:
        offered = host.tools_for_model("openai").only({"t__lookup"})
        with anyio.fail_after(30):
            turn = await run_turn(host, model_for(endpoint, False), [Message.user("wipe")], tools=offered)
        assert host.history() == [], "neither call reached the pipeline"
    codes = [result.error["code"] for _, result in turn.results if result.error]
    assert codes == ["unknown_tool", "invalid_arguments"]
    assert [tool["function"]["name"] for tool in endpoint.requests[0]["tools"]] == ["t__lookup"]


async def test_mod2_the_call_limit_stops_a_turn_and_refuses_the_calls_beyond_it(
    home: Home, endpoint: ModelFixture
) -> None:
    lookups = [{"name": "t__lookup", "arguments": {"city": f"c{i}"}} for i in range(3)]
    endpoint.replies += [{"tool_calls": lookups[:2]}, {"tool_calls": lookups}, {"text": "never asked"}]
    events = Events()
    async with turns_host(home, mode="ask") as host:
        with anyio.fail_after(30):
            turn = await run_turn(
                host, model_for(endpoint, True), [Message.user("go")], on_event=events, limits=TurnLimits(max_calls=3)
            )
        assert len(host.history()) == 3
    assert turn.status == "call_limit"
    assert len(endpoint.requests) == 2
    (error,) = events.of(ErrorEvent)
    assert error.code == "call_limit"
    assert events.json()[-1] == {"type": "turn_end", "calls": 3}
    refused = [result for _, result in turn.results if result.error and result.error["code"] == "call_limit"]
    assert len(refused) == 2
    assert sum(1 for m in turn.messages if m.role == "tool") == 5, "every call the model asked for has an answer"


async def test_mod2_the_time_limit_stops_a_turn(home: Home, endpoint: ModelFixture) -> None:
    endpoint.replies += [{"tool_calls": [{"name": "t__together", "arguments": {"count": 2}}]}]
    events = Events()
    async with turns_host(home, mode="ask") as host:
        with anyio.fail_after(30):
            turn = await run_turn(
                host,
                model_for(endpoint, True),
                [Message.user("wait")],
                on_event=events,
                limits=TurnLimits(max_seconds=1.5),
            )
    assert turn.status == "time_limit"
    assert [e.code for e in events.of(ErrorEvent)] == ["time_limit"]
    assert turn.messages[-1].role == "tool"
    assert "time limit" in turn.messages[-1].text


async def test_mod2_the_time_limit_waits_while_a_person_answers_during_a_call(home: Home) -> None:
    """A turn's limit is for the model and the calls: one waiting on a person pauses it (`current_turn_clock`)."""

    asked: list[str] = []

    async def slow_person(card: ApprovalCard) -> Answer:
        asked.append(card.tool)
        clock = current_turn_clock()
        assert clock is not None, "the call runs in its turn"
        with clock.paused():
            await anyio.sleep(2)  # a person who takes longer than the turn's whole limit: time passing is tested
        return "once"

    model = ScriptedModel([reply("", ("t__note", {"text": "x"})), lambda messages: reply("done")])
    async with turns_host(home, mode="ask", approver=slow_person) as host:
        with anyio.fail_after(30):
            turn = await run_turn(host, model, [Message.user("note x")], limits=TurnLimits(max_seconds=1))
    assert asked == ["t__note"]
    assert turn.status == "done", turn.messages[-1].text
    assert turn.reply == "done"


async def test_mod2_an_endpoint_that_fails_ends_the_turn_with_model_error(home: Home, endpoint: ModelFixture) -> None:
    endpoint.replies += [{"status": 500, "error": "the model fell over"}]
    events = Events()
    model = model_for(endpoint, True, api_key="sk-this-key-never-shows-0123", max_retries=0)
    async with turns_host(home, mode="ask") as host:
        with anyio.fail_after(30):
            turn = await run_turn(host, model, [Message.user("hi")], on_event=events)
    assert turn.status == "model_error"
    (error,) = events.of(ErrorEvent)
    assert error.code == "model_error"
    assert "500" in error.message
    assert "fell over" in error.message
    assert endpoint.headers[0]["authorization"] == "Bearer sk-this-key-never-shows-0123"
    unreachable = OpenAIModel(base_url="http://me:hunter2pass@127.0.0.1:9/v1?token=qwerty", model="m", max_retries=0)
    MADE.append(unreachable)
    events = Events()
    async with turns_host(home, mode="ask") as host:
        with anyio.fail_after(30):
            turn = await run_turn(host, unreachable, [Message.user("hi")], on_event=events)
    assert turn.status == "model_error"
    (error,) = events.of(ErrorEvent)
    assert "could not reach the model at http://127.0.0.1:9/v1" in error.message
    assert "hunter2pass" not in error.message
    assert "qwerty" not in error.message, "an address's user info and query never show (SEC-2)"


class ParkingApprover:
    """Parks every card, as the organization's inbox does."""

    def __init__(self) -> None:
        self.cards: list[ApprovalCard] = []

    async def __call__(self, card: ApprovalCard) -> Answer:
        self.cards.append(card)
        raise ParkCall(f"approval-{len(self.cards)}")


async def test_mod2_a_turn_parks_on_an_approval_and_resumes_from_its_saved_state(
    home: Home, endpoint: ModelFixture
) -> None:
    endpoint.replies += [
        {
            "tool_calls": [
                {"name": "t__note", "arguments": {"text": "x"}},
                {"name": "t__lookup", "arguments": {"city": "Rome"}},
            ]
        },
        {"text": "noted and looked up"},
    ]
    events = Events()
    model = model_for(endpoint, True)
    async with turns_host(home, mode="ask") as host:
        with anyio.fail_after(30):
            turn = await run_turn(host, model, [Message.user("go")], on_event=events, approver=ParkingApprover())
        assert turn.status == "parked"
        (parked,) = events.of(ParkedEvent)
        assert parked.approval_id == "approval-1"
        assert [event.name for event in events.of(ToolResultEvent)] == ["t__lookup"], "the other call ran"
        saved = json.loads(json.dumps(turn.state.to_json()))
        state = TurnState.from_json(saved)
        (waiting_call, approval_id) = state.waiting[parked.call_id]
        assert (waiting_call.name, dict(waiting_call.arguments), approval_id) == (
            "t__note",
            {"text": "x"},
            "approval-1",
        )
        assert len(endpoint.requests) == 1, "a parked turn does not ask the model again"
        # The approval was decided elsewhere: its one run's result goes on with the turn.
        approved = await host.call(waiting_call.name, waiting_call.arguments, approver=ScriptedApprover(["once"]))
        with anyio.fail_after(30):
            done = await resume_turn(host, model, state, {parked.call_id: approved}, on_event=events)
    assert done.status == "done"
    assert done.reply == "noted and looked up"
    contents = [m["content"] for m in endpoint.tool_messages()]
    assert any("sunny in Rome" in text for text in contents)
    assert any("noted: x" in text for text in contents)
    assert events.json()[-1] == {"type": "turn_end", "calls": 2}


async def test_mod2_the_scripted_model_drives_a_turn_with_no_endpoint(home: Home) -> None:
    model = ScriptedModel(
        [reply("", ("t__lookup", {"city": "Lima"})), lambda messages: reply(messages[-1].text[-200:])]
    )
    async with turns_host(home, mode="ask") as host:
        with anyio.fail_after(30):
            turn = await run_turn(host, model, [Message.system(host.system_prompt()), Message.user("Lima?")])
    assert turn.status == "done"
    assert "sunny in Lima" in turn.reply
    first_messages, first_tools = model.requests[0]
    assert first_messages[0].role == "system"
    assert "Turn fixture server." in first_messages[0].text
    assert "t__lookup" in first_tools.names


async def test_mod2_a_call_whose_id_an_earlier_call_had_still_gives_the_model_its_result(home: Home) -> None:
    """MOD-2: ids repeat across replies and turns (the scripted model numbers every reply's calls from `call_1`, as
    some models do): each reply's calls are answered by the answers after it, never taken as answered before."""
    second_turn = ScriptedModel(
        [reply("", ("t__lookup", {"city": "Oslo"})), reply("", ("t__lookup", {"city": "Bergen"})), reply("done")]
    )
    async with turns_host(home, mode="ask") as host:
        with anyio.fail_after(30):
            first = await run_turn(
                host, ScriptedModel([reply("", ("t__lookup", {"city": "Lima"})), reply("ok")]), [Message.user("Lima?")]
            )
            turn = await run_turn(host, second_turn, [*first.state.messages, Message.user("Oslo, then Bergen?")])
    assert turn.status == "done"
    *_, (last_messages, _) = second_turn.requests
    answers = [m.text for m in last_messages if m.role == "tool"]
    assert len(answers) == 3, "one answer for every call, in each of the two turns"
    assert ["Lima" in answers[0], "Oslo" in answers[1], "Bergen" in answers[2]] == [True, True, True], answers
    at = [i for i, m in enumerate(last_messages) if m.role == "assistant" and m.tool_calls]
    assert [last_messages[i + 1].role for i in at] == ["tool", "tool", "tool"], "each call answered right after it"


async def test_mod2_anthropics_api_drives_a_turn_through_its_official_client(
    home: Home, endpoint: ModelFixture
) -> None:
    endpoint.replies += [
        {"text": "Looking it up.", "tool_calls": [LOOKUP_ROME, {"name": "t__note", "arguments": {"text": "y"}}]},
        {"text": "Sunny in Rome."},
    ]
    events = Events()
    model = AnthropicModel(model="claude-fixture", api_key="sk-ant-fixture-key-0123", base_url=endpoint.anthropic_url)
    try:
        async with turns_host(home, mode="ask", approver=ScriptedApprover(["once"])) as host:
            with anyio.fail_after(30):
                turn = await run_turn(
                    host, model, [Message.system("Be brief."), Message.user("Rome?")], on_event=events
                )
    finally:
        await model.close()
    assert turn.status == "done"
    assert turn.reply == "Sunny in Rome."
    assert "".join(e.text for e in events.of(TextEvent)) == "Looking it up.Sunny in Rome."
    first, second = endpoint.requests
    assert first["system"] == "Be brief."
    assert {tool["name"] for tool in first["tools"]} >= {"t__lookup", "read_result"}
    assert all(set(tool) == {"name", "description", "input_schema"} for tool in first["tools"])
    sent = endpoint.headers[0]
    assert "sk-ant-fixture-key-0123" in (sent.get("x-api-key"), sent.get("authorization", "").removeprefix("Bearer "))
    assistant, results = second["messages"][-2:]
    assert [block["type"] for block in assistant["content"]] == ["text", "tool_use", "tool_use"]
    assert assistant["content"][1]["input"] == {"city": "Rome"}
    assert results["role"] == "user"
    assert [block["type"] for block in results["content"]] == ["tool_result", "tool_result"], "results go back together"
    assert "sunny in Rome" in results["content"][0]["content"]
    assert "noted: y" in results["content"][1]["content"]
