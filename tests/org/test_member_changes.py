"""Changing a member's role and removing a member, through the JSON API and real processes (ORG-1, API-6).

Only owners grant or take the owner role; the last owner stays; anyone may leave. A removed member is signed out
and its tokens fail at once (on every process), the calls it left waiting are declined as due to its removal and its
calls' questions cancelled; its records stay, it drops out of the members' list, cannot sign in, and coming back
with the same email is the same member again, with the new role and password. Every change is audited.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anyio
import httpx2
import pytest

from mcpyard.org.services._member_changes import removal_refusal, role_change_refusal
from tests.conftest import Home
from tests.org._flows import by_tool, call, register, set_policy
from tests.org._service import PASSWORD, Service, running_service
from tests.org.test_questions import asks
from tests.org.test_serve import services
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio

NEW_PASSWORD = "another long password for the return"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


async def _ids(service: Service) -> dict[str, str]:
    return {row["email"]: row["id"] for row in await service.get("/api/v1/members")}


async def _team(service: Service, *names: str) -> tuple[dict[str, str], dict[str, str]]:
    """Members named by role (`owner2` is a second owner, `admin2` a second admin…): their tokens and ids."""
    tokens = {"owner": service.org.owner_token}
    for name in dict.fromkeys(names):
        if name != "owner":
            tokens[name] = await service.add_member(f"{name}@acme.test", name.rstrip("0123456789"))
    ids = await _ids(service)
    return tokens, {name: ids[f"{name}@acme.test"] for name in tokens}


async def _cookie(client: httpx2.AsyncClient, email: str, password: str = PASSWORD) -> httpx2.Response:
    body = json.dumps({"email": email, "password": password})
    started = await client.post("/api/v1/session", content=body, headers=JSON)
    client.cookies.clear()
    return started


@pytest.mark.parametrize(
    ("actor", "target", "role", "expected"),
    [
        ("owner", "member", "admin", 200),
        ("owner", "admin", "owner", 200),
        ("owner", "owner2", "member", 200),
        ("admin", "member", "admin", 200),
        ("admin", "admin2", "member", 200),
        ("admin", "admin", "member", 200),
        ("admin", "member", "owner", 403),
        ("admin", "owner2", "admin", 403),
        ("admin", "owner", "member", 403),
        ("member", "member2", "admin", 403),
        ("member", "member", "admin", 403),
        ("owner", "owner", "admin", 409),
        ("owner", "member", "boss", 422),
    ],
)
async def test_org1_who_may_give_which_role_to_whom(
    service: Service, actor: str, target: str, role: str, expected: int
) -> None:
    tokens, ids = await _team(service, actor, target)
    answer = await service.request("PATCH", f"/api/v1/members/{ids[target]}", token=tokens[actor], json={"role": role})
    assert answer.status_code == expected, answer.text
    listed = {row["id"]: row["role"] for row in await service.get("/api/v1/members")}
    if expected == 200:
        assert answer.json()["role"] == role
        assert listed[ids[target]] == role
    else:
        assert listed[ids[target]] == target.rstrip("0123456789"), "a refused change changes nothing"
        if expected == 409:
            assert answer.json()["error"]["code"] == "last_owner"


@pytest.mark.parametrize(
    ("actor", "target", "expected"),
    [
        ("owner", "owner2", 204),
        ("owner", "admin", 204),
        ("admin", "member", 204),
        ("admin", "admin2", 204),
        ("admin", "owner", 403),
        ("admin", "owner2", 403),
        ("member", "member2", 403),
        ("member", "admin", 403),
        ("member", "member", 204),
        ("admin", "admin", 204),
        ("owner2", "owner2", 204),
        ("owner", "owner", 409),
    ],
)
async def test_org1_who_may_remove_whom_and_who_may_leave(
    service: Service, actor: str, target: str, expected: int
) -> None:
    tokens, ids = await _team(service, actor, target)
    answer = await service.request("DELETE", f"/api/v1/members/{ids[target]}", token=tokens[actor])
    assert answer.status_code == expected, answer.text
    listed = await _ids(service)
    assert (f"{target}@acme.test" in listed) is (expected != 204)
    if expected == 409:
        assert answer.json()["error"]["code"] == "last_owner"


@pytest.mark.parametrize(
    ("actor", "target", "role", "owners", "refused"),
    [
        ("owner", "owner", "admin", 2, None),
        ("owner", "owner", "admin", 1, 409),
        ("owner", "member", "owner", 1, None),
        ("admin", "member", "owner", 1, 403),
        ("admin", "owner", "owner", 2, 403),
        ("admin", "admin", "member", 1, None),
        ("member", "member", "member", 1, 403),
    ],
)
def test_org1_the_role_rules_as_a_table(actor: str, target: str, role: str, owners: int, refused: int | None) -> None:
    refusal = role_change_refusal(actor, target, role, owners=owners)
    assert (refusal.status if refusal else None) == refused


@pytest.mark.parametrize(
    ("actor", "target", "itself", "owners", "refused"),
    [
        ("owner", "owner", True, 1, 409),
        ("owner", "owner", True, 2, None),
        ("owner", "owner", False, 2, None),
        ("admin", "owner", False, 2, 403),
        ("admin", "admin", False, 1, None),
        ("member", "member", True, 1, None),
        ("member", "member", False, 1, 403),
    ],
)
def test_org1_the_removal_rules_as_a_table(
    actor: str, target: str, itself: bool, owners: int, refused: int | None
) -> None:
    refusal = removal_refusal(actor, target, itself=itself, owners=owners)
    assert (refusal.status if refusal else None) == refused


async def test_org1_another_organizations_member_is_not_found(service: Service) -> None:
    _, ids = await _team(service, "member")
    other = await service.add_org("globex", "owner@globex.test")
    for method, body in (("PATCH", {"role": "admin"}), ("DELETE", None)):
        answer = await service.request(method, f"/api/v1/members/{ids['member']}", token=other.owner_token, json=body)
        assert answer.status_code == 404, answer.text
        assert answer.json()["error"]["code"] == "not_found"
    answer = await service.request("DELETE", "/api/v1/members/no-such-member")
    assert answer.status_code == 404
    assert (await _ids(service))["member@acme.test"] == ids["member"], "still there"


async def test_org1_role_changes_and_removals_are_in_the_audit_log(service: Service) -> None:
    _, ids = await _team(service, "member")
    changed = await service.request("PATCH", f"/api/v1/members/{ids['member']}", json={"role": "admin"})
    assert changed.status_code == 200
    assert (await service.request("DELETE", f"/api/v1/members/{ids['member']}")).status_code == 204
    [role] = await service.get("/api/v1/audit", params={"action": "member.role_changed"})
    assert (role["actor"], role["target"]) == ("owner@acme.test", ids["member"])
    assert role["old"] == {"email": "member@acme.test", "role": "member"}
    assert role["new"] == {"email": "member@acme.test", "role": "admin"}
    [removed] = await service.get("/api/v1/audit", params={"action": "member.removed"})
    assert (removed["actor"], removed["target"]) == ("owner@acme.test", ids["member"])
    assert removed["old"] == {"email": "member@acme.test", "role": "admin"}


async def test_org1_a_removed_member_is_signed_out_refused_and_its_waiting_calls_declined_but_its_records_stay(
    service: Service, upstream: str
) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["write"], "ask_first")
    tokens, ids = await _team(service, "member")
    parked = await call(service, "tools__write", {"note": "left behind"}, token=tokens["member"], expect=202)
    assert service.app is not None
    transport = httpx2.ASGITransport(app=service.app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://org.test") as browser:
        started = await _cookie(browser, "member@acme.test")
        cookie = {"Cookie": f"mcpyard_session={started.cookies['mcpyard_session']}"}
        assert (await browser.get("/api/v1/me", headers=cookie)).status_code == 200
        assert (await service.request("DELETE", f"/api/v1/members/{ids['member']}")).status_code == 204
        assert (await browser.get("/api/v1/me", headers=cookie)).status_code == 401, "signed out at once"
        assert (await service.request("GET", "/api/v1/me", token=tokens["member"])).status_code == 401
        assert (await _cookie(browser, "member@acme.test")).status_code == 401, "cannot sign in"
    assert "member@acme.test" not in await _ids(service)
    [declined] = await service.get("/api/v1/approvals", params={"status": "declined"})
    assert declined["id"] == parked["approval"]["id"]
    assert declined["member_id"] == ids["member"], "the record still shows who asked"
    assert declined["decided_by"] == ids["owner"]
    assert declined["result"]["error"]["code"] == "member_removed"
    assert await service.get("/api/v1/approvals", params={"status": "pending"}) == []
    [removed] = await service.get("/api/v1/audit", params={"action": "member.removed"})
    assert removed["new"]["approvals_declined"] == [parked["approval"]["id"]]


async def test_org1_a_removed_member_added_again_comes_back_as_itself_with_the_new_role_and_password(
    service: Service,
) -> None:
    tokens, ids = await _team(service, "member")
    assert (await service.request("DELETE", f"/api/v1/members/{ids['member']}")).status_code == 204
    again = await service.post(
        "/api/v1/members", {"email": "Member@acme.test", "role": "admin", "password": NEW_PASSWORD}, expect=201
    )
    assert (again["id"], again["role"]) == (ids["member"], "admin"), "the same member: old records point at it"
    assert (await service.request("GET", "/api/v1/me", token=tokens["member"])).status_code == 401, "still revoked"
    login = await service.client.post("/api/v1/login", json={"email": "member@acme.test", "password": PASSWORD})
    assert login.status_code == 401, "the old password is gone"
    login = await service.client.post("/api/v1/login", json={"email": "member@acme.test", "password": NEW_PASSWORD})
    assert login.status_code == 200, login.text
    assert (await service.get("/api/v1/me", token=login.json()["token"]))["role"] == "admin"
    twice = await service.post(
        "/api/v1/members", {"email": "member@acme.test", "role": "member", "password": NEW_PASSWORD}, expect=422
    )
    assert "already a member" in twice["error"]["message"]


async def test_org5_removing_a_member_cancels_the_questions_its_calls_wait_on(service: Service) -> None:
    async with serve_http_in_process("elicits", "streamable-http") as asking:
        await asks(service, asking)
        tokens, ids = await _team(service, "member")
        parked = await call(service, "asks__sign_up", token=tokens["member"], expect=202)
        question_id = parked["question"]["id"]
        assert (await service.request("DELETE", f"/api/v1/members/{ids['member']}")).status_code == 204
        question = await service.get(f"/api/v1/questions/{question_id}")
        assert question["status"] == "cancelled"
        with anyio.fail_after(30):
            await service.settled()  # the call waiting on it heard `cancel` and ended
        assert await service.get("/api/v1/questions", params={"status": "pending"}) == []


async def test_org1_two_processes_a_member_removed_on_one_is_refused_by_the_other_at_once(
    home: Home, database_url: str
) -> None:
    async with services(home, database_url, 2, "--dev") as [(_, first), (_, second)]:
        token = await first.add_member("member@acme.test")
        started = await _cookie(second.client, "member@acme.test")
        cookie = {"Cookie": f"mcpyard_session={started.cookies['mcpyard_session']}"}
        assert (await second.client.get("/api/v1/me", headers=cookie)).status_code == 200
        assert (await second.get("/api/v1/me", token=token))["email"] == "member@acme.test"
        member_id = (await _ids(first))["member@acme.test"]
        assert (await first.request("DELETE", f"/api/v1/members/{member_id}")).status_code == 204
        assert (await second.request("GET", "/api/v1/me", token=token)).status_code == 401
        assert (await second.client.get("/api/v1/me", headers=cookie)).status_code == 401
        assert (await second.client.get("/servers", headers=cookie)).status_code == 303
