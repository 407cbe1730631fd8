"""Conformance fixture server: everything the official MCP conformance suite's server scenarios ask for.

Run as `python tests/servers/conformance_server.py [--transport stdio|streamable-http] [--host 127.0.0.1]
[--port N]`. Stdio is the default (mcpyard's gateway runs it as a downstream server); streamable HTTP
serves `http://HOST:N/mcp`, so the suite can be pointed straight at it:
`conformance server --url http://127.0.0.1:N/mcp`.

Tools, resources, prompts and their exact outputs follow the scenario descriptions of
`@modelcontextprotocol/conformance` (tools-call-*, resources-*, prompts-*, elicitation-sep*,
json-schema-2020-12, logging-set-level, completion-complete). `MCPServer` carries the tools,
resources and prompts; `logging/setLevel`, `resources/(un)subscribe` and `completion/complete`
are registered on its low-level `Server` (`MCPServer` has no API for the first two and only an
untyped decorator for the last).
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import struct
import sys
import warnings
import wave
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Final, Literal, TypeVar, get_args

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    AudioContent,
    CallToolResult,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    EmptyResult,
    ImageContent,
    InputRequiredResult,
    LoggingLevel,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

Transport = Literal["stdio", "streamable-http"]

ResultT = TypeVar("ResultT", CreateMessageResult, ElicitResult)

SessionKey = str | None
"""The `Mcp-Session-Id` of a streamable HTTP session, `None` for the one stdio connection."""

LOG_LEVELS: Final[tuple[LoggingLevel, ...]] = get_args(LoggingLevel)
"""Every log level, least severe first."""

JSON_SCHEMA_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"

JSON_SCHEMA_TOOL_INPUT: Final[dict[str, Any]] = {
    "$schema": JSON_SCHEMA_2020_12,
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}
"""The json-schema-2020-12 scenario checks that `$schema`, `$defs` and `additionalProperties` survive listing."""

SEP1034_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}
"""SEP-1034: a default for every primitive type."""

SEP1330_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}
"""SEP-1330: the five enum shapes (untitled/titled single, legacy enumNames, untitled/titled multi)."""

USER_INFO_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}

COMPLETIONS: Final[dict[str, tuple[str, ...]]] = {
    "arg1": ("paris", "park", "party", "test", "testing"),
    "arg2": ("world", "word", "work"),
    "id": ("1", "2", "3", "123"),
}
"""Completion candidates by argument name (prompt or template argument)."""


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _red_pixel_png() -> bytes:
    """A 1x1 opaque red PNG."""
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte, then R G B
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", pixels) + _png_chunk(b"IEND", b"")


def _silent_wav() -> bytes:
    """Ten milliseconds of 8 kHz mono 16-bit silence."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 80)
    return buffer.getvalue()


RED_PIXEL_PNG: Final = _red_pixel_png()
SILENT_WAV: Final = _silent_wav()
PNG_BASE64: Final = base64.b64encode(RED_PIXEL_PNG).decode()
WAV_BASE64: Final = base64.b64encode(SILENT_WAV).decode()


async def ask_client(
    ctx: Context, request: CreateMessageRequest | ElicitRequest, answer: type[ResultT]
) -> ResultT | InputRequiredResult:
    """Ask the client for input in its era's way: a request mid-call, or (2026-07-28) an input-required result."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        responses = ctx.input_responses or {}
        if "input" in responses:
            return answer.model_validate(responses["input"].model_dump(by_alias=True, exclude_none=True))
        return InputRequiredResult(input_requests={"input": request})
    related = ServerMessageMetadata(related_request_id=ctx.request_context.request_id)
    result: ResultT = await ctx.session.send_request(request, answer, metadata=related)
    return result


def _text(text: str) -> TextContent:
    return TextContent(type="text", text=text)


def _image() -> ImageContent:
    return ImageContent(type="image", data=PNG_BASE64, mime_type="image/png")


def _session_key(headers: Mapping[str, str] | None) -> SessionKey:
    return headers.get("mcp-session-id") if headers is not None else None


def _request_headers(ctx: ServerRequestContext[Any]) -> Mapping[str, str] | None:
    headers: Mapping[str, str] | None = getattr(ctx.request, "headers", None)
    return headers


class ConnectionState:
    """What `logging/setLevel` and `resources/(un)subscribe` remember, per session."""

    def __init__(self) -> None:
        self.log_levels: dict[SessionKey, LoggingLevel] = {}
        self.subscriptions: dict[SessionKey, set[str]] = {}

    def should_log(self, key: SessionKey, level: LoggingLevel) -> bool:
        """Whether a message at `level` passes the session's `logging/setLevel` threshold (none set: all pass)."""
        threshold = self.log_levels.get(key)
        return threshold is None or LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)


def _json_schema_tool() -> Tool:
    def json_schema_2020_12_tool(name: str | None = None, address: dict[str, Any] | None = None) -> str:
        """Tool with JSON Schema 2020-12 features"""
        return f"Received name={name!r}, address={json.dumps(address)}"

    tool = Tool.from_function(json_schema_2020_12_tool, structured_output=False)
    # The signature validates the call; the hand-written schema is what tools/list advertises.
    return tool.model_copy(update={"parameters": JSON_SCHEMA_TOOL_INPUT})


