"""The headers every answer of the service carries: a strict Content-Security-Policy and no framing (THREATS).

Pages load their script and style from `/static/` only; nothing inline runs, no other origin is
reached, and no page can be framed. A page may set a policy of its own (the OAuth consent page, whose
form leads to the client), which then replaces this one. Pages are not stored by caches (they show who is signed in).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CONTENT_SECURITY_POLICY", "SecurityHeaders"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]
_NO_STORE = (b"cache-control", b"no-store")


class SecurityHeaders:
    """ASGI middleware adding the headers above to every HTTP answer, and `no-store` to every HTML page."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                own_policy = any(name == b"content-security-policy" for name, _ in headers)
                headers.extend(item for item in _HEADERS if not (own_policy and item[0] == b"content-security-policy"))
                if any(name == b"content-type" and value.startswith(b"text/html") for name, value in headers):
                    headers.append(_NO_STORE)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
