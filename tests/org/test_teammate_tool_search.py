"""MOD-4 in the organization: past the organization's tool search setting a teammate's model is offered `find_tools`
over the tools that teammate may use (never another's, never one turned off), a tool found stays offered in that
conversation's later turns, and owners and admins set when (`/api/v1/tool-search`).

The organization's API, the fixture server over real HTTP and our OpenAI-compatible model endpoint, on SQLite and
PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from tests.conftest import Home
from tests.model.openai_fixture import ModelFixture, serve_model
from tests.org._flows import by_tool, register, set_policy
from tests.org._service import Service, running_service

pytestmark = pytest.mark.anyio

DEFAULT = {"mode": "auto", "max_tools": 40, "max_tokens": 10_000}


@pytest.fixture
def model() -> Iterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


async def put(service: Service, body: dict[str, Any]) -> Any:
    response = await service.request("PUT", "/api/v1/tool-search", json=body)
    assert response.status_code == 200, response.text
    return response.json()


async def put_as(service: Service, token: str, body: dict[str, Any]) -> Any:
    response = await service.request("PUT", "/api/v1/tool-search", json=body, token=token)
    assert response.status_code == 200, response.text
    return response.json()


def offered(model: ModelFixture, request: int) -> list[str]:
    return [tool["function"]["name"] for tool in model.requests[request].get("tools", [])]


async def _teammate(service: Service, upstream: str, model: ModelFixture) -> tuple[str, str]:
    """A teammate of the fixture server's `lookup`, `write` and `writes` (the rest are off), and a member."""
    tools = by_tool(await register(service, upstream))
    for name in ("lookup", "writes"):
        await set_policy(service, tools[name], "run_freely")
    await set_policy(service, tools["write"], "ask_first")
    response = await service.request("PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted"})
    assert response.status_code == 200, response.text
    server_id = tools["lookup"]["server_id"]
    teammate = await service.post("/api/v1/teammates", {"name": "helper", "server_ids": [server_id]}, expect=201)
    member = await service.add_member("member@acme.test")
    return teammate["id"], member


async def _conversation(service: Service, teammate: str, member: str) -> str:
    started = await service.post(f"/api/v1/teammates/{teammate}/conversations", token=member, expect=201)
    return str(started["id"])


async def _turn(service: Service, conversation: str, member: str, message: str = "go") -> dict[str, Any]:
    turn: dict[str, Any] = await service.post(
        f"/api/v1/conversations/{conversation}/turns", {"message": message}, token=member
    )
    return turn


