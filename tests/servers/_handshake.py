"""A fixture server's streamable HTTP app as a server of the handshake era only: `server/discover` is "method not
found", so clients fall back to `initialize`."""

from __future__ import annotations

import json

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["handshake_only"]


def handshake_only(app: ASGIApp) -> ASGIApp:
    """The app, answering `server/discover` with "method not found": clients fall back to the handshake era."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if isinstance(request, dict) and request.get("method") == "server/discover":
            error = {"code": -32601, "message": "Method not found"}
            await JSONResponse({"jsonrpc": "2.0", "id": request.get("id"), "error": error})(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return wrapped
