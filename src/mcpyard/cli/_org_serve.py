"""`mcpyard org serve` and `mcpyard org demo`: run the organization service, or walk its story (API-5).

Like the other `org` commands, the web and database layers load only when a command runs.
"""

from __future__ import annotations

import contextlib
import errno
import json
import signal
import socket
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mcpyard.cli._common import Globals, environ, print_json, run, with_globals
from mcpyard.cli._org import DatabaseOption, _database_url, org_app
from mcpyard.errors import UsageError

if TYPE_CHECKING:  # the service's modules load only when it runs (lean imports)
    from mcpyard.org import DemoConsole

__all__ = ["demo", "serve"]

READY = "mcpyard organization service on "
"""What `serve` prints on standard error once it takes requests."""


@org_app.command("serve")
@with_globals
def serve(
    opts: Globals,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8760,
    database: DatabaseOption = None,
    dev: Annotated[
        bool, typer.Option("--dev", help="Development: allow plain http to servers on this machine (never otherwise).")
    ] = False,
    public_url: Annotated[
        str | None,
        typer.Option(
            "--public-url",
            help="Where people and MCP clients reach the service (https://mcp.example.com): the only address its MCP "
            "endpoint answers (default: this machine's loopback addresses).",
            show_default=False,
        ),
    ] = None,
    demo_servers: Annotated[
        bool,
        typer.Option(
            "--demo",
            help="Serve a demo organization on a temporary database: the bundled demo servers registered, "
            "demo members (their sign-in printed), a teammate, a published assistant and a scripted model.",
        ),
    ] = False,
) -> None:
    """Serve the organization service: the web console at /, its JSON API under /api/v1 (documented at
    /api/v1/openapi.json).

    The database must be set up (`mcpyard org init`, `mcpyard org migrate`), except with `--demo`, which
    makes one of its own and removes it when it stops. Ctrl-C or SIGTERM stops it; `--port 0` takes a free
    port (the line it prints once it takes requests names it).
    """
    import warnings

    if demo_servers and database is not None:
        raise UsageError("--demo runs on a temporary database of its own; leave out --database")
    url = "" if demo_servers else _database_url(database)
    public = _public_url(public_url) if public_url is not None else None

    async def main() -> None:
        from mcpyard._paths import data_home
        from mcpyard.org import OrgSettings, org_app

        if demo_servers:
            from mcpyard.org import DemoModel, demo_console

            model = DemoModel()
            async with demo_console() as demo:
                settings = OrgSettings(
                    database_url=demo.database_url,
                    data_home=demo.folder,
                    environ=demo.environ,
                    dev=True,
                    secure_cookies=False,
                    models=lambda org_id, name: model,
                )
                await _serve(org_app(settings), host, port, demo=demo)
        else:
            local = dev
            settings = OrgSettings(
                database_url=url,
                data_home=data_home(environ()),
                environ=dict(environ()),
                dev=local,
                secure_cookies=not local,
                public_url=public,
            )
            await _serve(org_app(settings), host, port, demo=None)
        print("mcpyard organization service stopped", file=sys.stderr, flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the service's standard error is a log its people read
        run(main, fast_loop=True)  # the service lives on its event loop, as the gateway does


def _public_url(given: str) -> str:
    """The `--public-url` as the service compares it: `http(s)://host[:port]`, or a usage error saying what to give."""
    from urllib.parse import urlsplit

    parts = urlsplit(given.strip())
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.path.strip("/") or parts.query:
        raise UsageError(f"--public-url takes an address such as https://mcp.example.com, not {given[:100]!r}")
    return f"{parts.scheme}://{parts.netloc}"


@contextlib.contextmanager
def _listening(host: str, port: int) -> Iterator[socket.socket]:
    """A socket bound to `host:port` (port 0: any free one), or one line saying why it cannot be."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        listener = socket.socket(family, kind, proto)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    with listener:
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(address)
        except OSError as exc:
            taken = " (is the port taken? choose another with --port)" if exc.errno == errno.EADDRINUSE else ""
            raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{taken}") from None
        yield listener


@contextlib.contextmanager
def _stop_signals(stops: list[int]) -> Iterator[None]:
    """Ctrl-C and SIGTERM ask the service to stop: noted here while it opens and closes, uvicorn's own while it
    serves (uvicorn hands the signal on to these when it has stopped serving), so that it closes in order."""
    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda number, frame: stops.append(number)) for sig in handled}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


async def _serve(app: Any, host: str, port: int, *, demo: DemoConsole | None) -> None:
    """Listen, open the service (database, schema, key), serve until Ctrl-C or SIGTERM, then close it all in order.

    Raises:
        UsageError: it cannot listen on `host:port`.
        ConfigError: the database is not set up, or the key cannot be read.
    """
    import uvicorn

    from mcpyard.org import CALL_DEADLINE_SECS

    signing_in: list[str] = []

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                origin = _origin(host, bound)
                print(f"{READY}{origin}/api/v1", file=sys.stderr, flush=True)
                if signing_in:
                    print(f"open the console at {origin}/", file=sys.stderr)
                    print("\n".join(signing_in).replace(" /a/", f" {origin}/a/"), file=sys.stderr, flush=True)

    stops: list[int] = []
    with _listening(host, port) as listener, _stop_signals(stops):
        bound = listener.getsockname()[1]
        async with contextlib.AsyncExitStack() as stack:
            servers = None
            if demo is not None:
                from mcpyard.org import demo_servers as open_demo_servers

                # Entered first, so they stop last: after the service has closed its connections to them.
                servers = await stack.enter_async_context(open_demo_servers())
                print(f"demo servers: notes {servers.notes_url}, weather {servers.weather_url}", file=sys.stderr)
            # The service opens before it listens: a database never set up is one line, not a traceback.
            await stack.enter_async_context(app.router.lifespan_context(app))
            if demo is not None and servers is not None:
                signing_in.extend(await demo.seed(app, servers))
            if stops:
                return
            config = uvicorn.Config(
                app,
                log_level="warning",
                lifespan="off",
                timeout_graceful_shutdown=int(CALL_DEADLINE_SECS),
                # No access log (a request's path carries ids people should not collect in a log) and no Server
                # header saying what runs here. Forwarded headers count only from a proxy on this machine
                # (uvicorn's default): visitors' rate limits go by their own address behind it.
                access_log=False,
                server_header=False,
            )
            await Announcing(config).serve(sockets=[listener])


def _origin(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@org_app.command("demo")
@with_globals
def demo(opts: Globals) -> None:
    """Walk the organization service's story on a temporary database with the bundled demo servers: register,
    tools off, a policy, a call, an ask-first call approved, a changed definition suspended, an alert raised and
    cleared. Nothing is kept."""

    async def main() -> None:
        from mcpyard.org import run_demo

        steps: list[dict[str, Any]] = []

        def say(words: str, answer: Any) -> None:
            steps.append({"step": words, "answer": answer})
            if not opts.json:
                print(f"\n== {words}")
                print(json.dumps(answer, indent=2, ensure_ascii=False)[:1500])

        await run_demo(say)
        if opts.json:
            print_json({"steps": steps})

    run(main)
