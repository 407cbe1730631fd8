"""Opening one server's transport and its sign-in, and saying why a connection failed (CONN-1, CONN-3, AUTH-2)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
from mcp.client._transport import Transport

from mcpyard.auth import AuthStore, ServerTokens, SignIn, free_loopback_port, server_auth
from mcpyard.config import ServerSpec, credential_header, home_path
from mcpyard.connect._egress import EgressGuard, shown_url
from mcpyard.connect._environment import server_environment
from mcpyard.connect._errors import describe_failure, leaf_exception, public_url
from mcpyard.connect._guarded import guarded_client
from mcpyard.connect._http import HttpObservations, sse_transport, streamable_transport
from mcpyard.connect._reaper import Reaper
from mcpyard.connect._stdio import StdioProcess, StdioTransport
from mcpyard.connect._trace import split_trace_headers
from mcpyard.connect._websocket import websocket_transport
from mcpyard.errors import CallError, McpyardError, UrlRefused

__all__ = ["ClientIdentity", "Connector", "failure_reason", "timeout_reason"]


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """How mcpyard introduces itself to servers, and the host session it speaks for (CALL-3)."""

    name: str
    version: str
    session_id: str = ""


@dataclass(frozen=True, slots=True)
class Connector:
    """Everything needed to open one server's transport, whatever its kind."""

    spec: ServerSpec
    workspace: Path
    environ: Mapping[str, str]
    reaper: Reaper | None = None
    auth_store: AuthStore | None = None
    open_browser: bool = False
    egress: EgressGuard | None = None
    """The outbound guard every remote connection goes through, when the host has one (NET-1, NET-2)."""

    @property
    def url(self) -> str:
        if self.spec.url is None:
            raise CallError("unsupported_transport", f"server {self.spec.id!r} has no url")
        return self.spec.url

    @property
    def headers(self) -> dict[str, str]:
        """The configured headers, less the trace headers mcpyard sets itself (CALL-3)."""
        return dict(split_trace_headers(self.spec.headers)[0])

    def stdio(self, process: StdioProcess) -> StdioTransport:
        """The stdio server's process, started in the workspace (or `cwd`) with its minimal environment (CONN-2)."""
        spec = self.spec
        if spec.command is None:
            raise CallError("unsupported_transport", f"server {spec.id!r} has no command")
        cwd = home_path(spec.cwd, self.environ) if spec.cwd else self.workspace  # `~/…`: the home folder
        if not cwd.is_absolute():
            cwd = self.workspace / cwd
        # Spawning in a missing folder fails as if the command were missing (ENOENT): say which it is.
        if not cwd.is_dir():
            shown = repr(os.fspath(cwd))
            what = f"{shown} is a file, not a folder;" if cwd.exists() else f"the folder {shown} does not exist;"
            fix = "create it or set `cwd`" if not cwd.exists() else "set `cwd`"
            raise CallError("server_unavailable", f"cwd: {what} {fix} to the folder the server runs in")
        return StdioTransport(
            spec.command,
            spec.args,
            env=server_environment(self.environ, spec.inherit_env, spec.env),
            cwd=os.fspath(cwd),
            shutdown_timeout=spec.shutdown_timeout_secs,
            process=process,
            reaper=self.reaper,
        )

    def remote(self, transport: str, observations: HttpObservations, auth: httpx2.Auth | None) -> Transport:
        """Streamable HTTP, legacy SSE or websocket (websocket gets no headers, AUTH-1).

        Raises:
            UrlRefused: a websocket server on a host with an outbound guard, which only HTTP goes through.
        """
        if transport == "sse":
            return sse_transport(self.url, self.headers, observations, auth, self.egress)
        if transport == "streamable_http":
            return streamable_transport(self.url, self.headers, observations, auth, self.egress)
        if transport == "websocket" and self.egress is not None:
            raise UrlRefused(_shown(self.url), "websocket servers cannot be reached through the outbound guard")
        if transport == "websocket":
            return websocket_transport(self.url, open_timeout=self.spec.connect_timeout_secs)
        raise CallError("unsupported_transport", f"transport {transport!r} is not available")

    def falls_back(self, transport: str, observations: HttpObservations) -> bool:
        """The streamable POST was refused with 404/405: an old-style SSE server (CONN-1)."""
        return self.spec.sse_fallback and transport == "streamable_http" and observations.saw("POST", 404, 405)

    async def sign_in(
        self, on_waiting: Callable[[str], None], on_answered: Callable[[], None]
    ) -> tuple[httpx2.Auth, SignIn] | None:
        """OAuth for a remote server as its `oauth` table says, unless its headers already carry a credential
        (AUTH-2, AUTH-3)."""
        store = self.auth_store
        if store is None or any(credential_header(name) for name, _ in self.spec.headers):
            return None
        try:
            stored = (await anyio.to_thread.run_sync(store.read)).get(self.spec.id) or {}  # off the event loop
        except McpyardError:
            stored = {}
        port = stored.get("redirect_port") if isinstance(stored.get("redirect_port"), int) else None
        oauth = self.spec.oauth
        sign_in = SignIn(
            port=(oauth.redirect_port if oauth is not None else None) or port or free_loopback_port(),
            open_browser=self.open_browser,
            on_waiting=on_waiting,
            on_answered=on_answered,
        )
        # An identity provider (cross-app access) is reached like the server: through the guard, if any.
        http = functools.partial(guarded_client, self.egress) if self.egress is not None else None
        return server_auth(self.url, ServerTokens(store, self.spec.id), sign_in, oauth, http=http), sign_in


def _shown(url: str) -> str:
    try:
        return shown_url(httpx2.URL(url))
    except httpx2.InvalidURL:
        return "the URL"


def timeout_reason(spec: ServerSpec, process: StdioProcess) -> str:
    text = f"did not finish connecting within {spec.connect_timeout_secs:g} s"
    if spec.transport == "stdio":
        text += " (no answer to the MCP handshake: is this an MCP stdio server?)"
        if process.stderr_tail:
            text += "; stderr: " + " | ".join(process.stderr_tail)
    return text


def failure_reason(
    spec: ServerSpec,
    exc: BaseException,
    *,
    observations: HttpObservations,
    process: StdioProcess,
    sign_in: SignIn | None,
) -> str:
    """Why a connection attempt failed, in words for the status page (CONN-3)."""
    leaf = leaf_exception(exc)
    stdio = spec.transport == "stdio"
    if stdio and process.pid is not None and process.returncode is not None:
        return f"the server process {process.describe_exit()} before the handshake finished"
    if sign_in is not None and sign_in.failure is not None:
        return f"sign-in did not complete: {sign_in.failure}"
    if isinstance(leaf, UrlRefused):
        return leaf.message  # the outbound guard's words, whatever the server answered first (NET-1, AUTH-4)
    if not stdio and (status := observations.last_error()) is not None:
        return f"{public_url(spec.url)} answered HTTP {status}"
    return describe_failure(leaf, command=spec.command, url=spec.url)
