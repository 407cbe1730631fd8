"""A host that hands everything to another (`TurnHost`): the base of the facades that change only how calls run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpyard.agent._loop import TurnHost
    from mcpyard.model import ModelTools, ToolFormat
    from mcpyard.pipeline import CallResult
    from mcpyard.policy import Approver

__all__ = ["HostFacade"]


class HostFacade:
    """Forwards each part of `TurnHost` to `host`; a subclass overrides what it changes (usually `call`)."""

    def __init__(self, host: TurnHost) -> None:
        self._host = host

    @property
    def approver(self) -> Approver | None:
        return self._host.approver

    def tools_for_model(self, format: ToolFormat = "mcp", *, conversation: str | None = None) -> ModelTools:
        return self._host.tools_for_model(format, conversation=conversation)

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        conversation: str | None = None,
        approver: Approver | None = None,
        definition_hash: str | None = None,
    ) -> CallResult:
        return await self._host.call(
            name, arguments, conversation=conversation, approver=approver, definition_hash=definition_hash
        )

    def redact_json(self, value: Any) -> Any:
        return self._host.redact_json(value)
