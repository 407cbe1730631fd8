"""Every call leaves a record: the `CallRecorder` seam and the session's own history (trace, audit)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, Protocol

__all__ = ["CallRecord", "CallRecorder", "CallStatus", "FileRecord", "MemoryRecorder", "Recorders"]

NO_TAGS: Mapping[str, str] = MappingProxyType({})
"""A call without tags."""

CallStatus = Literal["ran", "failed", "refused", "cached"]
"""`ran`: the server answered and the tool reported no error; `failed`: it was sent but ended in an error
(the tool's, the server's, a timeout, a lost connection); `refused`: nothing was sent; `cached`: an earlier
result was given again (CALL-6)."""


class FileRecord(NamedTuple):
    """A local file a call sent: never its bytes (FILE-3)."""

    path: str
    size: int
    sha256: str


class CallRecord(NamedTuple):
    """One call as it went, with secrets redacted: who asked what, what was decided, how it ended.

    Immutable (a named tuple: one is made for every call, so it is cheap to make).

    Attributes:
        started_at: when the call began, in seconds since the epoch (`at` as a datetime).
        conversation: whose result handles it made.
        server: the server's id (None for a name no server owns).
        tool: the model-facing name asked for.
        server_tool: the tool's name on its server, once known.
        arguments: the arguments as given (file parameters hold their paths), redacted.
        files: the files sent, by path, size and SHA-256.
        decision: `run`, `ask` or `refuse`, once decided; None when refused before a decision.
        why: why it was decided so, or why it was refused.
        answer: what the approver answered (`once`, `session`, `deny`), when one was asked.
        status: see `CallStatus`.
        error_code: the `CallResult.error` code, when not ok.
        duration_ms: from the start of the call to its result.
        result_bytes: the size of the text the model read (UTF-8).
        summary: the start of the result or error, redacted and cleaned (at most 200 characters).
        tags: the labels the caller gave the call (`Host.call(tags=...)`), as given.
    """

    started_at: float
    conversation: str
    server: str | None
    tool: str
    server_tool: str | None
    arguments: Mapping[str, Any]
    files: tuple[FileRecord, ...]
    decision: str | None
    why: str
    answer: str | None
    status: CallStatus
    error_code: str | None
    duration_ms: float
    result_bytes: int
    summary: str
    tags: Mapping[str, str] = NO_TAGS

    @property
    def at(self) -> datetime:
        """When the call began (UTC)."""
        return datetime.fromtimestamp(self.started_at, UTC)

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at.isoformat(),
            "conversation": self.conversation,
            "server": self.server,
            "tool": self.tool,
            "server_tool": self.server_tool,
            "arguments": self.arguments,
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files],
            "decision": self.decision,
            "why": self.why,
            "answer": self.answer,
            "status": self.status,
            "error_code": self.error_code,
            "duration_ms": round(self.duration_ms, 3),
            "result_bytes": self.result_bytes,
            "summary": self.summary,
            **({"tags": dict(self.tags)} if self.tags else {}),
        }


class CallRecorder(Protocol):
    """Takes each call's record as the call ends: the console keeps them, the organization service stores them."""

    async def record(self, record: CallRecord) -> None: ...


class MemoryRecorder:
    """The last `limit` records of a session, oldest first (`host.history()`, `/history` in the shell)."""

    def __init__(self, limit: int = 1000) -> None:
        self._records: deque[CallRecord] = deque(maxlen=limit)

    async def record(self, record: CallRecord) -> None:
        self._records.append(record)

    def records(self) -> list[CallRecord]:
        return list(self._records)


class Recorders:
    """Hands each record to several recorders in turn; one that fails does not stop the others."""

    def __init__(self, recorders: Sequence[CallRecorder]) -> None:
        self._recorders = tuple(recorders)

    async def record(self, record: CallRecord) -> None:
        failure: Exception | None = None
        for recorder in self._recorders:
            try:
                await recorder.record(record)
            except Exception as exc:  # the next recorder still gets the record; the first failure is raised
                failure = failure or exc
        if failure is not None:
            raise failure
