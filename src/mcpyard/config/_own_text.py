"""mcpyard's own form as the text of a file: JSON, or TOML with `[[mcp.servers]]` tables."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence

from mcpyard.config._read import Format

__all__ = ["own_text"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_\-]+")
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_NULLABLE = frozenset({"call_timeout_secs"})
"""Fields whose `null` means something (no limit): TOML has no null and writes it "none"."""


def own_text(document: Mapping[str, object], fmt: Format) -> str:
    """The text of a config file holding `document` (own form: `servers` and host settings).

    JSON is written as it is, indented. TOML puts the host settings first and the servers in
    `[[mcp.servers]]` tables; a `null` is left out (it means the default), except
    `call_timeout_secs`, written "none" (no limit).

    Raises:
        ValueError: a string holds a lone surrogate, which no UTF-8 file can carry.
    """
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n" if fmt == "json" else _toml(document)
    text.encode("utf-8")  # raises UnicodeEncodeError (a ValueError) on a lone surrogate
    return text


def _toml(document: Mapping[str, object]) -> str:
    servers = document.get("servers", [])
    rest = {key: value for key, value in document.items() if key != "servers"}
    lines: list[str] = []
    _table(lines, (), rest, header=False)
    for server in servers if isinstance(servers, list) else []:
        if lines:
            lines.append("")
        lines.append("[[mcp.servers]]")
        _table(lines, ("mcp", "servers"), server if isinstance(server, Mapping) else {}, header=False)
    if not servers:  # written out, so the file reads back as one with no servers yet
        lines += ["", "[mcp]", "servers = []"] if lines else ["[mcp]", "servers = []"]
    return "\n".join(lines) + "\n"


def _is_table(value: object) -> bool:
    return isinstance(value, Mapping)


def _is_table_list(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, Mapping) for item in value)


def _table(lines: list[str], path: tuple[str, ...], table: Mapping[str, object], *, header: bool) -> None:
    """Key/value lines, then sub-tables, then arrays of tables: TOML reads a key after a header as the header's."""
    plain = {
        key: value
        for key, value in table.items()
        if not _is_table(value) and not _is_table_list(value) and (value is not None or key in _NULLABLE)
    }
    if header:
        lines.append(f"[{_dotted(path)}]")
    lines.extend(f"{_key(key)} = {_value(key, value)}" for key, value in plain.items())
    for key, value in table.items():
        if _is_table(value):
            if lines:
                lines.append("")
            assert isinstance(value, Mapping)
            _table(lines, (*path, key), value, header=True)
    for key, value in table.items():
        if _is_table_list(value):
            assert isinstance(value, list)
            for item in value:
                lines.extend(("", f"[[{_dotted((*path, key))}]]"))
                _table(lines, (*path, key), item, header=False)


def _dotted(path: Sequence[str]) -> str:
    return ".".join(_key(part) for part in path)


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _string(text: str) -> str:
    out = ['"']
    for char in text:
        if char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _value(key: str, value: object) -> str:
    if value is None:
        return '"none"' if key in _NULLABLE else '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("a number is not finite")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        inner = ", ".join(
            f"{_key(str(name))} = {_value(str(name), item)}" for name, item in value.items() if item is not None
        )
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list):
        return "[" + ", ".join(_value(key, item) for item in value if item is not None) + "]"
    raise ValueError(f"{type(value).__name__} cannot be written in TOML")
