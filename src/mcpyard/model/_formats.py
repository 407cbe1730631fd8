"""The tools as each model API takes them: MCP, OpenAI Chat Completions and Anthropic Messages shapes (MOD-1).

`format_tools` is a pure function of the offered tools; `ToolFormatter` keeps its answers for tools
that did not change, and remembers which tools a format left out, for the status page.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Literal, Protocol, get_args

from mcpyard.model._schemas import ANTHROPIC, OPENAI, Profile, SchemaLeftOut, normalize_schema

__all__ = [
    "FORMATS",
    "NAME_LIMITS",
    "ModelTools",
    "OfferedTool",
    "ToolFormat",
    "ToolFormatter",
    "format_tool",
    "format_tools",
    "provider_names",
    "tool_name",
]

ToolFormat = Literal["mcp", "openai", "anthropic"]
FORMATS: tuple[ToolFormat, ...] = get_args(ToolFormat)
NAME_LIMITS: Mapping[ToolFormat, int] = {"mcp": 128, "openai": 64, "anthropic": 64}
"""The longest tool name each API takes (its names are ASCII letters, digits, `_` and `-`)."""
_PROFILES: Mapping[str, Profile] = {"openai": OPENAI, "anthropic": ANTHROPIC}
_NAME = re.compile(r"[A-Za-z0-9_-]+")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class OfferedTool(Protocol):
    """A tool as the host offers it (`mcpyard.ToolInfo`)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> Mapping[str, Any]: ...
    @property
    def annotations(self) -> Mapping[str, Any]: ...
    @property
    def title(self) -> str | None: ...


