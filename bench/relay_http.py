"""The floor of any HTTP front in Python before a stdio server: a bare JSON relay on uvicorn.

Run as `python bench/relay_http.py PORT`: it starts `bench/server.py` over stdio and serves
`POST /mcp` on 127.0.0.1:PORT with uvicorn (httptools, uvloop: the stack of `mcpyard serve
--transport http`) and a plain ASGI callable. Each body is read as JSON and written to the
server as one line; a request's answer is picked off the server's output by its id, read as
JSON and written back as the response's JSON body; a notification is answered 202. No session,
no rule, nothing kept: `gateway.py --sides ...,relay-http` measures what one more process with
an HTTP front costs by itself.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from typing import Any

import uvicorn

from _common import SERVER_SCRIPT

LIMIT = 64 * 1024 * 1024

Scope = dict[str, Any]
Receive = Any
Send = Any


class Relay:
    def __init__(self) -> None:
        self.server: asyncio.subprocess.Process | None = None
        self.waiting: dict[object, asyncio.Future[dict[str, Any]]] = {}

    async def start(self) -> None:
        pipe = asyncio.subprocess.PIPE
        self.server = await asyncio.create_subprocess_exec(
            sys.executable, str(SERVER_SCRIPT), stdin=pipe, stdout=pipe, limit=LIMIT
        )
        asyncio.get_running_loop().create_task(self.down())

    async def down(self) -> None:
        assert self.server is not None
        assert self.server.stdout is not None
        while line := await self.server.stdout.readline():
            message = json.loads(line)
            waiter = self.waiting.pop(message.get("id"), None) if "method" not in message else None
            if waiter is not None and not waiter.done():
                waiter.set_result(message)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["method"] != "POST":
            await send({"type": "http.response.start", "status": 405, "headers": [(b"allow", b"POST")]})
            await send({"type": "http.response.body", "body": b""})
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        message = json.loads(body)
        assert self.server is not None
        assert self.server.stdin is not None
        if "id" not in message or "method" not in message:
            self.server.stdin.write(json.dumps(message).encode() + b"\n")
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        waiter = self.waiting[message["id"]] = asyncio.get_running_loop().create_future()
        self.server.stdin.write(json.dumps(message).encode() + b"\n")
        answer = json.dumps(await waiter).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})


async def main(port: int) -> None:
    relay = Relay()
    await relay.start()
    config = uvicorn.Config(relay, host="127.0.0.1", port=port, log_level="warning", lifespan="off", http="httptools")
    await uvicorn.Server(config).serve()


if __name__ == "__main__":
    if importlib.util.find_spec("uvloop") is not None:
        import uvloop

        uvloop.run(main(int(sys.argv[1])))
    else:
        asyncio.run(main(int(sys.argv[1])))
