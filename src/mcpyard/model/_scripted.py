"""A model that answers from a script, at once: for tests, benchmarks and the demo (MOD-2)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from mcpyard.errors import ModelError
from mcpyard.model._backend import Reply, TextSink
from mcpyard.model._formats import ModelTools, ToolFormat
from mcpyard.model._messages import Message, ToolCall

__all__ = ["ScriptStep", "ScriptedModel", "reply"]

ScriptStep = Reply | Callable[[Sequence[Message]], Reply]
"""A reply, or a function of the conversation so far that makes one (to answer with what a tool said)."""


def reply(text: str = "", *calls: tuple[str, dict[str, Any]]) -> Reply:
    """A reply with this text and these `(tool name, arguments)` calls, numbered `call_1`, `call_2`…"""
    return Reply(text, tuple(ToolCall(f"call_{i}", name, args) for i, (name, args) in enumerate(calls, 1)))


class ScriptedModel:
    """Answers each request with the next step of its script; past the end it fails with `model_error`.

    Attributes:
        requests: each request's messages and tools, as asked (what the model was shown).
    """

    def __init__(self, script: Iterable[ScriptStep], *, tool_format: ToolFormat = "openai") -> None:
        self._script = list(script)
        self._next = 0
        self.tool_format: ToolFormat = tool_format
        self.requests: list[tuple[list[Message], ModelTools]] = []

    async def complete(
        self, messages: Sequence[Message], tools: ModelTools, *, on_text: TextSink | None = None
    ) -> Reply:
        """The script's next reply (see `Model.complete`).

        Raises:
            ModelError: the script has no more replies.
        """
        self.requests.append((list(messages), tools))
        if self._next >= len(self._script):
            raise ModelError("the scripted model has no more replies")
        step = self._script[self._next]
        self._next += 1
        answer = step if isinstance(step, Reply) else step(messages)
        if answer.text and on_text is not None:
            await on_text(answer.text)
        return answer
