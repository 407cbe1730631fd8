"""HTTP transports: streamable HTTP and legacy SSE over one `httpx2.AsyncClient` per server (CONN-1)."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

import httpx2
from mcp.client._transport import TransportStreams

from mcpyard.connect._trace import SESSION_HEADER, TRACE_HEADER, current_traceparent

__all__ = ["HttpObservations", "sse_transport", "streamable_transport"]

MAX_SSE_EVENT_BYTES = 64 * 1024 * 1024
"""The SDK refuses SSE events over 1 MiB by default; results are capped after decoding instead."""
CONNECT_TIMEOUT = 30.0


@dataclass
class HttpObservations:
    """HTTP statuses a connection saw, for fallback decisions and failure reasons."""

    session_id: str = ""
    responses: deque[tuple[str, int]] = field(default_factory=lambda: deque(maxlen=16))

    def saw(self, method: str, *statuses: int) -> bool:
        return any(m == method and s in statuses for m, s in self.responses)

    def last_error(self) -> int | None:
        for _, status in reversed(self.responses):
            if status >= 400:
                return status
        return None


def _client(headers: Mapping[str, str], observations: HttpObservations) -> httpx2.AsyncClient:
    async def record(response: httpx2.Response) -> None:
        observations.responses.append((response.request.method, response.status_code))

    async def trace(request: httpx2.Request) -> None:
        # Every request names the host session; those of a tool call carry its trace (CALL-3).
        request.headers[SESSION_HEADER] = observations.session_id
        if (traceparent := current_traceparent()) is not None:
            request.headers[TRACE_HEADER] = traceparent

    return httpx2.AsyncClient(
        headers=dict(headers),
        # No read limit: a call may wait on a person (`call_timeout_secs: null`); the
        # supervisor enforces every call's own deadline.
        timeout=httpx2.Timeout(CONNECT_TIMEOUT, read=None),
        # MCP traffic never goes through ambient proxies or picks up .netrc credentials.
        trust_env=False,
        follow_redirects=False,
        event_hooks={"request": [trace], "response": [record]},
    )


@contextlib.asynccontextmanager
async def streamable_transport(
    url: str, headers: Mapping[str, str], observations: HttpObservations
) -> AsyncIterator[TransportStreams]:
    """Streamable HTTP through the SDK, on a client of ours."""
    from mcp.client.streamable_http import streamable_http_client

    async with (
        _client(headers, observations) as client,
        streamable_http_client(url, http_client=client, max_sse_event_size=MAX_SSE_EVENT_BYTES) as streams,
    ):
        yield streams


@contextlib.asynccontextmanager
async def sse_transport(
    url: str, headers: Mapping[str, str], observations: HttpObservations
) -> AsyncIterator[TransportStreams]:
    """Legacy HTTP+SSE through the SDK, on a client of ours."""
    from mcp.client.sse import sse_client

    def factory(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        del timeout  # the SDK's SSE read limit would end a quiet but healthy stream
        client = _client(headers or {}, observations)
        if auth is not None:
            client.auth = auth
        return client

    async with sse_client(url, headers=dict(headers), httpx_client_factory=factory) as streams:
        yield streams
