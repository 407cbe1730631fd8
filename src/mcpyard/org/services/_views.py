"""The JSON shapes the service functions answer with, key by key: one TypedDict for each body the API documents."""

# No `from __future__ import annotations`: on Python 3.11 a TypedDict finds its `NotRequired` keys only in evaluated
# annotations, and `__required_keys__` is what the views test compares with the OpenAPI document.

from typing import Any, Literal, NotRequired, TypedDict, final

from mcpyard.org.rules import ToolState
from mcpyard.org.store import ApprovalStatus, DeliveryStatus, QuestionMode, QuestionStatus, Role, ServerState
from mcpyard.policy import PinPolicy

__all__ = [
    "AlertView",
    "ApprovalView",
    "ApprovedBody",
    "AskingView",
    "AuditEntryView",
    "CallBody",
    "CallResultView",
    "CreatedWebhookView",
    "CredentialField",
    "DefinitionView",
    "DeliveryTryView",
    "DeliveryView",
    "EditedServerView",
    "GrantView",
    "LimitsView",
    "LongCallView",
    "MemberIdentityView",
    "MemberView",
    "ParkedView",
    "PendingRef",
    "QuestionView",
    "RunningRef",
    "RunningView",
    "SelectionView",
    "ServerView",
    "TaskCallView",
    "TokenView",
    "ToolDetailView",
    "ToolSearchView",
    "ToolView",
    "UsageView",
    "WebhookView",
]

CredentialField = Literal["bearer_token", "client_credentials"]
"""A server's credential, by the request field that gives it."""


class DefinitionView(TypedDict):
    """A tool's definition as people and models may read it; `refused` when its schema was over the bounds."""

    description: str
    title: str | None
    input_schema: dict[str, Any]
    annotations: dict[str, Any]
    refused: NotRequired[str]


class ToolView(TypedDict):
    """A tool as the API lists it: its definition as shown, its state and its policy."""

    id: str
    server_id: str
    name: str
    tool: str
    description: str
    title: str | None
    input_schema: dict[str, Any]
    annotations: dict[str, Any]
    definition_hash: str
    state: ToolState
    policy: PinPolicy
    reviewed_hash: str | None


class ToolDetailView(ToolView):
    """One tool: when it changed since it was reviewed, the reviewed definition beside the current one."""

    reviewed_definition: NotRequired[DefinitionView]
    definition: NotRequired[DefinitionView]


class ServerView(TypedDict):
    """A registered server: never its token or client secret, only whether it has one."""

    id: str
    name: str
    url: str
    state: ServerState
    last_error: str | None
    protocol_version: str | None
    has_token: bool
    has_client_credentials: bool
    client_id: str | None
    issuer: str | None
    created_at: str
    refreshed_at: str | None
    tools: list[ToolView]


class EditedServerView(ServerView):
    """A server as an edit answers it: which stored credential the edit dropped."""

    credentials_dropped: list[CredentialField]


class SelectionView(TypedDict):
    """An assistant using a server's tools, or a teammate allowed the server."""

    kind: Literal["assistant", "teammate"]
    id: str
    name: str


@final
class CallResultView(TypedDict):
    """A call's result: the pipeline's `CallResult` (refusal codes as the API names them) and the call's id."""

    ok: bool
    text: str
    content: list[dict[str, Any]]
    structured: Any
    cached: bool
    handle: str | None
    error: dict[str, str] | None
    tool: str | None
    server: str | None
    call_id: str | None


class PendingRef(TypedDict):
    """An approval or a question that waits for a person."""

    id: str
    status: Literal["pending"]


class RunningRef(TypedDict):
    """An approval claimed, its call running; or a long call running (its server's task not ended yet)."""

    id: str
    status: Literal["running"]


@final
class ParkedView(TypedDict):
    """A call parked for approval."""

    approval: PendingRef


@final
class AskingView(TypedDict):
    """A call whose server asked a question: it goes on once the question is answered."""

    call_id: str
    question: PendingRef


@final
class RunningView(TypedDict):
    """An approved call still running: its server asked a question (None once it was answered)."""

    approval: RunningRef
    question: PendingRef | None


@final
class LongCallView(TypedDict):
    """A call whose server answered with a task still running: its result is read once, by the call's id."""

    call_id: str
    task: RunningRef


class TaskCallView(TypedDict):
    """A long call as listed (never its result): running, or ended with its result not read yet."""

    call_id: str
    status: Literal["running", "done"]
    tool: str
    server: str
    message: str
    """The task's latest status message."""
    member_id: str
    turn_id: str | None
    created_at: str
    updated_at: str
    finished_at: str | None


