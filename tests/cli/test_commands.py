"""The console commands end to end: call (API-3), tools, reload, trust (CFG-6), doctor, demo (CLI-2, CLI-3)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests._cli import run_mcpyard
from tests.conftest import Home, fixture_server


@pytest.fixture
def config(home: Home) -> str:
    return str(home.write_config({"basic": fixture_server("basic")}))


def test_api3_call_json_prints_the_call_result_and_exits_0(home: Home, config: str) -> None:
    done = run_mcpyard(home, "call", "basic__add", "--args", '{"a": 2, "b": 40}', "--json", "--mcp-config", config)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) >= {"ok", "text", "content", "structured", "cached", "handle", "error"}
    assert result["ok"] is True
    assert "\n42\n" in result["text"]
    assert result["text"].startswith("<mcp-result-")
    assert result["error"] is None
    assert result["content"] == [{"type": "text", "text": "42"}]


def test_api3_call_with_arg_pairs_prints_plain_text_when_piped(home: Home, config: str) -> None:
    done = run_mcpyard(home, "call", "basic__echo", "--arg", "text=hello there", "--mcp-config", config)
    assert done.returncode == 0, done.stderr
    assert "\nhello there\n" in done.stdout


def test_api3_a_tool_error_exits_1(home: Home, config: str) -> None:
    done = run_mcpyard(home, "call", "basic__fail", "--json", "--mcp-config", config)
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["ok"] is False
    assert result["error"]["code"] == "tool_error"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["basic__nope"], "unknown_tool"),
        (["basic__add", "--args", '{"a": "x", "b": 1}'], "invalid_arguments"),
    ],
)
def test_api3_a_refusal_exits_2_with_its_code(home: Home, config: str, args: list[str], code: str) -> None:
    done = run_mcpyard(home, "call", *args, "--json", "--mcp-config", config)
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == code


def test_cli2_tools_json_lists_model_facing_tools(home: Home, config: str) -> None:
    done = run_mcpyard(home, "tools", "--json", "--mcp-config", config)
    assert done.returncode == 0, done.stderr
    tools = {tool["name"]: tool for tool in json.loads(done.stdout)["tools"]}
    assert tools["basic__add"]["server"] == "basic"
    assert tools["basic__add"]["tool"] == "add"
    assert tools["basic__add"]["annotations"]["readOnlyHint"] is True
    assert tools["basic__add"]["input_schema"]["type"] == "object"


def test_cli3_status_is_plain_text_when_piped(home: Home, config: str) -> None:
    done = run_mcpyard(home, "status", "--mcp-config", config)
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout
    assert "* basic [--mcp-config file] connected · stdio" in done.stdout
    assert "    basic__add  (read-only, idempotent)" in done.stdout


def test_cfg6_trust_starts_the_project_servers_from_then_on(home: Home) -> None:
    (home.workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": fixture_server("basic")}}))
    before = json.loads(run_mcpyard(home, "status", "--json").stdout)
    assert before["servers"][0]["state"] == "untrusted"
    once = json.loads(run_mcpyard(home, "status", "--json", "--trust").stdout)
    assert once["servers"][0]["state"] == "connected"
    trusted = run_mcpyard(home, "trust", "--yes")
    assert trusted.returncode == 0, trusted.stderr
    assert "runs " + sys.executable in trusted.stdout
    after = json.loads(run_mcpyard(home, "status", "--json").stdout)
    assert after["servers"][0]["state"] == "connected"
    assert after["servers"][0]["source"] == "project"


def test_cfg7_reload_command_prints_the_status_page(home: Home, config: str) -> None:
    done = run_mcpyard(home, "reload", "--json", "--mcp-config", config)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["servers"][0]["state"] == "connected"


def test_cli2_doctor_reports_what_a_failing_server_printed(home: Home) -> None:
    config = home.write_config({"crasher": fixture_server("exits_at_once"), "ok": fixture_server("basic")})
    done = run_mcpyard(home, "doctor", "crasher", "--json", "--mcp-config", str(config))
    assert done.returncode == 1, "doctor exits 1 when the server it checks fails"
    report = json.loads(done.stdout)
    assert report["state"] == "failed"
    assert "code 3" in report["reason"]
    assert any("cannot open database" in line for line in report["stderr"])
    assert report["command_line"].startswith(sys.executable)


def test_cli2_doctor_names_an_unknown_server(home: Home, config: str) -> None:
    done = run_mcpyard(home, "doctor", "nosuch", "--mcp-config", config)
    assert done.returncode == 2
    assert "no server 'nosuch'" in done.stderr
    assert "basic" in done.stderr


def test_the_embedded_default_demo_runs_and_calls_real_servers(home: Home) -> None:
    done = run_mcpyard(home, "demo", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    states = {server["id"]: server["state"] for server in report["status"]["servers"]}
    assert states == {"notes": "connected", "weather": "connected"}
    calls = report["calls"]
    assert [call["ok"] for call in calls[:6]] == [True] * 6
    assert calls[4]["cached"] is True
    assert calls[4]["text"].startswith("cached (same content)")
    assert calls[6]["error"]["code"] == "denied"
    assert [call["ok"] for call in calls[7:9]] == [True, True]
    assert calls[-2]["error"]["code"] == "invalid_arguments"
    assert calls[-1]["error"]["code"] == "unknown_tool"


def test_help_does_not_import_the_sdk() -> None:
    code = "import sys; from mcpyard.cli import main; main(['--help']); print('mcp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert done.stdout.strip().endswith("False")


def test_cli2_doctor_checks_each_variable_without_showing_values(home: Home) -> None:
    entry = {**fixture_server("basic"), "env": {"A": "${MCPYARD_T_UNSET}", "B": "${MCPYARD_T_SET}", "C": "${NOPE:-d}"}}
    config = home.write_config({"basic": entry})
    env = {**home.environ, "MCPYARD_T_SET": "very-private-value"}
    done = run_mcpyard(home, "doctor", "basic", "--json", "--mcp-config", str(config), environ=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert "${MCPYARD_T_UNSET} in env.A: unset" in report["references"]
    assert "${MCPYARD_T_SET} in env.B: set" in report["references"]
    assert "${NOPE} in env.C: unset, default used" in report["references"]
    assert any("MCPYARD_T_UNSET" in warning for warning in report["warnings"])
    assert report["state"] == "connected"
    assert "very-private-value" not in done.stdout


@pytest.mark.parametrize(
    ("tool", "args", "yes", "exit_code", "code"),
    [
        ("h__bump", "{}", False, 2, "approval_required"),
        ("h__bump", "{}", True, 0, None),
        ("h__destroy", '{"target": "x"}', True, 2, "denied"),
        ("h__huge", '{"size": 2}', False, 0, None),
    ],
)
def test_api3_yes_answers_once_except_for_a_destructive_tool(
    home: Home, tool: str, args: str, yes: bool, exit_code: int, code: str | None
) -> None:
    config = str(home.write_config({"h": fixture_server("hostile")}))
    flags = ["--yes"] if yes else []
    done = run_mcpyard(home, "call", tool, "--args", args, "--json", "--mcp-config", config, *flags)
    assert done.returncode == exit_code, done.stderr
    result = json.loads(done.stdout)
    assert (result["error"] or {}).get("code") == code


def test_pol5_pin_and_unpin_from_the_console(home: Home) -> None:
    config = str(home.write_config({"h": fixture_server("hostile")}))
    refused = run_mcpyard(home, "call", "h__bump", "--json", "--mcp-config", config)
    assert json.loads(refused.stdout)["error"]["code"] == "approval_required"
    pinned = run_mcpyard(home, "pin", "h__bump", "run_freely", "--json", "--mcp-config", config)
    assert pinned.returncode == 0, pinned.stderr
    assert json.loads(pinned.stdout)["policy"] == "run_freely"
    ran = run_mcpyard(home, "call", "h__bump", "--json", "--mcp-config", config)
    assert ran.returncode == 0, ran.stdout
    bad = run_mcpyard(home, "pin", "h__bump", "sometimes", "--mcp-config", config)
    assert bad.returncode == 2
    assert "run_freely, ask_first, off" in bad.stderr
    unpinned = run_mcpyard(home, "unpin", "h__bump", "--mcp-config", config)
    assert unpinned.returncode == 0, unpinned.stderr
    again = run_mcpyard(home, "call", "h__bump", "--json", "--mcp-config", config)
    assert json.loads(again.stdout)["error"]["code"] == "approval_required"


@pytest.mark.parametrize("as_json", [False, True])
def test_cli2_sec2_doctor_shows_a_url_without_its_query(home: Home, as_json: bool) -> None:
    """SEC-2: a key in the URL's query is never printed; the URL is shown as the status page and import show it."""
    # Loopback over https: refused before any request, so the check needs no network.
    config = home.write_config({"q": {"url": "https://127.0.0.1:9/mcp?api_key=sk-live-123456"}})
    done = run_mcpyard(home, "doctor", "q", *(["--json"] if as_json else []), "--mcp-config", str(config))
    assert done.returncode == 1, done.stderr
    assert "sk-live-123456" not in done.stdout + done.stderr
    shown = json.loads(done.stdout)["url"] if as_json else done.stdout
    assert "https://127.0.0.1:9/mcp?…" in shown


