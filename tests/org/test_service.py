"""The organization service end to end through its JSON API, on SQLite and PostgreSQL, with a real MCP server over
streamable HTTP: registering, tools off, policies bound to hashes, calls, the inbox, refresh, alerts, deletion, roles,
organizations kept apart, and the token never shown (ORG-1, ORG-2, ORG-3, ORG-5, ORG-8, POL-5, NET-2, API-6)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import Home
from tests.org._flows import TOKEN, assert_never_shown, by_tool, call, register, set_policy
from tests.org._service import Service, running_service

pytestmark = pytest.mark.anyio


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


async def test_org2_pol5_a_registered_servers_tools_start_off_and_run_once_reviewed(
    service: Service, upstream: str
) -> None:
    server = await register(service, upstream)
    assert server["state"] == "connected", server
    assert server["has_token"] is True
    tools = by_tool(server)
    assert set(tools) >= {"lookup", "write", "destroy", "big", "whoami", "writes"}
    assert {tool["policy"] for tool in tools.values()} == {"off"}, "discovery is not review: every tool starts off"
    assert tools["lookup"]["annotations"]["readOnlyHint"] is True, "annotations are shown as hints"
    assert len(tools["lookup"]["definition_hash"]) == 64
    refused = await call(service, "tools__lookup", {"key": "k"})
    assert refused["ok"] is False
    assert refused["error"]["code"] == "policy_off", "readOnlyHint grants nothing"
    stale = {**tools["lookup"], "definition_hash": "0" * 64}
    conflict = await set_policy(service, stale, "run_freely", expect=409)
    assert conflict["error"]["code"] == "stale_hash"
    updated = await set_policy(service, tools["lookup"], "run_freely")
    assert updated["policy"] == "run_freely"
    ran = await call(service, "tools__lookup", {"key": "k"})
    assert ran["ok"] is True, ran
    assert "value of k" in ran["text"]
    assert ran["text"].startswith("<mcp-result-"), "results are fenced"
    assert ran["call_id"]
    audit = await service.get("/api/v1/audit")
    [change] = [event for event in audit if event["action"] == "policy.set"]
    assert change["actor"] == "owner@acme.test"
    assert change["old"]["policy"] == "off"
    assert change["new"] == {
        **change["new"],
        "policy": "run_freely",
        "definition_hash": tools["lookup"]["definition_hash"],
    }


async def test_org2_the_bearer_token_reaches_the_server_and_never_comes_back(service: Service, upstream: str) -> None:
    server = await register(service, upstream)
    await set_policy(service, by_tool(server)["whoami"], "run_freely")
    echoed = await call(service, "tools__whoami")
    assert echoed["ok"] is True, echoed
    assert "authorization: [header Authorization]" in echoed["text"], "the server saw it; the caller reads its name"
    await service.get("/api/v1/servers")
    await service.get(f"/api/v1/servers/{server['id']}")
    await service.get("/api/v1/tools")
    await service.get("/api/v1/audit")
    assert_never_shown(service, TOKEN)


async def test_org5_an_ask_first_call_waits_in_the_inbox_and_runs_once_when_approved(
    service: Service, upstream: str
) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["write"], "ask_first")
    await set_policy(service, tools["writes"], "run_freely")
    parked = await call(service, "tools__write", {"note": "hello"}, expect=202)
    approval_id = parked["approval"]["id"]
    assert parked["approval"]["status"] == "pending"
    [pending] = await service.get("/api/v1/approvals", params={"status": "pending"})
    assert pending["id"] == approval_id
    assert pending["tool"] == "tools__write"
    assert "hello" in pending["arguments"]
    assert (await call(service, "tools__writes"))["content"][0]["text"] == "0", "nothing ran while it waited"

    results: list[Any] = []

    async def approve() -> None:
        results.append(await service.request("POST", f"/api/v1/approvals/{approval_id}/approve"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(approve)
        tg.start_soon(approve)
    statuses = sorted(result.status_code for result in results)
    assert statuses == [200, 409], [result.text for result in results]
    ran = next(result.json() for result in results if result.status_code == 200)
    assert ran["ok"] is True
    assert "wrote hello" in ran["text"]
    assert (await call(service, "tools__writes"))["content"][0]["text"] == "1", "approved once, run once"
    again = await service.request("POST", f"/api/v1/approvals/{approval_id}/decline")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "already_decided"


async def test_org5_a_declined_call_is_never_run_and_a_policy_change_is_checked_again(
    service: Service, upstream: str
) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["write"], "ask_first")
    await set_policy(service, tools["writes"], "run_freely")
    first = (await call(service, "tools__write", {"note": "a"}, expect=202))["approval"]["id"]
    declined = await service.post(f"/api/v1/approvals/{first}/decline")
    assert declined["status"] == "declined"
    second = (await call(service, "tools__write", {"note": "b"}, expect=202))["approval"]["id"]
    await set_policy(service, tools["write"], "off")
    refused = await service.post(f"/api/v1/approvals/{second}/approve")
    assert refused["ok"] is False
    assert refused["error"]["code"] == "policy_off"
    assert (await call(service, "tools__writes"))["content"][0]["text"] == "0"


async def test_org3_pol5_a_changed_definition_is_suspended_until_reviewed_and_a_missing_tool_is_removed(
    service: Service, upstream: str, definitions: Path
) -> None:
    server = await register(service, upstream)
    tools = by_tool(server)
    await set_policy(service, tools["lookup"], "run_freely")
    await set_policy(service, tools["write"], "run_freely")
    await anyio.Path(definitions).write_text(
        json.dumps({"lookup": "Look a key up, and send it elsewhere.", "drop": ["write"]})
    )
    refreshed = by_tool(await service.post(f"/api/v1/servers/{server['id']}/refresh"))
    assert refreshed["lookup"]["state"] == "changed"
    assert refreshed["write"]["state"] == "removed"
    suspended = await call(service, "tools__lookup", {"key": "k"})
    assert suspended["error"]["code"] == "tool_changed"
    removed = await call(service, "tools__write", {"note": "x"})
    assert removed["error"]["code"] == "tool_removed"
    side_by_side = await service.get(f"/api/v1/tools/{refreshed['lookup']['id']}")
    assert side_by_side["reviewed_definition"]["description"] == "Look a key up."
    assert side_by_side["definition"]["description"] == "Look a key up, and send it elsewhere."
    assert side_by_side["reviewed_hash"] != side_by_side["definition_hash"]
    await set_policy(service, side_by_side, "run_freely")
    assert (await call(service, "tools__lookup", {"key": "k"}))["ok"] is True


async def test_org8_a_failed_connection_raises_one_alert_and_the_next_success_clears_it(
    service: Service, upstream: str
) -> None:
    server = await register(service, upstream, token="a-wrong-token-0123456789")
    assert server["state"] == "failed"
    assert server["last_error"]
    [alert] = [a for a in await service.get("/api/v1/alerts") if a["server_id"] == server["id"]]
    assert alert["cleared_at"] is None
    await service.post(f"/api/v1/servers/{server['id']}/refresh")
    alerts = [a for a in await service.get("/api/v1/alerts") if a["server_id"] == server["id"]]
    assert len(alerts) == 1, "a repeat failure raises no second alert"
    fixed = await service.request("PATCH", f"/api/v1/servers/{server['id']}", json={"bearer_token": TOKEN})
    assert fixed.status_code == 200, fixed.text
    assert fixed.json()["state"] == "connected"
    [cleared] = [a for a in await service.get("/api/v1/alerts") if a["server_id"] == server["id"]]
    assert cleared["cleared_at"] is not None


async def test_org8_deleting_a_server_stops_its_tools_at_once(service: Service, upstream: str) -> None:
    server = await register(service, upstream)
    await set_policy(service, by_tool(server)["lookup"], "run_freely")
    assert (await call(service, "tools__lookup", {"key": "k"}))["ok"] is True
    deleted = await service.request("DELETE", f"/api/v1/servers/{server['id']}")
    assert deleted.status_code == 204
    refused = await call(service, "tools__lookup", {"key": "k"})
    assert refused["error"]["code"] == "server_deleted"
    missing = await service.request("GET", f"/api/v1/servers/{server['id']}")
    assert missing.status_code == 404


async def test_net2_a_response_over_1_mib_is_refused_with_a_clear_error(service: Service, upstream: str) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["big"], "run_freely")
    small = await call(service, "tools__big", {"size": 200_000})
    assert small["ok"] is True, small
    assert small["handle"], "a long result is cut and kept by handle"
    window = await service.get(f"/api/v1/results/{small['handle']}", params={"offset": 70_000, "length": 10})
    assert window["ok"] is True
    huge = await call(service, "tools__big", {"size": 1_200_000})
    assert huge["ok"] is False
    assert "over 1,048,576 bytes" in huge["error"]["message"]


async def test_org1_roles_are_checked_on_the_server_for_every_action(service: Service, upstream: str) -> None:
    server = await register(service, upstream)
    tools = by_tool(server)
    await set_policy(service, tools["lookup"], "run_freely")
    member = await service.add_member("member@acme.test")
    me = await service.get("/api/v1/me", token=member)
    assert me["role"] == "member"
    forbidden = [
        await service.request("POST", "/api/v1/servers", token=member, json={"name": "x", "url": upstream}),
        await service.request(
            "PUT",
            f"/api/v1/tools/{tools['write']['id']}/policy",
            token=member,
            json={"policy": "run_freely", "definition_hash": tools["write"]["definition_hash"]},
        ),
        await service.request("DELETE", f"/api/v1/servers/{server['id']}", token=member),
        await service.request(
            "POST",
            "/api/v1/members",
            token=member,
            json={"email": "x@acme.test", "role": "admin", "password": "p" * 12},
        ),
        await service.request("GET", "/api/v1/audit", token=member),
    ]
    assert [response.status_code for response in forbidden] == [403] * len(forbidden)
    assert (await call(service, "tools__lookup", {"key": "k"}, token=member))["ok"] is True
    unauthenticated = await service.client.get("/api/v1/tools")
    assert unauthenticated.status_code == 401
    assert unauthenticated.json()["error"]["code"] == "unauthorized"


async def test_org1_an_organization_never_sees_another_ones_data(service: Service, upstream: str) -> None:
    server = await register(service, upstream)
    tools = by_tool(server)
    await set_policy(service, tools["write"], "ask_first")
    parked = (await call(service, "tools__write", {"note": "n"}, expect=202))["approval"]["id"]
    other = await service.add_org("globex", "owner@globex.test")
    assert await service.get("/api/v1/servers", token=other.owner_token) == []
    assert await service.get("/api/v1/tools", token=other.owner_token) == []
    assert await service.get("/api/v1/approvals", token=other.owner_token) == []
    assert await service.get("/api/v1/audit", token=other.owner_token) == []
    for method, path in [
        ("GET", f"/api/v1/servers/{server['id']}"),
        ("PATCH", f"/api/v1/servers/{server['id']}"),
        ("DELETE", f"/api/v1/servers/{server['id']}"),
        ("POST", f"/api/v1/servers/{server['id']}/refresh"),
        ("GET", f"/api/v1/tools/{tools['write']['id']}"),
        ("PUT", f"/api/v1/tools/{tools['write']['id']}/policy"),
        ("POST", f"/api/v1/approvals/{parked}/approve"),
        ("POST", f"/api/v1/approvals/{parked}/decline"),
    ]:
        body = {"policy": "run_freely", "definition_hash": tools["write"]["definition_hash"]} if method == "PUT" else {}
        response = await service.request(method, path, token=other.owner_token, json=body)
        assert response.status_code == 404, (method, path, response.text)
    denied = await call(service, "tools__write", {"note": "n"}, token=other.owner_token)
    assert denied["ok"] is False, "another organization's tools are not there at all"


async def test_api6_a_member_reads_only_their_own_results_by_handle(service: Service, upstream: str) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["big"], "run_freely")
    member = await service.add_member("member@acme.test")
    mine = await call(service, "tools__big", {"size": 100_000})
    theirs = await service.request("GET", f"/api/v1/results/{mine['handle']}", token=member)
    assert theirs.status_code == 404
    other_conversation = await service.request(
        "GET", f"/api/v1/results/{mine['handle']}", params={"conversation": "another"}
    )
    assert other_conversation.status_code == 404


async def test_net1_a_url_the_guard_refuses_is_never_registered(service: Service) -> None:
    for url in ["http://169.254.169.254/latest/meta-data", "https://user:pw@example.test/mcp", "ftp://example.test/"]:
        refused = await service.request("POST", "/api/v1/servers", json={"name": "bad", "url": url})
        assert refused.status_code == 422, (url, refused.text)
        assert refused.json()["error"]["code"] == "url_refused"
    assert await service.get("/api/v1/servers") == []
