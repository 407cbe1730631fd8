"""Steps the organization's API tests take again and again: register the fixture server, set a policy, call a tool."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any

import httpx2

from mcpyard.secrets import forms_of
from tests.org._service import Service

__all__ = ["TOKEN", "assert_never_shown", "by_tool", "call", "mcp_status", "pkce", "register", "set_policy"]

TOKEN = "srv-token-7d1c9a0e5b3f4a2e-upstream"
"""The bearer token the fixture server `org_tools` asks for (the `upstream` fixture)."""


async def register(service: Service, url: str, name: str = "tools", token: str | None = TOKEN) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "url": url}
    if token is not None:
        body["bearer_token"] = token
    created: dict[str, Any] = await service.post("/api/v1/servers", body, expect=201)
    return created


def by_tool(server: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["tool"]: tool for tool in server["tools"]}


async def set_policy(service: Service, tool: dict[str, Any], policy: str, *, expect: int = 200) -> Any:
    response = await service.request(
        "PUT", f"/api/v1/tools/{tool['id']}/policy", json={"policy": policy, "definition_hash": tool["definition_hash"]}
    )
    assert response.status_code == expect, response.text
    return response.json()


async def call(
    service: Service, tool: str, arguments: dict[str, Any] | None = None, *, token: str | None = None, expect: int = 200
) -> Any:
    return await service.post("/api/v1/calls", {"tool": tool, "arguments": arguments or {}}, expect=expect, token=token)


def assert_never_shown(service: Service, secret: str) -> None:
    everything = "\n".join(service.responses)
    for form in forms_of(secret):
        assert form not in everything, f"a form of the secret reached a response: {form!r}"


async def mcp_status(origin: str, token: str, path: str = "/mcp") -> int:
    """What the MCP endpoint at `origin` + `path` answers an `initialize` sent with `token` (200, or 401)."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(trust_env=False) as http:
        return (await http.post(f"{origin}{path}", json=initialize, headers=headers)).status_code


def pkce() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge
