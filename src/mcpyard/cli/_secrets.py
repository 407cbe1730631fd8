"""`mcpyard secrets set|list|rm`: saved secrets by name, values never shown (SEC-1, SEC-2)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from mcpyard.cli._common import Globals, environ, fail, group_options, print_json, with_globals

if TYPE_CHECKING:
    from mcpyard.secrets import SecretStore

__all__ = ["secrets_app"]

T = TypeVar("T")

secrets_app = typer.Typer(
    name="secrets",
    help="Save, list and remove secrets used as ${secret:NAME} in the configuration.",
    no_args_is_help=True,
    add_completion=False,
)
secrets_app.callback()(group_options("Save, list and remove secrets used as ${secret:NAME} in the configuration."))


def _store() -> SecretStore:
    from mcpyard._paths import data_home
    from mcpyard.secrets import default_secret_store

    return default_secret_store(data_home(environ()))


def _guard(action: Callable[[], T]) -> T:
    from mcpyard.errors import McpyardError

    try:
        return action()
    except McpyardError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot use the secrets store: {exc.strerror or exc} ({getattr(exc, 'filename', '') or 'data folder'})")


@secrets_app.command("set")
@with_globals
def set_secret(
    opts: Globals,
    name: Annotated[str, typer.Argument(help="The secret's name, as in ${secret:NAME}.")],
) -> None:
    """Save a secret: typed without echo on a terminal, else read from standard input. Used from the next reload."""
    from getpass import getpass

    from mcpyard.secrets import check_secret_name

    _guard(lambda: check_secret_name(name))
    if sys.stdin.isatty():
        value = getpass(f"value of {name} (not shown): ")
    else:
        value = sys.stdin.read().removesuffix("\n").removesuffix("\r")
    if not value:
        fail(f"no value given for {name}; nothing was saved")
    _guard(lambda: _store().set(name, value))
    if opts.json:
        print_json({"saved": name})
    else:
        print(f"saved {name}; it is used from the next reload or start")


@secrets_app.command("list")
@with_globals
def list_secrets(opts: Globals) -> None:
    """List the names of saved secrets (never their values)."""
    names = _guard(lambda: _store().names())
    if opts.json:
        print_json({"secrets": names})
    else:
        for name in names:
            print(name)


@secrets_app.command("rm")
@with_globals
def remove_secret(
    opts: Globals,
    name: Annotated[str, typer.Argument(help="The secret's name.")],
) -> None:
    """Remove a saved secret."""
    removed = _guard(lambda: _store().delete(name))
    if not removed:
        fail(f"no saved secret {name!r} (see `mcpyard secrets list`)")
    if opts.json:
        print_json({"removed": name})
    else:
        print(f"removed {name}")
