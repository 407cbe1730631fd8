"""The catalog: model-facing names mapped to (server, tool), with hashes and clean texts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mcpyard.catalog._bounds import inspect_schema
from mcpyard.catalog._files import offer_files_as_paths
from mcpyard.catalog._hashing import definition_hash
from mcpyard.catalog._naming import Named, name_tools
from mcpyard.catalog._sanitize import DESCRIPTION_LIMIT, clean_and_redact, clean_text, sanitize_text
from mcpyard.secrets import Redactor

__all__ = ["Catalog", "CatalogEntry", "RefusedTool", "ServerTools", "build_catalog", "schema_refusal"]

MAX_TITLE = 256


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One tool as the model sees it, and where it really lives."""

    name: str
    """Model-facing name (CAT-1)."""
    server: str
    """Server id."""
    tool: str
    """The tool's name on its server."""
    description: str
    title: str | None
    input_schema: Mapping[str, Any]
    """The schema offered to the model: file parameters take paths (CAT-3)."""
    output_schema: Mapping[str, Any] | None
    annotations: Mapping[str, Any]
    definition_hash: str
    wire: Mapping[str, Any] = field(repr=False)
    """The definition as the server sent it (JSON form)."""
    file_params: tuple[str, ...] = ()
    """Top-level parameters that take a local file path and send its content as base64 (CAT-3)."""
    base_name: str = ""
    """The name the tool would have alone (before a collision's suffix); deny rules hold for it too (POL-4)."""
    contested: bool = False
    """Another tool wants `base_name` too: allow rules, written for one of them, apply to neither."""
    read_only: bool = field(init=False)
    """`readOnlyHint` is exactly true (read once here: every call asks)."""
    destructive: bool = field(init=False)
    idempotent: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "read_only", self.hint("readOnlyHint"))
        object.__setattr__(self, "destructive", self.hint("destructiveHint"))
        object.__setattr__(self, "idempotent", self.hint("idempotentHint"))

    def hint(self, key: str) -> bool:
        """Whether annotation `key` is exactly `true` (only `true` counts, POL-2)."""
        return self.annotations.get(key) is True


@dataclass(frozen=True, slots=True)
class ServerTools:
    """One connected server's listing: its id, tool prefix and tools in wire (JSON) form."""

    server: str
    prefix: str
    tools: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class RefusedTool:
    """A listed tool that is not offered, and why (a schema past a bound, THREATS)."""

    name: str
    """The model-facing name it would have had (CAT-1)."""
    server: str
    tool: str
    reason: str


@dataclass(frozen=True, slots=True)
class Catalog:
    """An immutable name → entry map; rebuilt whole whenever a listing changes."""

    entries: Mapping[str, CatalogEntry] = field(default_factory=lambda: MappingProxyType({}))
    warnings: tuple[str, ...] = ()
    """One line per tool whose name another tool wanted too, for the status page."""
    refused: Mapping[str, RefusedTool] = field(default_factory=lambda: MappingProxyType({}))
    """Listed tools that are not offered, by the name they would have had."""

    def get(self, name: str) -> CatalogEntry | None:
        return self.entries.get(name)

    def of_server(self, server: str) -> list[CatalogEntry]:
        return [entry for entry in self.entries.values() if entry.server == server]

    def refused_of_server(self, server: str) -> list[RefusedTool]:
        return [refused for refused in self.refused.values() if refused.server == server]

    def __len__(self) -> int:
        return len(self.entries)


def _text(value: str, redactor: Redactor, limit: int) -> str:
    # Cleaned before redacting: a secret split by a zero-width or control character is whole again.
    return sanitize_text(clean_and_redact(value, redactor.redact), limit=limit)


_PROSE = frozenset({"description", "title", "$comment"})
"""Schema keywords whose string value is prose for a reader: sanitized like a tool's description."""


def _schema(value: Any, redactor: Redactor, key: str | None = None) -> Any:
    """A schema (or annotations) as the model reads it: every string at any depth, keys included,
    cleaned then redacted; prose (`description`, `title`, `$comment`) also cut and tag-escaped (CAT-4)."""
    if isinstance(value, str):
        if key in _PROSE:
            return _text(value, redactor, DESCRIPTION_LIMIT)
        return clean_and_redact(value, redactor.redact)
    if isinstance(value, list):
        return [_schema(item, redactor) for item in value]
    if isinstance(value, Mapping):
        return {clean_and_redact(str(k), redactor.redact): _schema(item, redactor, str(k)) for k, item in value.items()}
    return value


