"""`mcpyard demo`: the embedded default — the bundled demo servers, their status page and a few real calls."""

from __future__ import annotations

import contextlib
import socket
import sys
import tempfile
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Any

from mcpyard.cli._common import Globals, environ, print_json, run, with_globals
from mcpyard.cli._render import render_result, render_status

__all__ = ["demo"]

CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("notes__list_notes", {}),
    ("notes__add_note", {"title": "demo", "body": "Written by mcpyard demo."}),
    ("notes__read_note", {"title": "demo"}),
    ("notes__word_count", {"text": "one two three four"}),
    ("notes__word_count", {"text": "one two three four"}),
    ("notes__summarize_slowly", {"steps": 3}),
    ("notes__delete_note", {"title": "demo"}),
    ("weather__forecast", {"city": "Lisbon", "days": 2}),
    ("weather__convert_temperature", {"value": 21.5, "to": "fahrenheit"}),
    ("notes__add_note", {"title": 42}),
    ("notes__nonexistent", {}),
)


@contextlib.asynccontextmanager
async def _weather_server() -> AsyncIterator[str]:
    """Serve the weather demo over streamable HTTP on a free 127.0.0.1 port, for the life of the block."""
    import anyio
    import uvicorn

    from mcpyard.demo.weather import asgi_app, build_server

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(asgi_app(build_server()), log_level="error", lifespan="on")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: server.serve(sockets=[sock]))
        with anyio.fail_after(20):
            while not server.started:  # noqa: ASYNC110  # uvicorn offers no event to wait on
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.should_exit = True


@with_globals
def demo(opts: Globals) -> None:
    """Run the bundled demo servers (notes over stdio, weather over streamable HTTP) and a few real calls.

    The demo brings its own workspace and configuration: --workspace, --mcp-config and --trust are ignored.
    """

    async def main() -> None:
        from mcpyard import Host
        from mcpyard.policy import Answer, ApprovalCard

        console = opts.console()
        template = resources.files("mcpyard.demo").joinpath("demo.toml").read_text(encoding="utf-8")
        with tempfile.TemporaryDirectory(prefix="mcpyard-demo-") as tmp:
            root = Path(tmp)
            (root / "workspace").mkdir()
            config_file = root / "demo.toml"
            config_file.write_text(template, encoding="utf-8")
            async with _weather_server() as url:
                demo_environ = {**environ(), "MCPYARD_DEMO_PYTHON": sys.executable, "MCPYARD_DEMO_WEATHER_URL": url}

                async def approver(card: ApprovalCard) -> Answer:
                    # The demo answers its own cards: once for a change, never for a destructive tool.
                    answer: Answer = "deny" if card.destructive else "once"
                    if not opts.json:
                        for line in card.lines():
                            console.print(f"  card │ {line}", markup=False)
                        console.print(f"  card │ the demo answers: {answer}", markup=False)
                    return answer

                async with Host.open(
                    workspace=root / "workspace",
                    config_file=config_file,
                    environ=demo_environ,
                    config_home=root / "config",
                    data_home=root / "data",
                    approver=approver,
                ) as host:
                    page = host.status()
                    results = []
                    if not opts.json:
                        render_status(page, console, rich=opts.rich)
                    for name, arguments in CALLS:
                        if not opts.json:
                            console.print()
                            console.print(f"$ mcpyard call {name} --args '{_json(arguments)}'", markup=False)

                        async def progress(done: float, total: float | None, message: str | None) -> None:
                            if not opts.json:
                                of = f"/{total:g}" if total is not None else ""
                                console.print(f"  progress {done:g}{of} {message or ''}", markup=False)

                        result = await host.call(name, arguments, on_progress=progress)
                        results.append(result.to_json())
                        if not opts.json:
                            render_result(result, console, rich=opts.rich)
            if opts.json:
                print_json({"status": page.to_json(), "calls": results})

    run(main)


def _json(value: Any) -> str:
    import json

    return json.dumps(value)
