"""The tools a model is offered: the connected servers' (less those a reviewed policy holds back), and `read_result`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpyard._view import HostView
from mcpyard.catalog import clean_text
from mcpyard.pipeline import FIND_TOOLS_TOOL, READ_RESULT_TOOL

__all__ = ["FIND_TOOLS_INFO", "READ_RESULT_INFO", "ToolInfo", "offered_tools"]


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """A tool as offered to the model (`Host.tools()`)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    annotations: Mapping[str, Any]
    server: str
    tool: str
    title: str | None
    definition_hash: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "annotations": self.annotations,
            "server": self.server,
            "tool": self.tool,
            "title": self.title,
            "definition_hash": self.definition_hash,
        }


def _built_in(tool: Mapping[str, Any], title: str) -> ToolInfo:
    """One of mcpyard's own tools (its JSON definition in the pipeline) as the host lists it."""
    name = str(tool["name"])
    return ToolInfo(
        name=name,
        description=str(tool["description"]),
        input_schema=tool["inputSchema"],
        annotations=tool["annotations"],
        server="mcpyard",
        tool=name,
        title=title,
        definition_hash="",
    )


READ_RESULT_INFO = _built_in(READ_RESULT_TOOL, "Read a stored result")
FIND_TOOLS_INFO = _built_in(FIND_TOOLS_TOOL, "Find tools for a task")


def offered_tools(view: HostView) -> list[ToolInfo]:
    """The model-facing tools of the connected servers (CAT-1, CAT-3, CAT-4).

    A reviewed tool that is `off`, or whose definition changed since it was reviewed, is not
    offered: its new text never reaches the model before a person reviews it (POL-5).
    """
    policies = view.policies
    return [
        ToolInfo(
            name=entry.name,
            description=entry.description,
            input_schema=entry.input_schema,
            annotations=entry.annotations,
            server=entry.server,
            tool=clean_text(entry.tool),  # a program reads it; a hostile name's terminal codes go
            title=entry.title,
            definition_hash=entry.definition_hash,
        )
        for entry in view.catalog.entries.values()
        if policies.policy(entry.server, entry.tool, entry.definition_hash) not in ("off", "changed")
    ]
