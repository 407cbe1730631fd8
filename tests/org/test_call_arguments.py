"""One member's arguments that cannot be sent never break the organization's shared connection to a server: they are
refused with `invalid_arguments` (200, `ok: false`) before they reach it, an ask-first call parks nothing, a
teammate's model reads why and its turn goes on, and the next member's call runs, on SQLite and PostgreSQL
(CALL-1, ERR-1, API-6, ORG-5, THREATS: the organization service)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest

from tests.conftest import Home
from tests.model.openai_fixture import ModelFixture, serve_model
from tests.org._flows import by_tool, call, register, set_policy
from tests.org._service import Service, running_service

pytestmark = pytest.mark.anyio

BAD = [
    # JSON text as a client sends it: `\ud800` is valid JSON text that reads as a lone surrogate.
    ('{"key": "\\ud800", "note": "\\ud800"}', "holds a lone surrogate (U+D800), which cannot be sent as UTF-8"),
    ('{"key": "k", "note": "n", "x": {"\\udc00": [1]}}', 'arguments.x["\\udc00"]: its key holds a lone surrogate'),
    ('{"key": NaN, "note": Infinity}', "holds NaN, which JSON has no number for"),
    ('{"key": "k", "note": "n", "deep": ' + "[" * 300 + "]" * 300 + "}", "arguments nest deeper than 64 levels"),
]


@pytest.fixture
def model() -> Iterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


async def _raw_call(service: Service, token: str, tool: str, arguments: str) -> Any:
    body = f'{{"tool": "{tool}", "arguments": {arguments}}}'
    response = await service.request("POST", "/api/v1/calls", token=token, content=body)
    assert response.status_code == 200, response.text
    return response.json()


async def test_api6_org5_a_members_unsendable_arguments_are_refused_and_the_next_members_call_runs(
    service: Service, upstream: str
) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["lookup"], "run_freely")
    await set_policy(service, tools["write"], "ask_first")
    await set_policy(service, tools["writes"], "run_freely")
    first = await service.add_member("a@acme.test")
    second = await service.add_member("b@acme.test")
    for tool in ("tools__lookup", "tools__write"):
        for arguments, problem in BAD:
            with anyio.fail_after(30):
                refused = await _raw_call(service, first, tool, arguments)
                after = await call(service, "tools__lookup", {"key": "k"}, token=second)
            assert refused["ok"] is False, refused
            assert refused["error"]["code"] == "invalid_arguments", refused
            assert problem in refused["error"]["message"], refused
            assert after["ok"] is True, (arguments, after)
            assert "value of k" in after["text"]
    pending = await service.get("/api/v1/approvals", params={"status": "pending"})
    assert pending == [], "an ask-first call that cannot be sent parks nothing"
    assert (await call(service, "tools__writes", token=second))["content"][0]["text"] == "0"
    parked = await call(service, "tools__write", {"note": "fine"}, token=second, expect=202)
    assert parked["approval"]["status"] == "pending", "the ask-first path is as healthy as before"


async def test_org4_a_teammates_model_asking_with_unsendable_arguments_reads_why_and_its_turn_goes_on(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["lookup"], "run_freely")
    await set_policy(service, tools["write"], "ask_first")
    response = await service.request(
        "PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted", "api_key": "sk-test-key"}
    )
    assert response.status_code == 200, response.text
    teammate = await service.post(
        "/api/v1/teammates", {"name": "helper", "server_ids": [tools["lookup"]["server_id"]]}, expect=201
    )
    member = await service.add_member("a@acme.test")
    conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", token=member, expect=201)
    model.replies.extend(
        [
            {
                "text": "Let me \ud800 look.",
                "tool_calls": [
                    {"name": "tools__lookup", "arguments": {"key": "\ud800"}},
                    {"name": "tools__write", "arguments": {"note": "x", "deep": json.loads("[" * 300 + "]" * 300)}},
                ],
            },
            {"tool_calls": [{"name": "tools__lookup", "arguments": {"key": "k2"}}]},
            {"text": "Done \udc00."},
        ]
    )
    with anyio.fail_after(60):
        turn = await service.post(
            f"/api/v1/conversations/{conversation['id']}/turns", {"message": "look"}, token=member
        )
    assert turn["status"] == "done", turn
    assert turn["reply"] == "Done \ufffd."
    assert [item["status"] for item in turn["calls"]] == ["refused", "refused", "ran"]
    first, second = (m["content"] for m in model.tool_messages(1))
    assert "holds a lone surrogate (U+D800)" in first
    assert "invalid_arguments" in first or "cannot be sent" in first
    assert "arguments nest deeper than 64 levels" in second
    assert "value of k2" in json.dumps(model.tool_messages(-1)), "the server's connection is as healthy as before"
    assert await service.get("/api/v1/approvals", params={"status": "pending"}) == [], "nothing parked"
    stored = await service.get(f"/api/v1/turns/{turn['id']}", token=member)
    assert stored["status"] == "done"
