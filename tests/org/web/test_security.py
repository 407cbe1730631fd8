"""The pages' defences, request by request: headers, cookies, CSRF, roles, escaping, redirects (THREATS, ORG-1)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator

import httpx2
import pytest

from mcpyard.org.services._throttle import SignInLimits
from tests.conftest import Home
from tests.org._flows import TOKEN, by_tool, register
from tests.org._service import PASSWORD, Service, running_service

pytestmark = pytest.mark.anyio

PAGES = (
    "/servers",
    "/tools",
    "/teammates",
    "/inbox",
    "/assistants",
    "/alerts",
    "/audit",
    "/usage",
    "/limits",
    "/members",
    "/login",
)
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


def _browser(service: Service, origin: str = "http://org.test", address: str = "127.0.0.1") -> httpx2.AsyncClient:
    """A client that keeps cookies and does not follow redirects, as a browser's single steps (from `address`)."""
    assert service.app is not None
    transport = httpx2.ASGITransport(app=service.app, client=(address, 50_000))
    return httpx2.AsyncClient(transport=transport, base_url=origin, follow_redirects=False)


async def _sign_in(browser: httpx2.AsyncClient, email: str, password: str = PASSWORD) -> httpx2.Response:
    form = await browser.get("/login")
    match = _CSRF.search(form.text)
    assert match is not None
    return await browser.post("/login", data={"csrf_token": match.group(1), "email": email, "password": password})


async def _csrf(browser: httpx2.AsyncClient, path: str = "/servers") -> str:
    match = _CSRF.search((await browser.get(path)).text)
    assert match is not None
    return match.group(1)


def _notice(response: httpx2.Response) -> str:
    return response.cookies.get("mcpyard_notice") or ""


async def test_every_page_has_a_strict_content_security_policy_no_framing_and_no_inline_script(
    service: Service, upstream: str
) -> None:
    await register(service, upstream)
    async with _browser(service) as browser:
        assert (await _sign_in(browser, "owner@acme.test")).status_code == 303
        servers = (await service.get("/api/v1/servers"))[0]
        tools = by_tool(servers)
        for path in (*PAGES, f"/servers/{servers['id']}", f"/tools/{tools['lookup']['id']}"):
            response = await browser.get(path)
            assert response.status_code == 200 if path != "/login" else response.status_code in (200, 303), path
            policy = response.headers["content-security-policy"]
            assert "script-src 'self'" in policy
            assert "unsafe-inline" not in policy
            assert "unsafe-eval" not in policy
            assert "frame-ancestors 'none'" in policy
            assert response.headers["x-frame-options"] == "DENY"
            assert response.headers["x-content-type-options"] == "nosniff"
            html = response.text
            assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), f"inline script on {path}"
            assert not re.search(r"\son[a-z]+\s*=", html), f"an inline event handler on {path}"
            assert not re.search(r"\sstyle\s*=", html), f"an inline style on {path}"
            assert TOKEN not in html
            assert service.org.owner_token not in html
        script = await browser.get("/static/app.js")
        assert script.headers["content-type"].startswith("text/javascript")
        assert (await browser.get("/static/../_pages.py")).status_code == 404


async def test_session_cookies_are_httponly_samesite_secure_over_https_and_new_at_every_sign_in(
    service: Service,
) -> None:
    async with _browser(service) as plain, _browser(service, "https://org.test") as secure:
        first = await _sign_in(plain, "owner@acme.test")
        cookie = first.headers["set-cookie"].lower()
        assert "httponly" in cookie
        assert "samesite=lax" in cookie
        over_https = await _sign_in(secure, "owner@acme.test")
        session = [item for item in over_https.headers.get_list("set-cookie") if item.startswith("mcpyard_session=")]
        assert "secure" in session[0].lower()
        plain.cookies.delete("mcpyard_session")
        again = await _sign_in(plain, "owner@acme.test")
        assert again.cookies["mcpyard_session"] != first.cookies["mcpyard_session"], "rotated at every sign-in"


async def test_a_form_without_the_pages_csrf_token_changes_nothing(service: Service, upstream: str) -> None:
    async with _browser(service) as browser:
        await _sign_in(browser, "owner@acme.test")
        for token in (None, "forged", ""):
            data = {"name": "tools", "url": upstream, "bearer_token": TOKEN}
            if token is not None:
                data["csrf_token"] = token
            refused = await browser.post("/servers", data=data)
            assert refused.status_code == 303
            assert await service.get("/api/v1/servers") == [], "nothing was registered"
        # The JSON API, reached with the session cookie, wants the token in its header.
        api = await browser.post("/api/v1/servers", json={"name": "tools", "url": upstream})
        assert api.status_code == 403
        assert api.json()["error"]["code"] == "csrf"
        csrf = await _csrf(browser)
        huge = await browser.post("/servers", data={"name": "x" * 300_000, "url": upstream, "csrf_token": csrf})
        assert huge.status_code == 303
        assert "the form is over 262144 bytes" in (await browser.get("/servers")).text
        made = await browser.post("/servers", data={"name": "tools", "url": upstream, "csrf_token": csrf})
        assert made.status_code == 303
        assert [server["name"] for server in await service.get("/api/v1/servers")] == ["tools"]


