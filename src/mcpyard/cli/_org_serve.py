"""`mcpyard org serve` and `mcpyard org demo`: run the organization service, or walk its story (API-5).

Like the other `org` commands, the web and database layers load only when a command runs.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated, Any

import typer

from mcpyard.cli._common import Globals, fail, print_json, run, with_globals
from mcpyard.cli._org import DatabaseOption, _database_url, org_app

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
    demo_servers: Annotated[
        bool, typer.Option("--demo", help="Also serve the bundled demo servers on loopback and print their URLs.")
    ] = False,
) -> None:
    """Serve the organization service: its JSON API under /api/v1 (documented at /api/v1/openapi.json).

    The database must be set up (`mcpyard org init`, `mcpyard org migrate`). Ctrl-C stops it.
    """
    import warnings

    url = _database_url(database)
    warnings.simplefilter("ignore")  # the service's standard error is a log its people read

    async def main() -> None:
        import contextlib

        from mcpyard._paths import data_home
        from mcpyard.org._app import OrgSettings, org_app

        local = dev or demo_servers
        async with contextlib.AsyncExitStack() as stack:
            if demo_servers:
                from mcpyard.org._demo import demo_servers as open_demo_servers

                servers = await stack.enter_async_context(open_demo_servers())
                print(f"demo servers: notes {servers.notes_url}, weather {servers.weather_url}", file=sys.stderr)
            settings = OrgSettings(
                database_url=url,
                data_home=data_home(os.environ),
                environ=dict(os.environ),
                dev=local,
                secure_cookies=not local,
            )
            if not await _serve(settings, org_app, host, port):
                fail(f"the service could not listen on {host}:{port} (is the port taken? choose another with --port)")

    run(main)


async def _serve(settings: Any, make_app: Any, host: str, port: int) -> bool:
    """Serve until Ctrl-C or SIGTERM; whether it listened at all."""
    import uvicorn

    class Announcing(uvicorn.Server):
        listened = False

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                self.listened = True
                print(f"{READY}http://{host}:{port}/api/v1", file=sys.stderr, flush=True)

    server = Announcing(uvicorn.Config(make_app(settings), host=host, port=port, log_level="warning", lifespan="on"))
    await server.serve()
    return server.listened


@org_app.command("demo")
@with_globals
def demo(opts: Globals) -> None:
    """Walk the organization service's story on a temporary database with the bundled demo servers: register,
    tools off, a policy, a call, an ask-first call approved, a changed definition suspended, an alert raised and
    cleared. Nothing is kept."""

    async def main() -> None:
        from mcpyard.org._demo import run_demo

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
