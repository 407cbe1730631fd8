"""Members' own MCP clients sign in with OAuth (ORG-10, API-7): the service is its own authorization server.

The SDK's own OAuth client discovers the protected resource and the authorization server, registers
(or names itself by a metadata document), sends the member's browser to sign in and consent, and
gets tokens bound to the MCP endpoint it asked for. The "browser" here is an HTTP client that signs
in with the member's password and answers the consent page's form as a person would. Around that:
codes are used once, PKCE is checked, refresh tokens rotate and a replayed one ends its grant,
revoking a connected app or removing its member ends its tokens at once, a token reaches no other
endpoint, denying sends `access_denied`, and redirect addresses that could hurt are refused.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from mcpyard.connect import EgressGuard
from tests.conftest import Home
from tests.connect._tls import make_certificates
from tests.org._flows import by_tool, mcp_status, pkce, register, set_policy
from tests.org._served import served_service, serving
from tests.org._service import PASSWORD, Service

pytestmark = pytest.mark.anyio

CALLBACK = "http://127.0.0.1:9/callback"
WAIT_SECONDS = 30
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
_REQUEST = re.compile(r'name="request" value="([^"]+)"')


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with served_service(database_url, home.data_home) as served:
        yield served


class Browser:
    """A member's browser: signed in with their password, it follows the authorization to the consent page and
    answers it."""

    def __init__(self, service: Service, email: str) -> None:
        self.service, self.email = service, email
        self.http = httpx2.AsyncClient(base_url=service.origin, follow_redirects=False, trust_env=False, timeout=30)
        self.consent_page = ""
        self.redirect = ""

    async def sign_in(self) -> None:
        form = await self.http.get("/login")
        match = _CSRF.search(form.text)
        assert match is not None
        data = {"csrf_token": match.group(1), "email": self.email, "password": PASSWORD}
        assert (await self.http.post("/login", data=data)).status_code == 303

    async def consent(
        self, authorization_url: str, decision: str = "allow", *, back_to: str = CALLBACK
    ) -> dict[str, str]:
        """Open the authorization address, answer the consent page; the query the client's redirect gets (the whole
        address in `self.redirect`). `back_to`: the start of the client's redirect address."""
        sent = await self.http.get(authorization_url)
        assert sent.status_code == 302, sent.text
        page_url = sent.headers["location"]
        assert urlsplit(page_url).path == "/oauth/consent", page_url
        page = await self.http.get(page_url)
        if page.status_code == 303:  # not signed in yet: the sign-in page brings the member back here
            assert page.headers["location"].startswith("/login?next=/oauth/consent%3Frequest%3D")
            await self.sign_in()
            page = await self.http.get(page_url)
        assert page.status_code == 200, page.text
        self.consent_page = page.text
        policy = page.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy
        csrf, request = _CSRF.search(page.text), _REQUEST.search(page.text)
        assert csrf is not None
        assert request is not None
        answer = await self.http.post(
            "/oauth/consent", data={"csrf_token": csrf.group(1), "request": request.group(1), "decision": decision}
        )
        assert answer.status_code == 303, answer.text
        back = self.redirect = answer.headers["location"]
        assert back.startswith(back_to), "the member's browser goes back to the client's own address"
        assert f"form-action 'self' {urlsplit(back).scheme}://{urlsplit(back).netloc}" in policy
        return {key: values[0] for key, values in parse_qs(urlsplit(back).query).items()}

    async def aclose(self) -> None:
        await self.http.aclose()


