"""Tool search over a selection: a turn's model is offered `find_tools` in place of the tools it may use (MOD-4).

The host searches everything it offers (`Host.tools_for_model`); a turn that may use only some tools (an
organization's teammate) searches only those: `SearchedSelection` answers `find_tools` over its
selection and offers what was found, and every tool of the selection stays callable by name. What
was found is the caller's to keep for the conversation's next turns (`found`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mcpyard._tools import FIND_TOOLS_INFO
from mcpyard.agent._facade import HostFacade
from mcpyard.catalog import ToolIndex
from mcpyard.model import ModelTools, ToolFormat, format_tool, tool_name
from mcpyard.pipeline import FIND_TOOLS, READ_RESULT, CallResult, Refusal, search

if TYPE_CHECKING:
    from mcpyard.agent._loop import TurnHost
    from mcpyard.policy import Approver

__all__ = ["SearchedSelection"]


class SearchedSelection(HostFacade):
    """A turn's host whose model is offered `find_tools`, `read_result` and the tools found so far, out of
    `offered` (the selection in the model's format); `definitions` are the same tools in MCP form, by catalog name
    (what a search reads and answers with)."""

    def __init__(
        self,
        host: TurnHost,
        offered: ModelTools,
        definitions: Mapping[str, Mapping[str, Any]],
        found: Iterable[str] = (),
    ) -> None:
        super().__init__(host)
        self._offered = offered
        self._by_name = {name: dict(tool) for name, tool in definitions.items() if name != READ_RESULT}
        self._index: ToolIndex | None = None
        self.found: list[str] = list(dict.fromkeys(name for name in found if name in self._by_name))
        """The catalog names found so far (those given that are still in the selection, then this turn's)."""

    def tools_for_model(self, format: ToolFormat = "mcp", *, conversation: str | None = None) -> ModelTools:
        """`find_tools`, `read_result` and the tools found, in the selection's format (the one its turn's model
        reads); every tool of the selection keeps its name, so one not found yet is called all the same."""
        offered = self._offered
        if format != offered.format:
            raise ValueError(f"this turn's tools are in the {offered.format!r} format, not {format!r}")
        keep = {READ_RESULT, *self.found}
        listed = [dict(tool) for tool in offered if offered.catalog_name(tool_name(tool)) in keep]
        return ModelTools(
            [format_tool(FIND_TOOLS_INFO, offered.format), *listed],
            format=offered.format,
            names={**offered.names, FIND_TOOLS: FIND_TOOLS},
            left_out=offered.left_out,
            hashes=offered.hashes,
        )

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        conversation: str | None = None,
        approver: Approver | None = None,
        definition_hash: str | None = None,
    ) -> CallResult:
        if name != FIND_TOOLS:
            return await self._host.call(
                name, arguments, conversation=conversation, approver=approver, definition_hash=definition_hash
            )
        if self._index is None:  # built at the first search: a turn that never searches never pays for it
            self._index = ToolIndex(list(self._by_name.values()))
        answer = search(self._index, self._by_name, arguments or {})
        if isinstance(answer, Refusal):
            return CallResult.refusal(answer.code, answer.message, tool=FIND_TOOLS)
        self.found.extend(name for name in answer.structured["found"] if name not in self.found)
        return answer