class ModelTools(list[dict[str, Any]]):
    """Tools in one model API's format: a list of JSON objects, as that API takes them, plus the way back.

    Attributes:
        format: `mcp`, `openai` or `anthropic`.
        names: each name the model sees, mapped to the tool's name in the catalog (what `Host.call` takes).
        left_out: tools this format could not offer, by catalog name, with why.
        hashes: each offered tool's definition hash (CAT-2), by catalog name, where the host knows it: a call the
            model makes from this list runs only on that definition (`definition_hash`).
    """

    __slots__ = ("format", "hashes", "left_out", "names")

    def __init__(
        self,
        tools: Iterable[dict[str, Any]] = (),
        *,
        format: ToolFormat,
        names: Mapping[str, str] | None = None,
        left_out: Mapping[str, str] | None = None,
        hashes: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(tools)
        self.format: ToolFormat = format
        self.names: dict[str, str] = dict(names or {})
        self.left_out: dict[str, str] = dict(left_out or {})
        self.hashes: dict[str, str] = dict(hashes or {})

    def catalog_name(self, name: str) -> str | None:
        """The catalog name of the tool the model calls `name`, or None when no such tool was offered."""
        return self.names.get(name)

    def definition_hash(self, catalog_name: str) -> str | None:
        """The definition hash of the tool offered under this catalog name, when the list carries it."""
        return self.hashes.get(catalog_name)

    def model_name(self, catalog_name: str) -> str:
        """The name the model sees for a catalog name (itself, unless the API's limits changed it)."""
        for given, catalog in self.names.items():
            if catalog == catalog_name:
                return given
        return catalog_name

    def only(self, catalog_names: Collection[str]) -> ModelTools:
        """These tools with only the given catalog names (a teammate's or an assistant's selection)."""
        keep = {given for given, catalog in self.names.items() if catalog in catalog_names}
        return ModelTools(
            (tool for tool in self if tool_name(tool) in keep),
            format=self.format,
            names={given: catalog for given, catalog in self.names.items() if given in keep},
            left_out={name: why for name, why in self.left_out.items() if name in catalog_names},
            hashes={name: digest for name, digest in self.hashes.items() if name in catalog_names},
        )


def tool_name(tool: Mapping[str, Any]) -> str:
    """A formatted tool's name, in any of the three formats (OpenAI's is inside `function`)."""
    function = tool.get("function")
    if isinstance(function, Mapping):
        return str(function.get("name"))
    return str(tool.get("name"))


def provider_names(names: Iterable[str], limit: int) -> dict[str, str]:
    """Catalog name → the name a model API takes: ASCII letters, digits, `_`, `-`, at most `limit` characters.

    Catalog names already are (CAT-1), so they stay as they are; any other is cleaned and cut with
    6 hex digits of its SHA-256, and stays unique.
    """
    given: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        candidate = name if _NAME.fullmatch(name) and len(name) <= limit else None
        if candidate is None or candidate in taken:
            cleaned = _UNSAFE.sub("_", name) or "tool"
            digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
            candidate = f"{cleaned[: limit - 7]}-{digest[:6]}"
            salt = 0
            while candidate in taken:
                salt += 1
                digest = hashlib.sha256(f"{salt}\0{name}".encode("utf-8", "surrogatepass")).hexdigest()
                candidate = f"{cleaned[: limit - 7]}-{digest[:6]}"
        given[name] = candidate
        taken.add(candidate)
    return given


def format_tool(tool: OfferedTool, fmt: ToolFormat, name: str | None = None) -> dict[str, Any]:
    """One tool in `fmt`'s shape, named `name` (default: its catalog name).

    Raises:
        SchemaLeftOut: its input schema cannot be offered in this format.
        ValueError: `fmt` is not a known format.
    """
    shown = name or tool.name
    if fmt == "mcp":
        out: dict[str, Any] = {"name": shown}
        if tool.title:
            out["title"] = tool.title
        out["description"] = tool.description
        out["inputSchema"] = dict(tool.input_schema)
        out["annotations"] = dict(tool.annotations)
        return out
    profile = _PROFILES.get(fmt)
    if profile is None:
        raise ValueError(f"unknown tool format {fmt!r}: use one of {', '.join(FORMATS)}")
    schema = normalize_schema(tool.input_schema, profile)
    if fmt == "openai":
        return {"type": "function", "function": {"name": shown, "description": tool.description, "parameters": schema}}
    return {"name": shown, "description": tool.description, "input_schema": schema}


def format_tools(tools: Iterable[OfferedTool], fmt: ToolFormat) -> ModelTools:
    """Every tool in `fmt`'s shape, less those it cannot offer (in `left_out`, with why)."""
    return ToolFormatter(keep=False).format(tools, fmt)


class ToolFormatter:
    """`format_tools` that keeps each tool's answer while the tool stays the same, and the last left-out tools."""

    _MAX_KEPT = 4096

    def __init__(self, *, keep: bool = True) -> None:
        self._keep = keep
        self._kept: dict[tuple[str, str, str], tuple[OfferedTool, dict[str, Any] | str]] = {}
        self._left_out: dict[ToolFormat, dict[str, str]] = {}

    def format(self, tools: Iterable[OfferedTool], fmt: ToolFormat) -> ModelTools:
        """Every tool in `fmt`'s shape, less those it cannot offer.

        Raises:
            ValueError: `fmt` is not a known format.
        """
        if fmt not in FORMATS:
            raise ValueError(f"unknown tool format {fmt!r}: use one of {', '.join(FORMATS)}")
        tools = list(tools)
        given = provider_names([tool.name for tool in tools], NAME_LIMITS[fmt])
        out = ModelTools(format=fmt)
        for tool in tools:
            shaped = self._one(tool, fmt, given[tool.name])
            if isinstance(shaped, str):
                out.left_out[tool.name] = shaped
                continue
            out.append(dict(shaped))  # a copy of the outer object: a caller may add to it
            out.names[given[tool.name]] = tool.name
            digest = getattr(tool, "definition_hash", None)  # `ToolInfo` has one; a caller's own tool may not
            if isinstance(digest, str):
                out.hashes[tool.name] = digest
        if self._keep:
            self._left_out[fmt] = dict(out.left_out)
        return out

    def _one(self, tool: OfferedTool, fmt: ToolFormat, name: str) -> dict[str, Any] | str:
        key = (fmt, tool.name, name)
        kept = self._kept.get(key)
        if kept is not None and _same(kept[0], tool):
            return kept[1]
        try:
            shaped: dict[str, Any] | str = format_tool(tool, fmt, name)
        except SchemaLeftOut as left:
            shaped = left.reason
        if self._keep:
            if len(self._kept) >= self._MAX_KEPT:
                self._kept.clear()
            self._kept[key] = (tool, shaped)
        return shaped

    def warnings(self) -> list[str]:
        """One line per tool a format asked for in this session left out, for the status page."""
        return [
            f"tool {name!r} is not offered to models in the {fmt} format: {reason}"
            for fmt, left in self._left_out.items()
            for name, reason in left.items()
        ]


def _same(kept: OfferedTool, tool: OfferedTool) -> bool:
    """The same tool as offered before: the catalog hands out the same schema objects until it is rebuilt."""
    return (
        kept.input_schema is tool.input_schema
        and kept.annotations is tool.annotations
        and kept.description == tool.description
        and kept.title == tool.title
    )
