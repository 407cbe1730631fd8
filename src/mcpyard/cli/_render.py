"""Showing the status page, tool lists and call results: rich on a terminal, plain text when piped (CLI-3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from mcpyard._host import ToolInfo
    from mcpyard._status import ServerStatus, Status
    from mcpyard.pipeline import CallResult

__all__ = ["annotation_words", "render_result", "render_status", "render_tools"]

SANDBOX_NOTE = "note: stdio servers run as your user, unsandboxed: trust them as you would any program you run"

_STYLE = {
    "connected": "green",
    "failed": "red",
    "stopped": "yellow",
    "skipped": "dim",
    "shadowed": "yellow",
    "untrusted": "magenta",
    "disabled": "dim",
    "waiting_for_sign_in": "cyan",
    "connecting": "cyan",
}


def annotation_words(annotations: Mapping[str, Any]) -> str:
    """`read-only, idempotent` and so on: the hints that are exactly true."""
    words = [
        word
        for key, word in (
            ("readOnlyHint", "read-only"),
            ("destructiveHint", "destructive"),
            ("idempotentHint", "idempotent"),
            ("openWorldHint", "open-world"),
        )
        if annotations.get(key) is True
    ]
    return ", ".join(words)


def _server_line(server: ServerStatus) -> str:
    parts = [server.state.replace("_", " ")]
    if server.transport:
        parts.append(server.transport)
    if server.protocol_version:
        parts.append(f"protocol {server.protocol_version}")
    if server.state == "connected":
        parts.append(f"{len(server.tools)} tools")
        if server.instructions_bytes:
            parts.append(f"instructions {server.instructions_bytes} bytes")
    if server.headers_sent:
        parts.append("headers sent: " + ", ".join(server.headers_sent))
    if server.headers_not_sent:
        parts.append("headers not sent: " + ", ".join(server.headers_not_sent))
    return f"{server.id} [{server.source}] {' · '.join(parts)}"


def render_status(status: Status, console: Console, *, rich: bool) -> None:
    """The status page (CLI-1)."""
    from rich.markup import escape

    header = f"mcpyard session {status.session_id[:8]} · mode {status.mode} · workspace {status.workspace}"
    console.print(f"[bold]{escape(header)}[/bold]" if rich else header)
    for warning in status.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}" if rich else f"warning: {warning}")
    if not status.servers:
        console.print("no servers are configured (see `mcpyard doctor` and the README's config example)")
    if any(server.transport == "stdio" and server.state == "connected" for server in status.servers):
        console.print(SANDBOX_NOTE, style="dim" if rich else None)
    for server in status.servers:
        line = _server_line(server)
        if rich:
            style = _STYLE.get(server.state, "")
            console.print(f"[{style}]●[/{style}] [bold]{escape(line)}[/bold]")
        else:
            console.print(f"* {line}")
        for extra in (server.reason, server.note, server.sign_in_url):
            if extra:
                console.print(f"    {escape(extra) if rich else extra}")
        for tool in server.tools:
            hints = annotation_words(tool.annotations)
            text = f"    {tool.name}" + (f"  ({hints})" if hints else "")
            console.print(escape(text) if rich else text)


def render_tools(tools: list[ToolInfo], console: Console, *, rich: bool) -> None:
    """The catalog as the model sees it."""
    if rich:
        from rich.table import Table

        table = Table(show_header=True, header_style="bold", expand=False)
        table.add_column("tool")
        table.add_column("server")
        table.add_column("hints")
        table.add_column("description", overflow="fold")
        for tool in tools:
            first = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
            table.add_row(tool.name, tool.server, annotation_words(tool.annotations), first[:120])
        console.print(table)
        return
    for tool in tools:
        first = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        console.print(f"{tool.name}\t{tool.server}\t{annotation_words(tool.annotations)}\t{first[:120]}")


def render_result(result: CallResult, console: Console, *, rich: bool) -> None:
    """A call's text, as the model reads it; errors marked."""
    from rich.markup import escape

    if result.ok:
        console.print(escape(result.text) if rich else result.text, markup=rich)
        return
    code = result.error["code"] if result.error else "error"
    if rich:
        console.print(f"[red]{escape(code)}:[/red] {escape(result.text)}")
    else:
        console.print(f"{code}: {result.text}", markup=False)
