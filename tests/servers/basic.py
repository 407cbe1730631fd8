"""Basic fixture server: echo, add, slow, fail, env, cwd and friends, over stdio, SSE or streamable HTTP.

Run as `python tests/servers/basic.py [--transport stdio|sse|streamable-http] [--port N]
[--name NAME] [--many-tools N] [--long-name] [--tls-cert PEM --tls-key PEM]`.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ToolAnnotations
from pydantic import Field
from starlette.applications import Starlette

INSTRUCTIONS = "Basic fixture server."

LONG_TOOL_NAME = "get.the weather report.for one city.and then.tell me all about it.v1.0"
"""A 70-character tool name with dots and spaces, registered by `--long-name`."""

FAIL_MESSAGE = "this tool always fails"
"""The SDK sends it as `Error executing tool fail: this tool always fails`."""

# The smallest valid PNG: one transparent pixel.
TINY_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

READ_ONLY = ToolAnnotations(read_only_hint=True)
READ_ONLY_IDEMPOTENT = ToolAnnotations(read_only_hint=True, idempotent_hint=True)

Transport = Literal["stdio", "sse", "streamable-http"]


class Count:
    """A count one can wait on, from the server's own event loop."""

    def __init__(self) -> None:
        self.value = 0
        self._changed: anyio.Event | None = None  # made when first awaited: an event needs the running loop

    def add(self) -> None:
        self.value += 1
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def reaches(self, value: int) -> None:
        while self.value < value:
            if self._changed is None:
                self._changed = anyio.Event()
            await self._changed.wait()


