"""What a supervisor does when its connection is interrupted: a sign-in that waits on a person, a stdio
server that stays silent after a cancellation, a message that cannot be read (AUTH-2, CALL-2, CONN-3, ERR-1)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc
from mcp import Client

from mcpyard.auth import SignIn
from mcpyard.config import ServerSpec
from mcpyard.connect._errors import unreadable_message
from mcpyard.connect._snapshot import ServerSnapshot, State
from mcpyard.connect._stdio import StdioTransport
from mcpyard.connect._transports import Connector

__all__ = ["CANCEL_GRACE", "GONE", "Interruptions"]

CANCEL_GRACE = 2.0
"""How long a stdio server has to show it is alive after a cancellation before it is killed (CALL-2)."""
GONE: dict[str, Any] = {"tools": (), "resources": (), "templates": (), "prompts": (), "instructions": None}
"""What a server that stopped no longer offers."""


class Interruptions:
    """The supervisor's steps for interruptions; it holds the state they read and change."""

    _spec: ServerSpec
    _connector: Connector
    _snapshot: ServerSnapshot
    _sign_in: SignIn | None
    _client: Client | None
    _settled: anyio.Event
    _stop: anyio.Event
    _end: anyio.Event
    _restart: bool
    _attempt_connected: bool
    _connect_scope: anyio.CancelScope | None
    _stdio: StdioTransport | None
    _tg: anyio.abc.TaskGroup | None
    _broken: str | None
    _redact: Callable[[str], str]
    _publish: Callable[..., None]

    def _waiting_for_sign_in(self, url: str) -> None:
        del url  # the page address to show is the sign-in's own, checked one
        # Sign-in waits on a person: no connect deadline, and the other servers are not held back (CONN-3).
        if self._connect_scope is not None and not self._attempt_connected:
            self._connect_scope.deadline = math.inf
        self._settled.set()
        self._publish(
            state=State.WAITING_FOR_SIGN_IN,
            reason="waiting for sign-in: open the page below, or paste the address it sends you to",
            sign_in_url=self._sign_in.page_url if self._sign_in is not None else None,
        )

    def _sign_in_answered(self) -> None:
        if self._attempt_connected:
            state = State.CONNECTED  # a sign-in asked for during the session (a rejected token, more scope)
        else:
            if self._connect_scope is not None:
                self._connect_scope.deadline = anyio.current_time() + self._spec.connect_timeout_secs
            state = State.CONNECTING
        if self._sign_in is not None and self._connector.auth_store is not None and self._tg is not None:
            port, store, server_id = self._sign_in.port, self._connector.auth_store, self._spec.id

            async def remember() -> None:
                await store.update(server_id, redirect_port=port)

            self._tg.start_soon(remember)
        self._publish(state=state, reason=None, sign_in_url=None)

    def hurry(self) -> None:
        """The host was interrupted (Ctrl-C): a stdio server that stops gets short waits, not its full ones (CONN-5)."""
        if self._stdio is not None:
            self._stdio.hurry()

    def complete_sign_in(self, redirect_url: str) -> bool:
        """A redirect address pasted back by a person on a machine with no browser (AUTH-2)."""
        return self._sign_in is not None and self._sign_in.complete(redirect_url)

    def _after_abandon(self, client: Client) -> None:
        """A stdio server has 2 s after a cancellation to show it is alive, else it is restarted (CALL-2)."""
        stdio = self._stdio
        if stdio is None or self._client is not client or self._tg is None:
            return

        async def probe() -> None:
            with anyio.move_on_after(CANCEL_GRACE) as waited:
                with contextlib.suppress(Exception):
                    await client.list_tools()
            if waited.cancelled_caught and self._stdio is stdio and not self._stop.is_set():
                self._restart = True
                self._publish(
                    state=State.CONNECTING,
                    note=f"restarted: did not answer {CANCEL_GRACE:g} s after a cancellation, so mcpyard killed it",
                )
                stdio.kill()
                self._end.set()

        self._tg.start_soon(probe)

    def _unreadable(self, problem: Exception) -> None:
        """A message from the server cannot be read: its answer never comes, so end the connection now, saying why."""
        if self._broken is not None:
            return
        reason = self._broken = self._redact(unreadable_message(problem))
        if not self._attempt_connected:
            if self._connect_scope is not None:
                self._connect_scope.cancel()
        elif self._stdio is not None:
            # Stopped at once, its tools gone (CONN-4): the call waiting on the answer learns why.
            self._stdio.process.problem = reason
            self._publish(state=State.STOPPED, reason=reason, **GONE)
            self._stdio.kill()
        else:
            self._end.set()  # a remote server is reconnected with backoff, the reason shown meanwhile