@pytest.mark.parametrize(
    "key",
    [
        "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234",
        "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6",
        "sk%2Dproj%2DABCDEFGHIJKLMNOPQRSTUVWX1234",
    ],
    ids=["token", "random", "percent-encoded"],
)
def test_cli2_sec2_a_key_in_the_urls_path_is_never_printed(home: Home, key: str) -> None:
    """SEC-2: services that put their key in the address (`/mcp/<key>/sse`): every page that shows the URL cuts it
    (but `trust`, which shows a project file's servers exactly as written, to be consented to)."""
    url = f"https://127.0.0.1:9/mcp/{key}/sse"  # loopback over https: refused before any request
    config = home.write_config({"k": {"url": url}})
    windsurf = home.root / "mcp_config.json"
    windsurf.write_text(json.dumps({"mcpServers": {"k": {"serverUrl": url}}}))
    runs = [("doctor", "k"), ("doctor", "k", "--json"), ("status",), ("status", "--json")]
    done = [run_mcpyard(home, *command, "--mcp-config", str(config)) for command in runs]
    done += [run_mcpyard(home, "import", str(windsurf)), run_mcpyard(home, "import", str(windsurf), "--json")]
    shown = "".join(run.stdout + run.stderr for run in done)
    assert "127.0.0.1:9/mcp/…/sse" in shown
    for part in (key, key.replace("%2D", "-"), key[8:24]):
        assert part not in shown
