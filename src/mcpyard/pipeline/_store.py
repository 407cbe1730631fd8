"""The result store: full results kept by handle, readable only from the conversation that made them (CALL-4)."""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass

__all__ = ["MAX_STORED_RESULT_BYTES", "ResultStore", "Window"]

MAX_STORED_RESULT_BYTES = 1024 * 1024
MAX_RESULTS_PER_CONVERSATION = 256
MAX_BYTES_PER_CONVERSATION = 16 * 1024 * 1024
MAX_CONVERSATIONS = 64


@dataclass(frozen=True, slots=True)
class Window:
    """A slice of a stored result, in characters."""

    text: str
    offset: int
    total: int

    @property
    def end(self) -> int:
        return self.offset + len(self.text)


class ResultStore:
    """Handles are random and scoped: a handle from another conversation reads as unknown."""

    def __init__(self) -> None:
        self._results: dict[str, OrderedDict[str, tuple[str, str]]] = {}

    def put(self, conversation: str, text: str, *, server: str = "") -> str:
        if conversation not in self._results and len(self._results) >= MAX_CONVERSATIONS:
            # The oldest conversation's results go first: a long-running gateway stays bounded.
            del self._results[next(iter(self._results))]
        results = self._results.setdefault(conversation, OrderedDict())
        handle = "r_" + secrets.token_hex(8)
        results[handle] = (server, text)
        while len(results) > MAX_RESULTS_PER_CONVERSATION or _size(results) > MAX_BYTES_PER_CONVERSATION:
            results.popitem(last=False)
        return handle

    def read(self, conversation: str, handle: str, offset: int, length: int) -> tuple[str, Window] | None:
        """The server a stored result came from and a window of it; None if this conversation has no such handle."""
        results = self._results.get(conversation)
        stored = results.get(handle) if results is not None else None
        if stored is None:
            return None
        server, text = stored
        start = max(0, min(offset, len(text)))
        return server, Window(text[start : start + max(0, length)], start, len(text))

    def forget(self, conversation: str) -> None:
        self._results.pop(conversation, None)


def _size(results: OrderedDict[str, tuple[str, str]]) -> int:
    return sum(len(text) for _, text in results.values())