def schema_refusal(wire: Mapping[str, Any], digest: str | None = None) -> str | None:
    """Why a listed tool cannot be offered because of its schemas (a bound passed, THREATS), or None.

    `digest` (its definition hash) lets a listing that comes again be judged from memory.
    """
    schema = wire.get("inputSchema")
    if isinstance(schema, dict):
        report = inspect_schema(schema, key=digest)
        if report.problem is not None:
            return f"its input schema is refused: {report.problem}"
    output = wire.get("outputSchema")
    if isinstance(output, dict):
        report = inspect_schema(output, output=True, key=digest)
        if report.problem is not None:
            return f"its output schema is refused: {report.problem}"
    return None


def _entry(named: Named, server: str, wire: Mapping[str, Any], redactor: Redactor, digest: str) -> CatalogEntry:
    schema = wire.get("inputSchema")
    model_schema, file_params = offer_files_as_paths(schema if isinstance(schema, dict) else {"type": "object"})
    output = wire.get("outputSchema")
    annotations = wire.get("annotations")
    title = wire.get("title")
    if title is None and isinstance(annotations, dict):
        title = annotations.get("title")
    description = wire.get("description")
    return CatalogEntry(
        name=named.name,
        server=server,
        tool=str(wire["name"]),
        description=_text(description, redactor, DESCRIPTION_LIMIT) if isinstance(description, str) else "",
        title=_text(title, redactor, MAX_TITLE) if isinstance(title, str) else None,
        # What the model sees is redacted; the hash below covers the definition as sent.
        input_schema=_schema(model_schema, redactor),
        output_schema=_schema(output, redactor) if isinstance(output, dict) else None,
        annotations=_schema(annotations, redactor) if isinstance(annotations, dict) else {},
        definition_hash=digest,
        wire=wire,
        file_params=file_params,
        base_name=named.base,
        contested=named.contested,
    )


def build_catalog(
    listings: Iterable[ServerTools],
    separator: str,
    *,
    redactor: Redactor | None = None,
    held: Mapping[str, tuple[str, str]] | None = None,
) -> Catalog:
    """Name every tool of every listed server (CAT-1) and hash its definition (CAT-2).

    Servers sharing a prefix were already resolved (shadowed) by the host; names that
    still collide, within a server or across servers, get hash suffixes, so no tool
    ever silently replaces another, and a name given earlier (`held`: name → server and
    tool) stays with its tool (see `name_tools`).
    """
    listed = [(listing.server, listing.prefix, wire) for listing in listings for wire in listing.tools]
    names = name_tools([(server, prefix, str(wire["name"])) for server, prefix, wire in listed], separator, held=held)
    scrub = redactor or Redactor()
    entries: dict[str, CatalogEntry] = {}
    refused: dict[str, RefusedTool] = {}
    for named, (server, _, wire) in zip(names, listed, strict=True):
        digest = definition_hash(wire)
        if (reason := schema_refusal(wire, digest)) is not None:
            # Judged before anything else reads the schemas; the server's other tools are still offered.
            refused[named.name] = RefusedTool(named.name, server, str(wire["name"]), scrub.redact(reason))
            continue
        entries[named.name] = _entry(named, server, wire, scrub, digest)
    warnings = tuple(_collision(entry) for entry in entries.values() if entry.contested)
    return Catalog(MappingProxyType(entries), warnings=warnings, refused=MappingProxyType(refused))


def _collision(entry: CatalogEntry) -> str:
    tool = clean_text(entry.tool)
    if entry.name == entry.base_name:
        return (
            f"another tool wants the name {entry.base_name} of tool {tool!r} of server {entry.server!r}; it keeps "
            "the name, the other is offered under a suffixed name, and allow rules apply to neither"
        )
    return (
        f"tool {tool!r} of server {entry.server!r} is offered as {entry.name}: {entry.base_name} names another "
        f"tool; deny rules for {entry.base_name} hold for it too, allow rules do not (rename a server with `name`)"
    )
