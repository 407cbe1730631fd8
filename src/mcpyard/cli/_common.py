"""What every command shares: global options, opening a host, printing, errors and exit codes (API-4)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import importlib.util
import inspect
import json
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Concatenate, NoReturn, ParamSpec, TypeVar

import typer

from mcpyard.cli._interrupts import CtrlC
from mcpyard.cli._said import interrupt_inside, say_interrupted
from mcpyard.errors import ConfigError, McpyardError, StateError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from mcpyard import Host, HostView, Status

__all__ = [
    "EXIT_OK",
    "EXIT_TOOL_ERROR",
    "EXIT_USAGE",
    "Globals",
    "environ",
    "fail",
    "group_options",
    "one_line",
    "open_host",
    "print_json",
    "run",
    "show_status",
    "using_environ",
    "with_globals",
]

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2

T = TypeVar("T")
P = ParamSpec("P")

_ENVIRON: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar("mcpyard_environ", default=None)
"""The environment of the command running in this context (`main(environ=...)`); None: `os.environ`."""


def environ() -> Mapping[str, str]:
    """The environment the running command reads: the one given to `main`, else the process's."""
    given = _ENVIRON.get()
    return os.environ if given is None else given


@contextmanager
def using_environ(given: Mapping[str, str] | None) -> Iterator[None]:
    """Run the commands inside with `given` as their environment (None: the process's own)."""
    token = _ENVIRON.set(given)
    try:
        yield
    finally:
        _ENVIRON.reset(token)


@dataclass(frozen=True, slots=True)
class Globals:
    """The options every command accepts after its name."""

    workspace: Path | None
    mcp_config: Path | None
    trust: bool
    json: bool

    def console(self, *, stderr: bool = False) -> Console:
        from rich.console import Console

        # Never markup: text from servers and config files is data; styles are passed explicitly.
        return Console(
            stderr=stderr,
            highlight=False,
            markup=False,
            emoji=False,
            soft_wrap=not self.rich,
            _environ=environ(),
        )

    @property
    def rich(self) -> bool:
        """Tables and colour only on a terminal (CLI-3)."""
        return not self.json and sys.stdout.isatty()


# The options every command accepts after its name, declared here only (API-4). A command
# that has no use for one accepts it all the same and ignores it.
_GLOBAL_OPTIONS = (
    inspect.Parameter(
        "workspace",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[
            Path | None,
            typer.Option(
                "--workspace", help="The project folder (default: the current directory).", show_default=False
            ),
        ],
    ),
    inspect.Parameter(
        "mcp_config",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[
            Path | None,
            typer.Option(
                "--mcp-config", help="A config file that comes before every other source.", show_default=False
            ),
        ],
    ),
    inspect.Parameter(
        "trust",
        inspect.Parameter.KEYWORD_ONLY,
        default=False,
        annotation=Annotated[bool, typer.Option("--trust", help="Trust the workspace's .mcp.json for this run only.")],
    ),
    inspect.Parameter(
        "json",
        inspect.Parameter.KEYWORD_ONLY,
        default=False,
        annotation=Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")],
    ),
)


_GIVEN_TO_GROUP: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "mcpyard_group_options", default=None
)
"""The global options given after a group's name (`mcpyard secrets --json list`), for its command to use."""


def group_options(help_text: str) -> Callable[..., None]:
    """A group's callback that accepts the options every command accepts (API-4), for the command it runs.

    `mcpyard secrets --json list` is `mcpyard secrets list --json`; an option given in both places counts.
    """

    def options(**kwargs: Any) -> None:
        _GIVEN_TO_GROUP.set({p.name: kwargs.get(p.name, p.default) for p in _GLOBAL_OPTIONS})

    options.__doc__ = help_text
    options.__signature__ = inspect.Signature(list(_GLOBAL_OPTIONS))  # type: ignore[attr-defined]  # read by inspect
    options.__annotations__ = {p.name: p.annotation for p in _GLOBAL_OPTIONS} | {"return": None}
    return options


def with_globals(command: Callable[Concatenate[Globals, P], T]) -> Callable[..., T]:
    """Give a command the options every command accepts (API-4), passed to it as one `Globals`.

    `command` takes `opts: Globals` first, then its own arguments and options. The function
    returned has the command's own parameters followed by `--workspace`, `--mcp-config`,
    `--trust` and `--json`: the signature Typer reads to build the command line.

    Raises:
        TypeError: the command does not take `Globals` first, or names a parameter like a global option.
    """
    # Typer reads annotations as objects: evaluate the command's (strings under PEP 563) once, here.
    signature = inspect.signature(command, eval_str=True)
    first, *own = signature.parameters.values()
    if first.annotation is not Globals:
        raise TypeError(f"{command.__qualname__} must take `opts: Globals` as its first parameter")
    if clash := {p.name for p in own} & {p.name for p in _GLOBAL_OPTIONS}:
        raise TypeError(f"{command.__qualname__} declares {', '.join(sorted(clash))}, a global option")

    @functools.wraps(command)
    def with_options(*args: Any, **kwargs: Any) -> T:
        given = {p.name: kwargs.pop(p.name, p.default) for p in _GLOBAL_OPTIONS}
        if (outer := _GIVEN_TO_GROUP.get()) is not None:
            given = {name: value or outer[name] for name, value in given.items()}
        try:
            return command(Globals(**given), *args, **kwargs)
        except KeyboardInterrupt:  # before its body ran (its modules loading): Typer would end it without a word
            say_interrupted()
            raise typer.Exit(130) from None
        except Exception as exc:
            if not interrupt_inside(exc):
                raise
            say_interrupted()
            raise typer.Exit(130) from None

    parameters = [*own, *_GLOBAL_OPTIONS]
    with_options.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]  # read by inspect
    with_options.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": signature.return_annotation}
    return with_options


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def show_status(page: Status, opts: Globals) -> None:
    """The status page as one JSON object (`--json`), else rendered for the terminal or a pipe."""
    from mcpyard.cli._render import render_status

    if opts.json:
        print_json(page.to_json())
    else:
        render_status(page, opts.console(), rich=opts.rich)


