"""Ctrl-C while mcpyard waits for a person to type (on a terminal): it exits at once, whatever it was reading.

A read of the terminal still waiting when the command ends (at a prompt, at an approval card, the
stdio gateway's own input) used to keep the process alive until Enter was pressed.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests._processes import left_of, read_pid, wrapped_basic
from tests.conftest import Home, fixture_server
from tests.model.openai_fixture import serve_model

EXIT_WITHIN_SECS = 5.0
"""Ctrl-C takes under a second; the margin is for a loaded machine. Before the fix: never, until Enter."""
READY_WITHIN_SECS = 60.0


_ON_THE_TERMINAL = (
    "import fcntl, os, signal, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "signal.signal(signal.SIGINT, getattr(signal, sys.argv[1])); os.execv(sys.argv[2], sys.argv[2:])"
)
"""Run as from a shell on a terminal: the terminal is the process's own (its session's), Ctrl-C at the disposition its
first argument names (`SIG_DFL`, `SIG_IGN`)."""


class Terminal:
    """`mcpyard ARGS` on a terminal of its own: standard input, output and error; `ignoring_ctrl_c`: started with Ctrl-C
    ignored, as by a parent's `trap '' INT`."""

    def __init__(self, home: Home, args: list[str], *, ignoring_ctrl_c: bool = False) -> None:
        self.leader, follower = os.openpty()
        ctrl_c = "SIG_IGN" if ignoring_ctrl_c else "SIG_DFL"
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ON_THE_TERMINAL, ctrl_c, sys.executable, "-m", "mcpyard", *args],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env=home.environ,
            cwd=home.workspace,
            start_new_session=True,
        )
        os.close(follower)
        self.seen = b""

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        os.close(self.leader)

    def read_some(self, timeout: float) -> None:
        ready, _, _ = select.select([self.leader], [], [], timeout)
        if ready:
            with contextlib.suppress(OSError):  # the terminal closed: the process has ended
                self.seen += os.read(self.leader, 65536)

    def wait_for(self, text: bytes, *, after: int = 0) -> None:
        """Until `text` shows (from the `after`th byte shown on)."""
        end = time.monotonic() + READY_WITHIN_SECS
        while text not in self.seen[after:]:
            left = end - time.monotonic()
            assert left > 0, f"never saw {text!r}: {self.seen[-500:]!r}"
            assert self.process.poll() is None, f"ended before {text!r}: {self.seen[-500:]!r}"
            self.read_some(min(left, 0.5))

    def type(self, line: bytes) -> None:
        os.write(self.leader, line + b"\n")

    def ctrl_c(self, *, again_after: float | None = None) -> tuple[int | None, float, str]:
        """Ctrl-C (and again `again_after` seconds later, as a person pressing twice): the exit code (None: still
        running), how long it took from the first, and what the terminal showed after it."""
        before = len(self.seen)
        started = time.monotonic()
        self.process.send_signal(signal.SIGINT)
        while self.process.poll() is None and time.monotonic() - started < EXIT_WITHIN_SECS:
            if again_after is not None and time.monotonic() - started >= again_after:
                self.process.send_signal(signal.SIGINT)
                again_after = None
            self.read_some(0.05)  # read on, or a full terminal would hold up its writes
        took = time.monotonic() - started
        self.read_some(0)
        return self.process.poll(), took, self.seen[before:].decode(errors="replace")


def _shell_or_chat(
    stack: contextlib.ExitStack, face: str, config: Path, replies: Sequence[dict[str, Any]] = ()
) -> tuple[list[str], bytes]:
    """The arguments of `mcpyard shell` or of `mcpyard chat` (its model, answering `replies`, served until `stack`
    closes), and the prompt it shows."""
    if face == "shell":
        return ["shell", "--mcp-config", str(config)], b"mcpyard> "
    endpoint = stack.enter_context(serve_model(replies))
    return ["chat", "--mcp-config", str(config), "--base-url", endpoint.base_url, "--model", "fixture-model"], b"you> "


def test_conn5_gw1_ctrl_c_stops_the_stdio_gateway_on_a_terminal(home: Home) -> None:
    config = home.write_config({"basic": fixture_server("basic")})
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    with Terminal(home, ["serve", "--share-all", "--mcp-config", str(config)]) as terminal:
        terminal.type(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode())
        terminal.wait_for(b'"serverInfo"')  # it serves on the terminal, and waits for the next line
        code, took, said = terminal.ctrl_c()
    assert code == 130, f"still running {took:.1f} s after Ctrl-C: {said!r}"
    assert "interrupted" in said
    assert "Traceback" not in said


def test_conn5_apr1_ctrl_c_at_an_approval_card_ends_the_call_at_once(home: Home) -> None:
    config = home.write_config({"h": fixture_server("hostile")})
    with Terminal(home, ["call", "h__bump", "--mode", "ask", "--mcp-config", str(config)]) as terminal:
        terminal.wait_for(b"allow?")
        code, took, said = terminal.ctrl_c()
    assert code == 130, f"still running {took:.1f} s after Ctrl-C: {said!r}"
    assert "interrupted" in said


def test_conn5_cli2_ctrl_c_at_the_shell_prompt_ends_the_shell_at_once(home: Home) -> None:
    config = home.write_config({"basic": fixture_server("basic")})
    with Terminal(home, ["shell", "--mcp-config", str(config)]) as terminal:
        terminal.wait_for(b"mcpyard> ")
        code, took, said = terminal.ctrl_c()
    assert code is not None, f"still running {took:.1f} s after Ctrl-C: {said!r}"
    assert "Traceback" not in said


