"""Approval cards and the approvers that answer them (APR-1): console, scripted, and `--yes`."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

__all__ = [
    "Answer",
    "ApprovalCard",
    "Approver",
    "Declined",
    "FileFacts",
    "InboxApprover",
    "ParkedCard",
    "ScriptedApprover",
    "YesApprover",
    "preview_arguments",
]

Answer = Literal["once", "session", "deny"]
PREVIEW_LIMIT = 2000
NO_TERMINAL = "answer its card in `mcpyard shell`, or run `mcpyard call` on an interactive terminal"
"""Where a person can answer a card that a run without a terminal cannot show."""


class Declined(Exception):
    """An approver's refusal in words of its own: the call is refused with this code and message, nothing sent.

    An approver raises it instead of answering "deny" when the person or program it stands for
    should read why (`--yes` never approves a destructive tool; a run with no terminal).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class FileFacts:
    """A local file a call sends: never its bytes (FILE-3)."""

    path: str
    size: int
    sha256: str

    def line(self) -> str:
        return f"{self.path} ({self.size} bytes, sha256 {self.sha256})"


@dataclass(frozen=True, slots=True)
class ApprovalCard:
    """Everything a person needs to decide on one call (APR-1)."""

    tool: str
    """The full model-facing tool name."""
    server: str
    server_tool: str
    arguments_preview: str
    """The arguments as JSON, secrets redacted, file contents replaced by their facts, cut if long."""
    annotations: Mapping[str, Any]
    reason: str
    """Why it asks."""
    files: tuple[FileFacts, ...] = ()
    offers_session: bool = False
    """Whether "allow for this session" may be chosen (never for destructive tools or file-sending calls)."""
    destructive: bool = False
    cached: bool = False
    """The earlier result of the same call will be given again, without contacting the server (CALL-6)."""

    def __post_init__(self) -> None:
        # "Allow for this session" is never offered for a destructive tool or a file-sending call (POL-2, FILE-5).
        if self.offers_session and (self.destructive or self.files):
            object.__setattr__(self, "offers_session", False)

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "server": self.server,
            "server_tool": self.server_tool,
            "arguments": self.arguments_preview,
            "annotations": dict(self.annotations),
            "reason": self.reason,
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files],
            "offers_session": self.offers_session,
            "destructive": self.destructive,
            "cached": self.cached,
        }

    def lines(self) -> list[str]:
        """The card as plain lines, for a console or a log."""
        hints = ", ".join(f"{key}={json.dumps(value)}" for key, value in self.annotations.items()) or "none"
        out = [
            f"tool {self.tool} (server {self.server}, its name there: {self.server_tool})",
            f"why it asks: {self.reason}",
            f"annotations: {hints}",
            f"arguments: {self.arguments_preview}",
        ]
        out += [f"file: {facts.line()}" for facts in self.files]
        if self.cached:
            out.append("the same call ran before: its earlier result will be given again, the server is not contacted")
        choices = "allow once / allow for this session / deny" if self.offers_session else "allow once / deny"
        out.append(f"answer: {choices}")
        return out


Approver = Callable[[ApprovalCard], Awaitable[Answer]]
"""Any `async (card) -> "once" | "session" | "deny"`: the console asks a person, the gateway refuses,
the organization service parks the call in its inbox until someone answers."""


def preview_arguments(arguments: Mapping[str, Any], files: Mapping[str, FileFacts] | None = None) -> str:
    """Arguments as compact JSON with file parameters shown by their facts, cut to a readable length."""
    shown = dict(arguments)
    for name, facts in (files or {}).items():
        shown[name] = f"<file {facts.line()}>"
    text = json.dumps(shown, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) > PREVIEW_LIMIT:
        text = text[:PREVIEW_LIMIT] + f"… ({len(text)} characters in all)"
    return text


@dataclass
class ScriptedApprover:
    """Answers cards from a list, in order, and keeps every card it saw: for tests and scripts."""

    answers: list[Answer] = field(default_factory=list)
    default: Answer = "deny"
    cards: list[ApprovalCard] = field(default_factory=list)

    @classmethod
    def always(cls, answer: Answer) -> ScriptedApprover:
        return cls(default=answer)

    async def __call__(self, card: ApprovalCard) -> Answer:
        self.cards.append(card)
        answer = self.answers.pop(0) if self.answers else self.default
        if answer == "session" and not card.offers_session:
            return "deny"
        return answer


@dataclass
class YesApprover:
    """`--yes`: "once" to every card except a destructive tool's, which a non-interactive run refuses (POL-2).

    With `say_why`, a destructive tool's card is refused in words (`Declined`) rather than with a
    plain "deny", so the person who ran the command reads that `--yes` never approves one.
    """

    cards: list[ApprovalCard] = field(default_factory=list)
    say_why: bool = False

    async def __call__(self, card: ApprovalCard) -> Answer:
        self.cards.append(card)
        if not card.destructive:
            return "once"
        if self.say_why:
            raise Declined("denied", f"not approved: --yes never approves a destructive tool; {NO_TERMINAL}")
        return "deny"


@dataclass(eq=False)
class ParkedCard:
    """A card waiting in an `InboxApprover` until someone answers it."""

    card: ApprovalCard
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: Answer = "deny"


class InboxApprover:
    """Parks each card until someone answers it from another task: the in-memory twin of an approval inbox.

    The call waits (parked) meanwhile; `arrived` tells of each new card, and `answer(card, …)`
    lets the call go on.
    """

    def __init__(self) -> None:
        self.pending: list[ParkedCard] = []
        self._arrived = anyio.Event()

    async def __call__(self, card: ApprovalCard) -> Answer:
        parked = ParkedCard(card)
        self.pending.append(parked)
        self._arrived.set()
        self._arrived = anyio.Event()
        try:
            await parked.answered.wait()
        finally:
            self.pending.remove(parked)
        return parked.answer

    async def waiting(self, count: int = 1) -> list[ParkedCard]:
        """The cards waiting, oldest first, once at least `count` do (bound it with `anyio.fail_after`)."""
        while len(self.pending) < count:
            await self._arrived.wait()
        return list(self.pending)

    def answer(self, parked: ParkedCard, answer: Answer) -> None:
        parked.answer = answer
        parked.answered.set()
