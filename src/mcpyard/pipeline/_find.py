"""The built-in `find_tools(query, limit)`: the tools of a large catalog that match what the model asks for (MOD-4).

When a host offers more tools than its budget, the model is offered `find_tools` (and the tools its
servers name in `always_offer`) instead of every definition. A search answers with the best
matches' full definitions, ranked by `ToolIndex` (lexical, deterministic), and each tool it names
is offered from then on in that conversation (`FoundTools`). Only tools the host would offer are
searched: one a policy turned off, or whose definition changed since it was reviewed, never is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcpyard.catalog import ToolIndex
from mcpyard.pipeline._call import CallRequest, Refusal
from mcpyard.pipeline._result import CallResult

if TYPE_CHECKING:
    from mcpyard import HostView
    from mcpyard.config import ToolSearchSettings
    from mcpyard.pipeline._session import Session

__all__ = [
    "DEFAULT_LIMIT",
    "FIND_TOOLS",
    "FIND_TOOLS_TOOL",
    "MAX_LIMIT",
    "find_tools",
    "over_budget",
    "search",
    "searchable",
]

FIND_TOOLS = "find_tools"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
MAX_QUERY_CHARS = 1000
FIND_TOOLS_TOOL: Mapping[str, Any] = {
    "name": FIND_TOOLS,
    "description": (
        "Find tools for a task. Many tools are available but not listed: describe what you want to do in a few "
        "words (for example 'save a note' or 'current time in Tokyo'); the best-matching tools' definitions come "
        "back, and they can be called from then on."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What you want to do, in a few words."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True, "idempotentHint": True},
}


def over_budget(listed: Sequence[Mapping[str, Any]], settings: ToolSearchSettings) -> bool:
    """Whether a model is offered `find_tools` in place of `listed` (the tools' definitions as the model would read
    them, `read_result` left out): the settings say always, or in `auto` either budget is passed (the tokens
    estimated at 4 characters each, on the compact JSON)."""
    if settings.mode != "auto":
        return settings.mode == "always"
    if len(listed) > settings.max_tools:
        return True
    return len(json.dumps(listed, separators=(",", ":"))) // 4 > settings.max_tokens


def searchable(view: HostView) -> list[dict[str, Any]]:
    """The tools a search may name: those the host offers (not `off`, not changed since reviewed), MCP form."""
    policies = view.policies
    return [
        {
            "name": entry.name,
            "title": entry.title,
            "description": entry.description,
            "inputSchema": entry.input_schema,
        }
        for entry in view.catalog.entries.values()
        if policies.policy(entry.server, entry.tool, entry.definition_hash) not in ("off", "changed")
    ]


def _index(view: HostView, session: Session) -> tuple[ToolIndex, dict[str, dict[str, Any]]]:
    """The search index of what `view` offers now (kept until the view or a policy changes)."""
    version = getattr(view.policies, "version", None)
    kept = session.search_index
    if kept is not None and kept[0] is view and kept[1] == version:
        return kept[2], kept[3]
    tools = searchable(view)
    index = ToolIndex(tools)
    by_name = {tool["name"]: tool for tool in tools}
    session.search_index = (view, version, index, by_name)
    return index, by_name


async def find_tools(view: HostView, session: Session, request: CallRequest) -> CallResult | Refusal:
    """`find_tools(query, limit)`: the best matches' definitions, each offered from now on in this conversation."""
    index, by_name = _index(view, session)
    answer = search(index, by_name, request.arguments)
    if not isinstance(answer, Refusal):
        session.found.add(request.conversation, answer.structured["found"])
    return answer


def search(
    index: ToolIndex, by_name: Mapping[str, Mapping[str, Any]], arguments: Mapping[str, Any]
) -> CallResult | Refusal:
    """What `find_tools` answers over `index` (whose tools `by_name` holds in MCP form): the found definitions, and
    their names in `structured["found"]`, best first; or why the arguments are refused."""
    query = arguments.get("query")
    limit = arguments.get("limit", DEFAULT_LIMIT)
    if not isinstance(query, str) or not query.strip():
        return Refusal("invalid_arguments", "find_tools takes query: a few words saying what you want to do")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        return Refusal("invalid_arguments", f"find_tools: limit must be a whole number from 1 to {MAX_LIMIT}")
    names = index.search(query[:MAX_QUERY_CHARS], limit)
    definitions = [{k: v for k, v in by_name[name].items() if v is not None} for name in names]
    if definitions:
        found = f"{len(definitions)} tools" if len(definitions) > 1 else "1 tool"
        text = f"{found} found; each can be called now:\n" + json.dumps(definitions, indent=1)
    else:
        text = "no tool matches; try other words (what you want done, not how)"
    content = [{"type": "text", "text": text}]
    structured = {"found": names}
    return CallResult(ok=True, text=text, content=content, structured=structured, tool=FIND_TOOLS, server=None)
