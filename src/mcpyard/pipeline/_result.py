"""`CallResult`: exactly what the model reads of one call, and what a program can inspect (API-1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CallResult"]


@dataclass(frozen=True, slots=True)
class CallResult:
    """The outcome of one tool call through the pipeline.

    Attributes:
        ok: the call ran and the tool did not report an error.
        text: exactly what the model reads.
        content: content blocks (MCP wire form), attachments included.
        structured: the tool's structured content, if any.
        cached: the result came from the idempotent cache (CALL-6).
        handle: the result store handle when the text was cut (CALL-4).
        error: `{"code": …, "message": …}` when not ok.
    """

    ok: bool
    text: str
    content: list[dict[str, Any]] = field(default_factory=list)
    structured: Any = None
    cached: bool = False
    handle: str | None = None
    error: dict[str, str] | None = None
    tool: str | None = None
    server: str | None = None

    @classmethod
    def refusal(cls, code: str, message: str, *, tool: str | None = None, server: str | None = None) -> CallResult:
        """A call that never produced a server result: refused, failed to dispatch, timed out."""
        return cls(ok=False, text=message, error={"code": code, "message": message}, tool=tool, server=server)

    def to_json(self) -> dict[str, Any]:
        """The JSON object `mcpyard call --json` prints."""
        return {
            "ok": self.ok,
            "text": self.text,
            "content": self.content,
            "structured": self.structured,
            "cached": self.cached,
            "handle": self.handle,
            "error": self.error,
            "tool": self.tool,
            "server": self.server,
        }
