"""Showing the status page, tool lists and call results: rich on a terminal, plain text when piped (CLI-3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.text import Text

from mcpyard.catalog import clean_text
from mcpyard.config import source_words

if TYPE_CHECKING:
    from rich.console import Console

    from mcpyard import ServerStatus, Status, ToolInfo
    from mcpyard.pipeline import CallRecord, CallResult

__all__ = [
    "annotation_words",
    "count",
    "render_history",
    "render_result",
    "render_status",
    "render_tool",
    "render_tools",
    "safe",
]

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


def count(number: int, noun: str) -> str:
    """`1 tool`, `2 tools`."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _server_line(server: ServerStatus) -> str:
    parts = [server.state.replace("_", " ")]
    if server.transport:
        parts.append(server.transport)
    if server.protocol_version:
        parts.append(f"protocol {server.protocol_version}")
    if server.state == "connected":
        parts.append(count(len(server.tools), "tool"))
        if server.instructions_bytes:
            parts.append(f"instructions {server.instructions_bytes} bytes")
    if server.headers_sent:
        parts.append("headers sent: " + ", ".join(server.headers_sent))
    if server.headers_not_sent:
        parts.append("headers not sent: " + ", ".join(server.headers_not_sent))
    return f"{server.id} [{source_words(server.source)}] {' · '.join(parts)}"


def safe(text: str) -> str:
    """Text from a server or a config file, made safe for a terminal: no escape sequences or controls."""
    return clean_text(text)


def render_status(status: Status, console: Console, *, rich: bool) -> None:
    """The status page (CLI-1)."""
    header = f"mcpyard session {status.session_id[:8]} · mode {status.mode} · workspace {status.workspace}"
    console.print(safe(header), style="bold" if rich else None)
    for warning in status.warnings:
        console.print(f"warning: {safe(warning)}", style="yellow" if rich else None)
    if not status.servers:
        console.print("no servers are configured (see `mcpyard doctor` and the README's config example)")
    if any(server.transport == "stdio" and server.state == "connected" for server in status.servers):
        console.print(SANDBOX_NOTE, style="dim" if rich else None)
    for server in status.servers:
        line = safe(_server_line(server))
        if rich:
            style = _STYLE.get(server.state, "")
            console.print(Text.assemble(("● ", style), (line, "bold")))
        else:
            console.print(f"* {line}")
        for extra in (server.reason, server.note, server.sign_in_url):
            if extra:
                console.print(f"    {safe(extra)}")
        for tool in server.tools:
            hints = annotation_words(tool.annotations)
            console.print(f"    {safe(tool.name)}" + (f"  ({hints})" if hints else ""))
        for refused in server.refused_tools:
            console.print(f"    {safe(refused.name)}  (not offered: {safe(refused.reason)})")


def render_tools(tools: list[ToolInfo], console: Console, *, rich: bool) -> None:
    """The catalog as the model sees it."""
    rows = []
    for tool in tools:
        description = safe(tool.description).strip()
        first = description.splitlines()[0] if description else ""
        rows.append((safe(tool.name), safe(tool.server), annotation_words(tool.annotations), first[:120]))
    if rich:
        from rich.table import Table

        table = Table(show_header=True, header_style="bold", expand=False)
        for column in ("tool", "server", "hints"):
            table.add_column(column)
        table.add_column("description", overflow="fold")
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
        return
    for row in rows:
        console.print("\t".join(row))


def _type_words(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        words = " or ".join(str(k) for k in kind)
    elif kind is not None:
        words = str(kind)
    elif "enum" in schema:
        words = "one of " + ", ".join(json_words(v) for v in schema["enum"][:10])
    else:
        words = "any"
    if kind == "array" and isinstance(items := schema.get("items"), Mapping):
        words += f" of {_type_words(items)}"
    return words


def json_words(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def render_tool(tool: ToolInfo, console: Console, *, rich: bool) -> None:
    """One tool in full: its description, each argument with its type and whether it is required, hints, hash."""
    console.print(safe(tool.name), style="bold" if rich else None)
    console.print(safe(f"server {tool.server}, its name there: {tool.tool}"))
    if tool.title:
        console.print(safe(f"title: {tool.title}"))
    hints = annotation_words(tool.annotations)
    console.print(f"hints: {hints or 'none'}")
    console.print(f"definition hash: {tool.definition_hash or '(built in)'}")
    description = safe(tool.description).strip()
    if description:
        console.print("description:")
        for line in description.splitlines():
            console.print(f"  {line}")
    properties = tool.input_schema.get("properties")
    required = tool.input_schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    if not isinstance(properties, Mapping) or not properties:
        console.print("arguments: none")
        return
    console.print("arguments:")
    for arg, given in properties.items():
        schema: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        mark = "required" if arg in needed else "optional"
        about = schema.get("description")
        text = f"  {arg} ({_type_words(schema)}, {mark})"
        if "default" in schema:
            text += f", default {json_words(schema['default'])}"
        if isinstance(about, str) and about.strip():
            text += f": {about.strip().splitlines()[0]}"
        console.print(safe(text))


def render_result(result: CallResult, console: Console, *, rich: bool) -> None:
    """A call's text, as the model reads it (made safe for the terminal); errors marked."""
    if result.ok:
        console.print(safe(result.text))
        return
    code = result.error["code"] if result.error else "error"
    console.print(Text.assemble((f"{code}: ", "red" if rich else ""), safe(result.text)))


_HISTORY_STYLE = {"ran": "green", "cached": "cyan", "refused": "yellow", "failed": "red"}


def render_history(records: list[CallRecord], console: Console, *, rich: bool) -> None:
    """This session's calls, one line each: time, tool, outcome, duration, and why it was decided so."""
    if not records:
        console.print("no calls yet in this session")
        return
    for record in records:
        outcome = record.status + (f" ({record.error_code})" if record.error_code else "")
        answer = f", answered {record.answer}" if record.answer else ""
        files = "".join(f", file {f.path} ({f.size} bytes)" for f in record.files)
        line = (
            f"{record.at:%H:%M:%S} {record.tool} {outcome} in {record.duration_ms:.0f} ms · {record.why}{answer}{files}"
        )
        if rich:
            console.print(Text.assemble((f"{outcome:<10} ", _HISTORY_STYLE.get(record.status, "")), safe(line)))
        else:
            console.print(safe(line))
