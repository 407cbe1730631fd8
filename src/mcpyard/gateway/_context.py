"""What a gateway request's context says (its client's connection, era, progress token), and wire conversions."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

from mcpyard import ToolInfo
from mcpyard.connect import InputFn, InputRelay, ProgressFn
from mcpyard.elicitation import ELICIT
from mcpyard.gateway._rounds import ANSWER_SECS, elicitation_modes, unanswerable
from mcpyard.ops import tracing
from mcpyard.pipeline import CallResult, beside_the_fence

__all__ = [
    "INPUT_METHODS",
    "LEVELS",
    "answerable",
    "answers_in_rounds",
    "connection_of",
    "conversation_of",
    "error_result",
    "input_relay",
    "progress_to",
    "trace_from_headers",
    "wire_result",
    "wire_tool",
]

LEVELS: tuple[types.LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


def progress_to(ctx: ServerRequestContext[Any]) -> ProgressFn | None:
    """Downstream progress reaches the gateway's client, when it asked for progress (GW-1)."""
    meta: Mapping[str, Any] = ctx.meta or {}
    token = meta.get("progress_token", meta.get("progressToken"))
    if not isinstance(token, str | int):
        return None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        related = str(ctx.request_id) if ctx.request_id is not None else None
        await ctx.session.send_progress_notification(token, progress, total, message, related)

    return on_progress


def answerable(ctx: ServerRequestContext[Any]) -> frozenset[str]:
    """The input requests the client declared it answers."""
    check = ctx.session.check_client_capability
    return frozenset(method for method, (capability, _, _) in INPUT_METHODS.items() if check(capability))


def answers_in_rounds(ctx: ServerRequestContext[Any]) -> bool:
    """A new-era client that declared sampling or elicitation: it answers through input-required results."""
    return ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS and bool(answerable(ctx))


def connection_of(ctx: ServerRequestContext[Any]) -> Connection | None:
    """The client's connection, which outlives the request's session view.

    The SDK has no public way to it from a low-level handler, and change notices must go out
    after the request is over.
    """
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


def conversation_of(ctx: ServerRequestContext[Any]) -> str:
    """Whose result handles these are (CALL-4): the HTTP session of a handshake-era client; else the gateway's.

    New-era requests carry no session, so their handles are scoped to the gateway itself and
    work as capabilities: 64 random bits no other client can guess.
    """
    headers = getattr(ctx.request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    return f"gateway-session-{session}" if session else "gateway"


INPUT_METHODS: dict[str, tuple[types.ClientCapabilities, Any, Any]] = {
    "sampling/createMessage": (
        types.ClientCapabilities(sampling=types.SamplingCapability()),
        types.CreateMessageRequest,
        types.CreateMessageResult,
    ),
    "elicitation/create": (
        types.ClientCapabilities(elicitation=types.ElicitationCapability()),
        types.ElicitRequest,
        types.ElicitResult,
    ),
}


def input_relay(ctx: ServerRequestContext[Any], fallback: InputFn | None = None) -> InputRelay:
    """A downstream server's sampling and elicitation requests go to the client whose call it is running.

    Handshake-era clients get them on the call's own stream. New-era clients that can answer
    take them as input-required results (`_rounds.py`); the others cannot, and the server is told so.
    A question the client cannot take (no elicitation declared, or not in that mode) goes to
    `fallback` when there is one (the console's elicitor, on a terminal).
    """
    session = ctx.session
    audience = f"connection-{id(connection_of(ctx))}"
    if session.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.request_id is None:
        return InputRelay(audience=f"{audience}-request-{ctx.request_id}", ask=None)
    related = ServerMessageMetadata(related_request_id=ctx.request_id)

    async def ask(method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        _, request_type, result_type = INPUT_METHODS[method]
        why = unanswerable(method, params, answerable(ctx), elicitation_modes(session.client_capabilities))
        if why is not None:
            if fallback is not None and method == ELICIT:
                return await fallback(method, params)
            raise MCPError(types.INVALID_REQUEST, why)
        if method == ELICIT and params.get("mode") == "url" and not params.get("elicitationId"):
            # The handshake era requires an id a new-era server no longer sends: an opaque one of ours.
            params = {**params, "elicitationId": f"mcpyard-{secrets.token_urlsafe(12)}"}
        request = request_type.model_validate({"method": method, "params": params})
        if params.get("tools") or params.get("toolChoice"):
            result_type = types.CreateMessageResultWithTools
        result: types.Result = await session.send_request(
            request, result_type, request_read_timeout_seconds=ANSWER_SECS, metadata=related
        )
        return result.model_dump(by_alias=True, exclude_none=True, mode="json")

    return InputRelay(audience=audience, ask=ask)


def wire_tool(tool: ToolInfo, name: str) -> types.Tool:
    return types.Tool(
        name=name,
        title=tool.title,
        description=tool.description,
        input_schema=dict(tool.input_schema),
        annotations=types.ToolAnnotations.model_validate(dict(tool.annotations)) if tool.annotations else None,
    )


def error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


_CONTENT: TypeAdapter[types.ContentBlock] = TypeAdapter(types.ContentBlock)


def plain_wire_result(result: CallResult) -> dict[str, Any] | None:
    """`wire_result` as its wire form, made without models, when it is the fenced text alone (nothing beside the
    fence, no structured content): what the SDK's serializer gives it in every protocol version (the new era's
    `resultType` is added by the caller). None otherwise."""
    if result.ok and isinstance(result.structured, dict):
        return None
    if any(beside_the_fence(block) is not None for block in result.content):
        return None
    return {"content": [{"type": "text", "text": result.text}], "isError": not result.ok}


def wire_result(result: CallResult) -> types.CallToolResult:
    """What the model reads (`text`, fenced and capped), plus attachments; refusals as tool errors (GW-2).

    Every text a server returned, whatever block carried it (text, an embedded text resource, a
    link's name), is read once, inside the fenced text; beside it go images, audio and binary
    resources, and each embedded resource's URI with a pointer to its text in the fence (CALL-7).
    """
    content: list[Any] = [types.TextContent(type="text", text=result.text)]
    for block in result.content:
        if (beside := beside_the_fence(block)) is not None:
            content.append(_CONTENT.validate_python(beside))
    structured = result.structured if result.ok and isinstance(result.structured, dict) else None
    return types.CallToolResult(content=content, structured_content=structured, is_error=not result.ok)


async def trace_from_headers(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """With tracing on, a message whose HTTP request carries `traceparent` runs in that trace (OBS-1).

    The SDK's own middleware, next in line, parents its span on the message's `_meta` when that
    carries a trace, and on this one otherwise.
    """
    request = ctx.request
    headers = getattr(request, "headers", None) if request is not None and tracing.active() else None
    with tracing.attached(headers):
        return await call_next(ctx)
