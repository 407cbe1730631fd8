"""Protocol features a server still uses though the protocol deprecated them: noted once each on the status page.

They keep working (the HTTP+SSE transport, log messages, sampling, roots); the note tells a person that
the server will need an update one day, without repeating itself at every message. Roots are declared
only to a server whose entry lists them (`roots`): a server that takes roots may let them replace the
folders its own arguments name (the reference filesystem server does), so declaring them unasked would
change what such a server may reach.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import mcp_types as types
from mcp.client.session import ClientRequestContext

__all__ = ["Deprecations"]

SamplingAnswer = types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData


class Deprecations:
    """Notes, through `warn`, each deprecated feature server `server` uses, the first time it does; its `on_log`,
    `on_sampling` and `on_roots` are the connection's callbacks, handing each message on to `log` and `sampling`, and
    answering with `roots` (the folders its entry lists)."""

    def __init__(
        self,
        server: str,
        warn: Callable[[str], None],
        log: Callable[[types.LoggingMessageNotificationParams], Awaitable[None]],
        sampling: Callable[[ClientRequestContext, types.CreateMessageRequestParams], Awaitable[SamplingAnswer]] | None,
        roots: Sequence[Path] = (),
    ) -> None:
        self._server, self._warn, self._log, self._sampling = server, warn, log, sampling
        self._roots = [types.Root(uri=root.resolve().as_uri(), name=root.name or str(root)) for root in roots]
        self._noted: set[str] = set()

    def note(self, what: str, since: str) -> None:
        if what not in self._noted:
            self._noted.add(what)
            self._warn(f"server {self._server!r} {what}, which the MCP protocol deprecated in {since}; it still works")

    def transport(self, transport: str | None) -> None:
        if transport == "sse":
            self.note("is reached over the HTTP+SSE transport", "2025-03-26 (streamable HTTP replaced it)")

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.note("sends log messages", "2026-07-28")
        await self._log(params)

    async def on_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        del context
        self.note("asks its client for roots", "2026-07-28")
        return types.ListRootsResult(roots=list(self._roots))

    async def on_sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> SamplingAnswer:
        self.note("asks its client for sampling", "2026-07-28")
        if self._sampling is None:  # declared only where it is relayed: not reached
            return types.ErrorData(code=types.METHOD_NOT_FOUND, message="sampling is not supported")
        return await self._sampling(context, params)
