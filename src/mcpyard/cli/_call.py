"""`mcpyard call`: one call through the whole pipeline (API-3)."""

from __future__ import annotations

import json as jsonlib
import sys
from typing import Annotated, Any

import typer

from mcpyard.cli._approve import ask_on_stderr, command_approver, has_terminal
from mcpyard.cli._common import (
    EXIT_OK,
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
    Globals,
    fail,
    open_host,
    print_json,
    run,
    with_globals,
)
from mcpyard.cli._render import render_result, safe

__all__ = ["call", "parse_arguments"]

TOOL_FAILURES = frozenset({"tool_error", "server_error", "timeout", "cancelled", "connection_lost", "invalid_result"})
"""Codes of calls that reached the server and failed there (exit 1); any other code is a refusal (exit 2)."""


def parse_arguments(args_json: str | None, pairs: list[str]) -> dict[str, Any]:
    """`--args JSON` (an object) merged with `--arg k=v` pairs (values parsed as JSON when they are)."""
    arguments: dict[str, Any] = {}
    if args_json is not None:
        try:
            parsed = jsonlib.loads(args_json)
        except jsonlib.JSONDecodeError as exc:
            fail(f"--args is not valid JSON ({exc.msg} at character {exc.pos}); pass an object like '{{\"a\": 1}}'")
        if not isinstance(parsed, dict):
            fail("--args must be a JSON object, like '{\"a\": 1}'")
        arguments.update(parsed)
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            fail(f"--arg {pair!r} is not KEY=VALUE")
        try:
            arguments[key] = jsonlib.loads(raw)
        except jsonlib.JSONDecodeError:
            arguments[key] = raw
    return arguments


def print_error_line(code: str, message: str) -> None:
    """`code: message` on standard error, as one line, made safe for a terminal."""
    line = " ".join(safe(message).split())
    sys.stderr.write(f"{code}: {line}\n")
    sys.stderr.flush()


@with_globals
def call(
    opts: Globals,
    name: Annotated[str, typer.Argument(help="The tool's model-facing name (see `mcpyard tools`).")],
    args_json: Annotated[
        str | None,
        typer.Option("--args", "--json-args", help="Arguments as a JSON object.", show_default=False),
    ] = None,
    arg: Annotated[list[str] | None, typer.Option("--arg", help="One argument as KEY=VALUE (repeatable).")] = None,
    mode: Annotated[
        str | None, typer.Option("--mode", help="read-only, plan, ask or auto.", show_default=False)
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Answer 'once' to every card but a destructive tool's.")] = False,
    raw: Annotated[
        bool, typer.Option("--raw", help="Print exactly what the model reads (fenced), errors included.")
    ] = False,
) -> None:
    """Connect, make one call through the pipeline, print the result (exit 0 ok, 1 failed at the server, 2 refused).

    The result goes to standard output; a refusal or an error to standard error, as one line
    `code: message` (a tool's error in the server's own words). On a terminal a card is shown and
    asked there; with no terminal a call that must ask is refused, and `--yes` answers "once"
    for every card but a destructive tool's. A server's question during the call (a form, or a
    page to open) is asked on the terminal too, field by field; with no terminal it is declined.
    While a long call runs, what its server says of it (a task's status) is shown on standard error.
    """
    arguments = parse_arguments(args_json, arg or [])
    terminal = opts.console(stderr=True) if has_terminal() else None
    approver = command_approver(yes=yes, console=terminal)
    from mcpyard.cli._elicit import command_elicitor  # not imported for `--help`

    elicitor = command_elicitor(terminal, ask_on_stderr)

    async def main() -> int:
        # Only the server that owns the tool is started and waited for: another's delay is not this call's.
        async with open_host(opts, mode=mode, approver=approver, lazy=True, elicitor=elicitor) as host:
            shown: list[str] = []

            async def progress(done: float, total: float | None, message: str | None) -> None:
                # What the server says of a long call (a task's status), each new word once, on standard error.
                line = " ".join(safe(host.redact(message or "")).split())
                if line and line not in shown[-1:]:
                    shown.append(line)
                    print(f"{name}: {line}", file=sys.stderr, flush=True)

            # A person named the tool, offered no listing: its live definition decides, as policy and pins see it.
            result = await host.call(name, arguments, on_progress=progress, offered=False)
        if opts.json:
            print_json(result.to_json())
        elif raw:
            opts.console().print(safe(result.text))
        elif result.ok:
            render_result(result, opts.console(), rich=opts.rich)
        else:
            error = result.error or {"code": "error", "message": result.text}
            print_error_line(error["code"], error["message"])
        if result.ok:
            return EXIT_OK
        code = result.error["code"] if result.error else ""
        return EXIT_TOOL_ERROR if code in TOOL_FAILURES else EXIT_USAGE

    raise typer.Exit(run(main))
