"""Changing and deleting a teammate through the organization's API, on SQLite and PostgreSQL, with real MCP servers and
our OpenAI-compatible model endpoint (ORG-3, ORG-4, ORG-5, ORG-7, API-6): owners and admins only, checked as creating
is; the next turn is offered exactly what the teammate has now, and so is a running turn from its next call on; a
call parked before the change, or before the deletion, never runs on approval; a deleted teammate keeps its records
and takes no new work."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest

from tests.conftest import Home
from tests.model.openai_fixture import ModelFixture, serve_model
from tests.org._flows import TOKEN, by_tool, call, register, set_policy
from tests.org._service import Service, running_service
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 30


@pytest.fixture
def model() -> Iterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


async def _servers(service: Service, upstream: str, model: ModelFixture) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two servers of the fixture's tools, `tools` and `more`, every tool allowed (`write` ask-first), and the model."""
    tools, more = by_tool(await register(service, upstream)), by_tool(await register(service, upstream, "more"))
    for server in (tools, more):
        await set_policy(service, server["lookup"], "run_freely")
        await set_policy(service, server["write"], "ask_first")
        await set_policy(service, server["writes"], "run_freely")
    answer = await service.request("PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted"})
    assert answer.status_code == 200, answer.text
    return tools, more


async def _teammate(service: Service, server_id: str, **extra: Any) -> dict[str, Any]:
    created: dict[str, Any] = await service.post(
        "/api/v1/teammates", {"name": "helper", "server_ids": [server_id], **extra}, expect=201
    )
    return created


async def _patch(service: Service, teammate_id: str, body: Any, *, token: str | None = None) -> Any:
    return await service.request("PATCH", f"/api/v1/teammates/{teammate_id}", json=body, token=token)


def _offered(model: ModelFixture, request: int = -1) -> set[str]:
    names = {tool["function"]["name"] for tool in model.requests[request].get("tools", [])}
    return names - {"read_result"}


async def _settled(service: Service) -> None:
    with anyio.fail_after(WAIT_SECONDS):
        await service.settled()


async def _writes(service: Service, name: str = "tools") -> str:
    """How many times the fixture's `write` ran (`writes` answers the count)."""
    return str((await call(service, f"{name}__writes"))["content"][0]["text"])


