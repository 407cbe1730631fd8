"""HTTP transports: streamable HTTP and legacy SSE over one `httpx2.AsyncClient` per server (CONN-1)."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from mcpyard.connect._egress import EgressGuard
from mcpyard.connect._guarded import ResponseTooLarge, guarded_client
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


def _client(
    headers: Mapping[str, str],
    observations: HttpObservations,
    auth: httpx2.Auth | None = None,
    egress: EgressGuard | None = None,
) -> httpx2.AsyncClient:
    async def record(response: httpx2.Response) -> None:
        observations.responses.append((response.request.method, response.status_code))

    async def trace(request: httpx2.Request) -> None:
        # Every request names the host session; those of a tool call carry its trace (CALL-3).
        request.headers[SESSION_HEADER] = observations.session_id
        if (traceparent := current_traceparent()) is not None:
            request.headers[TRACE_HEADER] = traceparent

    hooks: dict[str, list[Callable[..., Any]]] = {"request": [trace], "response": [record]}
    if egress is not None:
        # Checked, pinned, capped (NET-1, NET-2); each call's own deadline is the supervisor's.
        return guarded_client(
            egress,
            headers=headers,
            auth=auth,
            event_hooks=hooks,
            timeout=httpx2.Timeout(egress.deadline_secs, read=None),
        )
    return httpx2.AsyncClient(
        headers=dict(headers),
        # No read limit: a call may wait on a person (`call_timeout_secs: null`); the
        # supervisor enforces every call's own deadline.
        timeout=httpx2.Timeout(CONNECT_TIMEOUT, read=None),
        # MCP traffic never goes through ambient proxies or picks up .netrc credentials.
        trust_env=False,
        follow_redirects=False,
        event_hooks=hooks,
        auth=auth,
    )


@contextlib.asynccontextmanager
async def streamable_transport(
    url: str,
    headers: Mapping[str, str],
    observations: HttpObservations,
    auth: httpx2.Auth | None = None,
    egress: EgressGuard | None = None,
) -> AsyncIterator[TransportStreams]:
    """Streamable HTTP through the SDK, on a client of ours (through the outbound guard, when there is one)."""
    from mcp.client.streamable_http import streamable_http_client

    async with (
        _client(headers, observations, auth, egress) as client,
        streamable_http_client(url, http_client=client, max_sse_event_size=MAX_SSE_EVENT_BYTES) as streams,
    ):
        yield streams


@contextlib.asynccontextmanager
async def sse_transport(
    url: str,
    headers: Mapping[str, str],
    observations: HttpObservations,
    auth: httpx2.Auth | None = None,
    egress: EgressGuard | None = None,
) -> AsyncIterator[TransportStreams]:
    """Legacy HTTP+SSE: events from a GET stream, messages POSTed to the endpoint it names.

    The SDK's own client keeps a 1 MiB limit on one event, so a large result would end the
    connection; this one takes events up to `MAX_SSE_EVENT_BYTES` and leaves the caps to the
    pipeline. Messages are parsed and written with the SDK's models. Through the outbound guard,
    an event over its cap ends the connection, saying why: only the event itself names the
    request it answers.
    """
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared._httpx_utils import request_within_origin, sse_within_origin

    async with (
        _client(headers, observations, auth, egress) as client,
        sse_within_origin(client, url, max_event_size=MAX_SSE_EVENT_BYTES) as events,
    ):
        events.response.raise_for_status()
        read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
        write_stream, write_reader = create_context_streams[SessionMessage](0)

        async def read_events(*, task_status: anyio.abc.TaskStatus[str]) -> None:
            async with read_writer:
                try:
                    async for event in events:
                        if event.event == "endpoint":
                            endpoint = urljoin(url, event.data)
                            if _origin(endpoint) != _origin(url):
                                raise ValueError("the SSE server named an endpoint on another origin; refusing it")
                            task_status.started(endpoint)
                        elif event.event == "message" and event.data:
                            try:
                                message = types.jsonrpc_message_adapter.validate_json(event.data, by_name=False)
                            except ValueError as exc:
                                await read_writer.send(exc)
                                continue
                            await read_writer.send(SessionMessage(message))
                except ResponseTooLarge as exc:
                    # Which request an event answers is inside the event: the connection ends, saying why.
                    await read_writer.send(exc)

        async def post(endpoint: str, outgoing: SessionMessage) -> None:
            body = outgoing.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
            response = await request_within_origin(client, "POST", endpoint, json=body)
            response.raise_for_status()

        async def write_messages(endpoint: str) -> None:
            async with write_reader:
                async for outgoing in write_reader:
                    context = write_reader.last_context
                    async with anyio.create_task_group() as tg:
                        # The sender's context (its trace, CALL-3) goes with the POST.
                        if context is not None:
                            context.run(tg.start_soon, post, endpoint, outgoing)
                        else:
                            tg.start_soon(post, endpoint, outgoing)

        async with read_stream, write_stream, anyio.create_task_group() as tg:
            endpoint = await tg.start(read_events)
            tg.start_soon(write_messages, endpoint)
            try:
                yield read_stream, write_stream
            finally:
                tg.cancel_scope.cancel()


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname or "", parts.port
