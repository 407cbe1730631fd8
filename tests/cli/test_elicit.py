"""A server's questions in the console (CLI-2, API-3, MOD-3, SEC-2): a form asked field by field on a terminal,
a URL shown and never opened, and every question declined, with one line saying so, where no one can answer.

A run on a terminal is a real process on a pseudo-terminal (the terminal is the subject); piped runs are in-process.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mcpyard.cli._elicit import ConsoleElicitor, NoTerminalElicitor
from mcpyard.elicitation import ElicitationAnswer, ElicitationRequest, request_from_params
from tests._cli import run_mcpyard
from tests.cli.test_chat import on_a_terminal
from tests.conftest import Home, fixture_server
from tests.model.openai_fixture import ModelFixture, serve_model
from tests.servers.elicits import SIGN_IN, SIGN_UP

pytestmark = pytest.mark.anyio

PASSWORD = "tr0ub4dor-and-3-9c2e"


class Typist:
    """Answers each prompt with the next line; keeps the prompts, and which ones were read without echo."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)
        self.prompts: list[tuple[str, bool]] = []

    def line(self, prompt: str) -> str:
        return self._next(prompt, secret=False)

    def secret(self, prompt: str) -> str:
        return self._next(prompt, secret=True)

    def _next(self, prompt: str, *, secret: bool) -> str:
        self.prompts.append((prompt, secret))
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


def asked(schema: dict[str, Any], message: str = "Sign up") -> ElicitationRequest:
    return request_from_params("e", {"message": message, "requestedSchema": schema}, tool="e__sign_up")


async def answer(request: ElicitationRequest, lines: list[str]) -> tuple[ElicitationAnswer, str, Typist]:
    shown = io.StringIO()
    console = Console(file=shown, width=200, highlight=False, markup=False, emoji=False)
    typist = Typist(lines)
    got = await ConsoleElicitor(console, typist.line, typist.secret)(request)
    return got, shown.getvalue(), typist


async def test_cli2_a_form_is_asked_field_by_field_typed_checked_and_read_back_before_it_is_sent() -> None:
    typed = ["a", "A", "Ada", "ada@", "ada@example.org", "forty", "12", "36", "2", "", "11", "", "1,3", "1", "s"]
    got, shown, typist = await answer(asked(SIGN_UP), typed)
    assert got == ElicitationAnswer.accept(
        {"name": "Ada", "email": "ada@example.org", "age": 36, "plan": "pro", "topics": ["mcp"]}
    )
    prompts = [prompt for prompt, _ in typist.prompts]
    assert prompts[0] == "answer? [a]nswer, [d]ecline, [c]ancel: "
    assert prompts[1] == "Your name (text, 2 to 40 characters; required): "
    assert "plan (one of: Free plan, Pro plan; empty for Free plan): " in prompts
    assert "newsletter (yes or no; empty for no): " in prompts
    assert "score (number, 0 to 10; empty for 2.5): " in prompts
    assert "  must have at least 2 characters" in shown
    assert "  must be an email address, like name@example.org" in shown
    assert "  type a whole number" in shown
    assert "  must be at least 18" in shown
    assert "  must be at most 10" in shown
    assert "  choose by number (1 to 2) or by name" in shown
    assert "  plan: 1) Free plan  2) Pro plan" in shown
    assert "  Where we write to you" in shown
    assert "server e asks, during e__sign_up:" in shown
    assert "  plan: Pro plan" in shown, "the answers are read back before they are sent"
    assert "  newsletter: no (its default)" in shown
    assert "  topics: MCP" in shown
    assert not any(secret for _, secret in typist.prompts)


async def test_sec2_a_secret_field_is_read_without_echo_and_never_shown_back() -> None:
    got, shown, typist = await answer(asked(SIGN_IN), ["", "ada", PASSWORD, "s"])
    assert got == ElicitationAnswer.accept({"username": "ada", "password": PASSWORD})
    assert typist.prompts[2] == ("password (text, secret, not shown; required): ", True)
    assert PASSWORD not in shown
    assert "  password: ••••••••" in shown
    assert "this form asks for something secret" in shown


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["d"], ElicitationAnswer.decline()),
        (["c"], ElicitationAnswer.cancel()),
        ([], ElicitationAnswer.cancel()),
        (["a", "ada"], ElicitationAnswer.cancel()),
        (["a", "ada", PASSWORD, "d"], ElicitationAnswer.decline()),
        (
            ["a", "ada", PASSWORD, "e", "bob", "x", "send"],
            ElicitationAnswer.accept({"username": "bob", "password": "x"}),
        ),
    ],
    ids=["decline", "cancel", "end-of-input", "end-of-input-mid-form", "decline-at-the-end", "edit-then-send"],
)
async def test_cli2_a_form_may_be_declined_cancelled_or_edited(lines: list[str], expected: ElicitationAnswer) -> None:
    got, _, _ = await answer(asked(SIGN_IN), lines)
    assert got == expected


