"""How a registered server and its tools are shown: definitions cleaned and redacted, never a token (ORG-2, CAT-4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mcpyard.catalog import ServerTools, build_catalog, server_prefix
from mcpyard.org.hosts import OrgHost, model_name
from mcpyard.org.rules import tool_state
from mcpyard.org.services._views import DefinitionView, ServerView, ToolDetailView, ToolView
from mcpyard.org.store import Credential, RegisteredServer, Tool, facts_of

__all__ = ["CLIENT_CREDENTIALS", "server_json", "tool_detail_json", "tool_json"]

CLIENT_CREDENTIALS = "client_credentials"
"""The kind of a credential that holds a client-credentials grant (sealed as JSON; `details` shows the rest)."""


def _display(opened: OrgHost | None, server: RegisteredServer, definition: Mapping[str, Any]) -> DefinitionView:
    """A definition as people and models may read it: texts cleaned, redacted and tag-escaped (CAT-4)."""
    redactor = opened.host.view.redactor if opened is not None else None
    listing = ServerTools(server.id, server_prefix(server.name, None, 0), (definition,))
    catalog = build_catalog([listing], "__", redactor=redactor)
    entry = next(iter(catalog.entries.values()), None)
    if entry is None:  # refused by the schema bounds: nothing of it is shown but its name
        refused = next(iter(catalog.refused.values()), None)
        return {
            "description": "",
            "input_schema": {},
            "annotations": {},
            "title": None,
            "refused": refused.reason if refused is not None else "not offered",
        }
    return {
        "description": entry.description,
        "title": entry.title,
        "input_schema": dict(entry.input_schema),
        "annotations": dict(entry.annotations),
    }


def _tool_item(tool: Tool, server: RegisteredServer, shown: DefinitionView) -> ToolDetailView:
    """What every tool shows; typed as the detail, which only adds to it."""
    policy = tool.policy
    return {
        "id": tool.id,
        "server_id": server.id,
        "name": model_name(server.name, tool.name),
        "tool": tool.name,
        "description": shown["description"],
        "title": shown["title"],
        "input_schema": shown["input_schema"],
        "annotations": shown["annotations"],
        "definition_hash": tool.definition_hash,
        "state": tool_state(facts_of(tool, policy, server)),
        "policy": policy.policy if policy is not None else "off",
        "reviewed_hash": policy.reviewed_hash if policy is not None else None,
    }


def tool_json(tool: Tool, server: RegisteredServer, opened: OrgHost | None) -> ToolView:
    """A tool as the API lists it (API-6)."""
    return _tool_item(tool, server, _display(opened, server, tool.definition))


def tool_detail_json(tool: Tool, server: RegisteredServer, opened: OrgHost | None) -> ToolDetailView:
    """One tool as the API shows it: when it changed since it was reviewed, the reviewed definition beside the
    current one."""
    shown = _display(opened, server, tool.definition)
    item = _tool_item(tool, server, shown)
    if item["state"] == "changed" and tool.policy is not None:
        item["reviewed_definition"] = _display(opened, server, tool.policy.reviewed_definition)
        item["definition"] = shown
    return item


def server_json(
    server: RegisteredServer, tools: Sequence[Tool], credential: Credential | None, opened: OrgHost | None
) -> ServerView:
    """A server as the API shows it: never its token or client secret, only whether it has one, and of client
    credentials the client id and issuer (ORG-2)."""
    client = credential is not None and credential.kind == CLIENT_CREDENTIALS
    details = (credential.details or {}) if credential is not None and client else {}
    return {
        "id": server.id,
        "name": server.name,
        "url": server.url,
        "state": server.state,
        "last_error": server.last_error,
        "protocol_version": server.protocol_version,
        "has_token": credential is not None and not client,
        "has_client_credentials": client,
        "client_id": details.get("client_id") if client else None,
        "issuer": details.get("issuer") if client else None,
        "created_at": server.created_at.isoformat(),
        "refreshed_at": server.refreshed_at.isoformat() if server.refreshed_at else None,
        "tools": [tool_json(tool, server, opened) for tool in tools],
    }
