"""The console: `mcpyard status`, `tools`, `call`, `reload`, `trust`, `doctor`, `shell`, `demo` (CLI)."""

from __future__ import annotations

import contextvars
import gc
import logging
import sys
from collections.abc import Mapping

__all__ = ["console_main", "main"]

_QUIET = logging.NullHandler()
"""Added to the root logger once, however many times `main` runs in one process."""


def main(argv: list[str] | None = None, *, environ: Mapping[str, str] | None = None) -> int:
    """Run the `mcpyard` command; usage errors become one line and exit code 2.

    Args:
        argv: the arguments after `mcpyard` (default: `sys.argv[1:]`).
        environ: the environment the command reads in place of `os.environ` (its config and data
            folders, `${env:NAME}` references, the variables servers inherit), for running the
            command inside another program (default: `os.environ`). It reads and writes the
            standard streams `sys.stdin`, `sys.stdout` and `sys.stderr` as they are when it runs.

    Returns:
        The exit code: 0 on success, 1 when a tool reported an error, 2 for a usage error, 130 when interrupted.
    """
    # Whatever a command sets in a context variable (its environment, a group's options) ends with the run.
    return contextvars.copy_context().run(_main, argv, environ)


def _main(argv: list[str] | None, environ: Mapping[str, str] | None) -> int:
    # Typer vendors click; its exception classes live only there.
    import typer
    from typer._click import exceptions as click

    from mcpyard.cli._app import app
    from mcpyard.cli._common import EXIT_USAGE, one_line, using_environ
    from mcpyard.errors import McpyardError

    # Libraries below may log tracebacks of errors mcpyard already reports in one line;
    # the console shows mcpyard's own messages only.
    root = logging.getLogger()
    if _QUIET not in root.handlers:
        root.addHandler(_QUIET)

    try:
        with using_environ(environ):
            code = app(args=argv, prog_name="mcpyard", standalone_mode=False)
    except typer.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        sys.stderr.write(f"mcpyard: error: {exc.format_message()}{where}\n")
        return 2
    except typer.Abort:
        from mcpyard.cli._said import say_interrupted

        say_interrupted()
        return 130
    except click.ClickException as exc:
        sys.stderr.write(f"mcpyard: error: {exc.format_message()}\n")
        return exc.exit_code
    except McpyardError as exc:  # an option a command checks itself, before its body runs: one line too (ERR-1)
        sys.stderr.write(f"mcpyard: error: {one_line(str(exc))}\n")
        return EXIT_USAGE
    return code if isinstance(code, int) else 0


def console_main() -> None:
    """Entry point of the installed `mcpyard` script and of `python -m mcpyard`."""
    try:
        code = main()
    except KeyboardInterrupt:  # Ctrl-C while the console's own modules load, before any command began
        from mcpyard.cli._said import say_interrupted

        say_interrupted()
        code = 130
    except Exception as exc:
        from mcpyard.cli._said import interrupt_inside, say_interrupted

        if not interrupt_inside(exc):
            raise
        say_interrupted()
        code = 130
    # Whatever is left goes with the process: a last collection over all of it would only delay the
    # exit (by about 0.3 s, most of the time Ctrl-C takes).
    gc.freeze()
    raise SystemExit(code)
