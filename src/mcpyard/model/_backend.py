"""The seam between the agent loop and a model API: the `Model` protocol and what one model request answers (MOD-2).

Backends: `OpenAIModel` (any OpenAI-compatible chat endpoint), `AnthropicModel` (where the
`anthropic` client is installed) and `ScriptedModel` (answers from a script: tests and the demo).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from mcpyard.model._formats import ModelTools, ToolFormat
from mcpyard.model._messages import Message, ToolCall

__all__ = ["Model", "Reply", "TextSink"]

TextSink = Callable[[str], Awaitable[None]]
"""Where a streaming model's text goes as it comes, one piece at a time."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What the model answered to one request: its text, and the tool calls it asks for (none: the turn's answer).

    Tool calls carry the names the model gave them; the loop maps them back to the catalog's.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


class Model(Protocol):
    """A chat model that can call tools."""

    @property
    def tool_format(self) -> ToolFormat:
        """The tool format its API takes (`Host.tools_for_model(model.tool_format)`)."""
        ...

    async def complete(
        self, messages: Sequence[Message], tools: ModelTools, *, on_text: TextSink | None = None
    ) -> Reply:
        """Ask the model for its next message; a streaming backend hands text to `on_text` as it comes.

        Raises:
            ModelError: the endpoint failed, refused the request, or answered in a shape that cannot be read.
        """
        ...
