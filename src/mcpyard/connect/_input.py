"""A server's sampling and elicitation requests, sent on to whoever is waiting on a call to it.

A server asks for input while one of its tools runs. Over the new era the SDK answers such a
request inside the call itself, so the call's own relay is known exactly. Over the handshake
era the request comes on its own, related to no call; it goes to the calls in flight to that
server, but only when they all come from one audience (one client of the gateway): a request
that could belong to either of two clients goes to neither.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import mcp_types as types
from mcp.client.context import ClientRequestContext
from mcp.shared.exceptions import MCPError

from mcpyard.connect._sendable import sendable_problem

__all__ = ["MAX_OPEN_QUESTIONS", "Clock", "InputFn", "InputRelay", "InputRouter", "WaitingCall"]

MAX_OPEN_QUESTIONS = 8
"""Questions one call may have open at once; a server asking more at a time is refused."""

InputFn = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
"""`(method, params) -> result`, both in wire form; raises `MCPError` to decline."""


@dataclass(frozen=True, slots=True)
class InputRelay:
    """Where a server's input requests go while a call runs: the caller's own client."""

    audience: str
    """Who made the call (a gateway client); requests never cross from one audience to another."""
    ask: InputFn | None
    """None: the caller cannot answer, and the server is told so."""


class Clock(Protocol):
    """A call's timeout: its deadline on the event loop's clock (infinite: stopped), as a cancel scope has it."""

    deadline: float


@dataclass(slots=True)
class WaitingCall:
    """A call in flight whose clocks stop while a person answers one of its server's questions.

    `scope` is the call's own timeout (`call_timeout_secs`, restarted by progress); `total`, when the
    call has one, is its total deadline (NET-2). While a person answers, neither runs: the call's own
    clock starts again in full afterwards, and the total deadline goes on with the time it had left, so
    the time the server itself takes stays bounded (how long a person may take is the asker's bound).
    """

    relay: InputRelay
    scope: Clock
    timeout_secs: float | None
    total: anyio.CancelScope | None = None
    asking: int = 0
    """Questions of this call a person is answering: its clock runs again when the last is answered."""
    total_left: float = math.inf
    """While paused: what was left of the total deadline when the first question came."""

    def pause(self) -> None:
        if self.asking == 0 and self.total is not None:
            self.total_left = max(0.0, self.total.deadline - anyio.current_time())
            self.total.deadline = math.inf
        self.asking += 1
        self.scope.deadline = math.inf

    def restart(self) -> None:
        """Progress: the clock starts again, unless a person is answering one of the call's questions."""
        if self.asking == 0 and self.timeout_secs is not None:
            self.scope.deadline = anyio.current_time() + self.timeout_secs

    def resume(self) -> None:
        self.asking -= 1
        if self.asking:
            return
        now = anyio.current_time()
        if self.timeout_secs is not None:
            self.scope.deadline = now + self.timeout_secs
        if self.total is not None:
            self.total.deadline = now + self.total_left
            self.total_left = math.inf


_CURRENT: contextvars.ContextVar[WaitingCall | None] = contextvars.ContextVar("mcpyard_input_call", default=None)


class _Registered(contextlib.AbstractContextManager[WaitingCall]):
    """A call in the router's list, and the current one, for the block (a class: every tool call opens one)."""

    __slots__ = ("_entry", "_token", "_waiting")

    def __init__(self, waiting: list[WaitingCall], entry: WaitingCall) -> None:
        self._waiting = waiting
        self._entry = entry

    def __enter__(self) -> WaitingCall:
        self._waiting.append(self._entry)
        self._token = _CURRENT.set(self._entry)
        return self._entry

    def __exit__(self, *exc_info: object) -> None:
        _CURRENT.reset(self._token)
        self._waiting.remove(self._entry)


class InputRouter:
    """The calls in flight to one server, and the SDK callbacks that send its input requests on."""

    def __init__(self, server_id: str) -> None:
        self._server_id = server_id
        self._waiting: list[WaitingCall] = []

    def waiting(
        self,
        relay: InputRelay,
        scope: Clock,
        timeout_secs: float | None,
        total: anyio.CancelScope | None = None,
    ) -> contextlib.AbstractContextManager[WaitingCall]:
        """Register a call for the time it runs; `scope` is its timeout and `total` its total deadline, both paused
        while a person answers."""
        return _Registered(self._waiting, WaitingCall(relay, scope, timeout_secs, total))

    async def sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        del context
        answer = await self._relay("sampling/createMessage", params)
        if isinstance(answer, types.ErrorData):
            return answer
        if params.tools or params.tool_choice:
            return types.CreateMessageResultWithTools.model_validate(answer)
        return types.CreateMessageResult.model_validate(answer)

    async def elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        del context
        answer = await self._relay("elicitation/create", params)
        if isinstance(answer, types.ErrorData):
            return answer
        return types.ElicitResult.model_validate(answer)

    def _targets(self) -> list[WaitingCall] | str:
        """The calls the request may belong to (the one that answers comes last), or why there are none."""
        current = _CURRENT.get()
        if current is not None:
            return [current]
        if not self._waiting:
            return "no call to this server is in flight, so no client is there to answer"
        if len({entry.relay.audience for entry in self._waiting}) > 1:
            return (
                "calls from several clients are in flight to this server, and the request does not say "
                "which call it belongs to; mcpyard sends it to none of them"
            )
        return list(self._waiting)

    async def _relay(self, method: str, params: types.CreateMessageRequestParams | types.ElicitRequestParams) -> Any:
        targets = self._targets()
        if isinstance(targets, str):
            return types.ErrorData(code=types.INVALID_REQUEST, message=f"mcpyard cannot relay {method}: {targets}")
        ask = targets[-1].relay.ask
        if targets[-1].asking >= MAX_OPEN_QUESTIONS:
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message=f"mcpyard cannot relay {method}: {MAX_OPEN_QUESTIONS} questions of this call are open already",
            )
        if ask is None:
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message=f"mcpyard cannot relay {method}: the caller of this tool does not take such requests",
            )
        # The clocks stop while a person answers (of every call it may be about), and start again after.
        for target in targets:
            target.pause()
        try:
            answer = await ask(method, params.model_dump(by_alias=True, exclude_none=True, mode="json"))
        except MCPError as exc:
            return exc.error
        except Exception as exc:  # the client left, or answered with something else: the server hears why
            reason = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"mcpyard could not relay {method}: {reason}")
        finally:
            for target in targets:
                target.resume()

        # The answer is encoded inside the server's connection, which every caller shares: what cannot be
        # encoded (a lone surrogate someone typed) is refused here, so the connection never fails on it.
        if (problem := sendable_problem(dict(answer), root="answer")) is not None:
            return types.ErrorData(
                code=types.INVALID_PARAMS,
                message=f"mcpyard could not relay {method}: the answer cannot be sent: {problem}",
            )
        return answer