class Memory:
    """The SDK client's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@asynccontextmanager
async def oauth_client(
    service: Service, browser: Browser, memory: Memory, path: str = "/mcp", mode: str = "auto", **provider: Any
) -> AsyncIterator[Client]:
    """The SDK's client on `path`, signing in with OAuth through `browser` whenever it must."""
    answered: list[AuthorizationCodeResult] = []

    async def redirect(url: str) -> None:
        query = await browser.consent(url)
        answered.append(AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss")))

    async def callback() -> AuthorizationCodeResult:
        return answered.pop()

    auth = OAuthClientProvider(
        f"{service.origin}{path}",
        OAuthClientMetadata(
            client_name="Editor of Test",
            redirect_uris=[CALLBACK],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        memory,
        redirect_handler=redirect,
        callback_handler=callback,
        **provider,
    )
    async with (
        httpx2.AsyncClient(auth=auth, timeout=60, trust_env=False) as http,
        Client(streamable_http_client(f"{service.origin}{path}", http_client=http), mode=mode) as client,
    ):
        yield client


@asynccontextmanager
async def browser_of(service: Service, email: str, *, signed_in: bool = True) -> AsyncIterator[Browser]:
    browser = Browser(service, email)
    try:
        if signed_in:
            await browser.sign_in()
        yield browser
    finally:
        await browser.aclose()


async def exchanged(service: Service, client_id: str, query: dict[str, str], verifier: str) -> dict[str, Any]:
    """The tokens for the code in `query` (the redirect's), asked for as the client would."""
    issued = await token(
        service,
        grant_type="authorization_code",
        client_id=client_id,
        redirect_uri=CALLBACK,
        code=query["code"],
        code_verifier=verifier,
    )
    assert issued.status_code == 200, issued.text
    tokens: dict[str, Any] = issued.json()
    return tokens


async def registered(service: Service, **metadata: Any) -> httpx2.Response:
    body = {"client_name": "Raw client", "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none", **metadata}
    return await service.client.post("/oauth/register", json=body)


def authorization(client_id: str, **more: str) -> dict[str, str]:
    """The parameters of an authorization request with a fresh S256 challenge; `more` adds or replaces some."""
    return {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "code_challenge": pkce()[1],
        "code_challenge_method": "S256",
        **more,
    }


async def authorized(
    service: Service, browser: Browser, client_id: str, *, resource: str | None = None, decision: str = "allow"
) -> tuple[dict[str, str], str]:
    """An authorization code flow up to the redirect (by hand, not the SDK's client); the query and the verifier."""
    verifier, challenge = pkce()
    query = authorization(
        client_id, code_challenge=challenge, state="st4te", scope="mcp", resource=resource or f"{service.origin}/mcp"
    )
    url = str(httpx2.URL(f"{service.origin}/oauth/authorize", params=query))
    return await browser.consent(url, decision), verifier


async def token(service: Service, **form: str) -> httpx2.Response:
    return await service.client.post("/oauth/token", data=form)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_org10_a_client_registers_the_member_consents_and_it_uses_their_tools(
    service: Service, upstream: str, mode: str
) -> None:
    await set_policy(service, by_tool(await register(service, upstream))["lookup"], "run_freely")
    await service.add_member("member@acme.test")
    memory = Memory()
    async with (
        browser_of(service, "member@acme.test", signed_in=False) as browser,
        oauth_client(service, browser, memory, mode=mode) as client,
    ):
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"tools__lookup", "read_result"}
        ran = await client.call_tool("tools__lookup", {"key": "k"})
        assert not ran.is_error
    assert "Editor of Test" in browser.consent_page
    assert "acme" in browser.consent_page
    assert "127.0.0.1:9" in browser.consent_page, "the page says where the member is sent back"
    assert memory.tokens is not None
    assert memory.tokens.access_token.startswith("myo_")
    access = memory.tokens.access_token
    member_token = await service.add_member("other@acme.test")
    async with browser_of(service, "member@acme.test") as signed:
        listed = (await signed.http.get("/api/v1/oauth/grants")).json()
    assert [(grant["client_name"], grant["resource"]) for grant in listed] == [
        ("Editor of Test", f"{service.origin}/mcp")
    ]
    assert (await service.request("GET", "/api/v1/oauth/grants", token=member_token)).json() == [], "their own only"
    theirs = await service.request("DELETE", f"/api/v1/oauth/grants/{listed[0]['id']}", token=member_token)
    assert theirs.status_code == 404, "no one revokes another member's connected app"
    assert access not in str(listed)
    assert await mcp_status(service.origin, access) == 200
    async with browser_of(service, "member@acme.test") as signed:
        page = await signed.http.get("/clients")
        assert "Editor of Test" in page.text
        assert f"{service.origin}/mcp" in page.text
        csrf = _CSRF.search(page.text)
        assert csrf is not None
        revoked = await signed.http.post(f"/clients/{listed[0]['id']}/revoke", data={"csrf_token": csrf.group(1)})
        assert revoked.status_code == 303
        assert "No client has access yet" in (await signed.http.get("/clients")).text
    assert await mcp_status(service.origin, access) == 401, "revoking the connected app ends its tokens at once"


async def test_org10_a_code_is_used_once_only_with_its_pkce_verifier_and_a_replay_ends_its_tokens(
    service: Service,
) -> None:
    client_id = (await registered(service)).json()["client_id"]
    async with browser_of(service, "owner@acme.test") as browser:
        query, verifier = await authorized(service, browser, client_id)
        assert query["state"] == "st4te"
        assert query["iss"].rstrip("/") == service.origin
        common = {"grant_type": "authorization_code", "client_id": client_id, "redirect_uri": CALLBACK}
        wrong = await token(service, **common, code=query["code"], code_verifier=pkce()[0])
        assert wrong.status_code == 400
        assert wrong.json()["error"] == "invalid_grant"
        good = await token(service, **common, code=query["code"], code_verifier=verifier)
        assert good.status_code == 200, good.text
        assert await mcp_status(service.origin, good.json()["access_token"]) == 200
        again = await token(service, **common, code=query["code"], code_verifier=verifier)
        assert again.status_code == 400, "a code is used once"
        assert again.json()["error"] == "invalid_grant"
        replayed = await mcp_status(service.origin, good.json()["access_token"])
        assert replayed == 401, "a code presented again ends the tokens it gave"
        other, _ = await authorized(service, browser, client_id)
        stolen = await token(service, **common, code=other["code"], code_verifier=verifier)
        assert stolen.status_code == 400


async def test_org10_a_client_revokes_its_tokens_at_the_revocation_endpoint(service: Service) -> None:
    client_id = (await registered(service)).json()["client_id"]
    async with browser_of(service, "owner@acme.test") as browser:
        query, verifier = await authorized(service, browser, client_id)
        second_query, second_verifier = await authorized(service, browser, client_id)
    first = await exchanged(service, client_id, query, verifier)
    second = await exchanged(service, client_id, second_query, second_verifier)
    other_client = (await registered(service)).json()["client_id"]
    foreign = await service.client.post(
        "/oauth/revoke", data={"token": first["access_token"], "client_id": other_client}
    )
    assert foreign.status_code == 200, "answered as if revoked (RFC 7009), and another client's token is left alone"
    assert await mcp_status(service.origin, first["access_token"]) == 200
    ended = await service.client.post("/oauth/revoke", data={"token": first["access_token"], "client_id": client_id})
    assert ended.status_code == 200
    assert await mcp_status(service.origin, first["access_token"]) == 401
    assert await mcp_status(service.origin, second["access_token"]) == 200, "an access token ends alone"
    ended = await service.client.post("/oauth/revoke", data={"token": second["refresh_token"], "client_id": client_id})
    assert ended.status_code == 200
    assert await mcp_status(service.origin, second["access_token"]) == 401, "a refresh token ends its sign-in"
    renewed = await token(
        service, grant_type="refresh_token", client_id=client_id, refresh_token=second["refresh_token"]
    )
    assert renewed.status_code == 400


async def test_org10_a_refresh_token_rotates_and_one_used_twice_ends_its_grant(service: Service) -> None:
    client_id = (await registered(service)).json()["client_id"]
    async with browser_of(service, "owner@acme.test") as browser:
        query, verifier = await authorized(service, browser, client_id)
    first = await exchanged(service, client_id, query, verifier)
    assert first["expires_in"] <= 3600
    assert first["refresh_token"].startswith("myr_")
    renewed = await token(
        service, grant_type="refresh_token", client_id=client_id, refresh_token=first["refresh_token"]
    )
    assert renewed.status_code == 200, renewed.text
    second = renewed.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert second["access_token"] != first["access_token"]
    assert await mcp_status(service.origin, second["access_token"]) == 200
    replayed = await token(
        service, grant_type="refresh_token", client_id=client_id, refresh_token=first["refresh_token"]
    )
    assert replayed.status_code == 400
    assert replayed.json()["error"] == "invalid_grant"
    assert await mcp_status(service.origin, second["access_token"]) == 401, "a replayed refresh token ends its grant"
    later = await token(service, grant_type="refresh_token", client_id=client_id, refresh_token=second["refresh_token"])
    assert later.status_code == 400


async def test_org10_a_token_reaches_only_the_endpoint_it_was_issued_for(service: Service, upstream: str) -> None:
    await register(service, upstream)
    teammate = await service.post(
        "/api/v1/teammates", {"name": "helper", "instructions": "help", "server_ids": []}, expect=201
    )
    client_id = (await registered(service)).json()["client_id"]
    teammate_resource = f"{service.origin}/mcp/teammates/{teammate['id']}"
    async with browser_of(service, "owner@acme.test") as browser:
        query, verifier = await authorized(service, browser, client_id, resource=teammate_resource)
        assert "helper" in browser.consent_page, "the page names the teammate"
    issued = await exchanged(service, client_id, query, verifier)
    assert await mcp_status(service.origin, issued["access_token"], f"/mcp/teammates/{teammate['id']}") == 200
    assert await mcp_status(service.origin, issued["access_token"], "/mcp") == 401, (
        "bound to the resource it was issued for"
    )
    api = await service.request("GET", "/api/v1/me", token=issued["access_token"])
    assert api.status_code == 401, "an MCP client's token is not an API token"
    in_query = await service.client.post(f"/mcp?access_token={issued['access_token']}", json={})
    assert in_query.status_code == 401, "a token goes in the Authorization header only"
    async with httpx2.AsyncClient(trust_env=False) as http:
        other = await http.post(f"{service.origin}/mcp", json={}, headers={"Authorization": "Bearer myo_x"})
    assert 'error="invalid_token"' in other.headers["www-authenticate"]
    foreign = await service.client.get(
        "/oauth/authorize", params=authorization(client_id, state="s", resource="https://elsewhere.example/mcp")
    )
    assert foreign.status_code == 302
    assert "error=invalid_target" in foreign.headers["location"]


async def test_org10_denying_sends_access_denied_and_the_request_is_answered_once(service: Service) -> None:
    client_id = (await registered(service)).json()["client_id"]
    async with browser_of(service, "owner@acme.test") as browser:
        query, _ = await authorized(service, browser, client_id, decision="deny")
        assert query == {"error": "access_denied", "state": "st4te", "iss": query["iss"]}
        request = _REQUEST.search(browser.consent_page)
        csrf = _CSRF.search(browser.consent_page)
        assert request is not None
        assert csrf is not None
        again = await browser.http.post(
            "/oauth/consent", data={"csrf_token": csrf.group(1), "request": request.group(1), "decision": "allow"}
        )
        assert again.status_code == 303
        assert not again.headers["location"].startswith(CALLBACK), "a consent is answered once"
    assert (await service.request("GET", "/api/v1/oauth/grants")).json() == []


async def test_org10_a_removed_members_oauth_tokens_stop_working(service: Service) -> None:
    await service.add_member("leaving@acme.test")
    client_id = (await registered(service)).json()["client_id"]
    async with browser_of(service, "leaving@acme.test") as browser:
        query, verifier = await authorized(service, browser, client_id)
        me = (await browser.http.get("/api/v1/me")).json()
    issued = await exchanged(service, client_id, query, verifier)
    assert await mcp_status(service.origin, issued["access_token"]) == 200
    assert (await service.request("DELETE", f"/api/v1/members/{me['id']}")).status_code == 204
    assert await mcp_status(service.origin, issued["access_token"]) == 401
    renewed = await token(
        service, grant_type="refresh_token", client_id=client_id, refresh_token=issued["refresh_token"]
    )
    assert renewed.status_code == 400


@pytest.mark.parametrize(
    "redirect",
    [
        "javascript:alert(1)",
        "data:text/html,hi",
        "http://attacker.example/cb",
        "https://app.example/cb#frag",
        "file:///etc/passwd",
        "microsoft-edge:https://attacker.example/cb",  # an app scheme that opens a browser elsewhere
        "https://[::1/cb",
    ],
)
async def test_org10_a_client_may_not_register_a_redirect_address_that_could_hurt(
    service: Service, redirect: str
) -> None:
    refused = await registered(service, redirect_uris=[redirect])
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")


@pytest.mark.parametrize(
    ("metadata", "said"),
    [
        ({"client_name": "Claude\u202eedoC"}, "direction"),  # reads as another client's name
        ({"client_name": "Editor\u200b"}, "invisible"),
        ({"client_name": "Editor\nAllow"}, "control"),
        ({"client_name": "a\x00b"}, "control"),
        ({"client_name": "x" * 101}, "at most 100"),
        ({"contacts": ["a\x00@b.example"]}, "NUL"),
        ({"redirect_uris": [f"http://127.0.0.1:{port}/cb" for port in range(1000, 1011)]}, "at most 10"),
        ({"software_id": "x" * 20_000}, "KiB"),
    ],
)
async def test_org10_a_client_may_not_register_metadata_that_could_mislead_or_not_be_kept(
    service: Service, metadata: dict[str, Any], said: str
) -> None:
    refused = await registered(service, **metadata)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"] == "invalid_client_metadata"
    assert said in refused.json()["error_description"]


async def test_org10_a_state_too_long_or_holding_nul_is_sent_back_as_invalid_request(service: Service) -> None:
    client_id = (await registered(service)).json()["client_id"]
    for state in ("x" * 2001, "a\x00b"):
        answer = await service.client.get("/oauth/authorize", params=authorization(client_id, state=state))
        assert answer.status_code == 302
        assert "error=invalid_request" in answer.headers["location"]


@pytest.mark.parametrize("client_id", ["a\x00b", "\udfff", "https://docs.example/" + "x" * 3000])
async def test_org10_a_client_id_no_client_could_have_is_refused_cleanly_everywhere(
    service: Service, client_id: str
) -> None:
    form = {"client_id": client_id, "token": "t", "grant_type": "refresh_token", "refresh_token": "r"}
    encoded = urlencode(form, encoding="utf-8", errors="surrogatepass").encode()
    kind = {"content-type": "application/x-www-form-urlencoded"}
    for path in ("/oauth/token", "/oauth/revoke"):
        answer = await service.client.post(path, content=encoded, headers=kind)
        assert answer.status_code in (400, 401), (path, answer.text)
        assert "client" in answer.json()["error"]
    query = urlencode(authorization(client_id), encoding="utf-8", errors="surrogatepass")
    refused = await service.client.get(f"/oauth/authorize?{query}")
    assert refused.status_code == 400, refused.text


async def test_org10_a_malformed_authorization_is_sent_back_naming_the_issuer(service: Service) -> None:
    client_id = (await registered(service)).json()["client_id"]
    good = authorization(client_id, state="s")
    for wrong, error in (
        ({"code_challenge": "short"}, "invalid_request"),
        ({"code_challenge": "x" * 500}, "invalid_request"),
        ({"scope": "admin"}, "invalid_scope"),
        ({"resource": f"{service.origin}/mcp/teammates/a%22b"}, "invalid_target"),
        ({"resource": f"{service.origin}/mcp/teammates/" + "x" * 65}, "invalid_target"),
    ):
        answer = await service.client.get("/oauth/authorize", params={**good, **wrong})
        assert answer.status_code == 302, (wrong, answer.text)
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        assert query["error"] == [error], (wrong, query)
        assert query["iss"] == [service.origin], "an error names the issuer too (RFC 9207)"


async def test_org10_the_consent_page_shows_an_apps_own_redirect_address_whole(service: Service) -> None:
    misleading = "com.attacker.app://claude.ai/callback"
    client_id = (await registered(service, redirect_uris=[misleading])).json()["client_id"]
    params = authorization(client_id, redirect_uri=misleading)
    async with browser_of(service, "owner@acme.test") as browser:
        sent = await browser.http.get("/oauth/authorize", params=params)
        page = await browser.http.get(sent.headers["location"])
    assert page.status_code == 200, page.text
    assert f"<code data-redirect>{misleading}</code>" in page.text, "not just the host it names"


async def test_org10_a_client_named_by_its_metadata_document_signs_in_without_registering(service: Service) -> None:
    documents: dict[str, Any] = {}

    async def document(request: Request) -> JSONResponse:
        return JSONResponse(documents[request.path_params["name"]])

    app = Starlette(routes=[Route("/clients/{name}", document)])
    async with serving(app, stop_seconds=0) as docs:
        good = f"{docs}/clients/good.json"
        documents["good.json"] = {"client_id": good, "client_name": "Documented", "redirect_uris": [CALLBACK]}
        async with browser_of(service, "owner@acme.test") as browser:
            query, verifier = await authorized(service, browser, good)
            assert "Documented" in browser.consent_page
        assert (await exchanged(service, good, query, verifier))["access_token"].startswith("myo_")
        liar = f"{docs}/clients/liar.json"
        documents["liar.json"] = {"client_id": good, "client_name": "Liar", "redirect_uris": [CALLBACK]}
        secretive = f"{docs}/clients/secret.json"
        documents["secret.json"] = {"client_id": secretive, "client_secret": "x", "redirect_uris": [CALLBACK]}
        for refused_id in (liar, secretive, f"{docs}/clients/missing.json"):
            answer = await service.client.get("/oauth/authorize", params=authorization(refused_id))
            assert answer.status_code == 400, (refused_id, answer.text)


async def test_org10_the_metadata_names_the_resource_and_the_server(service: Service) -> None:
    resource = (await service.client.get("/.well-known/oauth-protected-resource/mcp")).json()
    assert resource["resource"] == f"{service.origin}/mcp"
    assert resource["authorization_servers"] == [service.origin]
    server = (await service.client.get("/.well-known/oauth-authorization-server")).json()
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["client_id_metadata_document_supported"] is True
    assert server["authorization_response_iss_parameter_supported"] is True, "every redirect names the issuer"
    assert server["token_endpoint"] == f"{service.origin}/oauth/token"


async def test_org10_mcpyard_itself_signs_in_to_the_organization_and_uses_its_tools(
    service: Service, upstream: str, home: Home
) -> None:
    await set_policy(service, by_tool(await register(service, upstream))["lookup"], "run_freely")
    config = home.write_config({"acme": {"url": f"{service.origin}/mcp"}})
    async with home.open(config, mode="auto") as host, browser_of(service, "owner@acme.test") as browser:
        with anyio.fail_after(WAIT_SECONDS):
            await host.wait_until(lambda h: h.status().servers[0].state in ("waiting_for_sign_in", "failed"))
        waiting = host.status().servers[0]
        assert waiting.state == "waiting_for_sign_in", waiting.reason
        assert waiting.sign_in_url is not None
        query = await browser.consent(waiting.sign_in_url, back_to="http://127.0.0.1:")
        assert "mcpyard on " in browser.consent_page, "mcpyard registers under its own name"
        assert query["code"]
        async with httpx2.AsyncClient(trust_env=False) as plain:
            assert (await plain.get(browser.redirect)).status_code == 200, "mcpyard's listener took the code"
        with anyio.fail_after(WAIT_SECONDS):
            await host.wait_until(lambda h: h.status().servers[0].state in ("connected", "failed"))
        connected = host.status().servers[0]
        assert connected.state == "connected", connected.reason
        ran = await host.call("acme__tools__lookup", {"key": "k"})
        assert ran.ok
        assert "value of k" in ran.text
    [grant] = await service.get("/api/v1/oauth/grants")
    assert grant["client_name"].startswith("mcpyard on ")


async def test_org10_the_sdk_client_signs_in_by_its_metadata_document_without_registering(
    database_url: str, home: Home, upstream: str, tmp_path: Path
) -> None:
    certificates = make_certificates("localhost")
    documents: dict[str, Any] = {}

    async def document(request: Request) -> JSONResponse:
        del request
        return JSONResponse(documents["editor.json"])

    app = Starlette(routes=[Route("/clients/editor.json", document)])
    async with serving(app, stop_seconds=0, tls=certificates.write(tmp_path / "tls")) as docs:
        client_url = f"{docs}/clients/editor.json"
        documents["editor.json"] = {
            "client_id": client_url,
            "client_name": "Documented Editor",
            "redirect_uris": [CALLBACK],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
        guard = EgressGuard(dev=True, verify=certificates.client_context())  # the service trusts the test's CA
        async with served_service(database_url, home.data_home, guard=guard) as service:
            await set_policy(service, by_tool(await register(service, upstream))["lookup"], "run_freely")
            memory = Memory()
            async with (
                browser_of(service, "owner@acme.test", signed_in=False) as browser,
                oauth_client(service, browser, memory, client_metadata_url=client_url) as client,
            ):
                assert not (await client.call_tool("tools__lookup", {"key": "k"})).is_error
            assert "Documented Editor" in browser.consent_page
            assert memory.client is not None
            assert memory.client.client_id == client_url, "the document's address is the client's id"
            [grant] = await service.get("/api/v1/oauth/grants")
            assert (grant["client_id"], grant["client_name"]) == (client_url, "Documented Editor")


@pytest.mark.long
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_org10_a_client_document_too_slow_or_missing_is_given_up_and_not_read_again_at_once(
    service: Service,
) -> None:
    reads: list[str] = []
    over = anyio.Event()

    async def missing(request: Request) -> JSONResponse:
        reads.append(request.url.path)
        return JSONResponse({}, status_code=404)

    async def trickling(request: Request) -> StreamingResponse:
        reads.append(request.url.path)

        async def a_byte_a_second() -> AsyncIterator[bytes]:
            # Paced on the test's end: a byte each second until the test is over (two minutes at most).
            for _ in range(120):
                yield b" "
                with anyio.move_on_after(1):
                    await over.wait()
                if over.is_set():
                    return

        return StreamingResponse(a_byte_a_second(), media_type="application/json")

    app = Starlette(routes=[Route("/missing.json", missing), Route("/slow.json", trickling)])
    async with serving(app, stop_seconds=0) as docs:
        for name in ("missing.json", "missing.json", "slow.json"):
            started = anyio.current_time()
            with anyio.fail_after(30):
                answer = await service.client.get("/oauth/authorize", params=authorization(f"{docs}/{name}"))
            assert answer.status_code == 400, "a client whose document cannot be read is refused"
            assert anyio.current_time() - started < 20, "a document is read within 10 s in all, however it trickles"
        over.set()
    assert reads == ["/missing.json", "/slow.json"], "an address that failed is not read again at once"


async def test_org11_an_oauth_clients_calls_count_against_the_per_token_limit_of_its_sign_in(
    service: Service, upstream: str
) -> None:
    await set_policy(service, by_tool(await register(service, upstream))["lookup"], "run_freely")
    api_token = await service.add_member("member@acme.test")
    limits = await service.request("PUT", "/api/v1/limits", json={"token_per_day": 1})
    assert limits.status_code == 200, limits.text
    async with (
        browser_of(service, "member@acme.test", signed_in=False) as browser,
        oauth_client(service, browser, Memory()) as client,
    ):
        assert not (await client.call_tool("tools__lookup", {"key": "k"})).is_error
        refused = await client.call_tool("tools__lookup", {"key": "k"})
        assert refused.is_error
        assert "token limit" in str(refused.content[0])
    ran = await service.post("/api/v1/calls", {"tool": "tools__lookup", "arguments": {"key": "k"}}, token=api_token)
    assert ran["ok"] is True, "the member's API token is another token, with a count of its own"