# The members of these unions are `@final`: a key only one of them has (`"ok" in body`) tells them apart.
CallBody = CallResultView | ParkedView | AskingView | LongCallView
"""What a member's call answers: its result, or, still going on, the approval or the question it waits for, or
the long call's id."""
ApprovedBody = CallResultView | RunningView
"""What approving answers: the result of the one run, or, still going on, the question its server asked."""


class ApprovalView(TypedDict):
    """A call in the inbox: its arguments redacted, how it was decided, the result of its one run."""

    id: str
    status: ApprovalStatus
    tool: str
    tool_id: str
    member_id: str
    arguments: str
    reason: str
    conversation: str
    created_at: str
    decided_by: str | None
    decided_at: str | None
    result: dict[str, Any] | None
    client: str | None
    """The MCP client that asked for the call (its name and version), None for an API call or a turn's."""


class QuestionView(TypedDict):
    """A server's question: what it asks, who may answer, how it ended; never an answer typed into it."""

    id: str
    status: QuestionStatus
    server: str
    server_id: str | None
    tool: str | None
    member_id: str
    turn_id: str | None
    call_id: str | None
    mode: QuestionMode
    message: str
    fields: list[dict[str, Any]]
    url: str | None
    site: str | None
    asks_for_secrets: bool
    why: str | None
    created_at: str
    expires_at: str
    answered_by: str | None
    answered_at: str | None
    result: dict[str, Any] | None


class AuditEntryView(TypedDict):
    """Who changed what, with the old and new values."""

    id: str
    at: str
    actor: str
    action: str
    target: str
    old: dict[str, Any] | None
    new: dict[str, Any] | None


class AlertView(TypedDict):
    """A failure raised once, for a server or an assistant; `cleared_at` is None while it is open."""

    id: str
    server_id: str | None
    assistant_id: str | None
    kind: str
    message: str
    raised_at: str
    cleared_at: str | None


class MemberIdentityView(TypedDict):
    """A member and its organization: who signed in, who asks, a member added or changed."""

    id: str
    email: str
    role: Role
    org_id: str


class MemberView(TypedDict):
    """A member as the list shows one: never a password or its hash."""

    id: str
    email: str
    role: Role
    created_at: str


class TokenView(TypedDict):
    """An API token as its member's list shows it: never the token or its hash."""

    id: str
    label: str
    created_at: str
    last_used_at: str | None


class GrantView(TypedDict):
    """An MCP client a member allowed to act for them ("Connected apps"): never a token or its hash."""

    id: str
    client_id: str
    client_name: str
    resource: str
    scopes: list[str]
    created_at: str
    last_used_at: str | None


class WebhookView(TypedDict):
    """A webhook as owners and admins see it: never its secret."""

    id: str
    url: str
    events: list[str]
    include_arguments: bool
    created_by: str
    created_at: str


@final
class CreatedWebhookView(WebhookView):
    """A webhook just made: its shared secret, shown this once."""

    secret: str


class DeliveryTryView(TypedDict):
    """One attempt to deliver: when, and the HTTP status the receiver answered or why there was none."""

    at: str
    status: int | None
    error: str | None


class DeliveryView(TypedDict):
    """One event sent (or to send) to a webhook, with every attempt so far."""

    id: str
    webhook_id: str
    event: str
    status: DeliveryStatus
    attempts: int
    last_status: int | None
    last_error: str | None
    created_at: str
    next_at: str | None
    finished_at: str | None
    tries: list[DeliveryTryView]


class LimitsView(TypedDict):
    """The organization's limits on calls, each a number of calls per fixed UTC window; null: no limit (ORG-11)."""

    member_per_minute: int | None
    member_per_day: int | None
    token_per_minute: int | None
    token_per_day: int | None
    teammate_per_minute: int | None
    teammate_per_day: int | None


class ToolSearchView(TypedDict):
    """When teammates are offered `find_tools` in place of their tools: `auto` past either budget, `always`, `off`."""

    mode: Literal["auto", "always", "off"]
    max_tools: int
    max_tokens: int


class UsageView(TypedDict):
    """The calls of one member, server, tool or day in a period: how many, how many ended in an error, the seconds
    they took and the bytes of their results (API-8)."""

    key: str
    calls: int
    errors: int
    seconds: float
    bytes: int
