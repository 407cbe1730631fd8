"""A call's clocks while a person answers its server's question: its own timeout and its total deadline both wait,
and the total deadline then goes on with what it had left, so the server's own time stays bounded (CALL-2, NET-2).

The cancel scopes are never entered here: only the deadlines `WaitingCall` sets on them are read.
"""

from __future__ import annotations

import math

import anyio
import pytest

from mcpyard.connect import InputRelay
from mcpyard.connect._input import WaitingCall

pytestmark = pytest.mark.anyio


async def test_call2_net2_both_clocks_stop_while_a_person_answers_and_the_total_goes_on_with_what_it_had_left() -> None:
    total = anyio.CancelScope(deadline=anyio.current_time() + 30)
    own = anyio.CancelScope(deadline=anyio.current_time() + 10)
    call = WaitingCall(InputRelay("me", None), own, 10.0, total)
    call.pause()
    call.pause()  # a second question of the same call, at once
    assert (own.deadline, total.deadline) == (math.inf, math.inf)
    call.restart()  # progress while a person answers starts nothing
    assert own.deadline == math.inf
    call.resume()
    assert total.deadline == math.inf, "one question is still open"
    call.resume()
    left = total.deadline - anyio.current_time()
    assert 9 < own.deadline - anyio.current_time() <= 10, "the call's own clock starts again in full"
    assert 29 < left <= 30, "the total deadline goes on with what it had left, no more"


async def test_call2_without_a_total_deadline_only_the_calls_own_clock_waits() -> None:
    own = anyio.CancelScope(deadline=anyio.current_time() + 5)
    call = WaitingCall(InputRelay("me", None), own, None)
    call.pause()
    assert own.deadline == math.inf
    call.resume()
    assert own.deadline == math.inf, "a call with no timeout gets none after the answer"
