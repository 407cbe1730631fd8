"""Servers' questions in the organization, through its JSON API, on SQLite and PostgreSQL, against the `elicits` fixture
server over streamable HTTP: a member's call parks its server's question in the inbox, the member, an owner or an
admin answers it once (accept with the form's content, decline, cancel), the call goes on with the answer; a second
answer is refused, an unanswered question expires, another member's or organization's is not found, and nothing
typed into a secret field is ever shown or stored in clear (ORG-5, ORG-7, API-6, SEC-2, SEC-3, NET-2)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from sqlalchemy import select

from mcpyard.connect import EgressGuard
from mcpyard.org.store._db import open_database
from mcpyard.org.store._models import Question
from tests.conftest import Home
from tests.org._flows import assert_never_shown, by_tool, call, register, set_policy
from tests.org._service import Service, running_service
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 30
TYPED = "typed-api-key-5c0ffee9d7a4b3e2"
"""What a person types into a secret-looking field: it must never be shown or kept in clear."""
KEY_FORM = {
    "type": "object",
    "properties": {"label": {"type": "string"}, "api_key": {"type": "string", "title": "API key"}},
    "required": ["api_key"],
}


@pytest.fixture
async def asking() -> AsyncIterator[str]:
    """The `elicits` fixture server over streamable HTTP."""
    async with serve_http_in_process("elicits", "streamable-http") as url:
        yield url


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


async def asks(service: Service, url: str) -> dict[str, dict[str, Any]]:
    """The fixture registered as `asks`, every tool run freely."""
    tools = by_tool(await register(service, url, name="asks", token=None))
    for tool in tools.values():
        await set_policy(service, tool, "run_freely")
    return tools


async def settled(service: Service) -> None:
    with anyio.fail_after(WAIT_SECONDS):
        await service.settled()


def said(result: dict[str, Any]) -> tuple[str, Any]:
    """The fixture's `action=… content=…` line, as (action, content)."""
    text = result["content"][0]["text"]
    action, _, content = text.partition(" content=")
    return action.removeprefix("action="), json.loads(content)


