"""The model a chat talks to, with the key that is kept out of everything the chat prints (SEC-2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpyard.model import Model

__all__ = ["ChatModel"]


class ChatModel:
    """The model a chat talks to, and the key to keep out of everything it prints."""

    def __init__(self, model: Model, key: str | None, key_name: str | None, label: str) -> None:
        self.model, self.key, self.key_name, self.label = model, key, key_name, label

    def scrub(self, text: str) -> str:
        """`text` with the API key replaced by its secret's name (SEC-2)."""
        return text.replace(self.key, f"%{self.key_name}%") if self.key else text

    async def close(self) -> None:
        close = getattr(self.model, "close", None)
        if close is not None:
            await close()
