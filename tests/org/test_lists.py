"""The organization's read endpoints the web console lists from, through the JSON API on SQLite and PostgreSQL:
members and tokens (ORG-1), a member's conversations with a teammate (ORG-4), an assistant's publications (ORG-6),
and what deleting a server would affect (ORG-8); each a JSON array, another organization's ids 404 (API-6)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from mcpyard.org.keys._tokens import token_hash
from mcpyard.secrets import forms_of
from tests.conftest import Home
from tests.model.openai_fixture import ModelFixture, serve_model
from tests.org._flows import by_tool, register, set_policy
from tests.org._service import Service, running_service

pytestmark = pytest.mark.anyio


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


@pytest.fixture
def model() -> Iterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


async def _status(service: Service, method: str, path: str, token: str | None = None) -> int:
    return (await service.request(method, path, token=token)).status_code


async def test_org1_api6_any_member_lists_the_organizations_members_by_email_and_only_theirs(
    service: Service,
) -> None:
    member = await service.add_member("zed@acme.test")
    await service.add_member("admin@acme.test", role="admin")
    other = await service.add_org("globex", "owner@globex.test")
    listed = await service.get("/api/v1/members", token=member)
    assert [(item["email"], item["role"]) for item in listed] == [
        ("admin@acme.test", "admin"),
        ("owner@acme.test", "owner"),
        ("zed@acme.test", "member"),
    ]
    assert all(set(item) == {"id", "email", "role", "created_at"} for item in listed)
    assert all(item["created_at"].endswith("+00:00") for item in listed), "ISO times, in UTC"
    assert "$argon2" not in service.responses[-1], "never a password hash"
    [theirs] = await service.get("/api/v1/members", token=other.owner_token)
    assert theirs["email"] == "owner@globex.test", "another organization's members are not listed"


async def test_org1_api6_the_tokens_list_shows_the_callers_own_live_tokens_newest_first_never_a_token_or_hash(
    service: Service,
) -> None:
    ci = await service.post("/api/v1/tokens", {"label": "ci"}, expect=201)
    spare = await service.post("/api/v1/tokens", {"label": "spare"}, expect=201)
    member = await service.add_member("member@acme.test")
    listed = await service.get("/api/v1/tokens")
    shown = service.responses[-1]
    assert [item["label"] for item in listed] == ["spare", "ci", ""], "newest first; the owner's first token last"
    assert [item["id"] for item in listed[:2]] == [spare["id"], ci["id"]]
    assert all(set(item) == {"id", "label", "created_at", "last_used_at"} for item in listed)
    assert listed[-1]["last_used_at"] is not None, "the token this request came with was used"
    assert listed[0]["last_used_at"] is None, "a token never sent was never used"
    for token in (ci["token"], spare["token"], service.org.owner_token):
        assert token_hash(token) not in shown, "never a token's hash"
        for form in forms_of(token):
            assert form not in shown, "never a token"
    [own] = await service.get("/api/v1/tokens", token=member)
    assert own["id"] not in {item["id"] for item in listed}, "a member lists their own tokens, no one else's"

    assert await _status(service, "DELETE", f"/api/v1/tokens/{ci['id']}") == 204
    after = await service.get("/api/v1/tokens")
    assert [item["id"] for item in after[:1]] == [spare["id"]]
    assert ci["id"] not in {item["id"] for item in after}, "a revoked token leaves the list"


async def test_org4_api6_a_members_conversations_with_a_teammate_list_newest_first_and_read_only_by_that_member(
    service: Service, model: ModelFixture
) -> None:
    response = await service.request("PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted"})
    assert response.status_code == 200, response.text
    teammate = await service.post("/api/v1/teammates", {"name": "helper"}, expect=201)
    member = await service.add_member("member@acme.test")
    conversations = f"/api/v1/teammates/{teammate['id']}/conversations"
    older = await service.post(conversations, token=member, expect=201)
    opening = "Tell me everything about " + "x" * 200
    model.replies.extend([{"text": "First."}, {"text": "Second."}])
    first = await service.post(
        f"/api/v1/conversations/{older['id']}/turns", {"message": opening}, token=member, expect=200
    )
    second = await service.post(
        f"/api/v1/conversations/{older['id']}/turns", {"message": "and more"}, token=member, expect=200
    )
    newer = await service.post(conversations, token=member, expect=201)
    await service.post(conversations, expect=201)  # the owner's own, with the same teammate

    listed = await service.get(conversations, token=member)
    assert [item["id"] for item in listed] == [newer["id"], older["id"]], "the caller's own, newest first"
    assert listed[0] == {**listed[0], "teammate_id": teammate["id"], "turns": 0, "first_message": ""}
    assert listed[1] == {**listed[1], "turns": 2, "first_message": opening[:120]}
    assert set(listed[1]) == {"id", "teammate_id", "created_at", "turns", "first_message"}

    read = await service.get(f"/api/v1/conversations/{older['id']}", token=member)
    assert read["id"] == older["id"]
    assert read["teammate_id"] == teammate["id"]
    assert read["created_at"] == listed[1]["created_at"]
    assert [turn["id"] for turn in read["turns"]] == [first["id"], second["id"]], "its turns, oldest first"
    assert read["turns"][0] == first, "each turn as the turn's own answer showed it"
    assert [turn["reply"] for turn in read["turns"]] == ["First.", "Second."]

    other = await service.add_member("other@acme.test")
    assert await service.get(conversations, token=other) == []
    assert await _status(service, "GET", f"/api/v1/conversations/{older['id']}", token=other) == 404
    assert await _status(service, "GET", f"/api/v1/conversations/{older['id']}") == 404, "not even an owner's"
    elsewhere = await service.add_org("globex", "owner@globex.test")
    assert await _status(service, "GET", conversations, token=elsewhere.owner_token) == 404
    assert await _status(service, "GET", f"/api/v1/conversations/{older['id']}", token=elsewhere.owner_token) == 404
    assert await _status(service, "GET", "/api/v1/conversations/no-such-conversation", token=member) == 404


async def test_org6_api6_an_assistants_publications_list_newest_first_as_publishing_answered_them(
    service: Service, upstream: str
) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["lookup"], "run_freely")
    assistant = await service.post(
        "/api/v1/assistants", {"name": "Desk", "tool_ids": [tools["lookup"]["id"]]}, expect=201
    )
    publications = f"/api/v1/assistants/{assistant['id']}/publications"
    assert await service.get(publications) == []
    first = await service.post(f"/api/v1/assistants/{assistant['id']}/publish")
    second = await service.post(f"/api/v1/assistants/{assistant['id']}/publish")
    member = await service.add_member("member@acme.test")
    assert await service.get(publications, token=member) == [second, first], "any member reads them, newest first"
    assert first["tools"] == [
        {
            "server_id": tools["lookup"]["server_id"],
            "tool": "lookup",
            "definition_hash": tools["lookup"]["definition_hash"],
        }
    ]
    other = await service.add_org("globex", "owner@globex.test")
    assert await _status(service, "GET", publications, token=other.owner_token) == 404
    assert await _status(service, "GET", "/api/v1/assistants/no-such-assistant/publications") == 404


async def test_org8_api6_a_servers_selections_name_what_deleting_it_would_affect_for_owners_and_admins_only(
    service: Service, upstream: str
) -> None:
    deleting = await register(service, upstream)
    kept = await register(service, upstream, name="kept")
    mine, theirs = by_tool(deleting), by_tool(kept)

    async def assistant(name: str, *tools: dict[str, Any]) -> str:
        created = await service.post(
            "/api/v1/assistants", {"name": name, "tool_ids": [tool["id"] for tool in tools]}, expect=201
        )
        return str(created["id"])

    async def teammate(name: str, *servers: dict[str, Any]) -> str:
        created = await service.post(
            "/api/v1/teammates", {"name": name, "server_ids": [server["id"] for server in servers]}, expect=201
        )
        return str(created["id"])

    zeta = await assistant("Zeta", mine["lookup"], theirs["lookup"])
    alpha = await assistant("Alpha", mine["write"])
    untouched = await assistant("Beta", theirs["write"])
    bob = await teammate("bob", deleting)
    al = await teammate("al", kept, deleting)
    await teammate("cy", kept)

    selections = f"/api/v1/servers/{deleting['id']}/selections"
    assert await service.get(selections) == [
        {"kind": "assistant", "id": alpha, "name": "Alpha"},
        {"kind": "assistant", "id": zeta, "name": "Zeta"},
        {"kind": "teammate", "id": al, "name": "al"},
        {"kind": "teammate", "id": bob, "name": "bob"},
    ]
    admin = await service.add_member("admin@acme.test", role="admin")
    assert len(await service.get(selections, token=admin)) == 4
    member = await service.add_member("member@acme.test")
    forbidden = await service.request("GET", selections, token=member)
    assert forbidden.status_code == 403
    assert forbidden.json()["error"]["code"] == "forbidden"
    other = await service.add_org("globex", "owner@globex.test")
    assert await _status(service, "GET", selections, token=other.owner_token) == 404

    assert await _status(service, "DELETE", f"/api/v1/servers/{deleting['id']}") == 204
    review = {item["id"]: item["needs_review"] for item in await service.get("/api/v1/assistants")}
    assert review == {alpha: True, zeta: True, untouched: False}, "deleting marked exactly the assistants listed"
    assert await _status(service, "GET", selections) == 404, "a deleted server has no selections to show"