async def test_mod4_a_teammate_finds_its_own_tools_and_its_conversation_keeps_them(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    teammate, member = await _teammate(service, upstream, model)
    every = {"tools__lookup", "tools__write", "tools__writes", "read_result"}
    conversation = await _conversation(service, teammate, member)
    model.replies.append({"text": "hello"})
    await _turn(service, conversation, member)
    assert set(offered(model, 0)) == every, "three tools are under the default budget: every one is offered"

    assert await put(service, {"mode": "always"}) == {**DEFAULT, "mode": "always"}
    model.replies.extend(
        [
            {"tool_calls": [{"name": "find_tools", "arguments": {"query": "look up the value of a key"}}]},
            {"tool_calls": [{"name": "tools__lookup", "arguments": {"key": "k1"}}]},
            {"tool_calls": [{"name": "find_tools", "arguments": {"query": "destroy the target"}}]},
            {"tool_calls": [{"name": "tools__writes", "arguments": {}}]},
            {"text": "Done."},
        ]
    )
    turn = await _turn(service, conversation, member)
    assert turn["status"] == "done", turn
    first = len(model.requests) - 5
    assert offered(model, first) == ["find_tools", "read_result"], "the setting holds from the next turn on"
    found = model.tool_messages(first + 1)[-1]["content"]
    assert '"name": "tools__lookup"' in found, "a search answers with the whole definitions found"
    assert '"inputSchema"' in found
    assert offered(model, first + 1) == ["find_tools", "tools__lookup", "read_result"], "found: offered from now on"
    assert "value of k1" in json.dumps(model.tool_messages(first + 2)), "the tool found ran"
    searched = model.tool_messages(first + 3)[-1]["content"]
    assert "tools__destroy" not in searched, "a tool the teammate may not use is never found"
    assert "0" in model.tool_messages(first + 4)[-1]["content"], "a tool not found yet runs when the model names it"
    statuses = [(call["tool"], call["status"]) for call in turn["calls"]]
    assert ("find_tools", "ran") in statuses, "a search is in the turn's calls"
    assert ("tools__lookup", "ran") in statuses
    assert ("tools__writes", "ran") in statuses

    model.replies.append({"text": "again"})
    await _turn(service, conversation, member)
    assert "tools__lookup" in offered(model, -1), "what a conversation found stays offered in its next turns"
    other = await _conversation(service, teammate, member)
    model.replies.append({"text": "fresh"})
    await _turn(service, other, member)
    assert offered(model, -1) == ["find_tools", "read_result"], "another conversation starts with nothing found"

    assert (await put(service, {"max_tools": 2}))["mode"] == "auto"
    model.replies.append({"text": "past the budget"})
    await _turn(service, other, member)
    assert offered(model, -1)[0] == "find_tools", "in auto, three tools are past a budget of two"
    await put(service, {"mode": "off"})
    model.replies.append({"text": "off"})
    await _turn(service, other, member)
    assert set(offered(model, -1)) == every, "off: every tool, however many"


async def test_mod4_the_setting_is_read_by_members_set_by_admins_checked_and_audited(
    service: Service, database_url: str
) -> None:
    if database_url.startswith("postgresql"):
        pytest.skip("the setting's checks are the service's, whatever the database: once is enough")
    assert await service.get("/api/v1/tool-search") == DEFAULT
    member = await service.add_member("member@acme.test")
    assert await service.get("/api/v1/tool-search", token=member) == DEFAULT
    refused = await service.request("PUT", "/api/v1/tool-search", json={"mode": "off"}, token=member)
    assert refused.status_code == 403
    for body, named in (
        ({"mode": "sometimes"}, "`mode`"),
        ({"mode": None}, "`mode`"),
        ({"max_tools": -1}, "`max_tools`"),
        ({"max_tools": True}, "`max_tools`"),
        ({"max_tokens": 1.5}, "`max_tokens`"),
        ({"max_tokens": "100"}, "`max_tokens`"),
        ({"max_tools": 10**9}, "`max_tools`"),
        ({"mode_": "off"}, "mode"),
    ):
        answer = await service.request("PUT", "/api/v1/tool-search", json=body)
        assert answer.status_code == 422, (body, answer.text)
        error = answer.json()["error"]
        assert error["code"] == "invalid_request"
        assert named in error["message"], (body, error)
    assert await service.get("/api/v1/tool-search") == DEFAULT, "a refused setting changes nothing"
    wanted = {"mode": "auto", "max_tools": 12, "max_tokens": 3000}
    assert await put(service, wanted) == wanted
    assert await service.get("/api/v1/tool-search", token=member) == wanted
    audited = [entry for entry in await service.get("/api/v1/audit") if entry["action"] == "tool_search.set"]
    assert len(audited) == 1
    assert audited[0]["old"] == DEFAULT
    assert audited[0]["new"] == wanted
    assert await put(service, wanted) == wanted
    other = await service.add_org("Other", "owner@other.test")
    assert await service.get("/api/v1/tool-search", token=other.owner_token) == DEFAULT, "another organization's"
    await put_as(service, other.owner_token, {"mode": "off"})
    assert await service.get("/api/v1/tool-search") == wanted, "one organization's setting never moves another's"
    for headers, content, status in (
        ({}, b'{"mode": "off"}', 401),  # signed out: no token at all
        ({"Authorization": "Bearer not-a-token"}, b'{"mode": "off"}', 401),
        (None, b'{"mode": "of', 400),  # an unfinished body
        (None, b'{"mode": "\\udc00"}', 422),  # a lone surrogate
        (None, b'{"mode": "' + b"x" * 3_000_000 + b'"}', 413),
    ):
        sent = service.headers() if headers is None else headers
        answer = await service.client.put("/api/v1/tool-search", content=content, headers=sent)
        assert answer.status_code == status, (status, answer.text[:200])
        assert set(answer.json()) == {"error"}
    assert await service.get("/api/v1/tool-search") == wanted, "nothing refused changed the setting"
    again = [entry for entry in await service.get("/api/v1/audit") if entry["action"] == "tool_search.set"]
    assert len(again) == 1, "setting what is already set is not a change"
