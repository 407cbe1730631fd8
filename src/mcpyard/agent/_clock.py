"""A turn's time limit, which waits while a person answers a question a server asked during one of its calls.

The loop runs a turn under its clock (`running`). Whoever waits on a person during one of its calls
(the organization's inbox, where a server's question is parked) takes the clock from the call's own
task (`current_turn_clock()`, when the call starts) and waits inside `clock.paused()`, from any task
(a handshake-era server's question comes on a task of its own). The limit then goes on with the
time it had left: a turn's own work stays bounded, and how long a person may take is bounded by
whoever asks them.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from contextvars import ContextVar

import anyio

__all__ = ["TurnClock", "current_turn_clock", "running"]


class TurnClock:
    """The cancel scope of one turn's time limit, paused while any of its calls waits on a person."""

    def __init__(self, scope: anyio.CancelScope) -> None:
        self._scope = scope
        self._waiting = 0
        self._left = math.inf

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """While inside, the turn's time limit does not run; afterwards it goes on with what it had left."""
        if self._waiting == 0:
            self._left = max(0.0, self._scope.deadline - anyio.current_time())
            self._scope.deadline = math.inf
        self._waiting += 1
        try:
            yield
        finally:
            self._waiting -= 1
            if self._waiting == 0:
                self._scope.deadline = anyio.current_time() + self._left
                self._left = math.inf


_CLOCK: ContextVar[TurnClock | None] = ContextVar("mcpyard_turn_clock", default=None)


@contextlib.contextmanager
def running(scope: anyio.CancelScope) -> Iterator[TurnClock]:
    """Run a turn under `scope`, its time limit: the turn's calls (started inside) find it."""
    clock = TurnClock(scope)
    token = _CLOCK.set(clock)
    try:
        yield clock
    finally:
        _CLOCK.reset(token)


def current_turn_clock() -> TurnClock | None:
    """The clock of the turn whose call this task runs (None outside a turn): take it when the call starts."""
    return _CLOCK.get()
