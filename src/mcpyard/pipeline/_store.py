"""The result store: full results kept by handle, readable only from the conversation that made them (CALL-4).

`Results` is the seam: the host keeps long results in a `ResultStore` in memory by default; a
service whose replicas share a database keeps them there instead (the organization service).
"""

from __future__ import annotations

import secrets
import sys
from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

__all__ = ["MAX_STORED_RESULT_BYTES", "STORE_BYTES", "STORE_RESULTS", "ResultStore", "Results", "Window"]

MAX_STORED_RESULT_BYTES = 16 * 1024 * 1024
"""The default of the `max_stored_result_bytes` setting: the most of one result's text (UTF-8) kept by handle."""
STORE_BYTES = 64 * 1024 * 1024
"""The memory all stored texts of a store may take together, every conversation counted."""
STORE_RESULTS = 4096
"""The most results a store keeps, every conversation counted."""
MIN_STORE_BYTES = 4096
"""The smallest budget a store takes: room for a string's header and some text."""
_MARGIN = 128
"""Characters left out when a text is cut to fit: more than a string's header takes."""


@dataclass(frozen=True, slots=True)
class Window:
    """A slice of a stored result, in characters."""

    text: str
    offset: int
    total: int

    @property
    def end(self) -> int:
        return self.offset + len(self.text)


class Results(Protocol):
    """Where long results are kept by handle: a handle reads only in the conversation that made it (CALL-4)."""

    async def keep(self, conversation: str, text: str, *, server: str) -> tuple[str, int]:
        """Keep `text` for `conversation`; its new random handle, and how many of its characters were kept (a
        store may keep less than all, to stay within its bound)."""
        ...

    async def window(self, conversation: str, handle: str, offset: int, length: int) -> tuple[str, Window] | None:
        """The server a stored result came from and `length` characters of it from `offset`; None when this
        conversation has no such handle (another conversation's handle included)."""
        ...


@dataclass(frozen=True, slots=True)
class _Stored:
    conversation: str
    server: str
    text: str
    size: int


class ResultStore:
    """Handles are random and scoped: a handle from another conversation reads as unknown.

    Bounded in total: when a new result would take the store past `max_bytes` (the memory
    its texts take, as `sys.getsizeof` counts it) or `max_results`, the least recently used
    results leave first, whichever conversation made them. A text larger than the whole store
    is cut to fit; `read` reports the length kept.
    """

    def __init__(self, *, max_bytes: int = STORE_BYTES, max_results: int = STORE_RESULTS) -> None:
        """`max_bytes`: the memory all texts may take together; `max_results`: how many are kept.

        Raises:
            ValueError: `max_bytes` under 4096 or `max_results` under 1.
        """
        if max_bytes < MIN_STORE_BYTES or max_results < 1:
            raise ValueError(f"a result store needs max_bytes >= {MIN_STORE_BYTES} and max_results >= 1")
        self._max_bytes = max_bytes
        self._max_results = max_results
        self._results: OrderedDict[str, _Stored] = OrderedDict()
        self._bytes = 0

    @property
    def total_bytes(self) -> int:
        """The memory the stored texts take now."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._results)

    def put(self, conversation: str, text: str, *, server: str = "") -> str:
        """Keep a text for this conversation; returns its handle."""
        size = sys.getsizeof(text)
        if size > self._max_bytes:
            # A string's memory grows linearly with its length, so a proportional prefix less a
            # margin for the header fits (a prefix can only take less per character, never more).
            text = text[: max(0, len(text) * self._max_bytes // size - _MARGIN)]
            size = sys.getsizeof(text)
        while self._results and (self._bytes + size > self._max_bytes or len(self._results) >= self._max_results):
            _, oldest = self._results.popitem(last=False)
            self._bytes -= oldest.size
        handle = "r_" + secrets.token_hex(8)
        self._results[handle] = _Stored(conversation, server, text, size)
        self._bytes += size
        return handle

    def read(self, conversation: str, handle: str, offset: int, length: int) -> tuple[str, Window] | None:
        """The server a stored result came from and a window of it; None if this conversation has no such handle."""
        stored = self._results.get(handle)
        if stored is None or stored.conversation != conversation:
            return None
        self._results.move_to_end(handle)
        text = stored.text
        start = max(0, min(offset, len(text)))
        return stored.server, Window(text[start : start + max(0, length)], start, len(text))

    async def keep(self, conversation: str, text: str, *, server: str) -> tuple[str, int]:
        handle = self.put(conversation, text, server=server)
        return handle, len(self._results[handle].text)

    async def window(self, conversation: str, handle: str, offset: int, length: int) -> tuple[str, Window] | None:
        return self.read(conversation, handle, offset, length)

    def forget(self, conversation: str) -> None:
        """Drop every result this conversation made."""
        for handle in [handle for handle, stored in self._results.items() if stored.conversation == conversation]:
            self._bytes -= self._results.pop(handle).size
