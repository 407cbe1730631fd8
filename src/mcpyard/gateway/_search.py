"""Tool search through the gateway (`serve --tool-search`, MOD-4): a client is offered `find_tools` and what it found.

Past the host's `[tool_search]` budget, a client's `tools/list` holds `find_tools`, `read_result`,
the shared tools their servers name in `always_offer`, and the tools that client found; every
shared tool stays callable by name. Only shared tools are searched (an unshared one is never named
to a client). When a client finds tools it was not offered yet, it is sent
`notifications/tools/list_changed` (handshake era) or a change on its listen stream (new era).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from fnmatch import fnmatchcase
from typing import Any

import anyio

from mcpyard import ToolInfo
from mcpyard._tools import FIND_TOOLS_INFO
from mcpyard.catalog import ToolIndex
from mcpyard.config import ServerSpec, ToolSearchSettings
from mcpyard.gateway._offered import Offer
from mcpyard.pipeline import FIND_TOOLS, READ_RESULT, CallResult, FoundTools, Refusal, over_budget, search

__all__ = ["GatewaySearch"]


class GatewaySearch:
    """What each client found, and the search index of the shared tools."""

    def __init__(self) -> None:
        self._found = FoundTools()
        self._index: tuple[Offer, ToolIndex, dict[str, dict[str, Any]]] | None = None
        self._grown = anyio.Event()
        self._grew: set[str] = set()

    @staticmethod
    def applies(shared: Offer, settings: ToolSearchSettings) -> bool:
        """Whether the shared tools pass the budget (or the settings say always, or never)."""
        return over_budget([_wire(tool) for tool in shared.tools if tool.name != READ_RESULT], settings)

    def offer(self, shared: Offer, conversation: str, servers: Iterable[ServerSpec]) -> Offer:
        """What one client is offered: `find_tools`, `read_result`, `always_offer`'s tools and what it found."""
        globs = {spec.id: spec.always_offer for spec in servers if spec.always_offer}
        found = set(self._found.of(conversation))
        kept = tuple(
            tool
            for tool in shared.tools
            if tool.name == READ_RESULT
            or tool.name in found
            or any(fnmatchcase(tool.tool, glob) for glob in globs.get(tool.server, ()))
        )
        return Offer(
            (*shared.basis, conversation, len(found)),
            (FIND_TOOLS_INFO, *kept),
            {FIND_TOOLS: FIND_TOOLS, **shared.names},
            {FIND_TOOLS: FIND_TOOLS_INFO, **shared.by_catalog},
        )

    def call(self, shared: Offer, conversation: str, arguments: dict[str, Any]) -> CallResult:
        """`find_tools` over the shared tools; what it finds is this client's from now on."""
        index, by_name = self._indexed(shared)
        answer = search(index, by_name, arguments)
        if isinstance(answer, Refusal):
            return CallResult.refusal(answer.code, answer.message, tool=FIND_TOOLS)
        found = [shared.names[name] for name in answer.structured["found"]]  # the catalog's names
        if self._found.add(conversation, found):
            self._grew.add(conversation)
            self._grown.set()
        return answer

    async def grown(self) -> Callable[[Hashable], bool]:
        """Wait until some client found new tools; which clients (by conversation) that concerns."""
        await self._grown.wait()
        grew, self._grew, self._grown = self._grew, set(), anyio.Event()
        return lambda audience: audience in grew

    def _indexed(self, shared: Offer) -> tuple[ToolIndex, dict[str, dict[str, Any]]]:
        if self._index is not None and self._index[0] is shared:
            return self._index[1], self._index[2]
        # Under the names the client sees (`--no-prefix` offers servers' own names).
        public = {catalog: name for name, catalog in shared.names.items()}
        tools = [{**_wire(tool), "name": public[tool.name]} for tool in shared.tools if tool.name != READ_RESULT]
        by_name = {tool["name"]: tool for tool in tools}
        index = ToolIndex(tools)
        self._index = (shared, index, by_name)
        return index, by_name


def _wire(tool: ToolInfo) -> dict[str, Any]:
    return {"name": tool.name, "title": tool.title, "description": tool.description, "inputSchema": tool.input_schema}
