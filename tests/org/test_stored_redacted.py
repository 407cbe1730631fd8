"""What a server sends is redacted before the organization service stores it, not only before it shows it: a server
that says its own bearer token back in its tool definitions, results, errors and questions leaves no form of it in any
row of any table (SQLite and PostgreSQL) nor in any file of the service's data folder, while the definition hash stays
the hash of what the server sent, so a refresh marks nothing changed (ORG-2, ORG-3, SEC-3, CAT-2, THREATS: organization
service)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import pytest

from mcpyard import Host
from mcpyard.org.store._db import open_database
from mcpyard.secrets import forms_of
from tests.conftest import Home
from tests.model.openai_fixture import ModelFixture, serve_model
from tests.org._flows import assert_never_shown, by_tool, call, register, set_policy
from tests.org._rows import stored_texts
from tests.org._service import Service, running_service
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio

ECHOED = "srv-token-said-back-4e8a1d6c2b9f"
WAIT_SECONDS = 30


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


@pytest.fixture
def model() -> Iterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


@pytest.fixture
async def echoing() -> AsyncIterator[str]:
    """The `echoes_token` fixture server: it says back the bearer token it gets."""
    async with serve_http_in_process("echoes_token") as url:
        yield url


async def sent_hashes(url: str, root: Path) -> dict[str, str]:
    """Each tool's definition hash as the server sends it to a client with the token (a host of our own)."""
    config = root / "direct.json"
    entry = {"url": url, "headers": {"Authorization": f"Bearer {ECHOED}"}}
    config.write_text(json.dumps({"mcpServers": {"direct": entry}}), encoding="utf-8")
    (root / "ws").mkdir()
    async with Host.open(
        workspace=root / "ws", config_file=config, environ={}, config_home=root / "c", data_home=root / "d"
    ) as host:
        await host.start()
        return {entry.tool: entry.definition_hash for entry in host.catalog.entries.values()}


def holding(texts: list[tuple[str, str]], secret: str) -> list[tuple[str, str]]:
    forms = forms_of(secret)
    return [(where, text) for where, text in texts if any(form in text for form in forms)]


def files_holding(folder: Path, secret: str) -> list[str]:
    forms = [form.encode() for form in forms_of(secret)]
    return [
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and not path.is_symlink() and any(form in path.read_bytes() for form in forms)
    ]


async def test_sec3_org3_a_token_the_server_says_back_is_stored_nowhere_and_its_tools_keep_their_hashes(
    service: Service, echoing: str, home: Home, tmp_path: Path, model: ModelFixture
) -> None:
    server = await register(service, echoing, name="echo", token=ECHOED)
    assert server["state"] == "connected", server
    tools = by_tool(server)
    for name in ("leaky", "fails", "asks", "bulky"):
        await set_policy(service, tools[name], "run_freely")
    await set_policy(service, tools["whoami"], "ask_first")

    assert (await call(service, "echo__leaky", {"mode": "plain"}))["ok"] is True
    handed = await call(service, "echo__bulky", {"size": 200_000})
    assert handed["ok"] is True, handed
    failed = await call(service, "echo__fails")
    assert failed["ok"] is False, failed
    parked = await call(service, "echo__whoami", expect=202)
    approved = await service.post(f"/api/v1/approvals/{parked['approval']['id']}/approve")
    assert approved["ok"] is True, approved
    assert "my token: %token of server echo%" in approved["text"], "the result is redacted"
    asked = await call(service, "echo__asks", expect=202)
    question = await service.get(f"/api/v1/questions/{asked['question']['id']}")
    assert "%token of server echo%" in question["message"]
    await service.post(f"/api/v1/questions/{question['id']}/answer", {"action": "accept", "content": {}})
    with anyio.fail_after(WAIT_SECONDS):
        await service.settled()

    setting = {"base_url": model.base_url, "model": "scripted", "api_key": "model-key-0f3e"}
    assert (await service.request("PUT", "/api/v1/model", json=setting)).status_code == 200
    body = {"name": "helper", "instructions": "Be brief.", "server_ids": [server["id"]]}
    teammate = await service.post("/api/v1/teammates", body, expect=201)
    conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", expect=201)
    model.replies.extend(
        [
            {"tool_calls": [{"name": "echo__leaky", "arguments": {}}, {"name": "echo__fails", "arguments": {}}]},
            {"text": "Done."},
        ]
    )
    turn = await service.post(f"/api/v1/conversations/{conversation['id']}/turns", {"message": "go"})
    assert [item["status"] for item in turn["calls"]] == ["ran", "failed"], turn
    await service.get(f"/api/v1/turns/{turn['id']}")
    assert all(form not in json.dumps(model.requests) for form in forms_of(ECHOED)), "the model never saw it"

    refreshed = await service.post(f"/api/v1/servers/{server['id']}/refresh")
    assert {tool["tool"]: tool["state"] for tool in refreshed["tools"]} == dict.fromkeys(tools, "active"), (
        "a refresh marks nothing changed"
    )
    sent = await sent_hashes(echoing, tmp_path)
    assert {tool["tool"]: tool["definition_hash"] for tool in refreshed["tools"]} == sent, "the hash is what was sent"
    assert "%token of server echo%" in by_tool(refreshed)["leaky"]["description"]
    for path in ("/api/v1/servers", "/api/v1/tools", "/api/v1/audit", "/api/v1/alerts", "/api/v1/approvals"):
        await service.get(path)
    assert_never_shown(service, ECHOED)

    async with open_database(service.database_url) as db:
        texts = await stored_texts(db)
    stored = {where.partition(".")[0] for where, _ in texts}
    assert stored >= {"tools", "policies", "approvals", "questions", "calls", "turns", "conversations"}
    assert sorted({where for where, _ in holding(texts, ECHOED)}) == [], "no row holds the token in any form"
    assert files_holding(home.data_home, ECHOED) == [], "no file of the data folder holds it"
