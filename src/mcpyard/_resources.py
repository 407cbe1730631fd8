"""Resources, templates and prompts of the connected servers, named like tools and redacted: functions of a view."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mcpyard._view import HostView
from mcpyard.catalog import sanitize_text, tool_name
from mcpyard.connect import ServerSnapshot

__all__ = [
    "PromptInfo",
    "ResourceInfo",
    "TemplateInfo",
    "find_prompt",
    "list_prompts",
    "list_resources",
    "list_templates",
    "owner_of_uri",
]


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """A resource as offered: its URI unchanged, its name prefixed like a tool's, its description clean."""

    name: str
    uri: str
    server: str
    description: str
    mime_type: str | None
    wire: Mapping[str, Any]
    """As the server listed it."""


@dataclass(frozen=True, slots=True)
class PromptInfo:
    """A prompt as offered, named `<prefix><sep><prompt>`."""

    name: str
    prompt: str
    """Its name on its server."""
    server: str
    description: str
    arguments: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class TemplateInfo:
    """A resource template as offered: its URI template unchanged, its name prefixed like a tool's."""

    name: str
    uri_template: str
    server: str
    wire: Mapping[str, Any]

    def matches(self, uri: str) -> bool:
        """Whether a URI fits the template (each `{variable}` stands for one path segment or more text)."""
        pattern = "".join(
            "(.+?)" if part.startswith("{") else re.escape(part) for part in re.split(r"(\{[^}]*\})", self.uri_template)
        )
        return re.fullmatch(pattern, uri) is not None


def _connected(view: HostView) -> Iterator[tuple[str, str, ServerSnapshot]]:
    for server_id, snapshot in view.servers.items():
        if snapshot.connected and server_id in view.plan.prefixes:
            yield server_id, view.plan.prefixes[server_id], snapshot


def _description(view: HostView, wire: Mapping[str, Any]) -> str:
    description = wire.get("description")
    return sanitize_text(view.redactor.redact(description)) if isinstance(description, str) else ""


def list_resources(view: HostView) -> list[ResourceInfo]:
    """Every connected server's resources; a URI two servers list goes to the first (the other is not offered)."""
    separator = view.settings.tool_name_separator
    seen: set[str] = set()
    found: list[ResourceInfo] = []
    for server_id, prefix, snapshot in _connected(view):
        for wire in snapshot.resources:
            uri = str(wire.get("uri", ""))
            if not uri or uri in seen:
                continue
            seen.add(uri)
            found.append(
                ResourceInfo(
                    name=tool_name(prefix, separator, str(wire.get("name", uri))),
                    uri=uri,
                    server=server_id,
                    description=_description(view, wire),
                    mime_type=str(wire["mimeType"]) if "mimeType" in wire else None,
                    wire=wire,
                )
            )
    return found


def list_prompts(view: HostView) -> list[PromptInfo]:
    separator = view.settings.tool_name_separator
    found: list[PromptInfo] = []
    for server_id, prefix, snapshot in _connected(view):
        for wire in snapshot.prompts:
            arguments = wire.get("arguments")
            found.append(
                PromptInfo(
                    name=tool_name(prefix, separator, str(wire.get("name", ""))),
                    prompt=str(wire.get("name", "")),
                    server=server_id,
                    description=_description(view, wire),
                    arguments=tuple(arguments) if isinstance(arguments, list) else (),
                )
            )
    return found


def list_templates(view: HostView) -> list[TemplateInfo]:
    separator = view.settings.tool_name_separator
    return [
        TemplateInfo(
            name=tool_name(prefix, separator, str(wire.get("name", ""))),
            uri_template=str(wire.get("uriTemplate", "")),
            server=server_id,
            wire=wire,
        )
        for server_id, prefix, snapshot in _connected(view)
        for wire in snapshot.templates
        if wire.get("uriTemplate")
    ]


def owner_of_uri(view: HostView, uri: str) -> str | None:
    """The server that lists the resource, else the first whose template fits it."""
    for info in list_resources(view):
        if info.uri == uri:
            return info.server
    return next((info.server for info in list_templates(view) if info.matches(uri)), None)


def find_prompt(view: HostView, name: str) -> PromptInfo | None:
    """A prompt by its offered name, else by its name on its server."""
    prompts = list_prompts(view)
    return next((p for p in prompts if p.name == name), None) or next((p for p in prompts if p.prompt == name), None)
