"""Browser sessions and API tokens are checked in the database on every request: signing out ends every copy of a
session cookie at once, on every process; a token revoked through one process is refused by another at once; signing
in again starts a new session, with a CSRF token of its own (ORG-1, THREATS: sessions)."""

from __future__ import annotations

import json
import re

import anyio
import httpx2
import pytest

from mcpyard.org.keys import token_hash
from tests.conftest import Home
from tests.org._served import served_service
from tests.org._service import PASSWORD, Service, running_service
from tests.org.test_serve import services

pytestmark = pytest.mark.anyio

_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
JSON = {"Content-Type": "application/json"}


async def _session(client: httpx2.AsyncClient, email: str = "owner@acme.test") -> tuple[str, str]:
    """Sign in through the JSON API: the session cookie's value and its CSRF token."""
    body = json.dumps({"email": email, "password": PASSWORD})
    started = await client.post("/api/v1/session", content=body, headers=JSON)
    assert started.status_code == 200, started.text
    client.cookies.clear()  # each request below says which cookie it carries
    return started.cookies["mcpyard_session"], started.headers["x-csrf-token"]


async def _as(client: httpx2.AsyncClient, method: str, path: str, cookie: str, csrf: str = "") -> httpx2.Response:
    """One request carrying a copy of the cookie (and the CSRF header), as another browser tab or a thief would."""
    client.cookies.clear()
    headers = {"Cookie": f"mcpyard_session={cookie}", **({"X-CSRF-Token": csrf} if csrf else {})}
    return await client.request(method, path, headers=headers, json={} if method == "POST" else None)


async def _refused_everywhere(client: httpx2.AsyncClient, cookie: str, csrf: str) -> None:
    assert (await _as(client, "GET", "/api/v1/me", cookie)).status_code == 401
    page = await _as(client, "GET", "/servers", cookie)
    assert page.status_code == 303, "the console sends it to sign in"
    assert page.headers["location"].startswith("/login")
    assert (await _as(client, "POST", "/api/v1/tokens", cookie, csrf)).status_code == 401, "no token made with it"


async def _fresh(service: Service) -> httpx2.AsyncClient:
    """A client of the same service without the owner's token or any cookie jar of its own."""
    assert service.app is not None
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=service.app), base_url="http://org.test")


async def test_org1_signing_out_through_the_api_ends_every_copy_of_the_session_cookie(
    database_url: str, home: Home
) -> None:
    async with running_service(database_url, home.data_home) as service, await _fresh(service) as client:
        cookie, csrf = await _session(client)
        assert (await _as(client, "GET", "/api/v1/me", cookie)).status_code == 200
        assert (await _as(client, "GET", "/servers", cookie)).status_code == 200
        ended = await _as(client, "DELETE", "/api/v1/session", cookie, csrf)
        assert ended.status_code == 204, ended.text
        await _refused_everywhere(client, cookie, csrf)


async def test_org1_signing_out_with_the_consoles_form_ends_every_copy_of_the_session_cookie(
    database_url: str, home: Home
) -> None:
    async with running_service(database_url, home.data_home) as service, await _fresh(service) as client:
        cookie, _ = await _session(client)
        page = await _as(client, "GET", "/servers", cookie)
        match = _CSRF.search(page.text)
        assert match is not None
        out = await client.post(
            "/logout", data={"csrf_token": match.group(1)}, headers={"Cookie": f"mcpyard_session={cookie}"}
        )
        assert out.status_code == 303
        assert out.headers["location"] == "/login"
        await _refused_everywhere(client, cookie, match.group(1))


async def test_org1_signing_in_again_starts_a_new_session_and_ends_the_one_it_carried(
    database_url: str, home: Home
) -> None:
    async with running_service(database_url, home.data_home) as service, await _fresh(service) as client:
        first, first_csrf = await _session(client)
        body = json.dumps({"email": "owner@acme.test", "password": PASSWORD})
        again = await client.post(
            "/api/v1/session", content=body, headers={**JSON, "Cookie": f"mcpyard_session={first}"}
        )
        assert again.status_code == 200
        client.cookies.clear()
        second, second_csrf = again.cookies["mcpyard_session"], again.headers["x-csrf-token"]
        assert second != first
        assert second_csrf != first_csrf, "the CSRF token belongs to its session"
        assert (await _as(client, "GET", "/api/v1/me", first)).status_code == 401, "the old session ended"
        assert (await _as(client, "POST", "/api/v1/tokens", second, first_csrf)).status_code == 403
        assert (await _as(client, "POST", "/api/v1/tokens", second, second_csrf)).status_code == 201


