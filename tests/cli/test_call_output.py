"""`mcpyard call` as scripts and people meet it: results on standard output, refusals and errors as one line on
standard error, cards asked on a terminal, and what `--yes` and `pin` say about destructive tools (API-3, ERR-1,
POL-1, POL-2, POL-5, APR-1, CLI-2).

A card answered on a terminal is a real process on a pseudo-terminal, since the terminal is the subject."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

import pytest

from tests._cli import run_mcpyard
from tests.conftest import Home, fixture_server


@pytest.fixture
def config(home: Home) -> str:
    return str(home.write_config({"basic": fixture_server("basic"), "h": fixture_server("hostile")}))


def test_api3_err1_a_tool_error_is_one_line_on_stderr_in_the_servers_words(home: Home, config: str) -> None:
    done = run_mcpyard(home, "call", "basic__fail", "--mcp-config", config)
    assert done.returncode == 1
    assert done.stdout == "", "nothing but a result goes to standard output"
    [line] = done.stderr.strip().splitlines()[-1:]
    assert line.startswith("tool_error: ")
    assert "mcp-result-" not in done.stderr, "a person reads the server's message, not the fence"


def test_api3_raw_prints_the_fenced_text_the_model_reads(home: Home, config: str) -> None:
    done = run_mcpyard(home, "call", "basic__fail", "--raw", "--mcp-config", config)
    assert done.returncode == 1
    assert done.stdout.startswith("<mcp-result-")


@pytest.mark.parametrize(
    ("args", "code", "exit_code"),
    [
        (["basic__nope"], "unknown_tool", 2),
        (["basic__add", "--args", '{"a": "x"}'], "invalid_arguments", 2),
        # JSON text may hold a lone surrogate, and NaN is read as a number: neither can be sent (CALL-1).
        (["basic__echo", "--args", '{"text": "\\ud800"}'], "invalid_arguments", 2),
        (["basic__slow", "--args", '{"seconds": NaN}'], "invalid_arguments", 2),
        (["h__bump"], "approval_required", 2),
    ],
)
def test_api3_err1_a_refusal_is_one_line_on_stderr_code_first(
    home: Home, config: str, args: list[str], code: str, exit_code: int
) -> None:
    done = run_mcpyard(home, "call", *args, "--mcp-config", config)
    assert done.returncode == exit_code
    assert done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if not line.startswith("note:")]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"{code}: ")


def test_api3_call1_arguments_that_cannot_be_sent_are_refused_naming_where_and_nothing_is_sent(
    home: Home, config: str
) -> None:
    done = run_mcpyard(home, "call", "basic__echo", "--args", '{"text": "\\udfff"}', "--json", "--mcp-config", config)
    assert done.returncode == 2, done.stderr
    result = json.loads(done.stdout)
    assert result["error"]["code"] == "invalid_arguments"
    message = result["error"]["message"]
    assert "arguments.text: holds a lone surrogate (U+DFFF), which cannot be sent as UTF-8" in message


def test_pol1_with_no_terminal_a_call_that_must_ask_says_where_it_could_be_answered(home: Home, config: str) -> None:
    done = run_mcpyard(home, "call", "h__bump", "--json", "--mcp-config", config)
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "approval_required"
    assert "mcpyard shell" in error["message"]
    assert "--yes" in error["message"]


def test_pol2_yes_says_it_never_approves_a_destructive_tool(home: Home, config: str) -> None:
    done = run_mcpyard(
        home, "call", "h__destroy", "--args", '{"target": "x"}', "--yes", "--json", "--mcp-config", config
    )
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "denied"
    assert "not approved: --yes never approves a destructive tool" in error["message"]
    assert "mcpyard shell" in error["message"]


def test_pol2_pol5_pinning_a_destructive_tool_run_freely_says_it_still_asks(home: Home, config: str) -> None:
    done = run_mcpyard(home, "pin", "h__destroy", "run_freely", "--json", "--mcp-config", config)
    assert done.returncode == 0, done.stderr
    assert "still asks" in json.loads(done.stdout)["note"]
    quiet = run_mcpyard(home, "pin", "h__bump", "run_freely", "--json", "--mcp-config", config)
    assert json.loads(quiet.stdout)["note"] is None


def _on_a_terminal(home: Home, args: list[str], answer: str, deadline: float = 60.0) -> tuple[int, str]:
    """Run `mcpyard ARGS` with a terminal for stdin and stderr; answer the card; return the exit code and all output."""
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpyard", *args],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=follower,
        env=home.environ,
        cwd=home.workspace,
    )
    os.close(follower)
    seen = b""
    answered = False
    end = time.monotonic() + deadline
    try:
        while process.poll() is None and time.monotonic() < end:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(leader, 65536)
                except OSError:  # the terminal closed: the process is ending
                    break
            if not answered and b"allow?" in seen:
                os.write(leader, answer.encode() + b"\n")
                answered = True
        stdout, _ = process.communicate(timeout=max(1.0, end - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    return process.returncode, seen.decode(errors="replace") + stdout.decode(errors="replace")


def test_apr1_on_a_terminal_call_shows_the_card_and_a_person_may_approve_a_destructive_tool(
    home: Home, config: str
) -> None:
    code, output = _on_a_terminal(
        home, ["call", "h__destroy", "--args", '{"target": "x"}', "--mcp-config", config], "o"
    )
    assert "approval needed" in output
    assert "destructive" in output
    assert code == 0, output
    assert "destroyed x" in output


def test_apr1_on_a_terminal_a_denied_card_is_refused(home: Home, config: str) -> None:
    code, output = _on_a_terminal(home, ["call", "h__bump", "--mcp-config", config], "d")
    assert code == 2, output
    assert "denied: " in output
