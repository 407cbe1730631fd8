"""A turn's time limit, which waits while a person answers a question a server asked during one of its calls.

The loop runs a turn under its clock (`running`); whoever waits on a person during one of its calls
(the organization's inbox, where a server's question is parked) does so inside `turn_clock_paused()`,
from the call's own task. The limit then goes on with the time it had left: a turn's own work stays
bounded, and how long a person may take is bounded by whoever asks them.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from contextvars import ContextVar

import anyio

__all__ = ["TurnClock", "running", "turn_clock_paused"]


class TurnClock:
    """The cancel scope of one turn's time limit, paused while any of its calls waits on a person."""

    def __init__(self, scope: anyio.CancelScope) -> None:
        self._scope = scope
        self._waiting = 0
        self._left = math.inf

    def pause(self) -> None:
        if self._waiting == 0:
            self._left = max(0.0, self._scope.deadline - anyio.current_time())
            self._scope.deadline = math.inf
        self._waiting += 1

    def resume(self) -> None:
        self._waiting -= 1
        if self._waiting == 0:
            self._scope.deadline = anyio.current_time() + self._left
            self._left = math.inf


_CLOCK: ContextVar[TurnClock | None] = ContextVar("mcpyard_turn_clock", default=None)


@contextlib.contextmanager
def running(scope: anyio.CancelScope) -> Iterator[TurnClock]:
    """Run a turn under `scope`, its time limit: the turn's calls (started inside) can pause it."""
    clock = TurnClock(scope)
    token = _CLOCK.set(clock)
    try:
        yield clock
    finally:
        _CLOCK.reset(token)


@contextlib.contextmanager
def turn_clock_paused() -> Iterator[None]:
    """While inside, the time limit of the turn whose call this is does not run (outside a turn: nothing happens).

    For an elicitor that waits on a person: a turn's limit is for the model and the calls, not for a person.
    """
    clock = _CLOCK.get()
    if clock is None:
        yield
        return
    clock.pause()
    try:
        yield
    finally:
        clock.resume()