async def test_cli2_a_url_is_shown_with_its_site_and_the_person_says_whether_they_open_it() -> None:
    params = {"mode": "url", "message": "Connect your bank", "url": "https://bank.example/link?s=1"}
    request = request_from_params("e", params, tool="e__ask_url")
    got, shown, typist = await answer(request, ["maybe", "a"])
    assert got == ElicitationAnswer.accept()
    assert "it asks you to open: https://bank.example/link?s=1" in shown
    assert "site: bank.example" in shown
    assert "mcpyard does not open it for you" in shown
    assert typist.prompts[-1][0] == "open it? [a]ccept (you open it yourself), [d]ecline, [c]ancel: "


async def test_api3_with_no_one_to_answer_a_question_is_declined_in_one_line() -> None:
    lines: list[str] = []
    elicitor = NoTerminalElicitor("this run has no terminal", lines.append)
    got = await elicitor(asked(SIGN_UP, message="Sign up\nsecond line"))
    assert got == ElicitationAnswer.decline()
    assert lines == [
        "mcpyard: server e asked a question during e__sign_up ('Sign up'); declined: this run has no terminal"
    ]


@pytest.fixture
def config(home: Home) -> Path:
    return home.write_config({"e": fixture_server("elicits")}, mode="auto")


def test_api3_call_without_a_terminal_declines_and_says_where_it_could_be_answered(home: Home, config: Path) -> None:
    done = run_mcpyard(home, "call", "e__sign_up", "--mcp-config", str(config))
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert "action=decline content=null" in done.stdout
    assert (
        "mcpyard: server e asked a question during e__sign_up ('Sign up for the fixture service'); declined: this run "
        "has no terminal; answer it in `mcpyard shell`, or run `mcpyard call` on an interactive terminal"
    ) in done.stderr


def test_cli2_piped_shell_declines_and_its_json_stays_one_object_a_command(home: Home, config: Path) -> None:
    done = run_mcpyard(home, "shell", "--json", "--mcp-config", str(config), stdin="call e__sign_up {}\n")
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if '"ok"' in line]
    assert "action=decline" in line
    assert "declined: this shell reads from a pipe or prints JSON" in done.stderr


def test_sec2_call_on_a_terminal_asks_each_field_and_never_echoes_the_password(home: Home, config: Path) -> None:
    steps = [(b"answer?", b"a"), (b"username (", b"ada"), (b"password (", PASSWORD.encode()), (b"send it?", b"s")]
    code, seen = on_a_terminal(home, ["call", "e__sign_in", "--mcp-config", str(config)], steps)
    assert code == 0, seen
    assert "action=accept user=ada password_length=20" in seen
    assert "password: ••••••••" in seen
    assert PASSWORD not in seen


def test_cli2_the_shell_asks_a_form_inline(home: Home, config: Path) -> None:
    steps = [
        (b"mcpyard> ", b"call e__sign_up {}"),
        (b"answer?", b""),
        (b"Your name (", b"Ada"),
        (b"email (", b"ada@example.org"),
        (b"age (", b"36"),
        (b"plan (", b"pro"),
        (b"newsletter (", b"yes"),
        (b"score (", b""),
        (b"topics (", b""),
        (b"send it?", b"s"),
        (b"mcpyard> ", b"/quit"),
    ]
    code, seen = on_a_terminal(home, ["shell", "--mcp-config", str(config)], steps)
    assert code == 0, seen
    assert '"age": 36' in seen
    assert '"newsletter": true' in seen
    assert '"plan": "pro"' in seen
    assert '"score": 2.5' in seen


@pytest.fixture
def endpoint() -> Iterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


def test_mod3_a_piped_chat_declines_a_servers_question_and_the_model_reads_the_outcome(
    home: Home, config: Path, endpoint: ModelFixture
) -> None:
    endpoint.replies += [{"text": "", "tool_calls": [{"name": "e__sign_up", "arguments": {}}]}, {"text": "Declined."}]
    model = ["--base-url", endpoint.base_url, "--model", "fixture-model"]
    done = run_mcpyard(home, "chat", "--mcp-config", str(config), *model, stdin="Sign me up\n")
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert "declined: this chat reads from a pipe or prints JSON" in done.stderr
    (result,) = endpoint.tool_messages()
    assert "action=decline" in result["content"]


def test_mod3_a_chat_on_a_terminal_asks_the_form_inline(home: Home, config: Path, endpoint: ModelFixture) -> None:
    endpoint.replies += [{"text": "", "tool_calls": [{"name": "e__sign_in", "arguments": {}}]}, {"text": "Signed in."}]
    args = ["chat", "--mcp-config", str(config), "--base-url", endpoint.base_url, "--model", "fixture-model"]
    steps = [
        (b"you> ", b"sign me in"),
        (b"answer?", b"a"),
        (b"username (", b"ada"),
        (b"password (", PASSWORD.encode()),
        (b"send it?", b"s"),
        (b"you> ", b"/quit"),
    ]
    code, seen = on_a_terminal(home, args, steps)
    assert code == 0, seen
    assert "question from a server" in seen
    assert PASSWORD not in seen
    assert "Signed in." in seen
    (result,) = endpoint.tool_messages()
    assert "action=accept user=ada password_length=20" in result["content"]
