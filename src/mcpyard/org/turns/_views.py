"""The JSON shapes the turns' functions answer with, key by key: one TypedDict for each body the API documents."""

# No `from __future__ import annotations`: on Python 3.11 a TypedDict finds its `NotRequired` keys only in evaluated
# annotations, and `__required_keys__` is what the views test compares with the OpenAPI document.

from typing import Any, Literal, NotRequired, TypedDict

from mcpyard.org.services import QuestionView
from mcpyard.org.store import CallRowStatus, TurnRowStatus

__all__ = [
    "AssistantView",
    "ConversationView",
    "ListedConversationView",
    "ModelView",
    "PreviewView",
    "PublicationView",
    "PublishedToolView",
    "StartedConversationView",
    "TeammateView",
    "TraceStepView",
    "TracedTurnView",
    "TurnCallStatus",
    "TurnCallView",
    "TurnView",
    "VisitorTurnView",
]

TurnCallStatus = Literal["ran", "refused", "failed", "cached", "waiting_for_approval"]
"""How a call of a turn ended, or that it waits for an approval."""


class ModelView(TypedDict):
    """The organization's model: never its key, only whether it has one."""

    base_url: str | None
    model: str | None
    has_key: bool


class TeammateView(TypedDict):
    """A teammate: the servers it may use and the tools it is offered of them."""

    id: str
    name: str
    instructions: str
    model: str | None
    server_ids: list[str]
    tools: list[str]
    created_at: str
    deleted_at: str | None


class StartedConversationView(TypedDict):
    """A conversation just started with a teammate."""

    id: str
    teammate_id: str


class ListedConversationView(TypedDict):
    """A conversation as its teammate's list shows it: how many turns, and how the first began."""

    id: str
    teammate_id: str
    created_at: str
    turns: int
    first_message: str


class TurnCallView(TypedDict):
    """A call of a turn: how it ended, the error's code, the handle of a long result, the approval it waits for."""

    tool: str
    status: TurnCallStatus
    error: NotRequired[str]
    handle: NotRequired[str]
    approval_id: NotRequired[str]


class TurnView(TypedDict):
    """A turn: the message, the reply, its calls and how it ended; `questions` for a teammate's turn."""

    id: str
    conversation_id: str
    status: TurnRowStatus
    message: str
    reply: str
    calls: list[TurnCallView]
    error: str | None
    created_at: str
    finished_at: str | None
    questions: NotRequired[list[QuestionView]]


class ConversationView(TypedDict):
    """A member's conversation with a teammate, and its turns, oldest first."""

    id: str
    teammate_id: str
    created_at: str
    turns: list[TurnView]


class TraceStepView(TypedDict):
    """A call of a turn as the pipeline recorded it: arguments redacted, how it ended, how long it took; or a long
    call still running, how long so far."""

    server: str | None
    tool: str
    arguments: dict[str, Any]
    status: CallRowStatus | Literal["waiting_for_approval", "running"]
    """`running`: a long call whose server's task has not ended yet (its record comes when it ends)."""
    error: str | None
    summary: str
    duration_ms: float
    at: str


class TracedTurnView(TurnView):
    """A turn and its trace."""

    trace: list[TraceStepView]


class PreviewView(TurnView):
    """A preview's turn, and the selected tools it left out, each with why."""

    left_out: list[str]


class PublishedToolView(TypedDict):
    """A published tool: only its server's id, its name and the definition reviewed."""

    server_id: str
    tool: str
    definition_hash: str


class PublicationView(TypedDict):
    """A publication of an assistant: the tools its visitors may use."""

    id: str
    assistant_id: str
    slug: str
    tools: list[PublishedToolView]
    published_by: str
    published_at: str


class AssistantView(TypedDict):
    """An assistant: its selection of tools, whether it needs review, its publications."""

    id: str
    name: str
    slug: str
    instructions: str
    tool_ids: list[str]
    needs_review: bool
    review_reason: str
    publication: PublicationView | None
    publications: list[PublicationView]
    created_at: str


class VisitorTurnView(TypedDict):
    """A visitor's turn of a published assistant: the conversation to go on in, the reply, the calls."""

    conversation: str
    reply: str
    calls: list[TurnCallView]
    status: TurnRowStatus
