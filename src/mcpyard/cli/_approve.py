"""Who answers a command's approval cards: the person at the terminal, `--yes`, or no one (APR-1, POL-1, POL-2)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcpyard.cli._render import safe
from mcpyard.policy import NO_TERMINAL, Answer, ApprovalCard, Approver, Declined, YesApprover

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "ConsoleApprover",
    "NoTerminalApprover",
    "TerminalYesApprover",
    "ask_on_stderr",
    "command_approver",
    "has_terminal",
]


class ConsoleApprover:
    """Shows each card on the terminal and asks: allow once, for this session, or deny (APR-1)."""

    def __init__(self, console: Console, read_line: Callable[[str], str]) -> None:
        self._console = console
        self._read_line = read_line

    async def __call__(self, card: ApprovalCard) -> Answer:
        from mcpyard._daemon_read import read_in_daemon_thread

        self._console.print("── approval needed " + "─" * 40, style="yellow")
        for line in card.lines():
            self._console.print(safe(line))
        choices = "[o]nce, [s]ession, [d]eny" if card.offers_session else "[o]nce, [d]eny"
        while True:
            try:
                raw = await read_in_daemon_thread(self._read_line, f"allow? {choices}: ")
            except EOFError:
                return "deny"
            answer = raw.strip().lower()
            if answer in ("o", "once", "y", "yes"):
                return "once"
            if answer in ("s", "session") and card.offers_session:
                return "session"
            if answer in ("d", "deny", "n", "no", ""):
                return "deny"


class NoTerminalApprover:
    """A run with no terminal and no `--yes` (POL-1): every card is refused, saying where it could be answered.

    Raises:
        Declined: `approval_required`, for every card.
    """

    async def __call__(self, card: ApprovalCard) -> Answer:
        yes = "" if card.destructive else ", or pass --yes to answer it"
        message = f"needs approval: {card.reason}; this run has no terminal: {NO_TERMINAL}{yes}"
        raise Declined("approval_required", message)


class TerminalYesApprover:
    """`--yes` on a terminal: "once" to every card but a destructive tool's, which the person there answers."""

    def __init__(self, person: Approver) -> None:
        self._yes = YesApprover(say_why=True)
        self._person = person

    async def __call__(self, card: ApprovalCard) -> Answer:
        if card.destructive:
            return await self._person(card)
        return await self._yes(card)


def has_terminal() -> bool:
    """Whether a person can answer a card here: standard input and standard error are both a terminal."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def command_approver(*, yes: bool, console: Console | None) -> Approver:
    """The approver of a one-shot command: the person at the terminal (`console`), helped by `--yes`, or no one.

    Args:
        yes: `--yes` was given: "once" to every card but a destructive tool's.
        console: where to show cards to a person (a terminal), or None when there is none.
    """
    if console is None:
        return YesApprover(say_why=True) if yes else NoTerminalApprover()
    person = ConsoleApprover(console, ask_on_stderr)
    return TerminalYesApprover(person) if yes else person


def ask_on_stderr(prompt: str) -> str:
    """Read a line from standard input, the prompt on standard error (where cards and forms are shown).

    Given up (a server's question whose call was cancelled), a read waiting for a line on a
    terminal takes none: the next line typed is the next prompt's.

    Raises:
        EOFError: at the end of input.
    """
    from mcpyard._daemon_read import readline_from_stdin

    # The prompt goes where the card is (standard error), so standard output carries only the result.
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = readline_from_stdin()
    if not line:
        raise EOFError
    return line
