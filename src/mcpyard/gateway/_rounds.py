"""Tool calls that pause for a new-era client's answers (the multi-round-trip form of 2026-07-28).

A new-era client takes no requests from the gateway mid-call. When a downstream server asks
for sampling or elicitation during such a client's call, the gateway answers the client's
`tools/call` with an input-required result naming the questions, and keeps the downstream
call waiting; the client calls again with its answers and the `requestState` it was given,
and gets the next questions or the result. The `requestState` is a random token naming the
waiting call in this process: it carries nothing, and a guessed one finds nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from mcpyard.connect import InputFn
from mcpyard.elicitation import ELICIT

__all__ = ["ANSWER_SECS", "MAX_WAITING_CALLS", "RoundTrip", "elicitation_modes", "unanswerable"]

ANSWER_SECS = 600.0
"""How long a call waits for the client to come back with answers, and a finished call for it to collect."""
MAX_WAITING_CALLS = 256
"""Calls that may wait on answers at once; more are refused, so no client can pile them up."""

_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)


_ANSWERS: dict[str, tuple[type[types.Result], ...]] = {
    "sampling/createMessage": (types.CreateMessageResult, types.CreateMessageResultWithTools),
    "elicitation/create": (types.ElicitResult,),
}
"""What answers each kind of question."""


def elicitation_modes(capabilities: types.ClientCapabilities | None) -> frozenset[str]:
    """The elicitation modes a client declared: none; `form` alone for an empty `elicitation: {}` (as the
    protocol reads it); else those it names, `form` and `url`."""
    if capabilities is None or capabilities.elicitation is None:
        return frozenset()
    declared = capabilities.elicitation
    if declared.form is None and declared.url is None:
        return frozenset({"form"})
    return frozenset(mode for mode, given in (("form", declared.form), ("url", declared.url)) if given is not None)


def unanswerable(method: str, params: Mapping[str, Any], methods: frozenset[str], modes: frozenset[str]) -> str | None:
    """Why a client cannot be asked this (a method it did not declare, an elicitation mode it did not), or None."""
    if method not in methods:
        return f"the gateway's client does not support {method}"
    if method == ELICIT and (mode := str(params.get("mode", "form"))) not in modes:
        return f"the gateway's client does not support {method} in {mode[:20]} mode"
    return None


@dataclass(eq=False)
class _Ask:
    method: str
    params: Mapping[str, Any]
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: Mapping[str, Any] | MCPError | None = None


class RoundTrip:
    """One tool call of a new-era client that may pause for its answers; `token` is its `requestState`."""

    def __init__(
        self,
        name: str,
        methods: frozenset[str],
        modes: frozenset[str] = frozenset({"form", "url"}),
        fallback: InputFn | None = None,
    ) -> None:
        self.token = secrets.token_urlsafe(24)
        self.name = name
        """The offered tool name: a retry must name the same tool."""
        self._methods = methods
        """What the client declared it answers (`sampling/createMessage`, `elicitation/create`)."""
        self._modes = modes
        """The elicitation modes it declared (`form`, `url`)."""
        self._fallback = fallback
        """Who answers the questions the client cannot take (the console's elicitor), if anyone."""
        self.collected = anyio.Event()
        self._asks: dict[str, _Ask] = {}
        self._asked = 0
        self._result: types.CallToolResult | None = None
        self._moved = anyio.Event()
        self.scope = anyio.CancelScope()
        """The downstream call's: cancelled when the client gives up on a round."""
        self.ctx: Any = None
        """The request of the round under way (its progress goes there), None between rounds."""
        self.audience: Hashable = None
        """Who started it (the face's audience of its first request): only they may answer its rounds."""

    async def ask(self, method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """The call's `on_input`: wait for the client's answer, given on one of its next calls."""
        why = unanswerable(method, params, self._methods, self._modes)
        if why is not None:
            if self._fallback is not None and method == ELICIT:
                return await self._fallback(method, params)
            raise MCPError(types.INVALID_REQUEST, why)
        self._asked += 1
        key = f"mcpyard-{self._asked}"
        ask = _Ask(method, params)
        self._asks[key] = ask
        self._move()
        try:
            with anyio.fail_after(ANSWER_SECS):
                await ask.answered.wait()
        except TimeoutError:
            raise MCPError(types.INVALID_REQUEST, f"the client did not answer within {ANSWER_SECS:g} s") from None
        finally:
            self._asks.pop(key, None)
        if isinstance(ask.answer, MCPError):
            raise ask.answer
        assert ask.answer is not None
        return ask.answer

    @property
    def finished(self) -> bool:
        return self._result is not None

    def finish(self, result: types.CallToolResult) -> None:
        self._result = result
        self._move()

    def answer(self, responses: Mapping[str, types.InputResponse]) -> None:
        """The client's answers, by the keys it was asked under; unknown keys are ignored."""
        for key, response in responses.items():
            ask = self._asks.get(key)
            if ask is None or ask.answered.is_set():
                continue
            if isinstance(response, _ANSWERS.get(ask.method, ())):
                ask.answer = response.model_dump(by_alias=True, exclude_none=True, mode="json")
            else:
                wrong = type(response).__name__
                ask.answer = MCPError(types.INVALID_PARAMS, f"the client answered {ask.method} with a {wrong}")
            ask.answered.set()

    async def step(self, ctx: Any) -> types.CallToolResult | types.InputRequiredResult:
        """Wait until the call has ended, or needs answers: every question still open, each time.

        A round the client gives up on (cancelled, or the client gone) cancels the call.
        """
        self.ctx = ctx
        try:
            return await self._step()
        except anyio.get_cancelled_exc_class():
            self.scope.cancel()
            raise
        finally:
            self.ctx = None

    async def _step(self) -> types.CallToolResult | types.InputRequiredResult:
        while True:
            if self._result is not None:
                self.collected.set()
                return self._result
            if requests := self.open_requests():
                return types.InputRequiredResult(input_requests=requests, request_state=self.token)
            await self._moved.wait()

    @property
    def result(self) -> types.CallToolResult | None:
        """The call's result, once it has ended."""
        return self._result

    def open_requests(self) -> dict[str, types.InputRequest]:
        """The questions waiting for the client's answers, by the keys it answers them under."""
        return {
            key: _REQUEST.validate_python({"method": ask.method, "params": ask.params})
            for key, ask in self._asks.items()
            if not ask.answered.is_set()
        }

    async def moved(self) -> None:
        """Wait until the call ends or asks something."""
        await self._moved.wait()

    def wake(self) -> None:
        """Wake whoever waits on `moved`: something else about the call changed."""
        self._move()

    def _move(self) -> None:
        self._moved.set()
        self._moved = anyio.Event()
