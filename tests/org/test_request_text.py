"""Text no service could store, send or answer is refused wherever a request carries it, never a 500 (ERR-1, THREATS):
a lone surrogate (a JSON escape of half a UTF-16 pair) in any string of any JSON body, at any depth, in keys too;
percent-encoded or invalid UTF-8 in paths and query parameters; surrogates in forms; non-ASCII bytes in the
headers and cookies that carry secrets."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from tests.conftest import Home
from tests.org._service import PASSWORD, Service, running_service

pytestmark = pytest.mark.anyio

LONE = "\\ud800"
"""A JSON escape that `json.loads` turns into a lone surrogate."""
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


def _raw(body: dict[str, Any]) -> bytes:
    """`body` as JSON, with every `@` standing for the escape of a lone surrogate."""
    return json.dumps(body).replace("@", LONE).encode()


# (path, body with `@` where the surrogate goes, the field the refusal names)
BODIES = [
    ("/api/v1/members", {"email": "new@", "role": "member", "password": PASSWORD}, "`email`"),
    ("/api/v1/teammates", {"name": "helper@"}, "`name`"),
    ("/api/v1/teammates", {"name": "helper", "server_ids": ["@"]}, "`server_ids[0]`"),
    ("/api/v1/assistants", {"name": "@", "instructions": "x"}, "`name`"),
    ("/api/v1/tokens", {"label": "ci@"}, "`label`"),
    ("/api/v1/login", {"email": "owner", "password": "@"}, "`password`"),
    ("/api/v1/servers", {"name": "tools", "url": "http://127.0.0.1:1/mcp", "bearer_token": "@"}, "`bearer_token`"),
    (
        "/api/v1/servers",
        {"name": "t", "url": "http://127.0.0.1:1/mcp", "client_credentials": {"client_id": "@"}},
        "`client_credentials.client_id`",
    ),
    ("/api/v1/servers", {"name": "t", "@": 1}, "a field name"),
    ("/api/v1/calls", {"tool": "tools__@"}, "`tool`"),
    ("/api/v1/questions/q1/answer", {"action": "accept", "content": {"k": ["@"]}}, "`content.k[0]`"),
    ("/api/v1/questions/q1/answer", {"action": "accept", "content": {"@": 1}}, "a field name in `content`"),
    ("/public/assistants/nobody/turns", {"message": "hi @"}, "`message`"),
]


@pytest.mark.parametrize(("path", "body", "named"), BODIES, ids=[f"{p}-{n}" for p, _, n in BODIES])
async def test_a_lone_surrogate_anywhere_in_a_json_body_is_422_naming_where(
    service: Service, path: str, body: dict[str, Any], named: str
) -> None:
    before = await service.get("/api/v1/audit")
    headers = {**service.headers(), "content-type": "application/json"}
    response = await service.client.post(path, content=_raw(body), headers=headers)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert error["message"].startswith(named), error["message"]
    assert "lone surrogate (U+D800)" in error["message"]
    assert await service.get("/api/v1/audit") == before, "nothing was done"


async def test_a_lone_surrogate_in_the_model_setting_and_a_teammate_turn_is_422(service: Service) -> None:
    for method, path, body in (
        ("PUT", "/api/v1/model", {"base_url": "http://127.0.0.1:1/v1", "model": "m@"}),
        ("POST", "/api/v1/conversations/c1/turns", {"message": "@"}),
        ("PATCH", "/api/v1/servers/s1", {"name": "@"}),
        ("PUT", "/api/v1/tools/t1/policy", {"policy": "@"}),
    ):
        response = await service.client.request(
            method, path, content=_raw(body), headers={**service.headers(), "content-type": "application/json"}
        )
        assert response.status_code == 422, (path, response.text)
        assert "lone surrogate" in response.json()["error"]["message"]


@pytest.mark.parametrize("escape", ["%ED%A0%80", "%C0%80", "%FF", "%E9", "%00"])
async def test_paths_and_query_parameters_of_any_bytes_answer_4xx_or_as_usual(service: Service, escape: str) -> None:
    """Percent-encoded surrogates, overlong and invalid UTF-8 name nothing (404) or filter nothing (200/422)."""
    for path in (f"/api/v1/servers/{escape}", f"/api/v1/teammates/{escape}", f"/api/v1/results/{escape}"):
        response = await service.request("GET", path)
        assert response.status_code == 404, (path, response.text)
    response = await service.request("GET", f"/public/assistants/{escape}/turns", json={"message": "hi"})
    assert response.status_code in (404, 405), response.text
    for query in (
        f"/api/v1/audit?action={escape}",
        f"/api/v1/approvals?status={escape}",
        f"/api/v1/alerts?open={escape}",
    ):
        response = await service.request("GET", query)
        assert response.status_code in (200, 422), (query, response.text)
    for page in (f"/a/{escape}", f"/servers/{escape}", f"/login?next=/{escape}"):
        response = await service.client.get(page, headers={"accept": "text/html"})
        assert response.status_code < 500, (page, response.text)


def _browser(service: Service) -> httpx2.AsyncClient:
    assert service.app is not None
    transport = httpx2.ASGITransport(app=service.app, client=("127.0.0.1", 50_000))
    return httpx2.AsyncClient(transport=transport, base_url="http://org.test", follow_redirects=False)


async def _signed_in(browser: httpx2.AsyncClient) -> str:
    form = await browser.get("/login")
    match = _CSRF.search(form.text)
    assert match is not None
    signed = await browser.post(
        "/login", data={"csrf_token": match.group(1), "email": "owner@acme.test", "password": PASSWORD}
    )
    assert signed.status_code == 303
    match = _CSRF.search((await browser.get("/servers")).text)
    assert match is not None
    return match.group(1)


def _multipart(csrf: str, **fields: str) -> tuple[bytes, str]:
    """A multipart form in the `unicode-escape` charset, so `\\ud800` in a field arrives as a lone surrogate."""
    parts = [
        f'--b\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n' for name, value in fields.items()
    ]
    parts.insert(0, f'--b\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n{csrf}\r\n')
    return ("".join(parts) + "--b--\r\n").encode(), "multipart/form-data; boundary=b; charset=unicode_escape"


@pytest.mark.parametrize(
    ("path", "fields"),
    [
        ("/teammates", {"name": "helper" + LONE, "instructions": "x"}),
        ("/assistants", {"name": LONE, "instructions": "x"}),
        ("/servers", {"name": "tools", "url": "http://127.0.0.1:1/mcp", "bearer_token": LONE}),
        ("/members", {"email": LONE + "@acme.test", "role": "member", "password": PASSWORD}),
        ("/tokens", {"label": LONE}),
    ],
)
async def test_a_lone_surrogate_in_a_page_form_is_refused_with_a_notice(
    service: Service, path: str, fields: dict[str, str]
) -> None:
    async with _browser(service) as browser:
        csrf = await _signed_in(browser)
        before = await service.get("/api/v1/audit")
        content, kind = _multipart(csrf, **fields)
        response = await browser.post(path, content=content, headers={"content-type": kind})
        assert response.status_code == 303, response.text
        shown = await browser.get(response.headers["location"])
        assert "lone surrogate (U+D800)" in shown.text
        assert await service.get("/api/v1/audit") == before, "nothing was done"
        assert await service.get("/api/v1/teammates") == []


async def test_non_ascii_bytes_in_secret_headers_and_cookies_are_refused_not_500(service: Service) -> None:
    """A CSRF token, session cookie or notice cookie of Latin-1 bytes is simply not ours (401, 403, or ignored)."""
    async with _browser(service) as browser:
        csrf = await _signed_in(browser)
        refused = await browser.post("/api/v1/tokens", json={"label": "x"}, headers={b"x-csrf-token": b"\xe9t\xe9"})
        assert refused.status_code == 403, refused.text
        form = await browser.post("/tokens", data={"csrf_token": "\xe9t\xe9", "label": "x"})
        assert form.status_code == 303, form.text
        assert csrf
    async with _browser(service) as stranger:
        for cookie in (b"mcpyard_session=\xe9.\xe9", b"mcpyard_notice=\xe9.\xe9", b"mcpyard_visitor=\xe9"):
            page = await stranger.get("/servers", headers={b"cookie": cookie, b"accept": b"text/html"})
            assert page.status_code < 500, (cookie, page.text)
            api = await stranger.get("/api/v1/me", headers={b"cookie": cookie})
            assert api.status_code == 401, (cookie, api.text)
        bearer = await stranger.get("/api/v1/me", headers={b"authorization": b"Bearer \xe9\xff"})
        assert bearer.status_code == 401, bearer.text
