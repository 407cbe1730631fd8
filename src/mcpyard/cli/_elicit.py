"""Who answers a server's questions (elicitation) in the console: the person at the terminal, or no one.

On a terminal each field of a form is asked in turn, typed from its schema, with its default
shown (an empty line takes it), and asked again until what is typed fits; the answers are read
back (a secret as dots) before anything is sent, and the person may send, edit, decline or
cancel. A field that looks secret (`format: password`, `writeOnly`, or a name or title such as
password, passphrase, secret, token or API key) is read without echo, never shown back and never
logged. A URL is shown with its site, never opened: the person opens it or not, and says so.
Without a terminal every question is declined, with one line on standard error saying so.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcpyard.cli._render import safe
from mcpyard.elicitation import ElicitationAnswer, ElicitationRequest, FormField, check_value, parse_entry, shown_value

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["ConsoleElicitor", "NoTerminalElicitor", "OnePerson", "command_elicitor", "read_secret_on_stderr"]

ReadLine = Callable[[str], str]
"""Shows a prompt, returns the line typed (without its end); raises EOFError at the end of input."""


class OnePerson:
    """One person answers one card or one form at a time, however many calls run at once."""

    def __init__(self) -> None:
        self._lock: Any = None

    def lock(self) -> Any:
        import anyio

        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock


class _Cancelled(Exception):
    """The end of input, or the person chose cancel, in the middle of a form."""


class ConsoleElicitor:
    """Asks a server's question on the terminal: a form field by field, or consent to a URL."""

    def __init__(
        self, console: Console, read_line: ReadLine, read_secret: ReadLine, *, person: OnePerson | None = None
    ) -> None:
        self._console = console
        self._read_line = read_line
        self._read_secret = read_secret
        self._person = person or OnePerson()

    async def __call__(self, request: ElicitationRequest) -> ElicitationAnswer:
        async with self._person.lock():
            self._console.print("── question from a server " + "─" * 33, style="cyan")
            for line in request.lines():
                self._console.print(safe(line))
            try:
                if request.mode == "url":
                    return await self._url()
                return await self._form(request)
            except _Cancelled:
                self._console.print("cancelled: nothing was sent")
                return ElicitationAnswer.cancel()

    async def _url(self) -> ElicitationAnswer:
        while True:
            word = (await self._ask("open it? [a]ccept (you open it yourself), [d]ecline, [c]ancel: ")).strip().lower()
            if word in ("a", "accept", "y", "yes"):
                return ElicitationAnswer.accept()
            if word in ("d", "decline", "n", "no"):
                return ElicitationAnswer.decline()
            if word in ("c", "cancel"):
                return ElicitationAnswer.cancel()

    async def _form(self, request: ElicitationRequest) -> ElicitationAnswer:
        while True:
            word = (await self._ask("answer? [a]nswer, [d]ecline, [c]ancel: ")).strip().lower()
            if word in ("", "a", "answer", "y", "yes"):
                break
            if word in ("d", "decline", "n", "no"):
                return ElicitationAnswer.decline()
            if word in ("c", "cancel"):
                return ElicitationAnswer.cancel()
        while True:
            values: dict[str, Any] = {}
            for field in request.fields:
                value = await self._field(field)
                if value is not None:
                    values[field.name] = value
            self._console.print("you answered:")
            for field in request.fields:
                self._console.print(safe(f"  {field.title}: {_read_back(field, values.get(field.name))}"))
            while True:
                word = (await self._ask("send it? [s]end, [e]dit, [d]ecline, [c]ancel: ")).strip().lower()
                if word in ("s", "send", "y", "yes"):
                    return ElicitationAnswer.accept(values)
                if word in ("e", "edit"):
                    break
                if word in ("d", "decline", "n", "no"):
                    return ElicitationAnswer.decline()
                if word in ("c", "cancel"):
                    return ElicitationAnswer.cancel()

    async def _field(self, field: FormField) -> Any:
        """The value of one field, asked until it fits; None when left empty (its default, if any, applies)."""
        if field.choices:
            listed = "  ".join(f"{i}) {choice.title}" for i, choice in enumerate(field.choices, start=1))
            self._console.print(safe(f"  {field.title}: {listed}"))
        if field.description:
            self._console.print(safe(f"  {field.description}"), style="dim")
        rules = [field.describe()]
        if field.default is not None and not field.secret:
            rules.append(f"empty for {shown_value(field, field.default)}")
        elif field.required:
            rules.append("required")
        prompt = safe(f"{field.title} ({'; '.join(rules)}): ")
        while True:
            typed = await self._ask(prompt, secret=field.secret)
            try:
                value = parse_entry(field, typed)
            except ValueError as exc:
                self._console.print(f"  {exc}", style="yellow")
                continue
            if value is None:
                if field.required and field.default is None:
                    self._console.print("  required: type a value", style="yellow")
                    continue
                return None
            checked, problem = check_value(field, value)
            if problem is not None:
                self._console.print(f"  {problem}", style="yellow")
                continue
            return checked

    async def _ask(self, prompt: str, *, secret: bool = False) -> str:
        from mcpyard._daemon_read import read_in_daemon_thread

        read = self._read_secret if secret else self._read_line
        try:
            # Given up when its task is: the server's question is handled by its connection's task, which
            # Ctrl-C ends without waiting for a line.
            line = await read_in_daemon_thread(read, prompt, abandon_on_cancel=True)
        except EOFError:
            raise _Cancelled from None
        return line.removesuffix("\n").removesuffix("\r")


