"""Resources, templates and prompts of the connected servers, named like tools and redacted: the host's read side."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp import Client

from mcpyard._reading import HostReading
from mcpyard._servers import Servers
from mcpyard._view import HostView
from mcpyard.catalog import clean_and_redact, clean_and_redact_json, clean_text, sanitize_text, tool_name
from mcpyard.connect import ServerSnapshot
from mcpyard.errors import CallError

__all__ = ["PromptInfo", "ResourceInfo", "ResourceReader", "TemplateInfo"]


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """A resource as offered: its URI unchanged, its name prefixed like a tool's, its description clean."""

    name: str
    uri: str
    server: str
    description: str
    mime_type: str | None
    wire: Mapping[str, Any]
    """As the server listed it, every text cleaned and redacted."""


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
    """As the server listed it, every text cleaned and redacted."""

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
    # Cleaned before redacting: a secret split by an invisible character is whole again (SEC-3).
    return sanitize_text(clean_and_redact(description, view.redactor.redact)) if isinstance(description, str) else ""


def _scrubbed(view: HostView, value: Any) -> Any:
    """Server data, every string in it cleaned, then redacted (CAT-4, SEC-3)."""
    return clean_and_redact_json(value, view.redactor.redact_json)


class ResourceReader(HostReading):
    """The host's read side beyond tools: resources, templates and prompts of the connected servers.

    Listings are named like tools and come from the host's view; reading, getting, completing
    and watching go to the owning server with its call timeout, and come back redacted (SEC-3).
    """

    _servers: Servers

    def on_resource_updated(self, listener: Callable[[str, str], Awaitable[None]]) -> None:
        """Call `listener(server, uri)` when a watched resource changes."""
        self._servers.listen(listener)

    def resources(self) -> list[ResourceInfo]:
        """Every connected server's resources; a URI two servers list goes to the first (the other is not offered)."""
        view = self.view
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
                        mime_type=clean_text(str(wire["mimeType"])) if "mimeType" in wire else None,
                        wire=_scrubbed(view, wire),
                    )
                )
        return found

    def prompts(self) -> list[PromptInfo]:
        """Every connected server's prompts, named `<prefix><sep><prompt>`."""
        view = self.view
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
                        arguments=tuple(_scrubbed(view, arguments)) if isinstance(arguments, list) else (),
                    )
                )
        return found

    def templates(self) -> list[TemplateInfo]:
        """Every connected server's resource templates, named like its tools."""
        view = self.view
        separator = view.settings.tool_name_separator
        return [
            TemplateInfo(
                name=tool_name(prefix, separator, str(wire.get("name", ""))),
                uri_template=str(wire.get("uriTemplate", "")),
                server=server_id,
                wire=_scrubbed(view, wire),
            )
            for server_id, prefix, snapshot in _connected(view)
            for wire in snapshot.templates
            if wire.get("uriTemplate")
        ]

    def owner_of_uri(self, uri: str) -> str | None:
        """The server that lists the resource, else the first whose template fits it."""
        for info in self.resources():
            if info.uri == uri:
                return info.server
        return next((info.server for info in self.templates() if info.matches(uri)), None)

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """Read a resource from the server that lists it (or whose template fits it), redacted (SEC-3).

        Raises:
            CallError: no connected server lists it, or that server failed.
        """
        server = self.owner_of_uri(uri)
        if server is None:
            raise CallError("unknown_resource", f"no connected server lists the resource {uri!r}")
        data = await self._request(server, lambda c: c.read_resource(uri))
        return types.ReadResourceResult.model_validate(data)

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> types.GetPromptResult:
        """Get a prompt by its offered name (`prompts()`), messages redacted (SEC-3).

        Raises:
            CallError: no such prompt, or its server failed.
        """
        info = next((info for info in self.prompts() if info.name == name), None)
        if info is None:
            raise CallError("unknown_prompt", f"no prompt {name!r}; `host.prompts()` lists them")
        prompt, given = info.prompt, dict(arguments or {})
        data = await self._request(info.server, lambda c: c.get_prompt(prompt, given))
        return types.GetPromptResult.model_validate(data)

    async def complete(
        self,
        ref: types.ResourceTemplateReference | types.PromptReference,
        argument: dict[str, str],
        context: dict[str, str] | None = None,
        *,
        visible: Callable[[str], bool] = lambda server: True,
    ) -> types.CompleteResult:
        """Completion candidates from the server that owns the prompt or template (if `visible(server)`), redacted.

        Raises:
            CallError: no visible server owns it, or that server failed.
        """
        if isinstance(ref, types.PromptReference):
            prompts = (p for p in self.prompts() if visible(p.server))
            prompt = next((p for p in prompts if ref.name in (p.name, p.prompt)), None)
            if prompt is None:
                raise CallError("unknown_prompt", f"no prompt {ref.name!r} to complete")
            server, ref = prompt.server, types.PromptReference(type="ref/prompt", name=prompt.prompt)
        else:
            templates = (t for t in self.templates() if visible(t.server))
            template = next((t for t in templates if t.uri_template == ref.uri), None)
            if template is None:
                raise CallError("unknown_resource", f"no resource template {ref.uri!r} to complete")
            server = template.server
        asked = ref
        data = await self._request(server, lambda c: c.complete(asked, argument, context))
        return types.CompleteResult.model_validate(data)

    async def watch_resource(self, uri: str) -> str:
        """Watch a resource at the server that lists it (counted per URI); returns that server's id.

        Raises:
            CallError: no connected server lists it, or the server does not offer subscriptions.
        """
        server = self.owner_of_uri(uri)
        connection = self.view.connections.get(server) if server is not None else None
        if server is None or connection is None:
            raise CallError("unknown_resource", f"no connected server lists the resource {uri!r}")
        await connection.watch(uri)
        return server

    async def refresh(self, server: str) -> ServerSnapshot:
        """List a connected server's tools again now (as if it had announced a change); its new snapshot.

        Raises:
            CallError: the server is not connected, or listing failed.
        """
        connection = self.view.connections.get(server)
        if connection is None:
            raise CallError("server_unavailable", f"server {server!r} is not running")
        await connection.relist()
        snapshot = self.view.servers.get(server)
        if snapshot is None:
            raise CallError("server_unavailable", f"server {server!r} stopped while it was listed again")
        return snapshot

    async def unwatch_resource(self, server: str, uri: str) -> None:
        """Drop one watch made by `watch_resource`."""
        if (connection := self.view.connections.get(server)) is not None:
            await connection.unwatch(uri)

    async def _request(self, server: str, send: Callable[[Client], Awaitable[types.Result]]) -> Any:
        view = self.view
        connection, spec = view.connections.get(server), view.specs.get(server)
        if connection is None or spec is None:
            raise CallError("server_unavailable", f"server {server!r} is not running")
        result = await connection.request(send, timeout_secs=spec.call_timeout_secs)
        return _scrubbed(view, result.model_dump(by_alias=True, exclude_none=True, mode="json"))