async def test_org5_api6_a_members_call_parks_its_servers_question_and_an_admin_answers_it_once(
    service: Service, asking: str
) -> None:
    await asks(service, asking)
    member = await service.add_member("member@acme.test")
    admin = await service.add_member("admin@acme.test", "admin")
    parked = await call(service, "asks__sign_up", token=member, expect=202)
    question_id = parked["question"]["id"]
    assert parked["question"]["status"] == "pending"
    [pending] = await service.get("/api/v1/questions", params={"status": "pending"}, token=member)
    assert pending["id"] == question_id, "the member who started the call sees it"
    assert (pending["server"], pending["tool"], pending["mode"]) == ("asks", "asks__sign_up", "form")
    assert pending["message"] == "Sign up for the fixture service"
    assert pending["call_id"] == parked["call_id"]
    fields = {item["name"]: item for item in pending["fields"]}
    assert {name: item["kind"] for name, item in fields.items()} == {
        "name": "string",
        "email": "string",
        "age": "integer",
        "plan": "choice",
        "newsletter": "boolean",
        "score": "number",
        "topics": "choices",
    }
    assert fields["plan"]["default"] == "free"
    assert fields["email"]["format"] == "email"
    assert [c["title"] for c in fields["topics"]["choices"]] == ["MCP", "AI"]
    assert pending["result"] is None

    answered = await service.post(
        f"/api/v1/questions/{question_id}/answer",
        {"action": "accept", "content": {"name": "Ada", "email": "ada@example.org", "age": 36}},
        token=admin,
    )
    assert answered["status"] == "accepted"
    assert answered["answered_by"]
    again = await service.request(
        "POST", f"/api/v1/questions/{question_id}/answer", json={"action": "decline"}, token=member
    )
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "already_decided"
    await settled(service)
    done = await service.get(f"/api/v1/questions/{question_id}", token=member)
    assert done["result"]["ok"] is True, done["result"]
    assert said(done["result"]) == (
        "accept",
        {"age": 36, "email": "ada@example.org", "name": "Ada", "newsletter": False, "plan": "free", "score": 2.5},
    ), "fields left empty take their defaults"
    assert done["result"]["call_id"] == parked["call_id"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_org5_a_question_declined_or_cancelled_tells_the_server_so(
    service: Service, asking: str, action: str
) -> None:
    await asks(service, asking)
    parked = await call(service, "asks__sign_up", expect=202)
    answered = await service.post(f"/api/v1/questions/{parked['question']['id']}/answer", {"action": action})
    assert answered["status"] == {"decline": "declined", "cancel": "cancelled"}[action]
    await settled(service)
    done = await service.get(f"/api/v1/questions/{parked['question']['id']}")
    assert said(done["result"]) == (action, None)


async def test_api6_an_answer_that_does_not_fit_the_form_is_refused_naming_fields_never_values(
    service: Service, asking: str
) -> None:
    await asks(service, asking)
    parked = await call(service, "asks__sign_up", expect=202)
    path = f"/api/v1/questions/{parked['question']['id']}/answer"
    wrong = await service.request(
        "POST", path, json={"action": "accept", "content": {"name": "A", "email": "secret-not-an-email", "age": 7}}
    )
    assert wrong.status_code == 422, wrong.text
    error = wrong.json()["error"]
    assert error["code"] == "invalid_answer"
    assert error["problems"] == [
        "Your name: must have at least 2 characters",
        "email: must be an email address, like name@example.org",
        "age: must be at least 18",
    ]
    assert "secret-not-an-email" not in wrong.text
    unfit: list[dict[str, Any]] = [
        {"action": "maybe"},
        {"action": "decline", "content": {"name": "x"}},
        {"action": "accept", "content": 3},
    ]
    for body in unfit:
        refused = await service.request("POST", path, json=body)
        assert refused.status_code == 422, (body, refused.text)
    [still] = await service.get("/api/v1/questions", params={"status": "pending"})
    assert still["id"] == parked["question"]["id"], "a refused answer leaves it pending"
    await service.post(path, {"action": "cancel"})
    await settled(service)


async def test_org5_two_answers_at_once_one_wins_and_the_other_is_told_it_was_answered(
    service: Service, asking: str
) -> None:
    await asks(service, asking)
    parked = await call(service, "asks__sign_up", expect=202)
    path = f"/api/v1/questions/{parked['question']['id']}/answer"
    admin = await service.add_member("admin@acme.test", "admin")
    answers: list[Any] = []
    ready, start = [anyio.Event(), anyio.Event()], anyio.Event()

    async def answer(token: str | None, action: str, mine: anyio.Event) -> None:
        mine.set()
        await start.wait()
        answers.append(await service.request("POST", path, json={"action": action}, token=token))

    async with anyio.create_task_group() as tg:
        tg.start_soon(answer, None, "decline", ready[0])
        tg.start_soon(answer, admin, "cancel", ready[1])
        with anyio.fail_after(10):
            for each in ready:
                await each.wait()
        start.set()
    assert sorted(response.status_code for response in answers) == [200, 409]
    lost = next(response for response in answers if response.status_code == 409)
    assert lost.json()["error"]["code"] == "already_decided"
    won = next(response for response in answers if response.status_code == 200).json()
    await settled(service)
    done = await service.get(f"/api/v1/questions/{parked['question']['id']}")
    assert done["status"] == won["status"]
    assert said(done["result"])[0] == {"declined": "decline", "cancelled": "cancel"}[won["status"]]


async def test_api6_a_question_is_only_for_its_member_owners_and_admins_and_never_for_another_organization(
    service: Service, asking: str
) -> None:
    await asks(service, asking)
    member = await service.add_member("member@acme.test")
    other = await service.add_member("other@acme.test")
    parked = await call(service, "asks__sign_up", token=member, expect=202)
    question_id = parked["question"]["id"]
    stranger = await service.add_org("globex", "owner@globex.test")
    for token in (other, stranger.owner_token):
        assert await service.get("/api/v1/questions", token=token) == []
        hidden = await service.request("GET", f"/api/v1/questions/{question_id}", token=token)
        assert hidden.status_code == 404, hidden.text
        refused = await service.request(
            "POST", f"/api/v1/questions/{question_id}/answer", json={"action": "decline"}, token=token
        )
        assert refused.status_code == 404, refused.text
    assert [item["id"] for item in await service.get("/api/v1/questions")] == [question_id], "the owner sees it"
    unauthenticated = await service.client.get("/api/v1/questions")
    assert unauthenticated.status_code == 401
    bad = await service.request("GET", "/api/v1/questions", params={"status": "someday"})
    assert bad.status_code == 422
    await service.post(f"/api/v1/questions/{question_id}/answer", {"action": "decline"}, token=member)
    await settled(service)


async def test_sec2_sec3_a_typed_secret_reaches_the_server_and_is_never_shown_nor_kept_in_clear(
    service: Service, asking: str, database_url: str
) -> None:
    await asks(service, asking)
    parked = await call(service, "asks__ask_form", {"message": "Your key, please", "schema": KEY_FORM}, expect=202)
    question_id = parked["question"]["id"]
    shown = await service.get(f"/api/v1/questions/{question_id}")
    assert shown["asks_for_secrets"] is True
    assert [item["secret"] for item in shown["fields"]] == [False, True]
    await service.post(
        f"/api/v1/questions/{question_id}/answer",
        {"action": "accept", "content": {"label": "mine", "api_key": TYPED}},
    )
    await settled(service)
    done = await service.get(f"/api/v1/questions/{question_id}")
    result = done["result"]
    assert result["ok"] is True, result
    assert said(result) == ("accept", {"api_key": "%typed secret%", "label": "mine"}), "the echo is redacted"
    for path in ("/api/v1/questions", "/api/v1/audit", "/api/v1/alerts"):
        await service.get(path)
    assert_never_shown(service, TYPED)
    async with open_database(database_url) as db, db.sessions.begin() as session:
        row = await session.scalar(select(Question).where(Question.id == question_id))
        assert row is not None
        assert (row.sealed_answer, row.key_id) == (None, None), "the sealed answer is erased once taken"
        assert row.delivered_at is not None
    await assert_nowhere_in_the_database(database_url, TYPED)


async def assert_nowhere_in_the_database(database_url: str, secret: str) -> None:
    """No row of any table holds a form of `secret` in clear (sealed bytes never match)."""
    from mcpyard.org.store._models import Base
    from mcpyard.secrets import forms_of

    async with open_database(database_url) as db, db.engine.connect() as connection:
        dumped: list[str] = []
        for table in Base.metadata.sorted_tables:
            rows = (await connection.execute(table.select())).all()
            dumped.extend(repr(tuple(row)) for row in rows)
    everything = "\n".join(dumped)
    for form in forms_of(secret):
        assert form not in everything, f"a form of the secret is stored: {form!r}"


async def test_org5_a_url_question_shows_the_checked_address_and_the_consent_goes_back(
    service: Service, asking: str
) -> None:
    await asks(service, asking)
    parked = await call(
        service, "asks__ask_url", {"message": "Pay here", "url": "https://pay.example/checkout/1"}, expect=202
    )
    shown = await service.get(f"/api/v1/questions/{parked['question']['id']}")
    assert (shown["mode"], shown["url"], shown["site"], shown["fields"]) == (
        "url",
        "https://pay.example/checkout/1",
        "pay.example",
        [],
    )
    content = await service.request(
        "POST", f"/api/v1/questions/{shown['id']}/answer", json={"action": "accept", "content": {"x": 1}}
    )
    assert content.status_code == 422, "a URL's consent carries no content"
    await service.post(f"/api/v1/questions/{shown['id']}/answer", {"action": "accept"})
    await settled(service)
    done = await service.get(f"/api/v1/questions/{shown['id']}")
    assert said(done["result"]) == ("accept", None)
    refused = await call(service, "asks__ask_url", {"message": "Pay", "url": "http://pay.example/checkout/1"})
    assert "mcpyard did not ask the user: the URL must be https" in refused["text"], "refused without asking"
    assert await service.get("/api/v1/questions", params={"status": "pending"}) == []


async def test_org5_a_question_not_answered_in_time_expires_and_the_server_hears_cancel(
    database_url: str, home: Home, asking: str
) -> None:
    async with running_service(database_url, home.data_home, question_seconds=1) as service:
        await asks(service, asking)
        parked = await call(service, "asks__sign_up", expect=202)
        await settled(service)
        done = await service.get(f"/api/v1/questions/{parked['question']['id']}")
        assert done["status"] == "expired"
        assert "not answered within" in done["why"]
        assert said(done["result"]) == ("cancel", None)
        late = await service.request(
            "POST", f"/api/v1/questions/{parked['question']['id']}/answer", json={"action": "decline"}
        )
        assert late.status_code == 409
        assert late.json()["error"]["code"] == "already_decided"


async def test_net2_a_call_waiting_for_an_answer_is_not_held_to_its_deadline_while_the_question_bounds_the_wait(
    database_url: str, home: Home, asking: str
) -> None:
    """NET-2: through an outbound guard whose deadline is 4 s, a question waits its full 7 s (then expires): the
    call's deadline waited with it, and the server hears `cancel` instead of the call timing out. (The deadline also
    bounds connecting to the server: under 4 s it can be too short on a loaded machine.)"""
    guard = EgressGuard(dev=True, deadline_secs=4)
    async with running_service(database_url, home.data_home, guard=guard, question_seconds=7) as service:
        await asks(service, asking)
        parked = await call(service, "asks__sign_up", expect=202)
        await settled(service)
        done = await service.get(f"/api/v1/questions/{parked['question']['id']}")
    assert done["status"] == "expired"
    assert done["result"]["ok"] is True, done["result"]
    assert said(done["result"]) == ("cancel", None)


async def test_org5_a_handshake_era_servers_question_reaches_the_inbox_and_its_answer_the_server(
    service: Service,
) -> None:
    """A server of the handshake era asks with a request of its own, not within the call: it still reaches the
    call's own people, and the answer goes back to it."""
    async with serve_http_in_process("elicits", "streamable-http", ["--handshake"]) as old:
        await asks(service, old)
        [server] = await service.get("/api/v1/servers")
        assert server["protocol_version"] not in MODERN_PROTOCOL_VERSIONS, server["protocol_version"]
        parked = await call(service, "asks__sign_up", expect=202)
        [pending] = await service.get("/api/v1/questions", params={"status": "pending"})
        assert pending["id"] == parked["question"]["id"]
        await service.post(
            f"/api/v1/questions/{pending['id']}/answer",
            {"action": "accept", "content": {"name": "Cy", "email": "cy@example.org", "age": 50, "plan": "pro"}},
        )
        await settled(service)
        done = await service.get(f"/api/v1/questions/{pending['id']}")
    assert said(done["result"]) == (
        "accept",
        {"age": 50, "email": "cy@example.org", "name": "Cy", "newsletter": False, "plan": "pro", "score": 2.5},
    )


async def test_api6_a_server_edited_while_its_call_waits_for_an_answer_changes_once_the_call_ended(
    service: Service, asking: str
) -> None:
    """Its change is saved and said to wait (409 `calls_in_flight`), never a failure; a refresh applies it after."""
    tools = await asks(service, asking)
    server_id = tools["sign_up"]["server_id"]
    parked = await call(service, "asks__sign_up", expect=202)
    edited = await service.request("PATCH", f"/api/v1/servers/{server_id}", json={"name": "forms"})
    assert edited.status_code == 409, edited.text
    assert edited.json()["error"]["code"] == "calls_in_flight"
    await service.post(f"/api/v1/questions/{parked['question']['id']}/answer", {"action": "decline"})
    await settled(service)
    refreshed = await service.post(f"/api/v1/servers/{server_id}/refresh")
    assert refreshed["name"] == "forms"
    assert refreshed["state"] == "connected", refreshed
    again = await call(service, "forms__ask_url", {"message": "m", "url": "https://a.example/"}, expect=202)
    assert again["question"]["status"] == "pending", "its tools run under the new name"
    await service.post(f"/api/v1/questions/{again['question']['id']}/answer", {"action": "cancel"})
    await settled(service)