async def test_org1_a_forged_or_unknown_session_cookie_is_refused(database_url: str, home: Home) -> None:
    async with running_service(database_url, home.data_home) as service, await _fresh(service) as client:
        cookie, _ = await _session(client)
        session_id, _, mac = cookie.rpartition(".")
        for forged in (f"{session_id}x.{mac}", f"{session_id}.{mac[:-2]}", session_id, "", "."):
            assert (await _as(client, "GET", "/api/v1/me", forged)).status_code == 401, forged


async def test_org1_a_near_miss_of_a_token_its_hash_or_bytes_no_token_has_are_refused_alike(
    database_url: str, home: Home
) -> None:
    """The token's one-statement look-up: anything but the token itself is the same 401; the token still signs in."""
    async with running_service(database_url, home.data_home) as service, await _fresh(service) as client:
        token = await service.add_member("member@acme.test")
        last = token[-1]
        probes = [
            token[:-1] + ("A" if last != "A" else "B"),  # one character off
            token.upper() if token != token.upper() else token.lower(),
            token + "x",
            token_hash(token),  # what the database keeps
            token[: len(token) // 2],
            token + "\x00",
            "x" * 65_536,
        ]
        refused: list[str] = []
        for probe in probes:
            answer = await client.get("/api/v1/me", headers={"Authorization": f"Bearer {probe}"})
            assert answer.status_code == 401, probe[:40]
            refused.append(answer.json()["error"]["message"])
        raw = [(b"authorization", b"Bearer " + token.encode()[:-1] + b"\xed\xa0\x80")]  # a lone surrogate's bytes
        answer = await client.get("/api/v1/me", headers=raw)
        assert answer.status_code == 401
        assert len(set(refused)) == 1, "one answer for every miss: nothing tells a near miss apart"
        assert (await client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})).json()["role"] == "member"


async def test_org1_two_processes_sign_out_on_one_and_the_cookies_copy_is_refused_by_the_other_at_once(
    home: Home, database_url: str
) -> None:
    async with services(home, database_url, 2, "--dev") as [(_, first), (_, second)]:
        cookie, csrf = await _session(first.client)
        assert (await _as(second.client, "GET", "/api/v1/me", cookie)).status_code == 200, "one database, one session"
        assert (await _as(first.client, "DELETE", "/api/v1/session", cookie, csrf)).status_code == 204
        await _refused_everywhere(second.client, cookie, csrf)


async def test_org1_two_processes_a_token_revoked_on_one_is_refused_by_the_other_at_once(
    home: Home, database_url: str
) -> None:
    async with services(home, database_url, 2, "--dev") as [(_, first), (_, second)]:
        made = await first.post("/api/v1/tokens", {"label": "ci"}, expect=201)
        assert (await second.get("/api/v1/me", token=made["token"]))["email"] == "owner@acme.test"
        revoked = await first.request("DELETE", f"/api/v1/tokens/{made['id']}")
        assert revoked.status_code == 204
        assert (await second.request("GET", "/api/v1/me", token=made["token"])).status_code == 401


async def test_org1_a_live_update_stream_ends_when_its_session_is_signed_out(database_url: str, home: Home) -> None:
    """A page's open event stream is a copy of the session too: signing out (here through another request) ends
    it within a round of its polling, instead of it going on for its ten minutes."""
    async with (
        served_service(database_url, home.data_home, live_seconds=0.05) as service,
        httpx2.AsyncClient(base_url=str(service.client.base_url), timeout=30, trust_env=False) as client,
    ):
        cookie, csrf = await _session(client)
        headers = {"Cookie": f"mcpyard_session={cookie}"}
        async with client.stream("GET", "/events", params={"topics": "inbox"}, headers=headers) as stream:
            assert stream.status_code == 200
            chunks = stream.aiter_text()
            assert (await anext(chunks)).startswith("retry:")
            ended = await _as(client, "DELETE", "/api/v1/session", cookie, csrf)
            assert ended.status_code == 204
            with anyio.fail_after(10):
                rest = [chunk async for chunk in chunks]
        assert "event: change" not in "".join(rest)
