"""The one place tests poll: a state that no event announces, checked again until it holds.

Tests wait on events (STYLE 10): `Host.wait_until`, a line a process prints, a process's exit, a
notification. Some states announce nothing this process can wait on: that no process with a
given pid is left (a process we did not start cannot be awaited), that a file another process
writes has appeared, that a third-party server listens on its port, which resources a server's
watch holds (no host event says so yet). Only those come here, each with a comment at the call
saying why it has no event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

__all__ = ["POLL_SECONDS", "eventually"]

POLL_SECONDS = 0.05
"""How long to wait between two checks: short, so a test pays at most this much for polling."""


async def eventually(holds: Callable[[], bool | Awaitable[bool]], *, within: float, what: str) -> None:
    """Check `holds()` every `POLL_SECONDS` until it is true.

    Raises:
        TimeoutError: it was still false after `within` seconds; the message names `what`.
    """
    try:
        with anyio.fail_after(within):
            while True:
                outcome = holds()
                if not isinstance(outcome, bool):
                    outcome = await outcome
                if outcome:
                    return
                await anyio.sleep(POLL_SECONDS)  # the one polling sleep: see the module docstring
    except TimeoutError:
        raise TimeoutError(f"not within {within:g} s: {what}") from None
