"""`mcpyard shell` scripted from standard input, one JSON object per line with --json (CLI-2, CALL-4)."""

from __future__ import annotations

import json
from typing import Any

from tests._cli import run_mcpyard
from tests.conftest import Home, fixture_server


def run_shell(home: Home, lines: list[str], *flags: str, **settings: Any) -> str:
    """`mcpyard shell` over the hostile fixture server, fed `lines`; its standard output."""
    config = home.write_config({"h": fixture_server("hostile")}, **settings)
    done = run_mcpyard(home, "shell", "--mcp-config", str(config), *flags, stdin="\n".join(lines) + "\n")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def shell(home: Home, lines: list[str], *flags: str, **settings: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run_shell(home, lines, "--json", *flags, **settings).splitlines()]


def test_cli2_shell_reads_commands_from_stdin_and_prints_one_json_object_each(home: Home) -> None:
    out = shell(
        home,
        ["/mcp", "/tools", 'call h__huge {"size": 3}', "call h__bump", "call h__huge {oops", "frob", "/mcp reload"],
    )
    assert len(out) == 7
    assert out[0]["servers"][0]["state"] == "connected"
    assert "h__huge" in {tool["name"] for tool in out[1]["tools"]}
    assert "read_result" in {tool["name"] for tool in out[1]["tools"]}
    assert out[2]["ok"] is True
    assert "\nxxx\n" in out[2]["text"]
    assert out[3]["error"]["code"] == "approval_required", "piped, no one can answer a card"
    assert "not valid JSON" in out[4]["error"]
    assert "unknown command" in out[5]["error"]
    assert out[6]["servers"][0]["state"] == "connected"


def test_cli2_shell_read_result_reads_a_cut_result_by_handle(home: Home) -> None:
    out = shell(home, ['call h__numbered {"lines": 300}'], max_result_bytes=500)
    handle = out[0]["handle"]
    assert handle
    more = shell(home, ['call h__numbered {"lines": 300}', f"read_result {handle} 0 20"], max_result_bytes=500)
    # A handle belongs to the session that made it: a new shell does not know it.
    assert more[1]["error"]["code"] == "unknown_handle"
    same = shell(home, ['call h__numbered {"lines": 300}', "read_result HANDLE 10 20"], max_result_bytes=500)
    assert same[1]["error"]["code"] == "unknown_handle"


def test_cli2_shell_yes_answers_cards_but_refuses_destructive_tools(home: Home) -> None:
    out = shell(home, ["call h__bump", 'call h__destroy {"target": "x"}'], "--yes")
    assert out[0]["ok"] is True
    assert out[1]["error"]["code"] == "denied"


def test_cli2_shell_history_lists_the_sessions_calls_with_their_outcome_and_why(home: Home) -> None:
    out = shell(home, ['call h__huge {"size": 3}', "call h__bump", "call h__nothing", "/history"])
    history = out[3]["history"]
    assert [(r["tool"], r["status"], r["error_code"]) for r in history] == [
        ("h__huge", "ran", None),
        ("h__bump", "refused", "approval_required"),
        ("h__nothing", "refused", "unknown_tool"),
    ]
    assert history[0]["why"] == "read-only tool"
    assert history[0]["server"] == "h"
    plain = run_shell(home, ['call h__huge {"size": 3}', "/history"])
    line = next(line for line in plain.splitlines() if " h__huge ran in " in line)
    assert "read-only tool" in line
