"""mcpyard's host as the client under the official conformance suite: `python client.py URL`.

The suite starts its own server (and authorization server) and runs this with the server's
URL. The host connects through the whole of mcpyard; a sign-in page, when one is needed, is
followed by a headless "browser" (the suite's authorization server approves at once), then
every tool listed is called once with the arguments its schema makes simplest.
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

from mcpyard import Host


def _simplest(schema: dict[str, Any]) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    properties = schema.get("properties") or {}
    for name in schema.get("required") or []:
        kind = str((properties.get(name) or {}).get("type"))
        arguments[name] = {"number": 1, "integer": 1, "boolean": True, "array": [], "object": {}}.get(kind, "x")
    return arguments


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


async def main(url: str) -> int:
    with tempfile.TemporaryDirectory(prefix="mcpyard-conformance-") as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        config = root / "config.json"
        config.write_text(json.dumps({"mcpServers": {"s": {"url": url, "connect_timeout_secs": 20}}}))
        async with (
            Host.open(
                workspace=root / "ws",
                config_file=config,
                mode="auto",
                environ=dict(os.environ),
                config_home=root / "config",
                data_home=root / "data",
                secrets={},
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
