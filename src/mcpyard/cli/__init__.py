"""The console: `mcpyard status`, `tools`, `call`, `reload`, `trust`, `doctor`, `shell`, `demo` (CLI)."""

from __future__ import annotations

import logging
import sys

__all__ = ["console_main", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the `mcpyard` command; usage errors become one line and exit code 2."""
    # Typer vendors click; its exception classes live only there.
    import typer
    from typer._click import exceptions as click

    from mcpyard.cli._app import app

    # Libraries below may log tracebacks of errors mcpyard already reports in one line;
    # the console shows mcpyard's own messages only.
    logging.getLogger().addHandler(logging.NullHandler())

    try:
        code = app(args=argv, prog_name="mcpyard", standalone_mode=False)
    except typer.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        sys.stderr.write(f"mcpyard: error: {exc.format_message()}{where}\n")
        return 2
    except typer.Abort:
        sys.stderr.write("mcpyard: interrupted\n")
        return 130
    except click.ClickException as exc:
        sys.stderr.write(f"mcpyard: error: {exc.format_message()}\n")
        return exc.exit_code
    return code if isinstance(code, int) else 0


def console_main() -> None:
    """Entry point of the installed `mcpyard` script."""
    raise SystemExit(main())
