"""Where a turn stands and how it ended, as plain JSON to park and resume it; how far a turn may go (MOD-2)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpyard.model import Message, ToolCall, messages_from_json, messages_to_json
from mcpyard.pipeline import CallResult

__all__ = ["Turn", "TurnLimits", "TurnState", "TurnStatus"]

TurnStatus = Literal["done", "parked", "call_limit", "time_limit", "model_error"]


@dataclass(frozen=True, slots=True)
class TurnLimits:
    """How far one turn may go.

    Attributes:
        max_calls: tool calls per turn; a call asked beyond it is refused with `call_limit` and the turn stops.
        max_seconds: the whole turn's time (model requests and calls); None: no limit.
    """

    max_calls: int = 20
    max_seconds: float | None = 600.0


@dataclass
class TurnState:
    """Where a turn stands, as plain JSON: the messages so far, calls made, the calls waiting for approval.

    Attributes:
        messages: the whole conversation, this turn's messages included.
        calls: tool calls this turn made (a refused one counts; one beyond the limit does not).
        waiting: the calls parked on an approval, by call id: the call and the approval's id.
        status: how the turn stands (`done` once the model answered).
    """

    messages: list[Message]
    calls: int = 0
    waiting: dict[str, tuple[ToolCall, str | None]] = field(default_factory=dict)
    status: TurnStatus = "done"

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": messages_to_json(self.messages),
            "calls": self.calls,
            "waiting": [{"call": call.to_json(), "approval_id": approval} for call, approval in self.waiting.values()],
            "status": self.status,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> TurnState:
        """A state as `to_json` wrote it.

        Raises:
            ValueError: it is not such a state.
            TypeError: one of its parts has the wrong type.
        """
        waiting: dict[str, tuple[ToolCall, str | None]] = {}
        for item in value.get("waiting") or ():
            call = ToolCall.from_json(item["call"])
            approval = item.get("approval_id")
            waiting[call.id] = (call, str(approval) if approval is not None else None)
        status = value.get("status", "done")
        if status not in ("done", "parked", "call_limit", "time_limit", "model_error"):
            raise ValueError(f"unknown turn status {status!r}")
        return cls(
            messages=messages_from_json(value.get("messages") or []),
            calls=int(value.get("calls") or 0),
            waiting=waiting,
            status=status,
        )


@dataclass(frozen=True, slots=True)
class Turn:
    """How a turn ended: the model's answer (`reply`), every call's result, and the state to go on from."""

    state: TurnState
    reply: str
    results: tuple[tuple[ToolCall, CallResult], ...]

    @property
    def status(self) -> TurnStatus:
        return self.state.status

    @property
    def messages(self) -> list[Message]:
        return self.state.messages
