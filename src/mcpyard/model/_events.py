"""What a turn tells the face as it goes: text, tool calls and results, approvals, parked calls, errors, the end.

Each event's `to_json()` is the object `mcpyard chat --json` prints for it, with exactly the
fields MOD-3 lists; the dataclass carries a little more for a program (the call's id, the result).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcpyard.pipeline import CallResult

__all__ = [
    "ApprovalEvent",
    "ErrorEvent",
    "Event",
    "EventSink",
    "ParkedEvent",
    "TextEvent",
    "ToolCallEvent",
    "ToolProgressEvent",
    "ToolResultEvent",
    "ToolSearchEvent",
    "TurnEndEvent",
]


@dataclass(frozen=True, slots=True)
class TextEvent:
    """A piece of the model's text, as it streams (the whole text at once from a model that does not stream)."""

    text: str
    type: Literal["text"] = "text"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """A tool call starts: its catalog name and its arguments, secrets redacted."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    type: Literal["tool_call"] = "tool_call"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True, slots=True)
class ToolProgressEvent:
    """A running call's progress, as its server reports it (a task's status, a long job's step): at most a few a
    second. `mcpyard chat` shows it on a terminal or a pipe; `--json` prints only MOD-3's events."""

    call_id: str
    name: str
    progress: float
    total: float | None
    message: str | None
    type: Literal["tool_progress"] = "tool_progress"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "progress": self.progress,
            "total": self.total,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class ToolResultEvent:
    """A tool call ended: whether it was ok, its error (`{code, message}`) or None, and the whole result."""

    call_id: str
    name: str
    ok: bool
    error: dict[str, str] | None
    result: CallResult | None = field(default=None, compare=False, repr=False)
    type: Literal["tool_result"] = "tool_result"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "ok": self.ok, "error": self.error}


@dataclass(frozen=True, slots=True)
class ApprovalEvent:
    """A call asked for approval and got its answer: `once`, `session` or `deny`."""

    call_id: str
    name: str
    reason: str
    answer: str
    type: Literal["approval"] = "approval"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "reason": self.reason, "answer": self.answer}


@dataclass(frozen=True, slots=True)
class ParkedEvent:
    """A call waits for someone's approval elsewhere; the turn ends parked once its other calls are done."""

    call_id: str
    name: str
    approval_id: str | None
    type: Literal["parked"] = "parked"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "approval_id": self.approval_id}


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """The turn stopped early: `call_limit`, `time_limit` or `model_error`, with a message to show."""

    code: str
    message: str
    type: Literal["error"] = "error"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class ToolSearchEvent:
    """The model searched the catalog (`find_tools`): what it asked for, and the tools found (offered from now on)."""

    query: str
    found: tuple[str, ...]
    type: Literal["tool_search"] = "tool_search"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "query": self.query, "found": list(self.found)}


@dataclass(frozen=True, slots=True)
class TurnEndEvent:
    """The turn ended (answered, parked or stopped): how many tool calls it made, and how it ended."""

    calls: int
    status: str
    type: Literal["turn_end"] = "turn_end"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "calls": self.calls}


Event = (
    TextEvent
    | ToolCallEvent
    | ToolProgressEvent
    | ToolResultEvent
    | ToolSearchEvent
    | ApprovalEvent
    | ParkedEvent
    | ErrorEvent
    | TurnEndEvent
)
EventSink = Callable[[Event], Awaitable[None]]
