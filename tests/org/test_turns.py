"""Turns in the organization through its API, a real MCP server and our OpenAI-compatible model endpoint, on SQLite
and PostgreSQL: teammates (ORG-4, ORG-5), traces (ORG-7), assistants and visitors (ORG-6), their alerts (ORG-8)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpyard.connect import EgressGuard, MemoryResolver
from mcpyard.org.turns._assistants import RateLimits
from mcpyard.secrets import forms_of
from tests.conftest import Home
from tests.model.openai_fixture import ModelFixture, serve_model
from tests.org._flows import by_tool, call, register, set_policy
from tests.org._service import Service, running_service

pytestmark = pytest.mark.anyio

MODEL_KEY = "sk-model-key-4f1d9c2b7a8e6d3f-secret"
WAIT_SECONDS = 30


@pytest.fixture
def model() -> Iterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home, rate_limits=RateLimits(per_visitor=3)) as running:
        yield running


async def _set_up(service: Service, upstream: str, model: ModelFixture) -> dict[str, dict[str, Any]]:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["lookup"], "run_freely")
    await set_policy(service, tools["write"], "ask_first")
    await set_policy(service, tools["writes"], "run_freely")
    response = await service.request(
        "PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted", "api_key": MODEL_KEY}
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"base_url": model.base_url, "model": "scripted", "has_key": True}
    return tools


def _offered(model: ModelFixture, request: int = -1) -> set[str]:
    """The servers' tools the model was offered (`read_result`, always offered with them, left aside)."""
    names = {tool["function"]["name"] for tool in model.requests[request].get("tools", [])}
    return names - {"read_result"}


async def _turn_when_ended(service: Service, turn_id: str, token: str | None = None) -> dict[str, Any]:
    """The turn, once the service's background work (the turn going on after its approval) is done."""
    with anyio.fail_after(WAIT_SECONDS):
        await service.settled()
    turn: dict[str, Any] = await service.get(f"/api/v1/turns/{turn_id}", token=token)
    assert turn["status"] not in ("running", "waiting_for_approval"), turn
    return turn