async def test_signing_in_wants_the_forms_own_token_and_answers_alike_for_unknown_emails_and_wrong_passwords(
    service: Service,
) -> None:
    async with _browser(service) as browser:
        forged = await browser.post("/login", data={"email": "owner@acme.test", "password": PASSWORD})
        assert forged.status_code == 303
        assert forged.headers["location"] == "/login"
        assert "mcpyard_session" not in forged.cookies, "no other site can sign a browser in"
        unknown = await _sign_in(browser, "nobody@acme.test")
        wrong = await _sign_in(browser, "owner@acme.test", "not the password")
        assert unknown.status_code == wrong.status_code == 401
        message = re.compile(r'role="alert">([^<]+)<')
        assert message.findall(unknown.text) == message.findall(wrong.text)
        form = await browser.get("/login")
        match = _CSRF.search(form.text)
        assert match is not None
        data = {
            "csrf_token": match.group(1),
            "email": "owner@acme.test",
            "password": PASSWORD,
            "next": "//evil.example/",
        }
        outside = await browser.post("/login", data=data)
        assert outside.headers["location"] == "/", "only a path of ours"
        page = await browser.get("/login?next=//evil.example/")
        assert page.status_code == 303
        assert page.headers["location"] == "/", "only a path of ours"


async def test_roles_are_checked_by_the_service_whatever_the_page_shows(service: Service, upstream: str) -> None:
    await service.add_member("member@acme.test")
    other = await service.add_org("globex", "owner@globex.test")
    server = await register(service, upstream)
    async with _browser(service) as member, _browser(service) as outsider:
        await _sign_in(member, "member@acme.test")
        assert "Add a server" not in (await member.get("/servers")).text
        csrf = await _csrf(member)
        refused = await member.post("/servers", data={"name": "x", "url": upstream, "csrf_token": csrf})
        assert refused.status_code == 303
        assert len(await service.get("/api/v1/servers")) == 1
        tool = by_tool(server)["lookup"]
        data = {"policy": "run_freely", "definition_hash": tool["definition_hash"], "csrf_token": csrf}
        await member.post(f"/tools/{tool['id']}/policy", data=data)
        assert by_tool(await service.get(f"/api/v1/servers/{server['id']}"))["lookup"]["policy"] == "off"
        assert (await member.get("/audit")).status_code == 403
        assert (await member.post(f"/servers/{server['id']}/delete", data={"csrf_token": csrf})).status_code == 303
        assert (await service.get(f"/api/v1/servers/{server['id']}"))["state"] == "connected"
        await _sign_in(outsider, other.owner_email)
        assert (await outsider.get(f"/servers/{server['id']}")).status_code == 404
        assert (await outsider.get(f"/tools/{tool['id']}")).status_code == 404


async def test_a_forged_notice_cookie_is_ignored_and_a_real_one_is_shown_as_text(service: Service) -> None:
    async with _browser(service) as browser:
        await _sign_in(browser, "owner@acme.test")
        browser.cookies.set("mcpyard_notice", "not base64 json!")
        assert (await browser.get("/servers")).status_code == 200
        forged = base64.urlsafe_b64encode(json.dumps({"kind": "error", "text": "Call 555-0100 now"}).encode()).decode()
        for value in (forged, f"{forged}.not-the-mac"):
            browser.cookies.set("mcpyard_notice", value)
            assert "555-0100" not in (await browser.get("/servers")).text, "only the service writes a notice"
        csrf = await _csrf(browser)
        refused = await browser.post("/servers", data={"name": "<b>x</b>", "url": "ftp://x", "csrf_token": csrf})
        assert _notice(refused)
        shown = await browser.get("/servers")
        assert "<b>x</b>" not in shown.text


async def test_the_console_needs_a_session_and_sends_the_visitor_to_sign_in(service: Service) -> None:
    async with _browser(service) as browser:
        for path in PAGES[:-1]:
            response = await browser.get(path)
            assert response.status_code == 303
            assert response.headers["location"] == f"/login?next={path}"
        assert (await browser.post("/servers", data={})).headers["location"] == "/login"
        assert (await browser.get("/a/no-such-assistant")).status_code == 404
        page = await browser.get("/no/such/page", headers={"Accept": "text/html"})
        assert page.status_code == 404
        assert "Nothing is at this address." in page.text
        assert page.headers["content-security-policy"].startswith("default-src 'none'")
        api = await browser.get("/api/v1/no-such-endpoint", headers={"Accept": "text/html"})
        assert api.json()["error"]["code"] == "not_found", "programs get JSON, whatever they accept"


