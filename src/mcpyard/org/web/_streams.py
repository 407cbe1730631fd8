"""The live-update streams one process has open: how many, for whom, and a way to wait for a count."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import anyio

__all__ = ["Live"]


class Live:
    """The open event streams of this process: how many, and a way to wait until none is open."""

    def __init__(self, poll_seconds: float = 1.0) -> None:
        self.poll_seconds = poll_seconds
        self.open = 0
        self._members: dict[str, int] = {}
        self._changed = anyio.Event()

    def open_for(self, member_id: str) -> int:
        """How many streams one member has open in this process."""
        return self._members.get(member_id, 0)

    @contextlib.contextmanager
    def streaming(self, member_id: str) -> Iterator[None]:
        self.open += 1
        self._members[member_id] = self._members.get(member_id, 0) + 1
        self._wake()
        try:
            yield
        finally:
            self.open -= 1
            left = self._members[member_id] - 1
            if left:
                self._members[member_id] = left
            else:
                del self._members[member_id]
            self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, count: int) -> None:
        """Return once exactly `count` streams are open (bound the wait with `anyio.fail_after`)."""
        while self.open != count:
            await self._changed.wait()
