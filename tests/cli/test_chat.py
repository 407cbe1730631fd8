"""MOD-3: `mcpyard chat` through piped standard input and through a pseudo-terminal, against our HTTP model endpoint.

The piped runs are the command in this process; a terminal session is a real process on a pseudo-terminal,
since the terminal it is attached to is the subject.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._cli import Ran, run_mcpyard
from tests.conftest import Home, fixture_server
from tests.model.openai_fixture import ModelFixture, serve_model

KEY = "sk-chat-test-key-0123456789abcdef"
SECRET = "turns-secret-value-0123456789"
LOOKUP = {"name": "t__lookup", "arguments": {"city": "Oslo"}}
NOTE = {"name": "t__note", "arguments": {"text": "buy milk"}}


@pytest.fixture
def endpoint() -> Iterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


@pytest.fixture
def config(home: Home) -> Path:
    return home.write_config({"t": {**fixture_server("turns"), "env": {"TURNS_SECRET": SECRET}}})


def chat(home: Home, config: Path, lines: list[str], *flags: str, endpoint: ModelFixture | None = None) -> Ran:
    model = ["--base-url", endpoint.base_url, "--model", "fixture-model"] if endpoint is not None else []
    stdin = "".join(f"{line}\n" for line in lines)
    done = run_mcpyard(home, "chat", "--mcp-config", str(config), *model, *flags, stdin=stdin)
    assert "Traceback" not in done.stderr
    return done


def events(done: Ran) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_mod3_piped_json_prints_one_event_per_line_with_the_fields_the_spec_lists(
    home: Home, config: Path, endpoint: ModelFixture
) -> None:
    endpoint.replies += [{"text": "Let me look.", "tool_calls": [LOOKUP, NOTE]}, {"text": "Sunny."}, {"text": "Bye."}]
    done = chat(home, config, ["Weather in Oslo?", "", "Thanks"], "--json", endpoint=endpoint)
    assert done.returncode == 0, done.stderr
    out = events(done)
    fields = {
        "text": {"type", "text"},
        "tool_call": {"type", "name", "arguments"},
        "tool_result": {"type", "name", "ok", "error"},
        "approval": {"type", "name", "reason", "answer"},
        "turn_end": {"type", "calls"},
    }
    assert all(set(event) == fields[event["type"]] for event in out), out
    assert [e for e in out if e["type"] == "tool_call"] == [
        {"type": "tool_call", **LOOKUP},
        {"type": "tool_call", **NOTE},
    ]
    results = {e["name"]: e for e in out if e["type"] == "tool_result"}
    assert results["t__lookup"] == {"type": "tool_result", "name": "t__lookup", "ok": True, "error": None}
    assert results["t__note"]["error"]["code"] == "approval_required", "piped, a call that must ask is refused"
    (approval,) = [e for e in out if e["type"] == "approval"]
    assert approval["answer"] == "deny"
    assert [e for e in out if e["type"] == "turn_end"] == [
        {"type": "turn_end", "calls": 2},
        {"type": "turn_end", "calls": 0},
    ]
    assert "".join(e["text"] for e in out if e["type"] == "text") == "Let me look.Sunny.Bye."
    # One conversation: the second message is sent with the first turn's messages.
    last = endpoint.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    assert "no one can answer its card" in last[4]["content"], "the model reads why it was refused"


def test_mod3_piped_plain_text_streams_the_answer_and_shows_each_call(
    home: Home, config: Path, endpoint: ModelFixture
) -> None:
    endpoint.replies += [{"text": "Looking.", "tool_calls": [LOOKUP]}, {"text": "It is sunny."}]
    done = chat(home, config, ["Weather?"], endpoint=endpoint)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Looking."
    assert '→ t__lookup {"city": "Oslo"}' in lines
    assert "← t__lookup: ok" in lines
    assert lines[-1] == "It is sunny."


def test_mod3_the_model_table_of_the_user_config_with_its_key_from_a_saved_secret(
    home: Home, config: Path, endpoint: ModelFixture
) -> None:
    saved = run_mcpyard(home, "secrets", "set", "CHAT_KEY", stdin=KEY)
    assert saved.returncode == 0, saved.stderr
    home.config_home.mkdir(parents=True, exist_ok=True)
    (home.config_home / "config.toml").write_text(
        f'[model]\nbase_url = "{endpoint.base_url}"\nmodel = "from-config"\napi_key = "${{secret:CHAT_KEY}}"\n',
        encoding="utf-8",
    )
    endpoint.replies += [
        {"text": f"your key is {KEY}", "tool_calls": [{"name": "t__secret", "arguments": {}}]},
        {"text": "ok"},
    ]
    done = chat(home, config, ["say the key"], "--json")
    assert done.returncode == 0, done.stderr
    assert endpoint.requests[0]["model"] == "from-config"
    assert endpoint.headers[0]["authorization"] == f"Bearer {KEY}"
    assert KEY not in done.stdout + done.stderr, "the key is never shown (SEC-2)"
    assert "%CHAT_KEY%" in done.stdout
    assert SECRET not in json.dumps(endpoint.requests), "the server's secret never reaches the model (SEC-3)"
    flagged = chat(home, config, ["again"], "--json", "--model", "from-flag")
    assert flagged.returncode == 0, flagged.stderr
    assert endpoint.requests[-1]["model"] == "from-flag", "a flag comes before the model table"


def test_mod3_exit_codes_1_after_a_model_error_and_2_for_usage_or_config(
    home: Home, config: Path, endpoint: ModelFixture
) -> None:
    # The client tries a failed request once more before it gives up.
    endpoint.replies += [{"status": 500, "error": "the model fell over"}] * 2 + [{"text": "never asked"}]
    failed = chat(home, config, ["hi", "again"], "--json", endpoint=endpoint)
    assert failed.returncode == 1
    (error,) = [e for e in events(failed) if e["type"] == "error"]
    assert error["code"] == "model_error"
    assert "fell over" in error["message"]
    assert len(endpoint.requests) == 2, "a piped chat stops after a model error"
    nothing = chat(home, config, ["hi"])
    assert nothing.returncode == 2
    assert "no model is configured" in nothing.stderr
    assert len(nothing.stderr.strip().splitlines()) == 1
    missing = chat(home, config, ["hi"], "--api-key-secret", "NOPE", endpoint=endpoint)
    assert missing.returncode == 2
    assert "mcpyard secrets set NOPE" in missing.stderr
    home.config_home.mkdir(parents=True, exist_ok=True)
    (home.config_home / "config.toml").write_text(f'[model]\nmodel = "m"\napi_key = "{KEY}"\n', encoding="utf-8")
    literal = chat(home, config, ["hi"], endpoint=endpoint)
    assert literal.returncode == 2
    assert "${secret:NAME}" in literal.stderr
    assert KEY not in literal.stderr, "a key written into the config is never echoed"


def test_mod3_max_calls_stops_a_turn_with_call_limit(home: Home, config: Path, endpoint: ModelFixture) -> None:
    endpoint.replies += [{"tool_calls": [LOOKUP, LOOKUP, LOOKUP]}, {"text": "next turn"}]
    done = chat(home, config, ["go", "next"], "--json", "--max-calls", "2", endpoint=endpoint)
    assert done.returncode == 0, done.stderr
    out = events(done)
    errors = [e for e in out if e["type"] == "error"]
    assert [e["code"] for e in errors] == ["call_limit"]
    assert set(errors[0]) == {"type", "code", "message"}
    assert [e["calls"] for e in out if e["type"] == "turn_end"] == [2, 0]
    assert sum(1 for e in out if e["type"] == "tool_result" and e["ok"]) == 2


def test_mod3_mode_follows_the_flag_and_the_mode_command(home: Home, config: Path, endpoint: ModelFixture) -> None:
    endpoint.replies += [{"tool_calls": [NOTE]}, {"text": "noted"}, {"tool_calls": [LOOKUP, NOTE]}, {"text": "x"}]
    done = chat(
        home,
        config,
        ["note it", "/mode plan", "/mode", "/mode wild", "again"],
        "--json",
        "--mode",
        "auto",
        endpoint=endpoint,
    )
    assert done.returncode == 0, done.stderr
    out = events(done)
    results = [(e["name"], e["ok"]) for e in out if e["type"] == "tool_result"]
    assert results[0] == ("t__note", True), "auto runs what would ask"
    assert [e["mode"] for e in out if e["type"] == "mode"] == ["plan", "plan"]
    assert any(e["type"] == "error" and e["code"] == "usage" for e in out)
    assert sorted(results[1:]) == [("t__lookup", True), ("t__note", False)], "plan refuses what is not read-only"


def test_mod3_commands_mcp_tools_history(home: Home, config: Path, endpoint: ModelFixture) -> None:
    endpoint.replies += [{"tool_calls": [LOOKUP]}, {"text": "done"}]
    done = chat(home, config, ["/mcp", "/tools", "look", "/history", "/nope"], "--json", endpoint=endpoint)
    assert done.returncode == 0, done.stderr
    out = events(done)
    assert out[0]["type"] == "status"
    assert out[0]["servers"][0]["state"] == "connected"
    (tools,) = [e for e in out if e["type"] == "tools"]
    assert {"t__lookup", "read_result"} <= {tool["name"] for tool in tools["tools"]}
    (history,) = [e for e in out if e["type"] == "history"]
    assert [(r["tool"], r["status"]) for r in history["history"]] == [("t__lookup", "ran")]
    assert out[-1]["type"] == "error"
    assert out[-1]["code"] == "unknown_command"


def on_a_terminal(
    home: Home, args: list[str], steps: list[tuple[bytes, bytes]], deadline: float = 60.0
) -> tuple[int, str]:
    """Run `mcpyard ARGS` on a pseudo-terminal; each time the output shows a step's prompt, type its answer."""
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpyard", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**home.environ, "COLUMNS": "200"},
        cwd=home.workspace,
    )
    os.close(follower)
    seen = b""
    waiting = list(steps)
    looked_from = 0  # a prompt counts only when it shows after the last answer
    end = time.monotonic() + deadline
    try:
        while process.poll() is None and time.monotonic() < end:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(leader, 65536)
                except OSError:  # the terminal closed: the process is ending
                    break
            if waiting and waiting[0][0] in seen[looked_from:]:
                looked_from = len(seen)
                os.write(leader, waiting.pop(0)[1] + b"\n")
        process.wait(timeout=max(1.0, end - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    return process.returncode, seen.decode(errors="replace")


def test_mod3_on_a_terminal_it_prompts_streams_and_shows_each_calls_approval_card(
    home: Home, config: Path, endpoint: ModelFixture
) -> None:
    endpoint.replies += [{"text": "Noting it.", "tool_calls": [NOTE]}, {"text": "Done, it is noted."}]
    args = ["chat", "--mcp-config", str(config), "--base-url", endpoint.base_url, "--model", "fixture-model"]
    code, seen = on_a_terminal(home, args, [(b"you> ", b"note: buy milk"), (b"allow?", b"o"), (b"you> ", b"/quit")])
    assert code == 0, seen
    assert "chatting with fixture-model" in seen
    assert "approval needed" in seen
    assert "tool t__note (server t, its name there: note)" in seen
    assert "approval: once" in seen
    assert "← t__note: ok" in seen
    assert "Done, it is noted." in seen
    (result,) = endpoint.tool_messages()
    assert "noted: buy milk" in result["content"]


def test_call8_mod3_chat_shows_how_a_long_call_goes_but_its_json_lines_stay_mod3s(
    home: Home, endpoint: ModelFixture
) -> None:
    """A task's status, polled once a second, reaches the terminal or the pipe as the call runs; `--json` keeps to
    the events MOD-3 lists."""
    config = home.write_config({"t": fixture_server("tasks")}, mode="auto")
    slow = {"name": "t__slow", "arguments": {"seconds": 2}}
    endpoint.replies += [{"text": "Working.", "tool_calls": [slow]}, {"text": "Done."}]
    done = chat(home, config, ["Run the slow job"], endpoint=endpoint)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    shown = [line for line in lines if line.startswith("  t__slow: task ")]
    assert shown, lines
    assert any("task working" in line for line in shown), shown
    assert lines.index(shown[0]) < lines.index("← t__slow: ok"), "shown while the call runs, before its result"
    endpoint.replies += [{"text": "Working.", "tool_calls": [slow]}, {"text": "Done."}]
    as_json = chat(home, config, ["Run the slow job"], "--json", endpoint=endpoint)
    assert as_json.returncode == 0, as_json.stderr
    assert {event["type"] for event in events(as_json)} == {"text", "tool_call", "tool_result", "turn_end"}
