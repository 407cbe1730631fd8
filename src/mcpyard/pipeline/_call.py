"""One call as it goes through the stages: the request, what each stage adds, or the refusal that ends it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from mcpyard.pipeline._record import NO_TAGS

if TYPE_CHECKING:
    import mcp_types as types

    from mcpyard._view import ServerConnection
    from mcpyard.catalog import CatalogEntry
    from mcpyard.config import ServerSpec
    from mcpyard.connect import InputRelay, LogFn, ProgressFn
    from mcpyard.elicitation import Elicitor
    from mcpyard.files import LocalFile
    from mcpyard.pipeline._result import CallResult
    from mcpyard.policy import Answer, Approver, CallFacts, Decision

__all__ = ["Call", "CallRequest", "Refusal", "watching_progress"]

_NOTHING: Mapping[str, Any] = MappingProxyType({})
_WATCHING: ContextVar[ProgressFn | None] = ContextVar("mcpyard_watching_progress", default=None)


@contextlib.contextmanager
def watching_progress(on_progress: ProgressFn) -> Iterator[None]:
    """Within this block, a call made without its own `on_progress` reports its progress to `on_progress`.

    A turn's face shows how a long call goes (a task's status, a server's progress) this way, through
    whichever facades stand between the turn and the host.
    """
    token = _WATCHING.set(on_progress)
    try:
        yield
    finally:
        _WATCHING.reset(token)


def _nothing() -> Mapping[str, Any]:
    return _NOTHING


@dataclass(slots=True)
class CallRequest:
    """What a caller asks for: a tool by its model-facing name, its arguments, and where its events go."""

    name: str
    arguments: Mapping[str, Any]
    """As given: file parameters hold local paths (CAT-3)."""
    conversation: str
    """Whose result store handles are made (CALL-4)."""
    on_progress: ProgressFn | None = None
    on_log: LogFn | None = None
    on_input: InputRelay | None = None
    definition_hash: str | None = None
    """The definition the caller was offered (CAT-2), when it may not be the live one: the call runs only
    if the live tool's hash is this one (a published selection, a reviewed definition)."""
    kept_hash: str | None = None
    """The definition a lazy host offered from the listing kept from an earlier run, before its server ran:
    the live tool must have this hash too, as well as `definition_hash` when both are given (CAT-2)."""
    approver: Approver | None = None
    """Who answers this call's card, in place of the session's approver (an inbox for this member)."""
    elicitor: Elicitor | None = None
    """Who answers the server's questions during this call, in place of the session's elicitor."""
    tags: Mapping[str, str] = field(default_factory=lambda: NO_TAGS)
    """The caller's own labels for this call (its id in the caller's records, the turn it belongs to): copied
    as given into the call's record, and nowhere else."""

    @property
    def progress(self) -> ProgressFn | None:
        """Where the call's progress goes: its own `on_progress`, else the one watched (`watching_progress`)."""
        return self.on_progress or _WATCHING.get()


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a call ends before a result: its `CallResult.error` code and a message naming the problem and the fix."""

    code: str
    message: str
    sent: bool = False
    """Whether the request reached the server (a timeout, a lost connection): then the call `failed`."""


@dataclass(slots=True)
class Call:
    """A call on its way: each stage fills in what it found and hands the call on.

    Stages fill these in order: `unsendable` (check_sendable); `entry`, `spec` and `connection` (resolve);
    `facts` and `decision` (decide);
    `sent` and `files` (read files); `cache_key`, `cached` and `generation` (cache lookup);
    `answer` (ask); `raw` or `server_error` (dispatch); `result` (shape).
    """

    request: CallRequest
    started: float
    """`time.time()` at the start (the record's time and duration)."""
    entry: CatalogEntry | None = None
    spec: ServerSpec | None = None
    connection: ServerConnection | None = None
    """Where the call goes: the owning server's connection."""
    facts: CallFacts | None = None
    decision: Decision | None = None
    sent: Mapping[str, Any] = field(default_factory=_nothing)
    """The arguments as sent: file parameters hold the base64 of the bytes read."""
    files: Mapping[str, LocalFile] = field(default_factory=_nothing)
    """Files read for file parameters, by parameter (FILE-3)."""
    cache_key: str | None = None
    cached: types.CallToolResult | None = None
    generation: int = 0
    """The server's cache generation when the cache was looked up (APR-3)."""
    answer: Answer | None = None
    raw: types.CallToolResult | None = None
    server_error: str | None = None
    """The server's own error text, when it answered with a protocol error."""
    result: CallResult | None = None
    unsendable: bool = False
    """The arguments cannot be sent (`sendable_problem`): what is kept of them is a sendable copy."""
    typed_secrets: list[str] = field(default_factory=list)
    """What the user typed into secret-looking fields of a server's form during this call: redacted from its
    result like any secret (a server that echoes a password back never shows it to the model)."""

    def target(self) -> tuple[CatalogEntry, ServerSpec]:
        """The tool and its server, as `resolve` found them."""
        if self.entry is None or self.spec is None:
            raise RuntimeError("the call was not resolved: stages run in order")
        return self.entry, self.spec

    def target_connection(self) -> ServerConnection:
        """Where the call goes, as `resolve` (or, after a card, `recheck`) found it."""
        if self.connection is None:
            raise RuntimeError("the call was not resolved: stages run in order")
        return self.connection

    def decided(self) -> tuple[CatalogEntry, CallFacts, Decision]:
        """The tool, the facts of this call and the decision, as `decide` made it."""
        if self.entry is None or self.facts is None or self.decision is None:
            raise RuntimeError("the call was not decided: stages run in order")
        return self.entry, self.facts, self.decision