def one_line(message: str) -> str:
    """A message as one readable line: control characters cleaned, lines joined."""
    from mcpyard.catalog import clean_text

    return " ".join(clean_text(message).split("\n"))


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one readable error line on stderr and exit."""
    sys.stderr.write(f"mcpyard: error: {one_line(message)}\n")
    raise typer.Exit(code)


@asynccontextmanager
async def open_host(
    opts: Globals,
    *,
    mode: str | None = None,
    approver: Any = None,
    open_browser: bool = False,
    relay_input: bool = False,
    lazy: bool = False,
    elicitor: Any = None,
    recorder: Any = None,
) -> AsyncIterator[Host]:
    """Open a host for a command, with the CLI's global options.

    Every server is started and waited for (on a terminal, a line on stderr shows them coming
    up); with `lazy`, none is: a call starts, and waits for, only the server it needs.
    """
    from mcpyard import Host

    # Connecting can take a while (CLI-3); the spinner lives on stderr and only on a terminal.
    spinner = opts.console(stderr=True).status("connecting to the configured MCP servers…") if opts.rich else None
    if spinner is not None:
        spinner.start()
    try:
        async with Host.open(
            workspace=opts.workspace,
            config_file=opts.mcp_config,
            mode=mode,  # type: ignore[arg-type]  # checked by Host
            approver=approver,
            trust_project=opts.trust,
            environ=environ(),
            open_browser=open_browser,
            relay_input=relay_input,
            lazy=True,
            elicitor=elicitor,
            recorder=recorder,
        ) as host:
            if not lazy:
                await _start_every_server(host, spinner)
            if spinner is not None:
                spinner.stop()
            yield host
    finally:
        if spinner is not None:
            spinner.stop()


def _changed_since(seen: HostView, host: Host) -> bool:
    return host.view is not seen


async def _start_every_server(host: Host, spinner: Any) -> None:
    """Start every server; on a terminal, say which are up and which are awaited as they come (CLI-3)."""
    import anyio

    if spinner is None:
        await host.start()
        return
    async with anyio.create_task_group() as tg:

        async def show() -> None:
            while True:
                servers = host.servers()
                up = [s.id for s in servers if s.state != "connecting"]
                waiting = [s.id for s in servers if s.state == "connecting"]
                if waiting:
                    shown = ", ".join(waiting[:4]) + ("…" if len(waiting) > 4 else "")
                    spinner.update(f"{len(up)} of {len(servers)} MCP servers settled; waiting for {shown}")
                await host.wait_until(functools.partial(_changed_since, host.view))

        tg.start_soon(show)
        await host.start()
        tg.cancel_scope.cancel()


def run(main: Callable[[], Awaitable[T]], *, fast_loop: bool = False, host: bool = True) -> T:
    """Run a command's async body; turn mcpyard's errors into one line and exit code 2 (ERR-1).

    `fast_loop`: on uvloop where it is installed (the gateway, which lives on its event loop).
    `host`: the body opens a host, whose modules are loaded first, while Ctrl-C still stops the command at once:
    inside the event loop, a Ctrl-C pressed while they load (a second or two on a slow machine) waited for the
    loading to end.
    """
    if host:
        importlib.import_module("mcpyard._host")
    import anyio

    options: dict[str, Any] = {}
    if fast_loop and importlib.util.find_spec("uvloop") is not None:
        options["use_uvloop"] = True
    ctrl_c = CtrlC()
    # Only where Python's own handler is in place (asyncio's condition too): an ignored Ctrl-C stays ignored.
    handled = threading.current_thread() is threading.main_thread()
    handled = handled and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if handled:
        signal.signal(signal.SIGINT, ctrl_c)
    try:
        return anyio.run(ctrl_c.run, main, backend_options=options)
    except asyncio.CancelledError:
        if not ctrl_c.interrupted:
            raise
        _interrupted()
    except (ConfigError, UsageError, StateError) as exc:
        fail(str(exc))
    except McpyardError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        _interrupted()
    except typer.Exit:
        raise
    except Exception as exc:  # top-level handler: one line, never a traceback (ERR-1)
        first = (str(exc).splitlines() or [""])[0][:200]
        fail(f"unexpected {type(exc).__name__}: {first} (please report it)")
    finally:
        if handled:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _interrupted() -> NoReturn:
    say_interrupted("every server was stopped")
    raise typer.Exit(130) from None
