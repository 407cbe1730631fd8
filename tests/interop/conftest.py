"""Fixtures for the interop tier: locate the official reference servers and run them on 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import Client
from mcp.client.session import MessageHandlerFnT
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters

from tests.servers.http_runner import serve_process

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools"

STARTUP_SECONDS = 30

EverythingMode = Literal["stdio", "streamableHttp", "sse"]
"""server-everything's own names for its transports (`mcp-server-everything MODE`)."""

ENDPOINTS: dict[EverythingMode, str] = {"streamableHttp": "/mcp", "sse": "/sse"}
TRANSPORTS: dict[EverythingMode, str] = {"stdio": "stdio", "streamableHttp": "streamable_http", "sse": "sse"}
"""mcpyard's `transport` value (CFG-3) for each mode."""


def reference_server(env_var: str, default: Path) -> Path:
    """The executable of a reference server: `$env_var` if set, else where scripts/check installs it.

    Fails (never skips) when it is missing: a skipped interop test proves nothing.
    """
    path = Path(os.environ.get(env_var) or default)
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(
            f"reference server not found at {path}: run scripts/check, which installs it "
            f"(or point {env_var} at an installed copy)",
            pytrace=False,
        )
    return path


@pytest.fixture
def everything() -> Path:
    """npm's `@modelcontextprotocol/server-everything` (pinned by scripts/check)."""
    return reference_server("MCPYARD_TEST_EVERYTHING", TOOLS / "node_modules" / ".bin" / "mcp-server-everything")


@pytest.fixture
def time_server() -> Path:
    """PyPI's `mcp-server-time` (pinned by scripts/check)."""
    return reference_server("MCPYARD_TEST_TIME_SERVER", TOOLS / "time-venv" / "bin" / "mcp-server-time")


@pytest.fixture
def filesystem_server() -> Path:
    """npm's `@modelcontextprotocol/server-filesystem` (pinned by scripts/check)."""
    return reference_server("MCPYARD_TEST_FILESYSTEM", TOOLS / "node_modules" / ".bin" / "mcp-server-filesystem")


@pytest.fixture
def memory_server() -> Path:
    """npm's `@modelcontextprotocol/server-memory` (pinned by scripts/check)."""
    return reference_server("MCPYARD_TEST_MEMORY", TOOLS / "node_modules" / ".bin" / "mcp-server-memory")


@pytest.fixture
def git_server() -> Path:
    """PyPI's `mcp-server-git` (pinned by scripts/check)."""
    return reference_server("MCPYARD_TEST_GIT_SERVER", TOOLS / "git-venv" / "bin" / "mcp-server-git")


@pytest.fixture
def fetch_server() -> Path:
    """PyPI's `mcp-server-fetch` (pinned by scripts/check)."""
    return reference_server("MCPYARD_TEST_FETCH_SERVER", TOOLS / "fetch-venv" / "bin" / "mcp-server-fetch")


async def list_all(client: Client) -> dict[str, dict[str, Any]]:
    """Every tool a client is offered, all pages, by name, as wire JSON (camelCase keys, no nulls)."""
    tools: dict[str, dict[str, Any]] = {}
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            tools[tool.name] = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
        cursor = page.next_cursor
        if not cursor:
            return tools


async def own_listing(entry: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The tools a stdio server lists to a plain SDK client (no mcpyard in between), run as `entry` says."""
    server = StdioServerParameters(command=entry["command"], args=list(entry.get("args", [])), env=entry.get("env"))
    with anyio.fail_after(STARTUP_SECONDS):
        async with Client(server) as client:
            return await list_all(client)


class OwnListing:
    """`own_listing` of a server, worked out in the background while the test starts mcpyard."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.listed: dict[str, dict[str, Any]] = {}

    async def tools(self) -> dict[str, dict[str, Any]]:
        with anyio.fail_after(STARTUP_SECONDS):
            await self.done.wait()
        return self.listed


@asynccontextmanager
async def own_listing_meanwhile(entry: Mapping[str, Any]) -> AsyncIterator[OwnListing]:
    """Start `own_listing(entry)` beside the body (two servers start at once: the slow Python ones cost half)."""
    listing = OwnListing()

    async def run() -> None:
        listing.listed = await own_listing(entry)
        listing.done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        yield listing


@dataclass(frozen=True)
class EverythingServer:
    """server-everything reachable in one mode: the mcpyard config entry, and a direct SDK client."""

    mode: EverythingMode
    command: Path
    url: str | None

    @property
    def transport(self) -> str:
        return TRANSPORTS[self.mode]

    def entry(self, **fields: Any) -> dict[str, Any]:
        """The shared-form config entry (CFG-3) that reaches this server."""
        if self.url is None:
            return {"command": str(self.command), "args": ["stdio"], "transport": "stdio", **fields}
        return {"url": self.url, "transport": self.transport, **fields}

    def direct_client(self, message_handler: MessageHandlerFnT | None = None) -> Client:
        """An MCP SDK client of its own (no mcpyard in between), for comparing listings."""
        if self.url is None:
            server = StdioServerParameters(command=str(self.command), args=["stdio"])
            return Client(server, message_handler=message_handler)
        if self.mode == "sse":
            return Client(sse_client(self.url), message_handler=message_handler)
        return Client(self.url, message_handler=message_handler)


@pytest.fixture(params=["stdio", "streamableHttp", "sse"])
async def everything_server(request: pytest.FixtureRequest, everything: Path) -> AsyncIterator[EverythingServer]:
    """server-everything in each of its modes; the HTTP ones run as a subprocess on a free port."""
    mode: EverythingMode = request.param
    if mode == "stdio":
        yield EverythingServer(mode, everything, None)
        return
    async with serve_everything(everything, mode) as url:
        yield EverythingServer(mode, everything, url)


@asynccontextmanager
async def serve_everything(command: Path, mode: EverythingMode) -> AsyncIterator[str]:
    """Run `mcp-server-everything MODE` with `PORT` set to a free port; yield its MCP URL.

    It listens on every interface; the tests reach it on 127.0.0.1. Stopped (SIGTERM, then
    SIGKILL) on exit, also when the test is cancelled.
    """
    async with serve_process(
        lambda port: [str(command), mode],
        lambda port: f"http://127.0.0.1:{port}{ENDPOINTS[mode]}",
        env=lambda port: {**os.environ, "PORT": str(port)},
        startup_seconds=STARTUP_SECONDS,
        ready=None,  # its log lines are no contract: its port is tried until it answers
    ) as url:
        yield url
