"""Servers' questions during turns, through the organization's API on SQLite and PostgreSQL, with the `elicits` fixture
server and our OpenAI-compatible model endpoint: a teammate's turn waits while its tool's question is in the inbox and
goes on with the answer; a visitor's or a preview's question is refused at once with the reason and nothing is
parked; an approved call's question goes to the inbox too; a question its process left behind is swept as expired
(ORG-4, ORG-5, ORG-6, ORG-7, API-6, SEC-2, SEC-3, NET-2)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import anyio
import pytest

from mcpyard.org.services._questions import sweep_questions
from mcpyard.org.store._models import Conversation, Question, TurnRow, utcnow
from tests.conftest import Home
from tests.model.openai_fixture import ModelFixture, serve_model
from tests.org._flows import assert_never_shown, by_tool, register, set_policy
from tests.org._service import Service, running_service
from tests.org.test_questions import KEY_FORM, TYPED, assert_nowhere_in_the_database, settled
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio


@pytest.fixture
async def asking() -> AsyncIterator[str]:
    async with serve_http_in_process("elicits", "streamable-http") as url:
        yield url


@pytest.fixture
def model() -> Iterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


async def _set_up(service: Service, asking: str, model: ModelFixture, policy: str = "run_freely") -> dict[str, Any]:
    tools = by_tool(await register(service, asking, name="asks", token=None))
    for tool in tools.values():
        await set_policy(service, tool, policy)
    answer = await service.request("PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted"})
    assert answer.status_code == 200, answer.text
    return tools


async def _conversation(service: Service, server_id: str, token: str | None = None) -> str:
    teammate = await service.post("/api/v1/teammates", {"name": "helper", "server_ids": [server_id]}, expect=201)
    conversation: dict[str, Any] = await service.post(
        f"/api/v1/teammates/{teammate['id']}/conversations", token=token, expect=201
    )
    return str(conversation["id"])


@pytest.mark.parametrize("era", ["new", "handshake"])
async def test_org5_org7_a_teammates_turn_waits_for_its_tools_question_and_goes_on_once_an_admin_answers(
    service: Service, model: ModelFixture, era: str
) -> None:
    async with serve_http_in_process(
        "elicits", "streamable-http", ["--handshake"] if era == "handshake" else []
    ) as asking:
        await _the_turn_waits_and_goes_on(service, asking, model)


async def _the_turn_waits_and_goes_on(service: Service, asking: str, model: ModelFixture) -> None:
    tools = await _set_up(service, asking, model)
    member = await service.add_member("member@acme.test")
    admin = await service.add_member("admin@acme.test", "admin")
    conversation = await _conversation(service, tools["sign_in"]["server_id"], member)
    model.replies.extend([{"tool_calls": [{"name": "asks__sign_in", "arguments": {}}]}, {"text": "Signed in."}])
    parked = await service.post(
        f"/api/v1/conversations/{conversation}/turns", {"message": "sign me in"}, token=member, expect=202
    )
    assert parked["status"] == "waiting_for_answer"
    [question] = parked["questions"]
    assert (question["status"], question["tool"], question["turn_id"]) == ("pending", "asks__sign_in", parked["id"])
    busy = await service.request(
        "POST", f"/api/v1/conversations/{conversation}/turns", json={"message": "more"}, token=member
    )
    assert busy.status_code == 409, "the conversation waits for its turn"
    [inbox] = await service.get("/api/v1/questions", params={"status": "pending"}, token=admin)
    assert inbox["id"] == question["id"]
    await service.post(
        f"/api/v1/questions/{question['id']}/answer",
        {"action": "accept", "content": {"username": "ada", "password": TYPED}},
        token=admin,
    )
    await settled(service)
    turn = await service.get(f"/api/v1/turns/{parked['id']}", token=member)
    assert turn["status"] == "done", turn
    assert turn["reply"] == "Signed in."
    assert [(item["tool"], item["status"]) for item in turn["calls"]] == [("asks__sign_in", "ran")]
    assert [item["status"] for item in turn["questions"]] == ["accepted"]
    seen = json.dumps(model.tool_messages(-1))
    assert f"action=accept user=ada password_length={len(TYPED)}" in seen, "the tool got the answer"
    shown = await service.get(f"/api/v1/conversations/{conversation}", token=member)
    assert shown["turns"][0]["questions"][0]["id"] == question["id"]
    assert_never_shown(service, TYPED)
    assert TYPED not in json.dumps(model.requests)


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_org5_a_declined_or_cancelled_question_goes_back_to_the_tool_and_the_turn_ends(
    service: Service, asking: str, model: ModelFixture, action: str
) -> None:
    tools = await _set_up(service, asking, model)
    conversation = await _conversation(service, tools["sign_up"]["server_id"])
    model.replies.extend([{"tool_calls": [{"name": "asks__sign_up", "arguments": {}}]}, {"text": "As you wish."}])
    parked = await service.post(f"/api/v1/conversations/{conversation}/turns", {"message": "sign up"}, expect=202)
    [question] = parked["questions"]
    await service.post(f"/api/v1/questions/{question['id']}/answer", {"action": action})
    await settled(service)
    turn = await service.get(f"/api/v1/turns/{parked['id']}")
    assert (turn["status"], turn["reply"]) == ("done", "As you wish.")
    assert f"action={action} content=null" in json.dumps(model.tool_messages(-1))


async def test_sec3_a_secret_the_server_echoes_reaches_the_model_as_a_label(
    service: Service, asking: str, model: ModelFixture, database_url: str
) -> None:
    tools = await _set_up(service, asking, model)
    conversation = await _conversation(service, tools["ask_form"]["server_id"])
    ask = {"name": "asks__ask_form", "arguments": {"message": "Your key", "schema": KEY_FORM}}
    model.replies.extend([{"tool_calls": [ask]}, {"text": "Stored."}])
    parked = await service.post(f"/api/v1/conversations/{conversation}/turns", {"message": "key"}, expect=202)
    [question] = parked["questions"]
    await service.post(
        f"/api/v1/questions/{question['id']}/answer", {"action": "accept", "content": {"api_key": TYPED}}
    )
    await settled(service)
    turn = await service.get(f"/api/v1/turns/{parked['id']}")
    assert turn["status"] == "done"
    seen = json.dumps(model.tool_messages(-1))
    assert "%typed secret%" in seen
    assert TYPED not in json.dumps(model.requests)
    assert TYPED not in json.dumps(turn)
    assert_never_shown(service, TYPED)
    await assert_nowhere_in_the_database(database_url, TYPED)


async def test_org6_a_visitors_turn_refuses_the_servers_question_at_once_and_parks_nothing(
    service: Service, asking: str, model: ModelFixture
) -> None:
    tools = await _set_up(service, asking, model)
    assistant = await service.post(
        "/api/v1/assistants", {"name": "Desk", "tool_ids": [tools["sign_up"]["id"]]}, expect=201
    )
    await service.post(f"/api/v1/assistants/{assistant['id']}/publish")
    model.replies.extend([{"tool_calls": [{"name": "asks__sign_up", "arguments": {}}]}, {"text": "Sorry."}])
    with anyio.fail_after(30):
        visitor = await service.client.post(f"/public/assistants/{assistant['slug']}/turns", json={"message": "hi"})
    assert visitor.status_code == 200, visitor.text
    assert visitor.json()["reply"] == "Sorry."
    heard = json.dumps(model.tool_messages(-1))
    assert "mcpyard did not ask the user" in heard
    assert "visitors are anonymous" in heard, "the server hears why it was not asked"
    model.replies.extend([{"tool_calls": [{"name": "asks__sign_up", "arguments": {}}]}, {"text": "Previewed."}])
    preview = await service.post(f"/api/v1/assistants/{assistant['id']}/preview", {"message": "hi"})
    assert preview["reply"] == "Previewed."
    assert "a preview runs as visitors' turns do" in json.dumps(model.tool_messages(-1))
    assert await service.get("/api/v1/questions") == [], "nothing was parked"


async def test_org5_an_approved_calls_question_goes_to_the_inbox_and_its_result_becomes_the_approvals(
    service: Service, asking: str, model: ModelFixture
) -> None:
    tools = await _set_up(service, asking, model, policy="ask_first")
    conversation = await _conversation(service, tools["sign_up"]["server_id"])
    model.replies.extend([{"tool_calls": [{"name": "asks__sign_up", "arguments": {}}]}, {"text": "Done."}])
    parked = await service.post(f"/api/v1/conversations/{conversation}/turns", {"message": "sign up"}, expect=202)
    assert parked["status"] == "waiting_for_approval"
    approval_id = parked["calls"][0]["approval_id"]
    running = await service.post(f"/api/v1/approvals/{approval_id}/approve", expect=202)
    assert running["approval"] == {"id": approval_id, "status": "running"}
    question_id = running["question"]["id"]
    shown = await service.get(f"/api/v1/questions/{question_id}")
    assert shown["turn_id"] == parked["id"], "it shows with the turn it belongs to"
    await service.post(
        f"/api/v1/questions/{question_id}/answer",
        {"action": "accept", "content": {"name": "Bo", "email": "bo@example.org", "age": 40}},
    )
    await settled(service)
    [approval] = await service.get("/api/v1/approvals", params={"status": "done"})
    assert approval["result"]["ok"] is True
    assert "action=accept" in approval["result"]["text"]
    turn = await service.get(f"/api/v1/turns/{parked['id']}")
    assert (turn["status"], turn["reply"]) == ("done", "Done."), "the turn went on after the approved run"


async def test_org9_a_question_no_process_holds_any_more_is_swept_as_expired_and_its_turn_ends(
    service: Service,
) -> None:
    """Storage: a process that stopped renewing its question (it crashed) leaves it to any replica's sweep."""
    assert service.app is not None
    svc = service.app.state.org.service
    member = (await service.get("/api/v1/me"))["id"]
    async with svc.db.begin() as session:
        conversation = Conversation(org_id=service.org.org_id, member_id=member, messages=[])
        session.add(conversation)
        await session.flush()
        turn = TurnRow(
            org_id=service.org.org_id,
            conversation_id=conversation.id,
            message="hi",
            status="waiting_for_answer",
            calls=[],
        )
        session.add(turn)
        await session.flush()
        now = utcnow()
        for held, turn_id in ((now - timedelta(seconds=1), turn.id), (now + timedelta(minutes=1), None)):
            session.add(
                Question(
                    org_id=service.org.org_id,
                    member_id=member,
                    server="asks",
                    turn_id=turn_id,
                    mode="url",
                    message="open it",
                    form=[],
                    url="https://example.org/",
                    status="pending",
                    why="",
                    expires_at=now + timedelta(minutes=10),
                    held_until=held,
                )
            )
    assert await sweep_questions(svc) == 1
    questions = {item["turn_id"]: item for item in await service.get("/api/v1/questions")}
    assert questions[turn.id]["status"] == "expired"
    assert "its call ended" in questions[turn.id]["why"]
    assert questions[None]["status"] == "pending", "a question its process still holds stays"
    ended = await service.get(f"/api/v1/turns/{turn.id}")
    assert ended["status"] == "model_error"
    assert "waited for an answer" in ended["error"]
