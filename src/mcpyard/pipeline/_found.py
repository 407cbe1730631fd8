"""The tools `find_tools` found in each conversation: offered there from then on (MOD-4)."""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["FoundTools"]


class FoundTools:
    """The tools found in each conversation, in the order they were found (the last 1,000 conversations)."""

    def __init__(self, conversations: int = 1000) -> None:
        self._found: OrderedDict[str, dict[str, None]] = OrderedDict()
        self._limit = conversations

    def add(self, conversation: str, names: list[str]) -> list[str]:
        """Note `names` as found in `conversation`; returns those that were not found there before."""
        found = self._found.setdefault(conversation, {})
        self._found.move_to_end(conversation)
        while len(self._found) > self._limit:
            self._found.popitem(last=False)
        new = [name for name in names if name not in found]
        found.update(dict.fromkeys(new))
        return new

    def of(self, conversation: str) -> tuple[str, ...]:
        return tuple(self._found.get(conversation, ()))