def build_server() -> MCPServer:
    """Build the conformance fixture server."""
    server = MCPServer(
        "mcpyard-conformance-fixture",
        version="1.0.0",
        instructions="Conformance fixture server.",
        log_level="WARNING",
        tools=[_json_schema_tool()],
    )
    state = ConnectionState()

    async def log(ctx: Context, level: LoggingLevel, message: str) -> None:
        if state.should_log(_session_key(ctx.headers), level):
            await ctx.log(level, message)

    # --- tools ---------------------------------------------------------------------------------

    @server.tool(description="Returns a simple text response.", structured_output=False)
    def test_simple_text() -> CallToolResult:
        return CallToolResult(content=[_text("This is a simple text response for testing.")])

    @server.tool(description="Returns a 1x1 red PNG image.", structured_output=False)
    def test_image_content() -> CallToolResult:
        return CallToolResult(content=[_image()])

    @server.tool(description="Returns a short silent WAV clip.", structured_output=False)
    def test_audio_content() -> CallToolResult:
        return CallToolResult(content=[AudioContent(type="audio", data=WAV_BASE64, mime_type="audio/wav")])

    @server.tool(description="Returns an embedded text resource.", structured_output=False)
    def test_embedded_resource() -> CallToolResult:
        resource = TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
        )
        return CallToolResult(content=[EmbeddedResource(type="resource", resource=resource)])

    @server.tool(description="Returns text, an image and an embedded resource.", structured_output=False)
    def test_multiple_content_types() -> CallToolResult:
        resource = TextResourceContents(
            uri="test://mixed-content-resource",
            mime_type="application/json",
            text=json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
        )
        return CallToolResult(
            content=[
                _text("Multiple content types test:"),
                _image(),
                EmbeddedResource(type="resource", resource=resource),
            ]
        )

    @server.tool(description="Sends three info log messages while it runs.", structured_output=False)
    async def test_tool_with_logging(ctx: Context) -> CallToolResult:
        # Spaced out like the reference server's: the messages come while the call runs.
        await log(ctx, "info", "Tool execution started")
        await anyio.sleep(0.05)
        await log(ctx, "info", "Tool processing data")
        await anyio.sleep(0.05)
        await log(ctx, "info", "Tool execution completed")
        return CallToolResult(content=[_text("Tool with logging executed successfully")])

    @server.tool(description="Always fails with isError: true.", structured_output=False)
    def test_error_handling() -> CallToolResult:
        return CallToolResult(
            content=[_text("This tool intentionally returns an error for testing")],
            is_error=True,
        )

    @server.tool(description="Reports progress 0, 50 and 100 of 100.", structured_output=False)
    async def test_tool_with_progress(ctx: Context) -> CallToolResult:
        # Spaced out like the reference server's: the notifications come while the call runs.
        await ctx.report_progress(0, 100)
        await anyio.sleep(0.05)
        await ctx.report_progress(50, 100)
        await anyio.sleep(0.05)
        await ctx.report_progress(100, 100)
        return CallToolResult(content=[_text("Tool with progress executed successfully")])

    @server.tool(description="Asks the client's LLM (sampling/createMessage) to answer a prompt.")
    async def test_sampling(
        ctx: Context, prompt: Annotated[str, Field(description="The prompt to send to the LLM")]
    ) -> CallToolResult | InputRequiredResult:
        capabilities = ctx.client_capabilities
        if capabilities is None or capabilities.sampling is None:
            return CallToolResult(content=[_text("The client does not support sampling")], is_error=True)
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=_text(prompt))], max_tokens=100
        )
        answer = await ask_client(ctx, CreateMessageRequest(params=params), CreateMessageResult)
        if isinstance(answer, InputRequiredResult):
            return answer
        text = answer.content.text if isinstance(answer.content, TextContent) else answer.content.type
        return CallToolResult(content=[_text(f"LLM response: {text}")])

    async def elicit(ctx: Context, message: str, schema: dict[str, Any]) -> CallToolResult | InputRequiredResult | str:
        capabilities = ctx.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return CallToolResult(content=[_text("The client does not support elicitation")], is_error=True)
        params = ElicitRequestFormParams(message=message, requested_schema=schema)
        answer = await ask_client(ctx, ElicitRequest(params=params), ElicitResult)
        if isinstance(answer, InputRequiredResult):
            return answer
        return f"action={answer.action}, content={json.dumps(answer.content)}"

    @server.tool(description="Asks the user (elicitation/create) for a username and an email address.")
    async def test_elicitation(
        ctx: Context, message: Annotated[str, Field(description="The message to show the user")]
    ) -> CallToolResult | InputRequiredResult:
        outcome = await elicit(ctx, message, USER_INFO_SCHEMA)
        if not isinstance(outcome, str):
            return outcome
        return CallToolResult(content=[_text(f"User response: {outcome}")])

    @server.tool(description="Elicits a form whose every primitive field has a default (SEP-1034).")
    async def test_elicitation_sep1034_defaults(ctx: Context) -> CallToolResult | InputRequiredResult:
        message = "Test client default value handling - please accept with defaults"
        outcome = await elicit(ctx, message, SEP1034_SCHEMA)
        if not isinstance(outcome, str):
            return outcome
        return CallToolResult(content=[_text(f"Elicitation completed: {outcome}")])

    @server.tool(description="Elicits a form with all five enum schema variants (SEP-1330).")
    async def test_elicitation_sep1330_enums(ctx: Context) -> CallToolResult | InputRequiredResult:
        outcome = await elicit(ctx, "Test enum schema variants - please pick options", SEP1330_SCHEMA)
        if not isinstance(outcome, str):
            return outcome
        return CallToolResult(content=[_text(f"Elicitation completed: {outcome}")])

    @server.tool(description="Closes its SSE stream before answering, when the transport can resume (SEP-1699).")
    async def test_reconnection(ctx: Context) -> CallToolResult:
        # A no-op unless streamable HTTP runs with an event store and the client speaks 2025-11-25.
        await ctx.close_sse_stream()
        await anyio.sleep(0.1)  # answer a moment after the stream closed: the client resumes to read it
        return CallToolResult(content=[_text("Reconnection test completed successfully")])

    # --- resources -----------------------------------------------------------------------------

    @server.resource(
        "test://static-text", name="static-text", description="A static text resource.", mime_type="text/plain"
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary", name="static-binary", description="A static PNG image.", mime_type="image/png"
    )
    def static_binary() -> bytes:
        return RED_PIXEL_PNG

    @server.resource(
        "test://watched-resource",
        name="watched-resource",
        description="A resource clients may subscribe to.",
        mime_type="text/plain",
    )
    def watched_resource() -> str:
        return "This resource can be watched with resources/subscribe."

    @server.resource(
        "test://template/{id}/data",
        name="template-data",
        description="JSON data for any id.",
        mime_type="application/json",
    )
    def template_data(id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))

    # --- prompts -------------------------------------------------------------------------------

    @server.prompt(description="A prompt without arguments.")
    def test_simple_prompt() -> list[Message]:
        return [UserMessage("This is a simple prompt for testing.")]

    @server.prompt(description="A prompt that quotes its two arguments.")
    def test_prompt_with_arguments(
        arg1: Annotated[str, Field(description="First test argument")],
        arg2: Annotated[str, Field(description="Second test argument")],
    ) -> list[Message]:
        return [UserMessage(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")]

    @server.prompt(description="A prompt that embeds a resource.")
    def test_prompt_with_embedded_resource(
        resourceUri: Annotated[str, Field(description="URI of the resource to embed")],
    ) -> list[Message]:
        resource = TextResourceContents(
            uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
        )
        return [
            UserMessage(EmbeddedResource(type="resource", resource=resource)),
            UserMessage("Please process the embedded resource above."),
        ]

    @server.prompt(description="A prompt that carries an image.")
    def test_prompt_with_image() -> list[Message]:
        return [UserMessage(_image()), UserMessage("Please analyze the image above.")]

    # --- completion/complete, logging/setLevel, resources/(un)subscribe: on the low-level Server ---
    # MCPServer has no API for the last three, and its `completion()` decorator is untyped.

    lowlevel = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]

    async def set_level(ctx: ServerRequestContext[Any], params: SetLevelRequestParams) -> EmptyResult:
        state.log_levels[_session_key(_request_headers(ctx))] = params.level
        return EmptyResult()

    async def subscribe(ctx: ServerRequestContext[Any], params: SubscribeRequestParams) -> EmptyResult:
        state.subscriptions.setdefault(_session_key(_request_headers(ctx)), set()).add(params.uri)
        return EmptyResult()

    async def unsubscribe(ctx: ServerRequestContext[Any], params: UnsubscribeRequestParams) -> EmptyResult:
        state.subscriptions.get(_session_key(_request_headers(ctx)), set()).discard(params.uri)
        return EmptyResult()

    async def complete(ctx: ServerRequestContext[Any], params: CompleteRequestParams) -> CompleteResult:
        del ctx
        argument = params.argument
        candidates = [value for value in COMPLETIONS.get(argument.name, ()) if value.startswith(argument.value)]
        return CompleteResult(completion=Completion(values=candidates, total=len(candidates), has_more=False))

    lowlevel.add_request_handler("completion/complete", CompleteRequestParams, complete)
    lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)

    return server


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and serve until the transport closes."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=get_args(Transport), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    # Logging and sampling are deprecated from protocol 2026-07-28 on; this fixture serves them on purpose.
    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
    server = build_server()
    transport: Transport = args.transport
    if transport == "stdio":
        server.run("stdio")
        return
    # Run as a script: put the repository root on the path to reach the shared helper.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.servers._listen import serve

    serve(server.streamable_http_app(host=args.host), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