def test_conn5_ctrl_c_at_a_servers_question_ends_the_call_at_once(home: Home) -> None:
    config = home.write_config({"e": fixture_server("elicits")}, mode="auto")
    with Terminal(home, ["call", "e__sign_in", "--mcp-config", str(config)]) as terminal:
        terminal.wait_for(b"answer?")
        code, took, said = terminal.ctrl_c()
    assert code == 130, f"still running {took:.1f} s after Ctrl-C: {said!r}"


def test_conn5_mod3_ctrl_c_at_the_chat_prompt_ends_the_chat_at_once(home: Home) -> None:
    config = home.write_config({"basic": fixture_server("basic")})
    with serve_model() as endpoint:
        args = ["chat", "--mcp-config", str(config), "--base-url", endpoint.base_url, "--model", "fixture-model"]
        with Terminal(home, args) as terminal:
            terminal.wait_for(b"you> ")
            code, took, said = terminal.ctrl_c()
    assert code is not None, f"still running {took:.1f} s after Ctrl-C: {said!r}"
    assert "Traceback" not in said


@pytest.mark.parametrize("face", ["shell", "chat"])
@pytest.mark.parametrize("at", ["the question", "its secret field"])
def test_conn5_cli2_mod3_a_question_given_up_with_its_call_takes_no_line_of_the_next_prompts(
    home: Home, face: str, at: str
) -> None:
    """Ctrl-C cancels the call and the server's question with it; the next lines typed are the prompt's, and shown as
    they are typed (a secret field's read turned echo off)."""
    config = home.write_config({"e": fixture_server("elicits")}, mode="auto")
    with contextlib.ExitStack() as stack:
        signing_in = [{"text": "Signing in.", "tool_calls": [{"name": "e__sign_in", "arguments": {}}]}]
        args, prompt = _shell_or_chat(stack, face, config, signing_in)
        terminal = stack.enter_context(Terminal(home, args))
        terminal.wait_for(prompt)
        terminal.type(b"call e__sign_in" if face == "shell" else b"sign me in")
        terminal.wait_for(b"answer?")
        if at == "its secret field":
            terminal.type(b"a")
            terminal.wait_for(b"username")
            terminal.type(b"ada")
            terminal.wait_for(b"password")
        asked = len(terminal.seen)
        terminal.process.send_signal(signal.SIGINT)
        terminal.wait_for(prompt, after=asked)
        for _ in range(2):
            typed = len(terminal.seen)
            terminal.type(b"/tools")
            terminal.wait_for(b"/tools", after=typed)  # shown as typed
            terminal.wait_for(b"e__sign_in", after=typed)  # the listing: the line went to the prompt, not the question
        terminal.type(b"/quit")
        assert terminal.process.wait(timeout=READY_WITHIN_SECS) == 0, terminal.seen[asked:].decode(errors="replace")


@pytest.mark.parametrize("face", ["shell", "chat"])
@pytest.mark.parametrize("presses", ["once", "twice"])
def test_conn5_cli2_mod3_ctrl_c_at_the_prompt_stops_a_wrapper_that_outlives_its_server_within_a_second(
    home: Home, face: str, presses: str
) -> None:
    """Ending the shell or the chat with Ctrl-C stops the servers in a hurry, as any Ctrl-C does: a wrapper that goes
    on once its server exits is not given its whole wait (5 s before). Pressed twice, with a wrapper deaf to SIGTERM:
    the second kills it at once (it used to cut the stop short, and the wrapper then had 2 s more)."""
    config = home.write_config({"w": wrapped_basic(home, deaf=presses == "twice")}, mode="auto")
    with contextlib.ExitStack() as stack:
        args, prompt = _shell_or_chat(stack, face, config)
        terminal = stack.enter_context(Terminal(home, args))
        terminal.wait_for(prompt)
        wrapper = read_pid(home.root / "wrapper.pid")
        code, took, said = terminal.ctrl_c(again_after=0.15 if presses == "twice" else None)
    assert code == 0, f"still running {took:.1f} s after Ctrl-C: {said!r}"
    assert took < 1.0, f"mcpyard took {took:.2f} s to exit after Ctrl-C"
    assert left_of(wrapper, wrapper) == [], "every process was stopped before mcpyard exited"


@pytest.mark.parametrize("face", ["shell", "chat"])
def test_conn5_cli2_mod3_started_with_ctrl_c_ignored_the_shell_and_the_chat_go_on_ignoring_it(
    home: Home, face: str
) -> None:
    """Started with Ctrl-C ignored (a parent's `trap '' INT`), the prompt does not end on one (its listener used to take
    it, and leave Python's default handler behind)."""
    config = home.write_config({"basic": fixture_server("basic")})
    with contextlib.ExitStack() as stack:
        args, prompt = _shell_or_chat(stack, face, config)
        terminal = stack.enter_context(Terminal(home, args, ignoring_ctrl_c=True))
        terminal.wait_for(prompt)
        for _ in range(2):
            typed = len(terminal.seen)
            terminal.process.send_signal(signal.SIGINT)
            terminal.type(b"/tools")
            terminal.wait_for(b"basic__echo", after=typed)  # still there, and the prompt still reads what is typed
            terminal.wait_for(prompt, after=typed)
        terminal.type(b"/quit")
        assert terminal.process.wait(timeout=READY_WITHIN_SECS) == 0, terminal.seen.decode(errors="replace")
