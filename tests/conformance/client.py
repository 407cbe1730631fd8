"""mcpyard's host as the client under the official conformance suite: `python client.py URL`.

The suite starts its own server (and authorization server) and runs this with the server's
URL. The host connects through the whole of mcpyard; a sign-in page, when one is needed, is
followed by a headless "browser" (the suite's authorization server approves at once), then
every tool listed is called once with the arguments its schema makes simplest. A server's
question (elicitation) is accepted with every field left empty, so each takes its default.

What a scenario hands its client (`MCP_CONFORMANCE_CONTEXT`: a client id, its secret or private
key) goes into the server's `oauth` table as a user would write it, the secret and key as
`${secret:NAME}` references to secrets handed to the host; see `oauth_entry`.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.auth.utils import build_protected_resource_metadata_discovery_urls

from mcpyard import ElicitationAnswer, ElicitationRequest, Host

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""Where the suite's authorization servers expect mcpyard's client ID metadata document (auth/basic-cimd)."""


def _simplest(schema: dict[str, Any]) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    properties = schema.get("properties") or {}
    for name in schema.get("required") or []:
        kind = str((properties.get(name) or {}).get("type"))
        arguments[name] = {"number": 1, "integer": 1, "boolean": True, "array": [], "object": {}}.get(kind, "x")
    return arguments


async def _accept_defaults(request: ElicitationRequest) -> ElicitationAnswer:
    """A person who accepts every form as it comes: mcpyard fills in the defaults (SEP-1034)."""
    del request
    return ElicitationAnswer.accept()


async def _browser(host: Host) -> None:
    """Follow every sign-in page the host shows, for as long as it runs (a step-up asks again mid-session)."""
    followed: set[str] = set()
    while True:
        for server in host.status().servers:
            url = server.sign_in_url
            if server.state == "waiting_for_sign_in" and url and url not in followed:
                followed.add(url)
                async with httpx2.AsyncClient(follow_redirects=False) as browser:
                    page = await browser.get(url)
                    location = page.headers.get("location")
                    if location:
                        await browser.get(location)
        await host.wait_until(
            lambda h: any(s.sign_in_url and s.sign_in_url not in followed for s in h.status().servers)
        )


async def _settle(host: Host) -> None:
    with anyio.move_on_after(20):
        await host.wait_until(
            lambda h: all(s.state not in ("waiting_for_sign_in", "connecting") for s in h.status().servers)
        )


async def issuer_of(url: str) -> str:
    """The authorization server a server's protected resource metadata names (RFC 9728).

    The client-credentials and cross-app scenarios name no issuer in their context, and mcpyard
    sends unattended credentials only to the issuer it is configured with: this stands for the
    administrator who writes it (as the SDK's own conformance client does for cross-app access).
    """
    async with httpx2.AsyncClient() as client:
        for address in build_protected_resource_metadata_discovery_urls(None, url):
            answer = await client.get(address)
            if answer.status_code == 200:
                return str(answer.json()["authorization_servers"][0])
    raise RuntimeError(f"{url} publishes no protected resource metadata")


async def oauth_entry(scenario: str, context: dict[str, Any], url: str, secrets: dict[str, str]) -> dict[str, Any]:
    """The server's `oauth` table for a scenario's context; its secrets go into `secrets`."""
    client_id = context.get("client_id")
    if "idp_id_token" in context:  # cross-app access (auth/cross-app-access-complete-flow)
        secrets["conformance-secret"] = str(context["client_secret"])
        secrets["conformance-id-token"] = str(context["idp_id_token"])
        return {
            "grant": "cross_app_access",
            "client_id": client_id,
            "client_secret": "${secret:conformance-secret}",
            "issuer": await issuer_of(url),
            "idp_token_endpoint": context["idp_token_endpoint"],
            "idp_client_id": context["idp_client_id"],
            "id_token": "${secret:conformance-id-token}",
        }
    if "client-credentials" in scenario:
        oauth: dict[str, Any] = {"grant": "client_credentials", "client_id": client_id, "issuer": await issuer_of(url)}
        if "private_key_pem" in context:
            secrets["conformance-key"] = str(context["private_key_pem"])
            oauth["private_key"] = "${secret:conformance-key}"
            oauth["signing_algorithm"] = context.get("signing_algorithm", "ES256")
        else:
            secrets["conformance-secret"] = str(context["client_secret"])
            oauth["client_secret"] = "${secret:conformance-secret}"
        return oauth
    if client_id is not None:  # a client registered beforehand (auth/pre-registration)
        oauth = {"client_id": client_id}
        if "client_secret" in context:
            secrets["conformance-secret"] = str(context["client_secret"])
            oauth["client_secret"] = "${secret:conformance-secret}"
        return oauth
    # Otherwise mcpyard describes itself with a client ID metadata document where the authorization
    # server takes one, and registers dynamically where it does not.
    return {"client_metadata_url": CLIENT_METADATA_URL}


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    secrets: dict[str, str] = {}
    entry: dict[str, Any] = {"url": url, "connect_timeout_secs": 20}
    if scenario.startswith("auth/"):
        entry["oauth"] = await oauth_entry(scenario, context, url, secrets)
    with tempfile.TemporaryDirectory(prefix="mcpyard-conformance-") as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        config = root / "config.json"
        config.write_text(json.dumps({"mcpServers": {"s": entry}}))
        async with (
            Host.open(
                workspace=root / "ws",
                config_file=config,
                mode="auto",
                environ=dict(os.environ),
                config_home=root / "config",
                data_home=root / "data",
                secrets=secrets,
                elicitor=_accept_defaults,
            ) as host,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(_browser, host)
            await _settle(host)
            server = host.status().servers[0]
            print(f"state: {server.state} {server.reason or ''}", file=sys.stderr)
            for tool in host.server_tools():
                result = await host.call(tool.name, _simplest(dict(tool.input_schema)))
                print(f"{tool.name}: ok={result.ok}", file=sys.stderr)
            tg.cancel_scope.cancel()
    return 0 if server.state == "connected" else 1


if __name__ == "__main__":
    raise SystemExit(anyio.run(main, sys.argv[-1]))