async def _audit(service: Service, action: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = await service.get("/api/v1/audit", params={"action": action})
    return rows


async def test_org4_org3_an_edit_changes_exactly_what_the_next_turn_is_offered_and_is_written_down(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools, more = await _servers(service, upstream, model)
    teammate = await _teammate(service, tools["lookup"]["server_id"], instructions="Be brief.")
    conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", expect=201)
    turns = f"/api/v1/conversations/{conversation['id']}/turns"
    model.replies.append({"text": "Hello."})
    await service.post(turns, {"message": "hi"})
    assert _offered(model) == {"tools__lookup", "tools__write", "tools__writes"}
    assert model.requests[-1]["model"] == "scripted"

    changed = await _patch(
        service,
        teammate["id"],
        {"name": "writer", "instructions": "Be thorough.", "server_ids": [more["lookup"]["server_id"]], "model": "big"},
    )
    assert changed.status_code == 200, changed.text
    shown = changed.json()
    assert (shown["name"], shown["instructions"], shown["model"]) == ("writer", "Be thorough.", "big")
    assert shown["server_ids"] == [more["lookup"]["server_id"]]
    assert set(shown["tools"]) == {"more__lookup", "more__write", "more__writes"}
    assert await service.get(f"/api/v1/teammates/{teammate['id']}") == shown
    model.replies.append({"text": "Hello again."})
    await service.post(turns, {"message": "hi again"})
    assert _offered(model) == {"more__lookup", "more__write", "more__writes"}, "exactly the new servers' tools"
    system = json.dumps(model.requests[-1]["messages"][0])
    assert "Be thorough." in system
    assert "Be brief." not in system
    assert model.requests[-1]["model"] == "big"

    [row] = await _audit(service, "teammate.update")
    assert row["target"] == teammate["id"]
    assert row["old"] == {
        "name": "helper",
        "instructions": "Be brief.",
        "model": None,
        "servers": [tools["lookup"]["server_id"]],
    }
    assert row["new"] == {
        "name": "writer",
        "instructions": "Be thorough.",
        "model": "big",
        "servers": [more["lookup"]["server_id"]],
    }
    cleared = await _patch(service, teammate["id"], {"model": None})
    assert cleared.json()["model"] is None, "null: the organization's model again"
    same = await _patch(service, teammate["id"], {"name": "writer"})
    assert same.status_code == 200
    assert len(await _audit(service, "teammate.update")) == 2, "a change that changes nothing is not written down"


@pytest.mark.parametrize(
    ("role", "patched", "deleted"), [("owner", 200, 204), ("admin", 200, 204), ("member", 403, 403)]
)
async def test_org4_only_owners_and_admins_change_or_delete_a_teammate(
    service: Service, upstream: str, model: ModelFixture, role: str, patched: int, deleted: int
) -> None:
    tools, _ = await _servers(service, upstream, model)
    teammate = await _teammate(service, tools["lookup"]["server_id"])
    token = None if role == "owner" else await service.add_member(f"{role}@acme.test", role)
    answer = await _patch(service, teammate["id"], {"instructions": "Changed."}, token=token)
    assert answer.status_code == patched, answer.text
    gone = await service.request("DELETE", f"/api/v1/teammates/{teammate['id']}", token=token)
    assert gone.status_code == deleted, gone.text
    if deleted == 403:
        assert answer.json()["error"]["code"] == gone.json()["error"]["code"] == "forbidden"
        assert await service.get(f"/api/v1/teammates/{teammate['id']}") == teammate, (
            "a member's request changed nothing"
        )
        assert await _audit(service, "teammate.update") == []
        assert await _audit(service, "teammate.delete") == []
    else:
        assert gone.content == b""
        assert await service.get("/api/v1/teammates") == []


async def test_org4_api6_an_edit_is_checked_as_creating_is_and_another_organizations_ids_are_unknown(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools, _ = await _servers(service, upstream, model)
    teammate = await _teammate(service, tools["lookup"]["server_id"])
    await service.post("/api/v1/teammates", {"name": "other"}, expect=201)
    globex = await service.add_org("globex", "owner@globex.test")
    theirs = await service.request(
        "POST",
        "/api/v1/servers",
        json={"name": "theirs", "url": upstream, "bearer_token": TOKEN},
        token=globex.owner_token,
    )
    assert theirs.status_code == 201, theirs.text
    their_server = theirs.json()["id"]
    refusals: list[tuple[Any, int, str]] = [
        ({}, 422, "invalid_request"),
        ({"name": ""}, 422, "invalid_request"),
        ({"name": "x" * 101}, 422, "invalid_request"),
        ({"instructions": 5}, 422, "invalid_request"),
        ({"server_ids": "all"}, 422, "invalid_request"),
        ({"server_ids": ["nope", their_server]}, 422, "unknown_server"),
        ({"name": "other"}, 409, "name_taken"),
    ]
    for body, status, code in refusals:
        answer = await _patch(service, teammate["id"], body)
        assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), (body, answer.text)
    unknown = await _patch(service, teammate["id"], {"server_ids": ["nope", their_server]})
    message = unknown.json()["error"]["message"]
    assert "'nope'" in message, "every unknown id is named"
    assert repr(their_server) in message, "every unknown id is named"
    assert await service.get(f"/api/v1/teammates/{teammate['id']}") == teammate, "nothing changed"

    mine = await service.request(
        "POST", "/api/v1/teammates", json={"name": "spy", "server_ids": [their_server]}, token=globex.owner_token
    )
    assert mine.status_code == 201
    spy = mine.json()["id"]
    for method, body in (("GET", None), ("PATCH", {"instructions": "mine now"}), ("DELETE", None)):
        answer = await service.request(method, f"/api/v1/teammates/{spy}", json=body)
        assert answer.status_code == 404, (method, answer.text)
        assert answer.json()["error"]["code"] == "not_found"
        answer = await service.request(
            method, f"/api/v1/teammates/{teammate['id']}", json=body, token=globex.owner_token
        )
        assert answer.status_code == 404, (method, answer.text)
    assert (await service.get(f"/api/v1/teammates/{spy}", token=globex.owner_token))["instructions"] == ""


async def test_org4_org7_a_deleted_teammate_keeps_its_records_and_takes_no_new_conversation_or_turn(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools, _ = await _servers(service, upstream, model)
    teammate = await _teammate(service, tools["lookup"]["server_id"])
    member = await service.add_member("member@acme.test")
    conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", token=member, expect=201)
    model.replies.extend([{"tool_calls": [{"name": "tools__lookup", "arguments": {"key": "k1"}}]}, {"text": "Found."}])
    turn = await service.post(f"/api/v1/conversations/{conversation['id']}/turns", {"message": "look"}, token=member)
    assert turn["status"] == "done"

    gone = await service.request("DELETE", f"/api/v1/teammates/{teammate['id']}")
    assert gone.status_code == 204, gone.text
    assert await service.get("/api/v1/teammates") == [], "a deleted teammate is not listed"
    shown = await service.get(f"/api/v1/teammates/{teammate['id']}")
    assert shown["deleted_at"] is not None
    [listed] = await service.get(f"/api/v1/teammates/{teammate['id']}/conversations", token=member)
    assert listed["id"] == conversation["id"]
    kept = await service.get(f"/api/v1/conversations/{conversation['id']}", token=member)
    assert [item["reply"] for item in kept["turns"]] == ["Found."]
    traced = await service.get(f"/api/v1/turns/{turn['id']}")
    assert [item["tool"] for item in traced["trace"]] == ["tools__lookup"], "its trace is still readable"

    asked = len(model.requests)
    for path, body in (
        (f"/api/v1/teammates/{teammate['id']}/conversations", {}),
        (f"/api/v1/conversations/{conversation['id']}/turns", {"message": "again"}),
    ):
        refused = await service.request("POST", path, json=body, token=member)
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["code"] == "teammate_deleted"
        assert "deleted" in refused.json()["error"]["message"]
    assert len(model.requests) == asked, "the model was not asked"
    assert len(kept["turns"]) == len(
        (await service.get(f"/api/v1/conversations/{conversation['id']}", token=member))["turns"]
    )
    changes: list[tuple[str, dict[str, str] | None]] = [("PATCH", {"name": "back"}), ("DELETE", None)]
    for method, change in changes:
        again = await service.request(method, f"/api/v1/teammates/{teammate['id']}", json=change)
        assert again.status_code == 409, again.text
        assert again.json()["error"]["code"] == "teammate_deleted"
    [row] = await _audit(service, "teammate.delete")
    assert (row["target"], row["old"], row["new"]) == (teammate["id"], {"name": "helper"}, {"declined_approvals": 0})
    assert await _audit(service, "teammate.create"), "the earlier rows stay"


async def _parked(service: Service, tools: dict[str, Any], model: ModelFixture) -> tuple[dict[str, Any], str, str]:
    """A member's turn with a teammate allowed `tools`, parked on an ask-first `tools__write`: teammate, turn,
    approval."""
    teammate = await _teammate(service, tools["lookup"]["server_id"])
    member = await service.add_member("member@acme.test")
    conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", token=member, expect=201)
    model.replies.extend(
        [{"tool_calls": [{"name": "tools__write", "arguments": {"note": "hello"}}]}, {"text": "Done."}]
    )
    parked = await service.post(
        f"/api/v1/conversations/{conversation['id']}/turns", {"message": "note"}, token=member, expect=202
    )
    [waiting] = [item for item in parked["calls"] if item["status"] == "waiting_for_approval"]
    return teammate, parked["id"], waiting["approval_id"]


async def test_org5_a_call_parked_before_its_server_was_taken_from_the_teammate_never_runs_on_approval(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools, more = await _servers(service, upstream, model)
    teammate, turn_id, approval_id = await _parked(service, tools, model)
    changed = await _patch(service, teammate["id"], {"server_ids": [more["lookup"]["server_id"]]})
    assert changed.status_code == 200, changed.text

    approved = await service.post(f"/api/v1/approvals/{approval_id}/approve")
    assert approved["ok"] is False
    assert approved["error"]["code"] == "no_access", approved
    await _settled(service)
    assert await _writes(service) == "0", "the saved call never reached the server"
    turn = await service.get(f"/api/v1/turns/{turn_id}")
    assert turn["status"] == "done"
    assert "no_access" in json.dumps(model.tool_messages(-1)), "the model was told it may not run"
    assert _offered(model) == {"more__lookup", "more__write", "more__writes"}, "the turn goes on with what it has now"


async def test_org5_deleting_a_teammate_declines_its_pending_approvals_and_ends_its_parked_turn(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools, _ = await _servers(service, upstream, model)
    teammate, turn_id, approval_id = await _parked(service, tools, model)
    asked = len(model.requests)
    gone = await service.request("DELETE", f"/api/v1/teammates/{teammate['id']}")
    assert gone.status_code == 204, gone.text

    [declined] = await service.get("/api/v1/approvals", params={"status": "declined"})
    assert declined["id"] == approval_id
    assert declined["decided_by"] is not None
    assert declined["decided_at"] is not None
    assert declined["result"]["error"]["code"] == "teammate_deleted", "recorded as declined by the deletion"
    assert await service.get("/api/v1/approvals", params={"status": "pending"}) == []
    late = await service.request("POST", f"/api/v1/approvals/{approval_id}/approve")
    assert late.status_code == 409, late.text
    assert late.json()["error"]["code"] == "already_decided"
    await _settled(service)
    turn = await service.get(f"/api/v1/turns/{turn_id}")
    assert turn["status"] == "model_error", turn
    assert "the teammate was deleted" in turn["error"]
    assert len(model.requests) == asked, "the model was not asked again for a teammate that is gone"
    assert await _writes(service) == "0", "nothing ran"
    [row] = await _audit(service, "teammate.delete")
    assert row["new"] == {"declined_approvals": 1}


async def test_org5_a_turn_running_when_its_teammate_loses_a_server_cannot_call_it_from_its_next_call_on(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    """The turn is held by a server's question (it runs, in this process) while an owner takes a server away."""
    tools, _ = await _servers(service, upstream, model)
    await set_policy(service, tools["write"], "run_freely")
    async with serve_http_in_process("elicits", "streamable-http") as elicits:
        asks = by_tool(await register(service, elicits, name="asks", token=None))
        await set_policy(service, asks["sign_in"], "run_freely")
        teammate = await service.post(
            "/api/v1/teammates",
            {"name": "helper", "server_ids": [tools["lookup"]["server_id"], asks["sign_in"]["server_id"]]},
            expect=201,
        )
        conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", expect=201)
        model.replies.extend(
            [
                {"tool_calls": [{"name": "asks__sign_in", "arguments": {}}]},
                {"tool_calls": [{"name": "tools__write", "arguments": {"note": "late"}}]},
                {"text": "Tried."},
            ]
        )
        held = await service.post(
            f"/api/v1/conversations/{conversation['id']}/turns", {"message": "sign in, then write"}, expect=202
        )
        assert held["status"] == "waiting_for_answer"
        assert "tools__write" in _offered(model, 0)
        changed = await _patch(service, teammate["id"], {"server_ids": [asks["sign_in"]["server_id"]]})
        assert changed.status_code == 200, changed.text
        [question] = held["questions"]
        await service.post(
            f"/api/v1/questions/{question['id']}/answer",
            {"action": "accept", "content": {"username": "ada", "password": "pw"}},
        )
        await _settled(service)
    turn = await service.get(f"/api/v1/turns/{held['id']}")
    assert turn["reply"] == "Tried.", turn
    calls = {item["tool"]: item for item in turn["calls"]}
    assert calls["tools__write"]["status"] == "refused", calls
    assert "may no longer use this tool" in json.dumps(model.tool_messages(-1)), "the model was told why"
    refused = [step for step in turn["trace"] if step["tool"] == "tools__write"]
    assert [(step["status"], step["error"]) for step in refused] == [("refused", "no_access")], "its trace shows it"
    assert await _writes(service) == "0", "the write never reached the server it no longer has"
