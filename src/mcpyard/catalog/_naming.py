"""Model-facing tool names: prefix, separator, sanitizing and the 64-character cut (CAT-1)."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "MAX_NAME_LENGTH",
    "RESERVED_NAMES",
    "Named",
    "assign_all_names",
    "assign_names",
    "name_tools",
    "sanitize_name",
    "server_prefix",
    "tool_name",
]

MAX_NAME_LENGTH = 64
RESERVED_NAMES = frozenset({"read_result", "find_tools"})
"""Names of mcpyard's own tools: a server's tool never takes one."""
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
    """Model-facing names for `(server, prefix, tool)` triples across every server, one-to-one (`name_tools`)."""
    return [named.name for named in name_tools(tools, separator)]


@dataclass(frozen=True, slots=True)
class Named:
    """A tool's model-facing name, the name it would have had alone, and whether another tool wanted that one."""

    name: str
    base: str
    """`tool_name(prefix, separator, tool)`: what allow and deny rules were written against."""
    contested: bool = False
    """Another tool (listed now, or named so earlier in this session) wants `base` too, or it is mcpyard's own."""


def name_tools(
    tools: Sequence[tuple[str, str, str]], separator: str, *, held: Mapping[str, tuple[str, str]] | None = None
) -> list[Named]:
    """Model-facing names for `(server, prefix, tool)` triples across every server, one-to-one (CAT-1).

    Names that collide after sanitizing (`a.b` and `a/b`), or across servers (server `a` with
    tool `b__c` and server `a__b` with tool `c`), get a hash suffix of their server and full raw
    name. A collision never renames a tool that already had the name: `held` maps names given
    earlier (this host session) to their `(server, tool)`, and such a name stays with its tool,
    whoever else lists it, and is not handed to another while its tool is away. Tools that
    arrive together, with no holder, all get suffixes, so neither wins by listing order.
    """
    held = held or {}
    bases = [tool_name(prefix, separator, tool) for _, prefix, tool in tools]
    wanted = Counter(bases)
    named: list[Named] = []
    for (server, prefix, tool), base in zip(tools, bases, strict=True):
        holder = held.get(base)
        if base in RESERVED_NAMES:
            keep, contested = False, True
        elif holder is not None:
            keep = holder == (server, tool)
            contested = wanted[base] > 1 or not keep
        else:
            keep = wanted[base] == 1
            contested = not keep
        name = base if keep else _with_hash(base, f"{server}\0{prefix}{separator}{tool}")
        named.append(Named(name, base, contested))
    # A suffixed name that happens to equal another tool's name (listed or held) is suffixed again.
    taken: set[str] = set()
    for index, ((server, _, tool), entry) in enumerate(zip(tools, named, strict=True)):
        name = entry.name
        while name in taken or name in RESERVED_NAMES or held.get(name, (server, tool)) != (server, tool):
            name = _with_hash(name, f"{index}\0{name}")
        if name != entry.name:
            named[index] = Named(name, entry.base, True)
        taken.add(name)
    return named
