"""Fixture server that asks its client questions (elicitation, form and URL modes) during its tools' calls.

Run as `python tests/servers/elicits.py [--transport stdio|sse|streamable-http] [--port N]
[--tls-cert PEM --tls-key PEM] [--handshake]`. With `--handshake`, streamable HTTP speaks only the
handshake era (it answers `server/discover` as an unknown method, as servers of that era do).
It asks in its client's era's way: over SSE (the handshake era) a request of its own, related
to the call; over the new era an input-required result, answered within the call. Each tool
says what came back: `action=<action> content=<JSON>`, or the error its client answered with.

- `ask_form(message, schema)`: a form with any `requestedSchema`.
- `sign_up()`: a form of every field kind, with rules and defaults (`SIGN_UP`).
- `sign_in()`: a user name and a password; says only the password's length, never the password.
- `ask_url(message, url)`: URL mode.
- `roots()`: asks its client for its roots (deprecated in 2026-07-28, still answered): their URIs as JSON, or the
  error its client answered with.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
    ListRootsRequest,
    ListRootsResult,
    TextContent,
    ToolAnnotations,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp

Transport = Literal["stdio", "sse", "streamable-http"]

SIGN_UP: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 2, "maxLength": 40},
        "email": {"type": "string", "format": "email", "description": "Where we write to you"},
        "age": {"type": "integer", "minimum": 18, "maximum": 130},
        "plan": {
            "type": "string",
            "oneOf": [{"const": "free", "title": "Free plan"}, {"const": "pro", "title": "Pro plan"}],
            "default": "free",
        },
        "newsletter": {"type": "boolean", "default": False},
        "score": {"type": "number", "minimum": 0, "maximum": 10, "default": 2.5},
        "topics": {
            "type": "array",
            "items": {"anyOf": [{"const": "mcp", "title": "MCP"}, {"const": "ai", "title": "AI"}]},
            "maxItems": 2,
        },
    },
    "required": ["name", "email", "age"],
}
SIGN_IN: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "username": {"type": "string"},
        "password": {"type": "string", "format": "password"},
    },
    "required": ["username", "password"],
}


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


async def _ask(ctx: Context, request: ElicitRequest) -> ElicitResult | InputRequiredResult | str:
    """The client's answer, in its era's way; an error it answered with, as text."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        responses = ctx.input_responses or {}
        if "q" in responses:
            return ElicitResult.model_validate(responses["q"].model_dump(by_alias=True, exclude_none=True))
        return InputRequiredResult(input_requests={"q": request})
    related = ServerMessageMetadata(related_request_id=ctx.request_context.request_id)
    try:
        answer: ElicitResult = await ctx.session.send_request(request, ElicitResult, metadata=related)
    except MCPError as exc:
        return f"error: {exc.error.message}"
    return answer


def _said(answer: ElicitResult | InputRequiredResult | str) -> CallToolResult | InputRequiredResult:
    if isinstance(answer, InputRequiredResult):
        return answer
    if isinstance(answer, str):
        return _text(answer)
    return _text(f"action={answer.action} content={json.dumps(answer.content, sort_keys=True)}")


def build_server() -> MCPServer:
    server = MCPServer("elicits", instructions="Elicitation fixture server.")

    async def form(ctx: Context, message: str, schema: dict[str, Any]) -> ElicitResult | InputRequiredResult | str:
        caps = ctx.client_capabilities
        if caps is None or caps.elicitation is None:
            return "the client declared no elicitation"
        return await _ask(ctx, ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema)))

    @server.tool(description="Asks the user to fill in a form with this requestedSchema.")
    async def ask_form(ctx: Context, message: str, schema: dict[str, Any]) -> CallToolResult | InputRequiredResult:
        return _said(await form(ctx, message, schema))

    @server.tool(description="Asks for a name, an email address, an age, a plan, a newsletter choice, topics.")
    async def sign_up(ctx: Context) -> CallToolResult | InputRequiredResult:
        return _said(await form(ctx, "Sign up for the fixture service", SIGN_UP))

    @server.tool(description="Asks for a user name and a password; answers with the password's length only.")
    async def sign_in(ctx: Context) -> CallToolResult | InputRequiredResult:
        answer = await form(ctx, "Sign in to the fixture service", SIGN_IN)
        if not isinstance(answer, ElicitResult):
            return _said(answer)
        content = answer.content or {}
        password = content.get("password")
        length = len(password) if isinstance(password, str) else 0
        return _text(f"action={answer.action} user={content.get('username')} password_length={length}")

    @server.tool(description="Asks the user to open a URL (URL mode elicitation).")
    async def ask_url(ctx: Context, message: str, url: str) -> CallToolResult | InputRequiredResult:
        caps = ctx.client_capabilities
        if caps is None or caps.elicitation is None:
            return _text("the client declared no elicitation")
        params = ElicitRequestURLParams(message=message, url=url, elicitation_id="fixture-1")
        return _said(await _ask(ctx, ElicitRequest(params=params)))

    @server.tool(
        description="Asks the client for its roots; answers with their URIs.",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def roots(ctx: Context) -> CallToolResult | InputRequiredResult:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            responses = ctx.input_responses or {}
            if "r" not in responses:
                return InputRequiredResult(input_requests={"r": ListRootsRequest()})
            listed = ListRootsResult.model_validate(responses["r"].model_dump(by_alias=True, exclude_none=True))
        else:
            related = ServerMessageMetadata(related_request_id=ctx.request_context.request_id)
            try:
                listed = await ctx.session.send_request(ListRootsRequest(), ListRootsResult, metadata=related)
            except MCPError as exc:
                return _text(f"error: {exc.error.message}")
        return _text(json.dumps([str(root.uri) for root in listed.roots]))

    return server


def parser() -> argparse.ArgumentParser:
    """The command line `main` reads."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=["stdio", "sse", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--tls-cert", help="serve https with this certificate (PEM); clients name the server freely")
    parser.add_argument("--tls-key", help="the private key of --tls-cert (PEM)")
    parser.add_argument("--handshake", action="store_true", help="streamable HTTP: the handshake era only")
    return parser


def http_app(args: argparse.Namespace) -> ASGIApp:
    """The ASGI app `main` serves for `args` (parsed by `parser`) over SSE or streamable HTTP."""
    server = build_server()
    security: TransportSecuritySettings | None = None
    if args.tls_cert:
        # Over https the client names the server by a public name (the outbound guard's tests).
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    if args.transport == "sse":
        return server.sse_app(host=args.host, transport_security=security)
    app: ASGIApp = server.streamable_http_app(host=args.host, transport_security=security)
    if not args.handshake:
        return app
    from tests.servers._handshake import handshake_only

    return handshake_only(app)


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    transport: Transport = args.transport
    if transport == "stdio":
        build_server().run("stdio")
        return
    # Run as a script: put the repository root on the path to reach the shared helper.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.servers._listen import serve

    options: dict[str, Any] = {}
    if args.tls_cert:
        options = {"ssl_certfile": args.tls_cert, "ssl_keyfile": args.tls_key}
    serve(http_app(args), host=args.host, port=args.port, **options)


if __name__ == "__main__":
    main()
