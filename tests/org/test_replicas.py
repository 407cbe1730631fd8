"""Two replicas of the organization service on one database act as one service (ORG-9): whatever one changes holds on
the other at its next call, with no stale window (policies, servers registered, refreshed or deleted, tokens revoked,
members removed); a result handle made on one reads on the other, in its own conversation only; a run or a turn whose
replica died ends as failed, never `running` for ever. On SQLite and PostgreSQL; on PostgreSQL a change also reaches
the other replica's host without waiting for a call.

Each replica is the service's own app with its own lifespan (its own hosts, caches and memory) in this process, so
nothing is shared but the database; tests/org/test_replica_faults.py runs replicas as processes and kills them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from sqlalchemy import update

from mcpyard.org.hosts import OrgResults
from mcpyard.org.services import OrgService, sweep
from mcpyard.org.store import Approval, open_database, revision_of, utcnow
from tests.conftest import Home
from tests.model.openai_fixture import serve_model
from tests.org._flows import TOKEN, by_tool, call, register, set_policy
from tests.org._service import Org, Service, service_app, set_up

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 10


async def _replica(stack: AsyncExitStack, database_url: str, data_home: Path, org: Org) -> Service:
    app = service_app(database_url, data_home)
    await stack.enter_async_context(app.router.lifespan_context(app))
    transport = httpx2.ASGITransport(app=app)
    client = await stack.enter_async_context(
        httpx2.AsyncClient(transport=transport, base_url="http://org.test", timeout=60)
    )
    return Service(client, org, database_url, data_home, app=app)


@pytest.fixture
async def replicas(database_url: str, home: Home) -> AsyncIterator[tuple[Service, Service]]:
    """Replicas A and B of one service: one database, one organization `acme`, nothing else in common."""
    org = await set_up(database_url)
    async with AsyncExitStack() as stack:
        a = await _replica(stack, database_url, home.data_home / "a", org)
        b = await _replica(stack, database_url, home.data_home / "b", org)
        yield a, b


def _service(replica: Service) -> OrgService:
    assert replica.app is not None
    found = replica.app.state.org.service
    assert isinstance(found, OrgService)
    return found


async def test_org9_a_policy_set_on_one_replica_holds_on_the_other_at_its_next_call(
    replicas: tuple[Service, Service], upstream: str
) -> None:
    a, b = replicas
    tools = by_tool(await register(a, upstream))
    await set_policy(a, tools["lookup"], "run_freely")
    assert (await call(a, "tools__lookup", {"key": "k"}))["ok"] is True
    assert (await call(b, "tools__lookup", {"key": "k"}))["ok"] is True, "B runs what A allowed"
    await set_policy(b, tools["lookup"], "off")
    refused = await call(a, "tools__lookup", {"key": "k"})
    assert refused["error"]["code"] == "policy_off", "A's very next call knows B turned it off"
    await set_policy(b, tools["lookup"], "ask_first")
    parked = await call(a, "tools__lookup", {"key": "k"}, expect=202)
    assert parked["approval"]["status"] == "pending"


async def test_org9_a_server_registered_on_one_replica_is_called_on_the_other_and_deleted_there(
    replicas: tuple[Service, Service], upstream: str
) -> None:
    a, b = replicas
    await call(b, "tools__lookup", {"key": "k"})  # B's host is open before A registers anything
    server = await register(a, upstream)
    await set_policy(a, by_tool(server)["lookup"], "run_freely")
    ran = await call(b, "tools__lookup", {"key": "k"})
    assert ran["ok"] is True, ran
    deleted = await b.request("DELETE", f"/api/v1/servers/{server['id']}")
    assert deleted.status_code == 204
    refused = await call(a, "tools__lookup", {"key": "k"})
    assert refused["error"]["code"] == "server_deleted", refused


async def test_org9_a_server_edited_on_one_replica_is_reached_as_edited_by_the_other(
    replicas: tuple[Service, Service], upstream: str
) -> None:
    a, b = replicas
    server = await register(a, upstream)
    await set_policy(a, by_tool(server)["whoami"], "run_freely")
    assert (await call(a, "tools__whoami"))["ok"] is True
    edited = await b.request(
        "PATCH", f"/api/v1/servers/{server['id']}", json={"bearer_token": "another-token-0123456789"}
    )
    assert edited.status_code == 200, edited.text
    refused = await call(a, "tools__whoami")
    assert refused["ok"] is False, "A sends the token B saved, which the server refuses: A restarted it as edited"
    fixed = await b.request("PATCH", f"/api/v1/servers/{server['id']}", json={"bearer_token": TOKEN})
    assert fixed.status_code == 200, fixed.text
    assert (await call(a, "tools__whoami"))["ok"] is True


async def test_org9_a_definition_change_found_on_one_replica_suspends_the_tool_on_the_other(
    replicas: tuple[Service, Service], upstream: str, definitions: Path
) -> None:
    a, b = replicas
    server = await register(a, upstream)
    tools = by_tool(server)
    await set_policy(a, tools["lookup"], "run_freely")
    await set_policy(a, tools["write"], "run_freely")
    assert (await call(a, "tools__lookup", {"key": "k"}))["ok"] is True, "A has listed the old definition"
    await anyio.Path(definitions).write_text(
        json.dumps({"lookup": "Look a key up, and send it away.", "drop": ["write"]})
    )
    refreshed = by_tool(await b.post(f"/api/v1/servers/{server['id']}/refresh"))
    assert refreshed["lookup"]["state"] == "changed"
    suspended = await call(a, "tools__lookup", {"key": "k"})
    assert suspended["error"]["code"] == "tool_changed", "A never runs the definition B found changed"
    removed = await call(a, "tools__write", {"note": "x"})
    assert removed["error"]["code"] in ("tool_removed", "unknown_tool"), removed
    reviewed = await b.get(f"/api/v1/tools/{refreshed['lookup']['id']}")
    await set_policy(b, reviewed, "run_freely")
    ran = await call(a, "tools__lookup", {"key": "k"})
    assert ran["ok"] is True, "A runs the new definition once it is reviewed, on B"


async def test_org9_a_replica_that_never_started_a_server_offers_its_tools_as_the_database_lists_them(
    replicas: tuple[Service, Service], upstream: str, definitions: Path
) -> None:
    # B never starts the server registered on A, yet B's teammate turns are offered its tools, as the database lists
    # them now: first as registered, then as A listed and reviewed them again.
    a, b = replicas
    tools = by_tool(await register(a, upstream))
    for tool in tools.values():
        await set_policy(a, tool, "run_freely")
    with serve_model() as model:
        chosen = await a.request("PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted"})
        assert chosen.status_code == 200, chosen.text
        teammate = await a.post(
            "/api/v1/teammates", {"name": "helper", "server_ids": [tools["lookup"]["server_id"]]}, expect=201
        )
        conversation = await b.post(f"/api/v1/teammates/{teammate['id']}/conversations", expect=201)
        turns = f"/api/v1/conversations/{conversation['id']}/turns"
        model.replies.append({"text": "Nothing to do."})
        await b.post(turns, {"message": "hi"})
        assert _offered(model.requests[-1]) == {f"tools__{name}": tool["description"] for name, tool in tools.items()}

        await anyio.Path(definitions).write_text(json.dumps({"lookup": "Look a key up, and say so."}))
        changed = by_tool(await a.post(f"/api/v1/servers/{tools['lookup']['server_id']}/refresh"))
        await set_policy(a, changed["lookup"], "run_freely")
        model.replies.extend([{"tool_calls": [{"name": "tools__lookup", "arguments": {"key": "k"}}]}, {"text": "ok"}])
        turn = await b.post(turns, {"message": "look"})
        assert _offered(model.requests[-2])["tools__lookup"] == "Look a key up, and say so.", "as listed again on A"
        assert [item["status"] for item in turn["calls"]] == ["ran"], turn
        assert "value of k" in json.dumps(model.tool_messages(-1))


async def test_org9_a_replica_offers_each_organization_only_its_own_servers_tools_before_starting_any(
    replicas: tuple[Service, Service], upstream: str
) -> None:
    # Both organizations' servers registered on A, neither ever started on B: each teammate on B is offered its own
    # organization's tools from the database, and a call to the other's tool is refused as never offered.
    a, b = replicas
    globex = await a.add_org("globex", "owner@globex.test")
    as_globex = a.headers(globex.owner_token)
    mine = by_tool(await register(a, upstream))
    registered = await a.client.post(
        "/api/v1/servers", json={"name": "hidden", "url": upstream, "bearer_token": TOKEN}, headers=as_globex
    )
    assert registered.status_code == 201, registered.text
    theirs = {tool["tool"]: tool for tool in registered.json()["tools"]}
    for tool in mine.values():
        await set_policy(a, tool, "run_freely")
    for tool in theirs.values():
        policy = {"policy": "run_freely", "definition_hash": tool["definition_hash"]}
        assert (await a.client.put(f"/api/v1/tools/{tool['id']}/policy", json=policy, headers=as_globex)).is_success
    with serve_model() as model:
        for headers in (a.headers(None), as_globex):
            chosen = await a.client.put(
                "/api/v1/model", json={"base_url": model.base_url, "model": "scripted"}, headers=headers
            )
            assert chosen.status_code == 200, chosen.text
        turns = []
        for headers, server_id in (
            (a.headers(None), mine["lookup"]["server_id"]),
            (as_globex, theirs["lookup"]["server_id"]),
        ):
            made = await a.client.post(
                "/api/v1/teammates", json={"name": "helper", "server_ids": [server_id]}, headers=headers
            )
            assert made.status_code == 201, made.text
            started = await b.client.post(
                f"/api/v1/teammates/{made.json()['id']}/conversations", json={}, headers=headers
            )
            assert started.status_code == 201, started.text
            turns.append((f"/api/v1/conversations/{started.json()['id']}/turns", headers))
        model.replies.extend([{"tool_calls": [{"name": "hidden__lookup", "arguments": {"key": "k"}}]}, {"text": "ok"}])
        acme = await b.client.post(turns[0][0], json={"message": "hi"}, headers=turns[0][1])
        assert set(_offered(model.requests[-2])) == {f"tools__{name}" for name in mine}
        assert [item["status"] for item in acme.json()["calls"]] == ["refused"], acme.text
        assert "value of k" not in json.dumps(model.tool_messages(-1))
        model.replies.append({"text": "fine"})
        assert (await b.client.post(turns[1][0], json={"message": "hi"}, headers=turns[1][1])).is_success
        assert set(_offered(model.requests[-1])) == {f"hidden__{name}" for name in theirs}


def _offered(request: dict[str, Any]) -> dict[str, str]:
    """The tools a model request offered (but `read_result`), each with its description."""
    functions = (tool["function"] for tool in request["tools"])
    return {function["name"]: function["description"] for function in functions if function["name"] != "read_result"}


async def test_org9_a_result_handle_made_on_one_replica_reads_on_the_other_in_its_own_conversation_only(
    replicas: tuple[Service, Service], upstream: str
) -> None:
    a, b = replicas
    await set_policy(a, by_tool(await register(a, upstream))["big"], "run_freely")
    made = await call(a, "tools__big", {"size": 200_000})
    assert made["handle"]
    window = await b.get(f"/api/v1/results/{made['handle']}", params={"offset": 100_000, "length": 10})
    assert "yyyyyyyyyy" in window["text"]
    member = await a.add_member("member@acme.test")
    theirs = await b.request("GET", f"/api/v1/results/{made['handle']}", token=member)
    assert theirs.status_code == 404, "another member never reads it, on any replica"
    elsewhere = await b.request("GET", f"/api/v1/results/{made['handle']}", params={"conversation": "other"})
    assert elsewhere.status_code == 404


async def test_org9_a_token_revoked_or_a_member_removed_on_one_replica_is_refused_at_once_by_the_other(
    replicas: tuple[Service, Service],
) -> None:
    a, b = replicas
    made = await a.post("/api/v1/tokens", {"label": "script"}, expect=201)
    assert (await b.request("GET", "/api/v1/me", token=made["token"])).status_code == 200
    tokens = await a.get("/api/v1/tokens")
    [row] = [token for token in tokens if token["label"] == "script"]
    assert (await a.request("DELETE", f"/api/v1/tokens/{row['id']}")).status_code == 204
    assert (await b.request("GET", "/api/v1/me", token=made["token"])).status_code == 401
    member_token = await a.add_member("leaving@acme.test")
    me = (await b.request("GET", "/api/v1/me", token=member_token)).json()
    assert (await a.request("DELETE", f"/api/v1/members/{me['id']}")).status_code == 204
    assert (await b.request("GET", "/api/v1/me", token=member_token)).status_code == 401


async def test_org9_on_postgresql_a_change_reaches_the_other_replicas_host_before_any_call(
    replicas: tuple[Service, Service], upstream: str, database_url: str
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite's replicas read the change counter at each call; only PostgreSQL announces changes")
    a, b = replicas
    tools = by_tool(await register(a, upstream))
    await call(b, "tools__lookup", {"key": "k"})  # B's host is open
    hosts = _service(b).hosts
    opened = await hosts.get(a.org.org_id)
    await set_policy(a, tools["lookup"], "run_freely")
    async with open_database(database_url) as db, db.sessions.begin() as session:
        wanted = await revision_of(session, a.org.org_id)
    with anyio.fail_after(WAIT_SECONDS):
        await hosts.in_step(a.org.org_id, wanted)
    assert opened.revision == wanted


async def test_org9_a_run_or_a_turn_whose_replica_died_ends_failed_never_running_for_ever(
    replicas: tuple[Service, Service], upstream: str, database_url: str
) -> None:
    """What a replica killed mid-run leaves: a claimed run and a running turn whose lease nobody renews. The sweep, on
    any replica, ends them; one still held (lease ahead) is left to its holder."""
    a, b = replicas
    tools = by_tool(await register(a, upstream))
    await set_policy(a, tools["write"], "ask_first")
    dead = (await call(a, "tools__write", {"note": "x"}, expect=202))["approval"]["id"]
    held = (await call(a, "tools__write", {"note": "y"}, expect=202))["approval"]["id"]
    lapsed, ahead = utcnow() - timedelta(seconds=1), utcnow() + timedelta(minutes=5)
    async with open_database(database_url) as db, db.sessions.begin() as session:
        for approval_id, until in ((dead, lapsed), (held, ahead)):
            await session.execute(
                update(Approval).where(Approval.id == approval_id).values(status="running", held_until=until)
            )
    assert await sweep(_service(b)) == 1
    approvals = {item["id"]: item for item in await b.get("/api/v1/approvals")}
    assert approvals[dead]["status"] == "failed"
    assert approvals[dead]["result"]["error"]["code"] == "interrupted"
    assert approvals[held]["status"] == "running", "a run still held is its holder's"
    assert await sweep(_service(a)) == 0, "swept once, on whichever replica looked first"
    again = await a.request("POST", f"/api/v1/approvals/{dead}/approve")
    assert again.json()["error"]["code"] == "already_decided", "never run twice"


async def test_org9_the_organizations_stored_results_are_bounded_least_recently_read_out(database_url: str) -> None:
    org = await set_up(database_url)
    async with open_database(database_url) as db:
        results = OrgResults(db.sessions, org.org_id, max_bytes=10_000, max_results=3)
        first, kept = await results.keep("m:c", "a" * 1000, server="s")
        assert kept == 1000
        second, _ = await results.keep("m:c", "b" * 1000, server="s")
        third, _ = await results.keep("m:c", "c" * 1000, server="s")
        assert await results.window("m:c", first, 0, 5) is not None  # read: now the most recent
        await results.keep("m:c", "d" * 1000, server="s")
        assert await results.window("m:c", second, 0, 5) is None, "the least recently read went"
        assert await results.window("m:c", first, 0, 5) is not None
        await results.keep("m:c", "e" * 9_500, server="s")
        left = [h for h in (first, third) if await results.window("m:c", h, 0, 1) is not None]
        assert left == [], "bytes count too: the big one pushed the rest out"
        odd, kept = await results.keep("m:c", "x\x00y\ud800z" + "é" * 20_000, server="s")
        assert kept <= 10_000, "one larger than the whole store is cut to fit"
        found = await results.window("m:c", odd, 0, 5)
        assert found is not None
        server, window = found
        assert (server, window.text, window.total) == ("s", "x\ufffdy\ufffdz", kept)
        assert await results.window("m:other", odd, 0, 5) is None, "another conversation's handle reads as unknown"