async def test_live_updates_take_only_known_topics(service: Service) -> None:
    async with _browser(service) as browser:
        await _sign_in(browser, "owner@acme.test")
        for topics in (
            "",
            "servers",
            "conversation:../x",
            ",".join(["inbox"] * 3 + [f"conversation:c{i}" for i in range(9)]),
        ):
            refused = await browser.get("/events", params={"topics": topics})
            assert refused.status_code == 422, topics
            assert "topic" in refused.text


async def test_a_browser_session_starts_from_json_only_so_no_other_site_can_sign_a_browser_in(service: Service) -> None:
    body = json.dumps({"email": "owner@acme.test", "password": PASSWORD})
    async with _browser(service) as browser:
        for headers in ({"Content-Type": "text/plain"}, {"Content-Type": "application/x-www-form-urlencoded"}, {}):
            refused = await browser.post("/api/v1/session", content=body, headers=headers)
            assert refused.status_code == 415, refused.text
            assert "mcpyard_session" not in refused.cookies
        cross = await browser.post(
            "/api/v1/session",
            content=body,
            headers={"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"},
        )
        assert cross.status_code == 403
        assert "mcpyard_session" not in cross.cookies
        started = await browser.post("/api/v1/session", content=body, headers={"Content-Type": "application/json"})
        assert started.status_code == 200, started.text
        csrf = started.headers["x-csrf-token"]
        assert (await browser.get("/api/v1/me")).json()["email"] == "owner@acme.test"
        assert (await browser.post("/api/v1/tokens", json={})).status_code == 403, "the cookie needs its CSRF header"
        made = await browser.post("/api/v1/tokens", json={}, headers={"X-CSRF-Token": csrf})
        assert made.status_code == 201


async def test_every_page_that_takes_an_id_answers_another_organizations_id_with_404(
    service: Service, upstream: str
) -> None:
    """THREATS: an id from another organization is not found, on every page that takes one."""
    server = await register(service, upstream)
    tool = by_tool(server)["write"]
    await service.request(
        "PUT",
        f"/api/v1/tools/{tool['id']}/policy",
        json={"policy": "ask_first", "definition_hash": tool["definition_hash"]},
    )
    teammate = await service.post("/api/v1/teammates", {"name": "t", "server_ids": [server["id"]]}, expect=201)
    conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", expect=201)
    assistant = await service.post("/api/v1/assistants", {"name": "a", "tool_ids": []}, expect=201)
    parked = await service.post("/api/v1/calls", {"tool": "tools__write", "arguments": {"note": "n"}}, expect=202)
    token = await service.post("/api/v1/tokens", {}, expect=201)
    other = await service.add_org("globex", "owner@globex.test")
    async with _browser(service) as outsider:
        await _sign_in(outsider, other.owner_email)
        for path in (
            f"/servers/{server['id']}",
            f"/servers/{server['id']}/delete",
            f"/tools/{tool['id']}",
            f"/teammates/{teammate['id']}",
            f"/conversations/{conversation['id']}",
            f"/assistants/{assistant['id']}",
        ):
            assert (await outsider.get(path)).status_code == 404, path
        csrf = await _csrf(outsider)
        for path in (
            f"/approvals/{parked['approval']['id']}/approve",
            f"/tokens/{token['id']}/revoke",
            f"/servers/{server['id']}/refresh",
            f"/assistants/{assistant['id']}/publish",
        ):
            answer = await outsider.post(path, data={"csrf_token": csrf})
            assert answer.status_code == 303, path
        [pending] = await service.get("/api/v1/approvals", params={"status": "pending"})
        assert pending["id"] == parked["approval"]["id"], "the other organization decided nothing"
        assert (await service.get("/api/v1/me", token=token["token"]))["email"] == "owner@acme.test", "nor revoked"


async def test_failed_sign_ins_slow_down_per_address_on_the_page_and_the_api(database_url: str, home: Home) -> None:
    limits = SignInLimits(failures=3)
    async with (
        running_service(database_url, home.data_home, sign_ins=limits) as service,
        _browser(service, address="10.1.1.1") as guesser,
        _browser(service, address="10.2.2.2") as owner,
    ):
        for _ in range(3):
            assert (await _sign_in(guesser, "owner@acme.test", "a wrong guess")).status_code == 401
        held = await _sign_in(guesser, "owner@acme.test")
        assert held.status_code == 429, "not even the right password is looked at from that address now"
        assert int(held.headers["retry-after"]) > 0
        assert "too many failed sign-ins from your address" in held.text
        api = await guesser.post("/api/v1/login", json={"email": "owner@acme.test", "password": PASSWORD})
        assert api.status_code == 429
        assert (await _sign_in(owner, "owner@acme.test")).status_code == 303, "another address signs in"