def _read_back(field: FormField, value: Any) -> str:
    if value is None and field.default is not None:
        return f"{shown_value(field, field.default)} (its default)"
    return shown_value(field, value)


class NoTerminalElicitor:
    """No one can answer here: every question is declined, and one line on standard error says why."""

    def __init__(self, why: str, write: Callable[[str], None] | None = None) -> None:
        self._why = why
        self._write = write or _write_stderr

    async def __call__(self, request: ElicitationRequest) -> ElicitationAnswer:
        during = f" during {request.tool}" if request.tool else ""
        first = (request.message.splitlines() or [""])[0][:120]
        line = f"mcpyard: server {request.server} asked a question{during} ({first!r}); declined: {self._why}"
        self._write(safe(line))
        return ElicitationAnswer.decline()


NO_TERMINAL_QUESTION = (
    "this run has no terminal; answer it in `mcpyard shell`, or run `mcpyard call` on an interactive terminal"
)


def _write_stderr(line: str) -> None:
    sys.stderr.write(" ".join(line.split("\n")) + "\n")
    sys.stderr.flush()


def read_secret_on_stderr(prompt: str) -> str:
    """Read a line from standard input without echo, the prompt on standard error.

    Echo is turned off on standard input's own terminal (not `/dev/tty`, which may be another one)
    and back on afterwards, whatever happens.

    Raises:
        EOFError: at the end of input.
    """
    from mcpyard._daemon_read import interruptible, readline_from_stdin

    try:
        import termios
    except ImportError:  # Windows: getpass reads the console without echo
        import getpass

        return getpass.getpass(prompt, stream=sys.stderr)
    fd = sys.stdin.fileno()
    interruptible(fd)  # given up, the echo is back on before the program goes on
    before = termios.tcgetattr(fd)
    quiet = termios.tcgetattr(fd)
    quiet[3] &= ~termios.ECHO
    try:
        # Echo goes off before the prompt shows: nothing typed after it is ever echoed.
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        sys.stderr.write(prompt)
        sys.stderr.flush()
        line = readline_from_stdin()
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, before)
        sys.stderr.write("\n")
        sys.stderr.flush()
    if not line:
        raise EOFError
    return line


def command_elicitor(console: Console | None, read_line: ReadLine) -> ConsoleElicitor | NoTerminalElicitor:
    """The elicitor of a one-shot command: the person at the terminal (`console`), or no one.

    Args:
        console: where to show questions to a person (a terminal), or None when there is none.
        read_line: how that person's lines are read (the prompt where the question is shown).
    """
    if console is None:
        return NoTerminalElicitor(NO_TERMINAL_QUESTION)
    return ConsoleElicitor(console, read_line, read_secret_on_stderr)
