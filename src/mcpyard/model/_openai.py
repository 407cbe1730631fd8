"""Any OpenAI-compatible chat endpoint as the model, through the official `openai` client (MOD-2).

OpenAI itself, and local servers that speak its Chat Completions API (vLLM, llama.cpp, Ollama…).
Streaming (SSE) by default: the text goes to the face as it comes, and tool calls are put back
together from their pieces. The client is made once per model and imported only when one is made.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mcpyard.config import shown_url as config_shown_url
from mcpyard.errors import McpyardError, ModelError
from mcpyard.model._backend import Reply, TextSink
from mcpyard.model._formats import ModelTools, ToolFormat
from mcpyard.model._messages import Message, ToolCall

if TYPE_CHECKING:
    import httpx2
    from openai import AsyncOpenAI

__all__ = ["OpenAIModel", "openai_messages", "read_tool_call", "shown_url"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


class OpenAIModel:
    """A model behind an OpenAI-compatible Chat Completions endpoint.

    Args:
        base_url: the endpoint, such as `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`.
        model: the model's name there.
        api_key: the key (from a saved secret); None for an endpoint that needs none.
        stream: stream the answer (SSE); else ask for it whole.
        timeout_secs: for one request.
        max_retries: of a request that failed for a reason worth trying again (the client's own rules).
        http_client: the HTTP client to send with (default: the client's own, ignoring proxies for a local
            endpoint); closed with the model.
    """

    tool_format: ToolFormat = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        stream: bool = True,
        timeout_secs: float = 120.0,
        max_retries: int = 1,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url
        self.shown_url = shown_url(base_url)
        """The address as messages show it (no user info or query, which may carry a secret)."""
        self.model = model
        self.stream = stream
        self._key = api_key
        self._timeout = timeout_secs
        self._retries = max_retries
        self._client: AsyncOpenAI | None = None
        self._http = http_client
        """The HTTP client to send with (the organization service's goes through its outbound guard)."""

    def client(self) -> AsyncOpenAI:
        if self._client is None:
            import openai

            # A local endpoint is reached directly, whatever proxy the environment names.
            local = (urlsplit(self.base_url).hostname or "") in _LOOPBACK
            self._client = openai.AsyncOpenAI(
                # The client insists on a key; an endpoint that needs none ignores this one.
                api_key=self._key or "no-key",
                base_url=self.base_url,
                timeout=self._timeout,
                max_retries=self._retries,
                http_client=self._http or openai.DefaultAsyncHttpxClient(trust_env=not local),
            )
        return self._client

    async def __aenter__(self) -> OpenAIModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close its connections (it can be used again: a new client is made)."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def complete(
        self, messages: Sequence[Message], tools: ModelTools, *, on_text: TextSink | None = None
    ) -> Reply:
        """Ask for the next message (see `Model.complete`).

        Raises:
            ModelError: the endpoint failed, refused the request, or answered in a shape that cannot be read.
        """
        import openai

        request: dict[str, Any] = {"model": self.model, "messages": openai_messages(messages)}
        if tools:
            request["tools"] = list(tools)
        try:
            if self.stream:
                return await self._streamed(request, on_text)
            answer = await self.client().chat.completions.create(**request)
        except openai.APIStatusError as exc:
            raise ModelError(self._words(exc, exc.status_code), status=exc.status_code) from None
        except openai.APITimeoutError:
            raise ModelError(f"the model at {self.shown_url} did not answer within {self._timeout:g} s") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__
            if isinstance(cause, McpyardError):  # the outbound guard's refusal says why in its own words
                raise ModelError(f"could not reach the model at {self.shown_url}: {cause}") from None
            raise ModelError(f"could not reach the model at {self.shown_url}; is it running?") from None
        except openai.OpenAIError as exc:
            raise ModelError(self._words(exc, None)) from None
        except ModelError:
            raise
        except McpyardError as exc:  # the outbound guard refused the address (NET-1) or capped the answer (NET-2)
            raise ModelError(f"could not reach the model at {self.shown_url}: {exc}") from None
        if not answer.choices:
            raise ModelError(f"the model at {self.shown_url} answered without a message")
        message = answer.choices[0].message
        calls = tuple(
            read_tool_call(call.id, call.function.name, call.function.arguments)
            for call in message.tool_calls or ()
            if call.type == "function"
        )
        text = message.content or ""
        if text and on_text is not None:
            await on_text(text)
        return Reply(text, calls)

    async def _streamed(self, request: dict[str, Any], on_text: TextSink | None) -> Reply:
        stream = await self.client().chat.completions.create(**request, stream=True)
        texts: list[str] = []
        pieces: dict[int, dict[str, Any]] = {}
        async with stream:
            async for chunk in stream:
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        texts.append(delta.content)
                        if on_text is not None:
                            await on_text(delta.content)
                    for part in delta.tool_calls or ():
                        call = pieces.setdefault(part.index, {"id": "", "name": "", "arguments": []})
                        call["id"] = part.id or call["id"]
                        if part.function is not None:
                            call["name"] += part.function.name or ""
                            call["arguments"].append(part.function.arguments or "")
        calls = tuple(
            read_tool_call(call["id"] or f"call_{index}", call["name"], "".join(call["arguments"]))
            for index, call in sorted(pieces.items())
        )
        return Reply("".join(texts), calls)

    def _words(self, exc: Exception, status: int | None) -> str:
        said = getattr(exc, "message", None) or str(exc)
        first = " ".join(str(said).split())[:300]
        if self._key:
            first = first.replace(self._key, "%API_KEY%")  # never a key in what anyone reads (SEC-2)
        where = f"the model at {self.shown_url}"
        return f"{where} answered {status}: {first}" if status is not None else f"{where} failed: {first}"


def shown_url(url: str) -> str:
    """`url` without user info, query or fragment, nor a key in its path: what a message may show of it (SEC-2)."""
    return config_shown_url(url, marked=False)


def read_tool_call(call_id: str, name: str, raw: str | None) -> ToolCall:
    """A tool call from the model's name and arguments text; arguments that are not a JSON object are its `problem`."""
    text = (raw or "").strip() or "{}"
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"the arguments are not valid JSON ({exc.msg} at character {exc.pos}); send a JSON object"
        return ToolCall(call_id, name, {}, problem)
    if not isinstance(arguments, dict):
        return ToolCall(call_id, name, {}, "the arguments must be a JSON object")
    return ToolCall(call_id, name, arguments)


def openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation in Chat Completions' shape; tool calls under the names the model gave them."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "assistant":
            shaped: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                shaped["tool_calls"] = [_call(call) for call in message.tool_calls]
            out.append(shaped)
        elif message.role == "tool":
            out.append({"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.text})
        else:
            out.append({"role": message.role, "content": message.text})
    return out


def _call(call: ToolCall) -> Mapping[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.model_name, "arguments": call.arguments_json()},
    }