async def test_org4_org5_org7_a_teammates_turn_parks_on_an_ask_first_call_and_goes_on_once_approved(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools = await _set_up(service, upstream, model)
    server_id = tools["lookup"]["server_id"]
    teammate = await service.post(
        "/api/v1/teammates",
        {"name": "helper", "instructions": "Be brief.", "server_ids": [server_id]},
        expect=201,
    )
    assert set(teammate["tools"]) == {"tools__lookup", "tools__write", "tools__writes"}, "never an off tool"
    member = await service.add_member("member@acme.test")
    conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", token=member, expect=201)
    model.replies.extend(
        [
            {
                "tool_calls": [
                    {"name": "tools__lookup", "arguments": {"key": "k1"}},
                    {"name": "tools__write", "arguments": {"note": "hello"}},
                ]
            },
            {"text": "Wrote it."},
        ]
    )
    parked = await service.post(
        f"/api/v1/conversations/{conversation['id']}/turns", {"message": "note hello"}, token=member, expect=202
    )
    assert parked["status"] == "waiting_for_approval"
    assert _offered(model, 0) == {"tools__lookup", "tools__write", "tools__writes"}
    assert "Be brief." in json.dumps(model.requests[0]["messages"][0])
    statuses = {item["tool"]: item for item in parked["calls"]}
    assert statuses["tools__lookup"]["status"] == "ran"
    assert statuses["tools__write"]["status"] == "waiting_for_approval"
    approval_id = statuses["tools__write"]["approval_id"]
    [pending] = await service.get("/api/v1/approvals", params={"status": "pending"}, token=member)
    assert pending["id"] == approval_id, "the invoking member sees it in the inbox"
    assert "hello" in pending["arguments"]
    assert (await call(service, "tools__writes"))["content"][0]["text"] == "0", "nothing ran while it waited"
    again = await service.request(
        "POST", f"/api/v1/conversations/{conversation['id']}/turns", json={"message": "more"}, token=member
    )
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "turn_waiting"

    approved = await service.post(f"/api/v1/approvals/{approval_id}/approve")
    assert approved["ok"] is True
    turn = await _turn_when_ended(service, parked["id"], token=member)
    assert turn["status"] == "done"
    assert turn["reply"] == "Wrote it."
    assert {item["tool"]: item["status"] for item in turn["calls"]} == {"tools__lookup": "ran", "tools__write": "ran"}
    assert "wrote hello" in json.dumps(model.tool_messages(-1)), "the model got the approved run's result"
    assert (await call(service, "tools__writes"))["content"][0]["text"] == "1", "approved once, run once"
    writes = [item["status"] for item in turn["trace"] if item["tool"] == "tools__write"]
    assert writes == ["waiting_for_approval", "ran"], "the parked call and its approved run are in the trace"
    trace = {item["tool"]: item for item in turn["trace"]}
    assert trace["tools__lookup"]["server"] == "tools"
    assert trace["tools__lookup"]["arguments"] == {"key": "k1"}
    assert trace["tools__lookup"]["status"] == "ran"
    assert trace["tools__lookup"]["summary"]
    other = await service.add_member("other@acme.test")
    hidden = await service.request("GET", f"/api/v1/turns/{parked['id']}", token=other)
    assert hidden.status_code == 404, "another member's turn is not theirs to read"


async def test_org5_a_declined_call_goes_back_to_the_model_as_a_refusal(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools = await _set_up(service, upstream, model)
    teammate = await service.post(
        "/api/v1/teammates", {"name": "helper", "server_ids": [tools["write"]["server_id"]]}, expect=201
    )
    conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", expect=201)
    model.replies.extend(
        [{"tool_calls": [{"name": "tools__write", "arguments": {"note": "no"}}]}, {"text": "Understood."}]
    )
    parked = await service.post(f"/api/v1/conversations/{conversation['id']}/turns", {"message": "x"}, expect=202)
    [waiting] = parked["calls"]
    await service.post(f"/api/v1/approvals/{waiting['approval_id']}/decline")
    turn = await _turn_when_ended(service, parked["id"])
    assert turn["status"] == "done"
    assert turn["reply"] == "Understood."
    assert turn["calls"][0]["status"] == "refused"
    assert "declined" in json.dumps(model.tool_messages(-1))
    assert (await call(service, "tools__writes"))["content"][0]["text"] == "0"


async def test_org6_publishing_refuses_what_may_not_serve_visitors_and_a_visitor_gets_at_most_five_calls(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools = await _set_up(service, upstream, model)
    ids = [tools["lookup"]["id"], tools["write"]["id"], tools["destroy"]["id"]]
    assistant = await service.post("/api/v1/assistants", {"name": "Help desk", "tool_ids": ids}, expect=201)
    refused = await service.request("POST", f"/api/v1/assistants/{assistant['id']}/publish")
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "not_publishable"
    assert {item["tool"]: item["reason"] for item in error["tools"]} == {
        "tools__write": "ask_first",
        "tools__destroy": "off",
    }
    only = await service.post(
        "/api/v1/assistants", {"name": "Lookups", "tool_ids": [tools["lookup"]["id"]]}, expect=201
    )
    publication = await service.post(f"/api/v1/assistants/{only['id']}/publish")
    assert publication["tools"] == [
        {
            "server_id": tools["lookup"]["server_id"],
            "tool": "lookup",
            "definition_hash": tools["lookup"]["definition_hash"],
        }
    ]
    model.replies.extend(
        [
            {"tool_calls": [{"name": "tools__lookup", "arguments": {"key": f"k{n}"}} for n in range(6)]},
            {"text": "Here you are."},
        ]
    )
    visitor = await service.client.post(f"/public/assistants/{only['slug']}/turns", json={"message": "look up six"})
    assert visitor.status_code == 200, visitor.text
    answer = visitor.json()
    assert answer["conversation"]
    assert answer["status"] == "call_limit", "the turn stops at its limit"
    statuses = [item["status"] for item in answer["calls"]]
    assert statuses.count("ran") == 5
    assert statuses.count("refused") == 1
    assert [item.get("error") for item in answer["calls"]].count("call_limit") == 1
    assert _offered(model, 0) == {"tools__lookup"}


async def test_org6_org8_a_changed_tool_is_left_out_of_visitors_turns_with_an_alert_and_a_deleted_server_asks_review(
    service: Service, upstream: str, model: ModelFixture, definitions: Path
) -> None:
    tools = await _set_up(service, upstream, model)
    await set_policy(service, tools["big"], "run_freely")
    assistant = await service.post(
        "/api/v1/assistants", {"name": "Two", "tool_ids": [tools["lookup"]["id"], tools["big"]["id"]]}, expect=201
    )
    await service.post(f"/api/v1/assistants/{assistant['id']}/publish")
    changed = json.dumps({"lookup": "Look a key up, and now something else."})
    await anyio.Path(definitions).write_text(changed, encoding="utf-8")
    await service.post(f"/api/v1/servers/{tools['lookup']['server_id']}/refresh")
    model.replies.append({"text": "ok"})
    visitor = await service.client.post(f"/public/assistants/{assistant['slug']}/turns", json={"message": "hi"})
    assert visitor.status_code == 200, visitor.text
    assert _offered(model, -1) == {"tools__big"}, "the changed tool is left out"
    [alert] = await service.get("/api/v1/alerts", params={"open": "true"})
    assert alert["assistant_id"] == assistant["id"]
    assert "tools__lookup" in alert["message"]
    await service.request("DELETE", f"/api/v1/servers/{tools['lookup']['server_id']}")
    reviewed = await service.get(f"/api/v1/assistants/{assistant['id']}")
    assert reviewed["needs_review"] is True
    assert "deleted" in reviewed["review_reason"]


async def test_org6_visitors_are_rate_limited_and_the_model_key_never_shows(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools = await _set_up(service, upstream, model)
    assistant = await service.post(
        "/api/v1/assistants", {"name": "Limited", "tool_ids": [tools["lookup"]["id"]]}, expect=201
    )
    await service.post(f"/api/v1/assistants/{assistant['id']}/publish")
    answers = []
    for _ in range(4):
        model.replies.append({"text": "hello"})
        answers.append(
            await service.client.post(f"/public/assistants/{assistant['slug']}/turns", json={"message": "hi"})
        )
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert int(answers[-1].headers["Retry-After"]) >= 1
    assert "Bearer " + MODEL_KEY in [headers.get("authorization") for headers in model.headers]
    shown = "\n".join([*service.responses, *(answer.text for answer in answers)])
    for form in forms_of(MODEL_KEY):
        assert form not in shown
    unknown = await service.client.post("/public/assistants/no-such-slug/turns", json={"message": "hi"})
    assert unknown.status_code == 404


async def test_org7_an_approved_long_result_stays_with_its_conversation_and_only_its_member_reads_the_rest(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools = await _set_up(service, upstream, model)
    await set_policy(service, tools["big"], "ask_first")
    teammate = await service.post(
        "/api/v1/teammates", {"name": "reader", "server_ids": [tools["big"]["server_id"]]}, expect=201
    )
    first = await service.add_member("first@acme.test")
    second = await service.add_member("second@acme.test")
    conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", token=first, expect=201)
    model.replies.extend([{"tool_calls": [{"name": "tools__big", "arguments": {"size": 200_000}}]}, {"text": "Long."}])
    parked = await service.post(
        f"/api/v1/conversations/{conversation['id']}/turns", {"message": "get it"}, token=first, expect=202
    )
    await service.post(f"/api/v1/approvals/{parked['calls'][0]['approval_id']}/approve")
    turn = await _turn_when_ended(service, parked["id"], token=first)
    [big] = turn["calls"]
    assert big["status"] == "ran"
    handle = big["handle"]
    offered = {tool["function"]["name"] for tool in model.requests[-1]["tools"]}
    assert "read_result" in offered, "the model may read the rest by handle"
    [window] = model.tool_messages(-1)
    assert 1_000 < len(json.dumps(window)) < 200_000, "the model got a first window, not the whole result"
    params = {"conversation": conversation["id"], "offset": 100_000, "length": 1000}
    rest = await service.get(f"/api/v1/results/{handle}", params=params, token=first)
    assert "y" * 100 in rest["text"]
    other = await service.request("GET", f"/api/v1/results/{handle}", params=params, token=second)
    assert other.status_code == 404, "another member's conversation cannot read it"


async def test_net1_the_organizations_model_is_reached_only_through_the_outbound_guard(
    database_url: str, home: Home, upstream: str, model: ModelFixture
) -> None:
    """A name of the model's endpoint resolves through the guard (it is no name real DNS knows); when it later
    resolves to a private address between the turn's check and its connection (rebinding), the turn is refused."""
    port = model.base_url.split(":")[2].split("/")[0]
    resolver = MemoryResolver({"models.acme-corp.net": ["127.0.0.1"]})
    guard = EgressGuard(dev=True, resolver=resolver)
    async with running_service(database_url, home.data_home, guard=guard) as service:
        tools = by_tool(await register(service, upstream))
        await set_policy(service, tools["lookup"], "run_freely")
        url = f"http://models.acme-corp.net:{port}/v1"
        response = await service.request("PUT", "/api/v1/model", json={"base_url": url, "model": "m"})
        assert response.status_code == 200, response.text
        teammate = await service.post(
            "/api/v1/teammates", {"name": "t", "server_ids": [tools["lookup"]["server_id"]]}, expect=201
        )
        conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", expect=201)
        model.replies.append({"text": "through the guard"})
        done = await service.post(f"/api/v1/conversations/{conversation['id']}/turns", {"message": "hi"})
        assert done["reply"] == "through the guard"
        asked = len(resolver.queries)
        resolver.then("models.acme-corp.net", ["10.0.0.7"])  # the turn's check still sees loopback; its connection not
        refused = await service.post(f"/api/v1/conversations/{conversation['id']}/turns", {"message": "again"})
        assert refused["status"] == "model_error"
        assert "private address" in refused["error"]
        assert len(resolver.queries) > asked + 1, "the connection resolved the name again and was refused"
        assert len(model.requests) == 1, "nothing reached the endpoint"
