"""Sign-in attempts slowed down per address: after a run of failures from one address, it waits (THREATS).

Each account has its own lockout (`_people.lockout_after`); this one is per client address, so that
one address cannot try password after password across many accounts, nor keep an account locked
for ever while costing the service a password hash each time. In this process, bounded memory.

An attempt is counted before its password is checked: `reserve` takes one place synchronously,
before the request awaits anything, so attempts sent at once are counted one by one and none
slips through while others are being checked; a success gives its place back (`give_back`).
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque

from mcpyard.errors import TooMany

__all__ = ["SignInLimits", "TooManySignIns"]


class TooManySignIns(TooMany):
    """429, with how long to wait."""

    def __init__(self, retry_after: int) -> None:
        message = f"too many failed sign-ins from your address: try again in {retry_after} s"
        super().__init__("too_many_attempts", message, retry_after=retry_after)


class SignInLimits:
    """At most `failures` failed sign-ins an address in `window_secs`; past that, no attempt is even checked."""

    def __init__(self, *, failures: int = 10, window_secs: float = 300.0, addresses: int = 10_000) -> None:
        self._failures = failures
        self._window = window_secs
        self._addresses = addresses
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self._seen.get(address)
        if times is None:
            return deque()
        while times and now - times[0] > self._window:
            times.popleft()
        return times

    def reserve(self, address: str, *, now: float | None = None) -> float:
        """Count one attempt from `address` before any password is looked at; the moment counted, to give back
        when it succeeds.

        Synchronous on purpose: the asyncio loop runs no other request between the look and the count.

        Raises:
            TooManySignIns: `address` used up its attempts lately; nothing was counted.
        """
        moment = time.monotonic() if now is None else now
        times = self._recent(address, moment)
        if len(times) >= self._failures:
            raise TooManySignIns(max(1, int(self._window - (moment - times[0])) + 1))
        times = self._seen.setdefault(address, times)
        self._seen.move_to_end(address)
        times.append(moment)
        while len(self._seen) > self._addresses:
            self._seen.popitem(last=False)
        return moment

    def give_back(self, address: str, moment: float) -> None:
        """The attempt counted at `moment` succeeded (or never reached a password): it does not count."""
        times = self._seen.get(address)
        if times is not None and moment in times:
            times.remove(moment)
