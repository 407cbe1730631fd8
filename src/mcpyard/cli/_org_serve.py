"""`mcpyard org serve` and `mcpyard org demo`: run the organization service, or walk its story (API-5).

Like the other `org` commands, the web and database layers load only when a command runs.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from functools import partial
from types import FrameType
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
MAX_DRAIN_SECS = 300.0
"""The longest `--drain`: an orchestrator kills a replica that takes longer to stop anyway."""


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
    metrics_port: Annotated[
        int | None,
        typer.Option(
            "--metrics-port",
            help="Also serve every organization's Prometheus metrics at /metrics on this port, without a token "
            "(on --metrics-host). Without it, /metrics on the main port takes an owner's or admin's API token "
            "and shows their organization's.",
            show_default=False,
        ),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option("--metrics-host", help="Address the --metrics-port listener listens on.")
    ] = "127.0.0.1",
    log_format: Annotated[
        str, typer.Option("--log-format", help="text, or json: one JSON object per line, one line per call.")
    ] = "text",
    drain: Annotated[
        float,
        typer.Option(
            "--drain",
            help="Behind a load balancer: on SIGTERM, first answer /readyz with 503 for this many seconds while still "
            "serving every request, so the balancer takes this replica out before it stops listening (give more than "
            "the balancer's health-check interval times the failed checks it waits for).",
        ),
    ] = 0.0,
) -> None:
    """Serve the organization service: the web console at /, its JSON API under /api/v1 (documented at
    /api/v1/openapi.json).

    The database must be set up (`mcpyard org init`, `mcpyard org migrate`), except with `--demo`, which
    makes one of its own and removes it when it stops. Ctrl-C or SIGTERM stops it (after `--drain` seconds,
    for SIGTERM; a second SIGTERM or Ctrl-C stops it at once); `--port 0` takes a free port (the line it prints
    once it takes requests names it).
    """
    import warnings

    if demo_servers and database is not None:
        raise UsageError("--demo runs on a temporary database of its own; leave out --database")
    url = "" if demo_servers else _database_url(database)
    public = _public_url(public_url) if public_url is not None else None
    if log_format not in ("text", "json"):
        raise UsageError(f"unknown log format {log_format!r}: use text or json")
    metrics = (metrics_host, metrics_port) if metrics_port is not None else None
    if not 0 <= drain <= MAX_DRAIN_SECS:
        raise UsageError(f"--drain takes 0 to {MAX_DRAIN_SECS:g} seconds, not {drain:g}")
    _operations(log_format)

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
                await _serve(org_app(settings), host, port, demo=demo, metrics=metrics, drain=drain)
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
            await _serve(org_app(settings), host, port, demo=None, metrics=metrics, drain=drain)
        _say("mcpyard organization service stopped")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the service's standard error is a log its people read
        run(main, fast_loop=True)  # the service lives on its event loop, as the gateway does


_json_lines: list[bool] = []
"""Set once `--log-format json` is in force: the service's own lines are log lines then."""


def _say(text: str) -> None:
    """A line (or lines) for the service's operator on standard error: as they are, or as JSON log lines."""
    if not _json_lines:
        print(text, file=sys.stderr, flush=True)
        return
    for line in text.splitlines():
        logging.getLogger("mcpyard.org").info("%s", line)


def _operations(log_format: str) -> None:
    """JSON log lines when asked for, and traces when the `OTEL_*` variables ask for them."""
    from mcpyard.ops import tracing, use_log_format

    if log_format == "json":
        use_log_format("json")
        _json_lines.append(True)
    problem = tracing.configure_from_environment("mcpyard-org", environ())
    if problem is not None:
        logging.getLogger("mcpyard.org").warning("%s", problem)


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


async def _serve(
    app: Any,
    host: str,
    port: int,
    *,
    demo: DemoConsole | None,
    metrics: tuple[str, int] | None = None,
    drain: float = 0.0,
) -> None:
    """Listen, open the service (database, schema, key), serve until Ctrl-C or SIGTERM, then close it all in order.

    `drain`: on SIGTERM, `/readyz` says the replica is stopping for that many seconds while it goes on serving,
    then it stops; another SIGTERM, or Ctrl-C, stops it at once.

    Raises:
        UsageError: it cannot listen on `host:port`.
        ConfigError: the database is not set up, or the key cannot be read.
    """
    import asyncio

    import uvicorn

    from mcpyard.org import CALL_DEADLINE_SECS
    from mcpyard.org.api import stop_being_ready

    signing_in: list[str] = []
    loop = asyncio.get_running_loop()

    class Announcing(uvicorn.Server):
        draining = False

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if drain <= 0 or sig != signal.SIGTERM or self.draining or self.should_exit:
                super().handle_exit(sig, frame)
                return
            self.draining = True
            stop_being_ready(app)  # the balancer sends no more requests once /readyz fails; these are served
            loop.call_soon_threadsafe(self._drain, partial(uvicorn.Server.handle_exit, self, sig, frame))

        def _drain(self, stop: Callable[[], None]) -> None:
            """On the event loop (a signal handler must not write to standard error): say so, stop once drained."""
            _say(f"stopping in {drain:g} s: /readyz says so, and what is sent meanwhile is served")
            loop.call_later(drain, stop)

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                origin = _origin(host, bound)
                _say(f"{READY}{origin}/api/v1")
                if signing_in:
                    _say(f"open the console at {origin}/")
                    _say("\n".join(signing_in).replace(" /a/", f" {origin}/a/"))

    stops: list[int] = []
    with _listening(host, port) as listener, _stop_signals(stops):
        bound = listener.getsockname()[1]
        async with contextlib.AsyncExitStack() as stack:
            servers = None
            if demo is not None:
                from mcpyard.org import demo_servers as open_demo_servers

                # Entered first, so they stop last: after the service has closed its connections to them.
                servers = await stack.enter_async_context(open_demo_servers())
                _say(f"demo servers: notes {servers.notes_url}, weather {servers.weather_url}")
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
            if metrics is None:
                await Announcing(config).serve(sockets=[listener])
            else:
                await _serve_with_metrics(Announcing(config), listener, app, metrics)


async def _serve_with_metrics(main: Any, listener: socket.socket, app: Any, metrics: tuple[str, int]) -> None:
    """The service, and the operator's metrics listener beside it until the service stops."""
    import anyio
    import uvicorn

    from mcpyard.org.api import metrics_app

    class Quiet(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # the service's own server takes the signals
            yield

    metrics_host, metrics_port = metrics
    with _listening(metrics_host, metrics_port) as metrics_listener:
        config = uvicorn.Config(
            metrics_app(app), log_level="warning", lifespan="off", access_log=False, server_header=False
        )
        side = Quiet(config)
        _say(f"metrics for every organization at {_origin(metrics_host, metrics_listener.getsockname()[1])}/metrics")
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(side.serve, sockets=[metrics_listener]))
            try:
                await main.serve(sockets=[listener])
            finally:
                side.should_exit = True


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