def build_server(
    *, name: str = "basic", many_tools: int = 0, long_name: bool = False, environ: Mapping[str, str] | None = None
) -> MCPServer:
    """Build the fixture server with its standard tools plus the optional extras.

    `environ` is what `env` and `slow` read (default: the process's own environment).
    """
    environ = os.environ if environ is None else environ
    server = MCPServer(name, instructions=INSTRUCTIONS, version="1.0", log_level="WARNING")
    calls = 0

    @server.tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(annotations=READ_ONLY_IDEMPOTENT)
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    cancelled = Count()

    @server.tool(annotations=READ_ONLY)
    async def slow(ctx: Context, seconds: float, progress_every: float = 0) -> str:
        """Sleep for `seconds`; when `progress_every` > 0, report progress that often.

        With `BASIC_SLOW_STARTED` set, that file is written once the sleep begins, and with `BASIC_SLOW_CANCELLED`
        that one once the call is cancelled (a test's events).
        """
        if started := environ.get("BASIC_SLOW_STARTED"):
            await anyio.Path(started).write_text(f"{os.getpid()}\n", encoding="ascii")
        try:
            if progress_every <= 0:
                await anyio.sleep(seconds)
                return f"slept {seconds} s"
            elapsed = 0.0
            while elapsed < seconds:
                step = min(progress_every, seconds - elapsed)
                await anyio.sleep(step)
                elapsed += step
                await ctx.report_progress(elapsed, seconds, f"{elapsed:g} of {seconds:g} s")
            return f"slept {seconds} s"
        except anyio.get_cancelled_exc_class():
            cancelled.add()
            if ended := environ.get("BASIC_SLOW_CANCELLED"):
                with anyio.CancelScope(shield=True):  # the call is being cancelled: only a shielded wait runs
                    await anyio.Path(ended).write_text(f"{os.getpid()}\n", encoding="ascii")
            raise

    @server.tool(annotations=READ_ONLY)
    async def cancellations(at_least: int = 0) -> int:
        """How many `slow` calls were cancelled by the client (notifications/cancelled).

        With `at_least`, it first waits until that many were: a test waits on this, not on a clock.
        """
        await cancelled.reaches(at_least)
        return cancelled.value

    @server.tool(annotations=READ_ONLY)
    def fail() -> str:
        """Always fail with a tool error."""
        raise ToolError(FAIL_MESSAGE)

    @server.tool(annotations=READ_ONLY)
    def env(name: str) -> str:
        """Return the value of an environment variable of the server process, or "" when unset."""
        return environ.get(name, "")

    @server.tool(annotations=READ_ONLY)
    def cwd() -> str:
        """Return the working directory of the server process."""
        return os.getcwd()

    @server.tool(annotations=READ_ONLY)
    def big_text(chars: int) -> str:
        """Return a text of exactly `chars` characters (a repeating alphabet)."""
        alphabet = "abcdefghijklmnopqrstuvwxyz"
        return (alphabet * (chars // len(alphabet) + 1))[:chars]

    @server.tool(annotations=READ_ONLY)
    def tiny_png() -> Image:
        """Return a 1x1 PNG image."""
        return Image(data=TINY_PNG, format="png")

    @server.tool(annotations=READ_ONLY_IDEMPOTENT)
    def file_digest(
        data: Annotated[str, Field(description="The file's bytes.", json_schema_extra={"contentEncoding": "base64"})],
    ) -> str:
        """Return the size and SHA-256 of a file sent as base64."""
        raw = base64.b64decode(data, validate=True)
        return f"{len(raw)} bytes, sha256 {hashlib.sha256(raw).hexdigest()}"

    # Claims to be idempotent, yet its answer moves with every call: a cached answer shows up stale.
    @server.tool(annotations=READ_ONLY_IDEMPOTENT)
    def call_count() -> int:
        """Return how many times bump has been called."""
        return calls

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def bump() -> int:
        """Add one to the counter that call_count reports, and return the new value."""
        nonlocal calls
        calls += 1
        return calls

    for index in range(many_tools):
        server.add_tool(
            _numbered_tool(index),
            name=f"t{index}",
            description=f"Extra tool number {index}.",
            annotations=READ_ONLY,
        )

    if long_name:
        # The SDK logs a screenful of warnings for a name outside SEP-986; the name is the point here.
        logging.getLogger("mcp.shared.tool_name_validation").setLevel(logging.ERROR)
        server.add_tool(_long_named_tool, name=LONG_TOOL_NAME, annotations=READ_ONLY)

    @server.resource("note://welcome", name="welcome", description="A note to read.", mime_type="text/plain")
    def welcome_note() -> str:
        return "Welcome to the basic fixture."

    @server.prompt(description="Greet someone.")
    def greet(name: str) -> str:
        return f"Please greet {name} warmly."

    return server


def _numbered_tool(index: int) -> Callable[[], int]:
    def numbered() -> int:
        return index

    return numbered


def _long_named_tool() -> str:
    """A tool whose name is 70 characters long and holds dots and spaces."""
    return "long"


def parser() -> argparse.ArgumentParser:
    """The command line `main` reads."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--transport", choices=["stdio", "sse", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--name", default="basic", help="server name (serverInfo.name)")
    parser.add_argument("--many-tools", type=int, default=0, metavar="N", help="register extra tools t0..tN-1")
    parser.add_argument("--long-name", action="store_true", help=f"register the tool {LONG_TOOL_NAME!r}")
    parser.add_argument("--tls-cert", help="serve https with this certificate (PEM); clients name the server freely")
    parser.add_argument("--tls-key", help="the private key of --tls-cert (PEM)")
    return parser


def http_app(args: argparse.Namespace) -> Starlette:
    """The ASGI app `main` serves for `args` (parsed by `parser`) over SSE or streamable HTTP."""
    server = build_server(name=args.name, many_tools=args.many_tools, long_name=args.long_name)
    security: TransportSecuritySettings | None = None
    if args.tls_cert:
        # Over https the client names the server by a public name (the outbound guard's tests):
        # the localhost-only Host check would refuse it.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    if args.transport == "sse":
        return server.sse_app(host=args.host, transport_security=security)
    return server.streamable_http_app(host=args.host, transport_security=security)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and serve until the transport closes."""
    args = parser().parse_args(argv)
    transport: Transport = args.transport
    if transport == "stdio":
        build_server(name=args.name, many_tools=args.many_tools, long_name=args.long_name).run("stdio")
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
