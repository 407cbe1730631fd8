"""The `mcpyard` command: one Typer app, one small module per command (CLI-2)."""

from __future__ import annotations

from typing import Annotated

import typer

from mcpyard.cli import _org_serve  # noqa: F401  # adds `org serve` and `org demo`
from mcpyard.cli._call import call
from mcpyard.cli._chat import chat
from mcpyard.cli._demo import demo
from mcpyard.cli._doctor import doctor
from mcpyard.cli._import import import_file
from mcpyard.cli._login import login, logout
from mcpyard.cli._org import org_app
from mcpyard.cli._pin import pin, unpin
from mcpyard.cli._reload import reload
from mcpyard.cli._secrets import secrets_app
from mcpyard.cli._serve import serve
from mcpyard.cli._shell import shell
from mcpyard.cli._status import status, tools
from mcpyard.cli._trust import trust

__all__ = ["app"]

app = typer.Typer(
    name="mcpyard",
    help="mcpyard: connect, name, govern and call the tools of many MCP servers.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(shown: bool) -> None:
    if shown:
        from mcpyard import __version__

        print(f"mcpyard {__version__}")
        raise typer.Exit(0)


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print mcpyard's version and exit."),
    ] = False,
) -> None:
    """mcpyard: connect, name, govern and call the tools of many MCP servers."""


app.command()(status)
app.command()(tools)
app.command()(call)
app.command()(reload)
app.command()(trust)
app.command()(doctor)
app.command(name="import")(import_file)
app.command()(login)
app.command()(logout)
app.command()(pin)
app.command()(unpin)
app.command()(serve)
app.command()(shell)
app.command()(chat)
app.command()(demo)
app.add_typer(secrets_app)
app.add_typer(org_app)
