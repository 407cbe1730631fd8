"""`mcpyard shell`: an interactive session with `/mcp`, `/tools`, tool calls and approval cards (CLI-2).

On a terminal it prompts and shows cards and servers' questions (forms, asked inline); fed
from a pipe it reads one command per line (with `--json`, every command prints one JSON
object on one line), a call that must ask is refused unless `--yes` answers the cards, and a
server's question is declined with a line on standard error.
"""

from __future__ import annotations

import json as jsonlib
import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mcpyard.cli._approve import ConsoleApprover, ask_on_stderr
from mcpyard.cli._common import (
    Globals,
    open_host,
    print_json,
    run,
    show_status,
    with_globals,
)
from mcpyard.cli._interrupts import ctrl_c_cancels
from mcpyard.cli._render import SANDBOX_NOTE, render_history, render_result, render_status, render_tools, safe

if TYPE_CHECKING:
    from rich.console import Console

    from mcpyard import Host

__all__ = ["shell"]

HELP = """commands:
  /mcp                      the status page
  /mcp reload               re-read the configuration and reconnect what changed
  /tools                    the tools as the model sees them
  /history                  this session's calls: what ran, was refused or failed, and why
  call NAME [JSON]          call a tool with a JSON object of arguments
  read_result HANDLE [OFFSET [LENGTH]]
                            read more of a result that was cut
  /help                     this list
  /quit                     leave (end of input does too)
Ctrl-C during a call cancels that call."""
NO_ONE_HERE = "this shell reads from a pipe or prints JSON, so no one can answer it: run `mcpyard shell` on a terminal"


class _Shell:
    def __init__(self, host: Host, opts: Globals, console: Console) -> None:
        self.host = host
        self.opts = opts
        self.console = console

    def out(self, value: dict[str, Any]) -> None:
        print_json(value)

    def error(self, message: str) -> None:
        if self.opts.json:
            self.out({"error": message})
        else:
            self.console.print(f"error: {safe(message)}", style="red" if self.opts.rich else None)

    async def handle(self, line: str) -> bool:
        """Run one command line; False when the shell should end."""
        words = line.strip()
        if not words or words.startswith("#"):
            return True
        if words in ("/quit", "/exit"):
            return False
        if words == "/help":
            if self.opts.json:
                self.out({"help": HELP})
            else:
                self.console.print(HELP)
        elif words == "/mcp":
            self.show_status(self.host.status())
        elif words == "/mcp reload":
            from mcpyard.errors import McpyardError

            try:
                self.show_status(await self.host.reload())
            except McpyardError as exc:
                self.error(str(exc))
        elif words == "/tools":
            tools = self.host.tools()
            if self.opts.json:
                self.out({"tools": [tool.to_json() for tool in tools]})
            else:
                render_tools(tools, self.console, rich=self.opts.rich)
        elif words == "/history":
            self.show_history()
        elif words.startswith("call ") or words == "call":
            await self.call(words[len("call") :].strip())
        elif words.startswith("read_result"):
            await self.read_result(words[len("read_result") :].strip())
        else:
            self.error(f"unknown command {words.split()[0]!r}; /help lists the commands")
        return True

    def show_status(self, status: Any) -> None:
        show_status(status, self.opts)

    def show_history(self) -> None:
        records = self.host.history()
        if self.opts.json:
            self.out({"history": [record.to_json() for record in records]})
        else:
            render_history(records, self.console, rich=self.opts.rich)

    async def call(self, rest: str) -> None:
        name, _, raw = rest.partition(" ")
        if not name:
            self.error("call needs a tool name: call NAME [JSON]")
            return
        try:
            arguments = jsonlib.loads(raw) if raw.strip() else {}
        except jsonlib.JSONDecodeError as exc:
            self.error(f"the arguments are not valid JSON ({exc.msg} at character {exc.pos})")
            return
        if not isinstance(arguments, dict):
            self.error('the arguments must be a JSON object, like {"a": 1}')
            return
        await self.run_call(name, arguments)

    async def read_result(self, rest: str) -> None:
        try:
            parts = shlex.split(rest)
            arguments: dict[str, Any] = {"handle": parts[0]}
            if len(parts) > 1:
                arguments["offset"] = int(parts[1])
            if len(parts) > 2:
                arguments["length"] = int(parts[2])
        except (ValueError, IndexError):
            self.error("usage: read_result HANDLE [OFFSET [LENGTH]]")
            return
        await self.run_call("read_result", arguments)

    async def run_call(self, name: str, arguments: dict[str, Any]) -> None:
        import anyio

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if not self.opts.json:
                of = f"/{total:g}" if total is not None else ""
                self.console.print(
                    f"  progress {done:g}{of} {safe(message or '')}", style="dim" if self.opts.rich else None
                )

        with anyio.CancelScope() as scope:
            self.current = scope
            # A person named the tool, offered no listing: its live definition decides, as policy and pins see it.
            result = await self.host.call(name, arguments, on_progress=progress, offered=False)
        self.current = None
        if scope.cancelled_caught:
            self.error(f"{name} was cancelled; mcpyard told the server to stop")
            return
        if self.opts.json:
            self.out(result.to_json())
        else:
            render_result(result, self.console, rich=self.opts.rich)

    current: Any = None


@with_globals
def shell(
    opts: Globals,
    mode: Annotated[
        str | None, typer.Option("--mode", help="read-only, plan, ask or auto.", show_default=False)
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Answer 'once' to every card but a destructive tool's.")] = False,
) -> None:
    """An interactive session: /mcp, /mcp reload, /tools, call NAME [JSON], read_result; reads stdin when piped."""
    from mcpyard.policy import YesApprover

    interactive = sys.stdin.isatty() and not opts.json
    console = opts.console()
    approver: Any = YesApprover(say_why=True) if yes else (ConsoleApprover(console, input) if interactive else None)
    from mcpyard.cli._elicit import ConsoleElicitor, NoTerminalElicitor, read_secret_on_stderr

    # `--yes` answers cards only: a server's question is still the person's to answer.
    elicitor: Any = (
        ConsoleElicitor(console, ask_on_stderr, read_secret_on_stderr)
        if interactive
        else NoTerminalElicitor(NO_ONE_HERE)
    )

    async def main() -> None:
        import anyio

        from mcpyard._daemon_read import read_in_daemon_thread

        # Ctrl-C at the prompt cancels `everything`: the host stops its servers in a hurry, as on any Ctrl-C.
        with anyio.CancelScope() as everything:
            async with open_host(opts, mode=mode, approver=approver, elicitor=elicitor) as host:
                session = _Shell(host, opts, console)
                if not opts.json:
                    render_status(host.status(), console, rich=opts.rich)
                    if interactive:
                        console.print("type /help for the commands", style="dim")
                elif any(s.transport == "stdio" for s in host.status().servers):
                    print(SANDBOX_NOTE, file=sys.stderr)
                async with anyio.create_task_group() as tg:
                    if interactive:
                        await tg.start(ctrl_c_cancels, session, everything)
                    while True:
                        try:
                            line = await read_in_daemon_thread(_reader(interactive), abandon_on_cancel=True)
                        except EOFError:
                            break
                        if not await session.handle(line):
                            break
                    tg.cancel_scope.cancel()

    run(main)


def _reader(interactive: bool) -> Callable[[], str]:
    def read() -> str:
        if interactive:
            return input("mcpyard> ")
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line

    return read
