"""An OpenAI-compatible chat endpoint of ours, on 127.0.0.1: scripted replies, streaming (SSE) or not (MOD-2).

It also answers Anthropic's Messages API (`/v1/messages`, streamed as that API streams) at
`anthropic_url`, from the same script.

`serve_model(replies)` runs it on a thread of its own (so a test's event loop, or a `mcpyard chat`
in another process, talks to it over real HTTP) and yields the `ModelFixture`: its base URL, and
every request it received (body and headers), for tests to read what the model was sent.

A reply is a dict: `text` (the assistant's text), `quote` (a text whose `{result}` becomes what the model
read of the last call, as a model quoting a tool's result writes it), `tool_calls` (a list of
`{name, arguments}`, with `arguments` an object or a raw string), or `status` + `error` (the endpoint
fails). Past the end of the script the endpoint answers `(no more replies)`.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = ["ModelFixture", "serve_model"]


def _ascii_json(content: Any) -> Response:
    """JSON escaped as ASCII, as most endpoints write it: a lone surrogate the model wrote arrives as `\\ud800`."""
    return Response(json.dumps(content), media_type="application/json")


class ModelFixture:
    """The endpoint's script and what it was asked."""

    def __init__(self, replies: Sequence[dict[str, Any]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.base_url = ""
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.completions, methods=["POST"]),
                Route("/v1/messages", self.anthropic_messages, methods=["POST"]),
            ]
        )

    @property
    def anthropic_url(self) -> str:
        """The base URL Anthropic's client takes (it adds `/v1/messages`)."""
        return self.base_url.removesuffix("/v1")

    def tool_messages(self, request: int = -1) -> list[dict[str, Any]]:
        """The `tool` messages of one request (the last by default): what the model read of each call."""
        return [m for m in self.requests[request]["messages"] if m.get("role") == "tool"]

    async def completions(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        reply: dict[str, Any] = self.replies.pop(0) if self.replies else {"text": "(no more replies)"}
        if "quote" in reply:
            read = self.tool_messages()[-1]["content"]
            assert isinstance(read, str), "a tool's result reaches the model as text"
            reply = {**reply, "text": str(reply["quote"]).replace("{result}", read)}
        if "status" in reply:
            return JSONResponse(
                {"error": {"message": reply.get("error", "failed"), "type": "server_error"}}, int(reply["status"])
            )
        calls = [
            {
                "id": call.get("id", f"call_{len(self.requests)}_{index}"),
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call["arguments"], str)
                    else json.dumps(call["arguments"]),
                },
            }
            for index, call in enumerate(reply.get("tool_calls", ()))
        ]
        text = reply.get("text")
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = calls
            return _ascii_json(
                {
                    "id": f"chatcmpl-{len(self.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", ""),
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            )
        return StreamingResponse(self.chunks(body, text, calls, finish), media_type="text/event-stream")

    async def chunks(
        self, body: dict[str, Any], text: str | None, calls: list[dict[str, Any]], finish: str
    ) -> AsyncIterator[str]:
        def chunk(delta: dict[str, Any], reason: str | None = None) -> str:
            payload = {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body.get("model", ""),
                "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
            }
            return f"data: {json.dumps(payload)}\n\n"

        yield chunk({"role": "assistant", "content": ""})
        words = (text or "").split(" ")
        for index, word in enumerate(words if text else ()):
            yield chunk({"content": word if index == 0 else f" {word}"})
        for index, call in enumerate(calls):
            arguments = call["function"]["arguments"]
            half = len(arguments) // 2
            opening = {"index": index, "id": call["id"], "type": "function"}
            yield chunk({"tool_calls": [{**opening, "function": {"name": call["function"]["name"], "arguments": ""}}]})
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[:half]}}]})
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]})
        yield chunk({}, finish)
        yield "data: [DONE]\n\n"

    async def anthropic_messages(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        reply: dict[str, Any] = self.replies.pop(0) if self.replies else {"text": "(no more replies)"}
        if "status" in reply:
            error = {"type": "error", "error": {"type": "api_error", "message": reply.get("error", "failed")}}
            return JSONResponse(error, int(reply["status"]))
        return StreamingResponse(self.anthropic_events(body, reply), media_type="text/event-stream")

    async def anthropic_events(self, body: dict[str, Any], reply: dict[str, Any]) -> AsyncIterator[str]:
        def event(kind: str, **data: Any) -> str:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

        message = {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        yield event("message_start", message=message)
        index = 0
        if reply.get("text"):
            yield event("content_block_start", index=index, content_block={"type": "text", "text": ""})
            for word in str(reply["text"]).split(" "):
                delta = {"type": "text_delta", "text": word if word == reply["text"].split(" ")[0] else f" {word}"}
                yield event("content_block_delta", index=index, delta=delta)
            yield event("content_block_stop", index=index)
            index += 1
        calls = reply.get("tool_calls", ())
        for number, call in enumerate(calls):
            block = {
                "type": "tool_use",
                "id": f"toolu_{len(self.requests)}_{number}",
                "name": call["name"],
                "input": {},
            }
            yield event("content_block_start", index=index, content_block=block)
            arguments = json.dumps(call["arguments"])
            for part in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :]):
                yield event(
                    "content_block_delta", index=index, delta={"type": "input_json_delta", "partial_json": part}
                )
            yield event("content_block_stop", index=index)
            index += 1
        stop = "tool_use" if calls else "end_turn"
        yield event("message_delta", delta={"stop_reason": stop, "stop_sequence": None}, usage={"output_tokens": 1})
        yield event("message_stop")


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@contextmanager
def serve_model(replies: Sequence[dict[str, Any]] = ()) -> Iterator[ModelFixture]:
    """Serve a `ModelFixture` with these replies on 127.0.0.1 (a port of its own) until the block ends."""
    fixture = ModelFixture(replies)
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.bind(("127.0.0.1", 0))
    listening.listen(16)
    fixture.base_url = f"http://127.0.0.1:{listening.getsockname()[1]}/v1"
    server = _Server(uvicorn.Config(fixture.app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    try:
        if not server.ready.wait(20):
            raise RuntimeError("the model fixture did not start within 20 s")
        yield fixture
    finally:
        server.should_exit = True
        thread.join(20)
        listening.close()
