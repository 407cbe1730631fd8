"""Anthropic's Messages API as the model, through the official `anthropic` client where it is installed (MOD-2).

`pip install 'mcpyard[anthropic]'` brings the client; without it, making an `AnthropicModel`
says so in one line. Its text streams to the face as it comes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcpyard.errors import ModelError, UsageError
from mcpyard.model._backend import Reply, TextSink
from mcpyard.model._formats import ModelTools, ToolFormat
from mcpyard.model._messages import Message, ToolCall

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["AnthropicModel", "anthropic_messages"]


class AnthropicModel:
    """A model behind Anthropic's Messages API.

    Args:
        model: the model's name.
        api_key: the key (from a saved secret).
        base_url: another address for the same API (default: Anthropic's).
        max_tokens: the longest answer asked for.
        timeout_secs: for one request.

    Raises:
        UsageError: the `anthropic` client is not installed.
    """

    tool_format: ToolFormat = "anthropic"

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 4096,
        timeout_secs: float = 120.0,
    ) -> None:
        try:
            import anthropic
        except ImportError:
            raise UsageError("the anthropic client is not installed: pip install 'mcpyard[anthropic]'") from None
        self.model, self.base_url, self.max_tokens = model, base_url, max_tokens
        self._key = api_key
        self._client: AsyncAnthropic = anthropic.AsyncAnthropic(
            api_key=api_key or "no-key", base_url=base_url, timeout=timeout_secs, max_retries=1
        )

    async def close(self) -> None:
        await self._client.close()

    async def complete(
        self, messages: Sequence[Message], tools: ModelTools, *, on_text: TextSink | None = None
    ) -> Reply:
        """Ask for the next message (see `Model.complete`).

        Raises:
            ModelError: the API failed, refused the request, or answered in a shape that cannot be read.
        """
        import anthropic

        system = "\n\n".join(m.text for m in messages if m.role == "system" and m.text)
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": anthropic_messages(messages),
        }
        if system:
            request["system"] = system
        if tools:
            request["tools"] = list(tools)
        try:
            async with self._client.messages.stream(**request) as stream:
                async for text in stream.text_stream:
                    if on_text is not None and text:
                        await on_text(text)
                final = await stream.get_final_message()
        except anthropic.APIStatusError as exc:
            raise ModelError(self._words(exc, exc.status_code), status=exc.status_code) from None
        except anthropic.APIConnectionError:
            raise ModelError("could not reach Anthropic's API; check the network and the base URL") from None
        except anthropic.AnthropicError as exc:
            raise ModelError(self._words(exc, None)) from None
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in final.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(ToolCall(block.id, block.name, dict(block.input)))
        return Reply("".join(texts), tuple(calls))

    def _words(self, exc: Exception, status: int | None) -> str:
        said = " ".join(str(getattr(exc, "message", None) or exc).split())[:300]
        if self._key:
            said = said.replace(self._key, "%API_KEY%")  # never a key in what anyone reads (SEC-2)
        return f"Anthropic's API answered {status}: {said}" if status is not None else f"Anthropic's API failed: {said}"


def anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation in the Messages API's shape: system text apart, tool results as the user's blocks."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.text,
                "is_error": message.is_error,
            }
            last = out[-1] if out else None
            # Results of calls asked together go back together, in one user message.
            if last is not None and last["role"] == "user" and isinstance(last["content"], list):
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif message.role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": message.text}] if message.text else []
            blocks += [
                {"type": "tool_use", "id": call.id, "name": call.model_name, "input": dict(call.arguments)}
                for call in message.tool_calls
            ]
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]})
        else:
            out.append({"role": "user", "content": message.text})
    return out
