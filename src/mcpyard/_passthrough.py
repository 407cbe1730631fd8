"""Resources and prompts of the connected servers, named like tools and redacted, passed through by the gateway."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types

from mcpyard.catalog import sanitize_text, tool_name
from mcpyard.errors import CallError

if TYPE_CHECKING:
    from mcpyard._host import Host

__all__ = [
    "PromptInfo",
    "ResourceInfo",
    "TemplateInfo",
    "complete",
    "get_prompt",
    "list_prompts",
    "list_resources",
    "list_templates",
    "on_resource_updated",
    "owner_of_uri",
    "read_resource",
    "unwatch_resource",
    "watch_resource",
]


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """A resource as offered: its URI unchanged, its name prefixed like a tool's."""

    name: str
    uri: str
    server: str
    description: str
    mime_type: str | None
    wire: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PromptInfo:
    """A prompt as offered, named `<prefix><sep><prompt>`."""

    name: str
    prompt: str
    server: str
    description: str
    arguments: tuple[Mapping[str, Any], ...]


def _connected(host: Host) -> list[tuple[str, str, Any]]:
    plan = host._plan  # a sibling module of the host
    if plan is None:
        return []
    return [
        (server_id, plan.prefixes[server_id], supervisor)
        for server_id, supervisor in host._supervisors.items()
        if supervisor.state == "connected"
    ]


def list_resources(host: Host) -> list[ResourceInfo]:
    """Every connected server's resources; a URI two servers list goes to the first (the other is not offered)."""
    redactor = host.session.redactor
    seen: set[str] = set()
    found: list[ResourceInfo] = []
    for server_id, prefix, supervisor in _connected(host):
        for wire in supervisor.resources:
            uri = str(wire.get("uri", ""))
            if not uri or uri in seen:
                continue
            seen.add(uri)
            description = wire.get("description")
            found.append(
                ResourceInfo(
                    name=tool_name(prefix, host.settings_separator, str(wire.get("name", uri))),
                    uri=uri,
                    server=server_id,
                    description=sanitize_text(redactor.redact(description)) if isinstance(description, str) else "",
                    mime_type=str(wire["mimeType"]) if "mimeType" in wire else None,
                    wire=wire,
                )
            )
    return found


def list_prompts(host: Host) -> list[PromptInfo]:
    redactor = host.session.redactor
    found: list[PromptInfo] = []
    for server_id, prefix, supervisor in _connected(host):
        for wire in supervisor.prompts:
            description = wire.get("description")
            arguments = wire.get("arguments")
            found.append(
                PromptInfo(
                    name=tool_name(prefix, host.settings_separator, str(wire.get("name", ""))),
                    prompt=str(wire.get("name", "")),
                    server=server_id,
                    description=sanitize_text(redactor.redact(description)) if isinstance(description, str) else "",
                    arguments=tuple(arguments) if isinstance(arguments, list) else (),
                )
            )
    return found


async def read_resource(host: Host, uri: str) -> types.ReadResourceResult:
    """Read a resource from the server that lists it, or whose template fits it; text redacted (SEC-3).

    Raises:
        CallError: no connected server lists it, or the server failed.
    """
    server = owner_of_uri(host, uri)
    if server is None:
        raise CallError("unknown_resource", f"no connected server lists the resource {uri!r}")
    result = await host._supervisors[server].request(lambda client: client.read_resource(uri))
    data = host.session.redactor.redact_json(result.model_dump(by_alias=True, exclude_none=True, mode="json"))
    return types.ReadResourceResult.model_validate(data)


async def get_prompt(host: Host, name: str, arguments: Mapping[str, str]) -> types.GetPromptResult:
    """Get a prompt by its offered name; messages redacted (SEC-3).

    Raises:
        CallError: no such prompt, or the server failed.
    """
    info = next((info for info in list_prompts(host) if info.name == name), None)
    if info is not None:
        prompt = info.prompt
        result = await host._supervisors[info.server].request(lambda client: client.get_prompt(prompt, dict(arguments)))
        data = host.session.redactor.redact_json(result.model_dump(by_alias=True, exclude_none=True, mode="json"))
        return types.GetPromptResult.model_validate(data)
    raise CallError("unknown_prompt", f"no prompt {name!r}; the gateway lists them")


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


def list_templates(host: Host) -> list[TemplateInfo]:
    return [
        TemplateInfo(
            name=tool_name(prefix, host.settings_separator, str(wire.get("name", ""))),
            uri_template=str(wire.get("uriTemplate", "")),
            server=server_id,
            wire=wire,
        )
        for server_id, prefix, supervisor in _connected(host)
        for wire in supervisor.templates
        if wire.get("uriTemplate")
    ]


def owner_of_uri(host: Host, uri: str) -> str | None:
    """The server that lists the resource, else the first whose template fits it."""
    for info in list_resources(host):
        if info.uri == uri:
            return info.server
    return next((info.server for info in list_templates(host) if info.matches(uri)), None)


async def complete(
    host: Host,
    ref: types.ResourceTemplateReference | types.PromptReference,
    argument: dict[str, str],
    context: dict[str, str] | None,
    *,
    visible: Callable[[str], bool] = lambda server: True,
) -> types.CompleteResult:
    """Completion candidates from the server that owns the prompt or template; values redacted.

    `visible(server)`: whether the asker may see that server's prompts and templates.

    Raises:
        CallError: no visible server owns it, or the server failed.
    """
    if isinstance(ref, types.PromptReference):
        prompts = (p for p in list_prompts(host) if visible(p.server))
        prompt = next((p for p in prompts if ref.name in (p.name, p.prompt)), None)
        if prompt is None:
            raise CallError("unknown_prompt", f"no prompt {ref.name!r} to complete")
        server, ref = prompt.server, types.PromptReference(type="ref/prompt", name=prompt.prompt)
    else:
        templates = (t for t in list_templates(host) if visible(t.server))
        template = next((t for t in templates if t.uri_template == ref.uri), None)
        if template is None:
            raise CallError("unknown_resource", f"no resource template {ref.uri!r} to complete")
        server = template.server
    result = await host._supervisors[server].request(lambda client: client.complete(ref, argument, context))
    data = host.session.redactor.redact_json(result.model_dump(by_alias=True, exclude_none=True, mode="json"))
    return types.CompleteResult.model_validate(data)


async def watch_resource(host: Host, uri: str) -> str:
    """Subscribe to a resource at the server that lists it (or whose template fits it); the server's id.

    Raises:
        CallError: no connected server lists it, or the server does not offer subscriptions.
    """
    server = owner_of_uri(host, uri)
    if server is None:
        raise CallError("unknown_resource", f"no connected server lists the resource {uri!r}")
    await host._supervisors[server].watch.watch(uri)
    return server


async def unwatch_resource(host: Host, server: str, uri: str) -> None:
    """Drop one subscription made by `watch_resource`."""
    supervisor = host._supervisors.get(server)
    if supervisor is not None:
        await supervisor.watch.unwatch(uri)


def on_resource_updated(host: Host, listener: Callable[[str, str], Awaitable[None]]) -> None:
    """Call `listener(server, uri)` when a watched resource changes."""
    host._resource_listeners.append(listener)
