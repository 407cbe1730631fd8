"""Model-facing tool names: prefix, separator, sanitizing and the 64-character cut (CAT-1)."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["MAX_NAME_LENGTH", "assign_all_names", "assign_names", "sanitize_name", "server_prefix", "tool_name"]

MAX_NAME_LENGTH = 64
_HASH_DIGITS = 6
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sanitize_name(raw: str) -> str:
    """Replace every character other than ASCII letters, digits, `_` and `-` with `_`."""
    return _UNSAFE.sub("_", raw)


def server_prefix(name: str | None, server_id: str | None, position: int) -> str:
    """The tool prefix of a server: its `name`, else its id, else `mcp<position>`."""
    for candidate in (name, server_id):
        if candidate:
            return sanitize_name(candidate)
    return f"mcp{position}"


def _with_hash(name: str, full: str) -> str:
    suffix = "-" + hashlib.sha256(full.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_DIGITS]
    return name[: MAX_NAME_LENGTH - len(suffix)] + suffix


def tool_name(prefix: str, separator: str, tool: str) -> str:
    """The model-facing name of one tool, cut to 64 characters with a hash suffix if longer."""
    full = f"{prefix}{separator}{tool}"
    name = sanitize_name(full)
    if len(name) > MAX_NAME_LENGTH:
        return _with_hash(name, full)
    return name


def assign_names(prefix: str, separator: str, tools: Sequence[str], *, server: str = "") -> list[str]:
    """Model-facing names for one server's tools, one-to-one (see `assign_all_names`)."""
    return assign_all_names([(server, prefix, tool) for tool in tools], separator)


def assign_all_names(tools: Sequence[tuple[str, str, str]], separator: str) -> list[str]:
    """Model-facing names for `(server, prefix, tool)` triples across every server, one-to-one.

    Names that collide after sanitizing (`a.b` and `a/b`), or across servers (server `a`
    with tool `b__c` and server `a__b` with tool `c`), all get a hash suffix of their
    server and full raw name, so each stays unique and stable whatever the listing order.
    """
    names = [tool_name(prefix, separator, tool) for _, prefix, tool in tools]
    counts = Counter(names)
    result: list[str] = []
    for (server, prefix, tool), name in zip(tools, names, strict=True):
        unique = _with_hash(name, f"{server}\0{prefix}{separator}{tool}") if counts[name] > 1 else name
        result.append(unique)
    return result
