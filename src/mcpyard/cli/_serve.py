"""`mcpyard serve`: the shared tools of every configured server as one MCP server (GW-1 to GW-4)."""

from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING, Annotated

import typer

from mcpyard.cli._common import Globals, environ, fail, open_host, run, with_globals

if TYPE_CHECKING:
    from mcpyard.gateway import Gateway
    from mcpyard.pipeline import Recorders

__all__ = ["serve"]


@with_globals
def serve(
    opts: Globals,
    transport: Annotated[str, typer.Option("--transport", help="stdio or http.")] = "stdio",
    host: Annotated[str, typer.Option("--host", help="Address to listen on (http).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (http); the endpoint is /mcp.")] = 8750,
    share_all: Annotated[bool, typer.Option("--share-all", help="Share every tool, not only `shared_tools`.")] = False,
    no_prefix: Annotated[
        bool,
        typer.Option("--no-prefix", help="Offer tools under their servers' own names (colliding ones stay prefixed)."),
    ] = False,
    token_secret: Annotated[
        str | None,
        typer.Option(
            "--token-secret", help="Require `Authorization: Bearer <this saved secret>` (http).", show_default=False
        ),
    ] = None,
    mode: Annotated[
        str | None, typer.Option("--mode", help="read-only, plan, ask or auto.", show_default=False)
    ] = None,
    tool_search: Annotated[
        bool,
        typer.Option(
            "--tool-search",
            help="Past the [tool_search] budget, offer each client find_tools and the tools it found, not every tool.",
        ),
    ] = False,
    log_format: Annotated[
        str, typer.Option("--log-format", help="text, or json: one JSON object per line, one line per call.")
    ] = "text",
) -> None:
    """Serve the shared tools as one MCP server.

    Their servers' resources, templates, subscriptions and prompts come along, and a server's
    sampling or elicitation request during a call goes to the client that made it. Over http
    from a terminal, approval cards appear here and are answered here, and so are the questions
    a client cannot take; otherwise (stdio, or no terminal) a call that must ask is refused with
    a clear error, and such a question is refused too.

    Over http, /healthz, /readyz and /metrics (Prometheus) answer beside /mcp. With the standard
    OTEL_* variables set (and mcpyard[otel] installed), every call is a trace span.
    """
    if transport not in ("stdio", "http"):
        fail(f"unknown transport {transport!r}: use stdio or http")
    if log_format not in ("text", "json"):
        fail(f"unknown log format {log_format!r}: use text or json")
    token = _token(token_secret) if token_secret is not None else None
    if transport == "stdio" and token_secret is not None:
        fail("--token-secret protects the http transport; stdio has no requests to check")

    approver = elicitor = None
    if transport == "http" and sys.stdin.isatty():
        from mcpyard.cli._approve import ConsoleApprover, ask_on_stderr
        from mcpyard.cli._elicit import ConsoleElicitor, read_secret_on_stderr

        approver = ConsoleApprover(opts.console(stderr=True), input)
        # A question a client cannot take (it declared no elicitation, or not that mode) is asked here.
        elicitor = ConsoleElicitor(opts.console(stderr=True), ask_on_stderr, read_secret_on_stderr)

    # A gateway's standard error is a log its user reads: the SDK's and the libraries' Python warnings
    # (deprecations of the handshake era it serves on purpose) have no place there.

    recorder = _operations(log_format, metrics=transport == "http")

    async def main() -> None:
        from mcpyard._paths import data_home
        from mcpyard.gateway import Gateway, serve_http, serve_stdio

        async with open_host(
            opts, mode=mode, approver=approver, relay_input=True, elicitor=elicitor, recorder=recorder
        ) as opened:
            # Over HTTP, tasks given to clients outlive a restart: kept in the data folder, one file per address.
            tasks = data_home(environ()) / "gateway" / f"tasks-{host}-{port}.json" if transport == "http" else None
            gateway = Gateway(
                opened, share_all=share_all, unprefixed=no_prefix, tool_search=tool_search, task_file=tasks
            )
            warning = _shares_nothing(gateway)
            if transport == "stdio":
                if warning is not None:
                    _say(f"mcpyard: warning: {warning}", log_format)
                await serve_stdio(gateway)
            else:

                def announce(listening: int) -> None:
                    # Once listening: a port that cannot be had is one line, with nothing before it.
                    for said in (warning, gateway.task_file.warning if gateway.task_file is not None else None):
                        if said is not None:
                            _say(f"mcpyard: warning: {said}", log_format)
                    where = f"[{host}]" if ":" in host else host
                    _say(f"mcpyard gateway on http://{where}:{listening}/mcp", log_format)

                await serve_http(gateway, host=host, port=port, token=token, on_listening=announce, handle_signals=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(main, fast_loop=True)


def _say(line: str, log_format: str) -> None:
    """A line for the gateway's operator on standard error: as it is, or as a JSON log line."""
    if log_format != "json":
        print(line, file=sys.stderr, flush=True)
        return
    import logging

    warning = line.startswith("mcpyard: warning: ")
    logging.getLogger("mcpyard.gateway").log(
        logging.WARNING if warning else logging.INFO, line.removeprefix("mcpyard: warning: ")
    )


def _operations(log_format: str, *, metrics: bool) -> Recorders | None:
    """Tracing from the `OTEL_*` variables, the log format, and what each call's record is also handed to."""
    from mcpyard.ops import CallLogRecorder, MetricsRecorder, tracing, use_log_format
    from mcpyard.pipeline import CallRecorder, Recorders

    if log_format == "json":
        use_log_format("json")
    problem = tracing.configure_from_environment("mcpyard-serve", environ())
    if problem is not None:
        _say(f"mcpyard: warning: {problem}", log_format)
    recorders: list[CallRecorder] = [MetricsRecorder()] if metrics else []
    if log_format == "json":
        recorders.append(CallLogRecorder(who=lambda record: record.conversation))
    return Recorders(recorders) if recorders else None


def _shares_nothing(gateway: Gateway) -> str | None:
    """Why a gateway that offers no server's tool does so, or None when it offers some."""
    from mcpyard.pipeline import READ_RESULT

    if any(tool.name != READ_RESULT for tool in gateway.shared_tools()):
        return None
    listed = len(gateway.host.server_tools())
    if not listed:
        return "it shares no tool: no connected server lists one (see `mcpyard status`)"
    return (
        f"it shares no tool: none of the {listed} tools of the connected servers matches a `shared_tools` "
        "glob of its entry; add `shared_tools` to an entry, or pass --share-all"
    )


def _token(name: str) -> str:
    from mcpyard._paths import data_home
    from mcpyard.errors import McpyardError
    from mcpyard.secrets import default_secret_store

    try:
        value = default_secret_store(data_home(environ())).get_all().get(name)
    except McpyardError as exc:
        fail(str(exc))
    if not value:
        fail(f"no saved secret {name!r} for --token-secret; save one with `mcpyard secrets set {name}`")
    return value
