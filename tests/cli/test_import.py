"""`mcpyard import FILE` end to end, and other clients' files connecting as given (CFG-1, CFG-2, CFG-3, CLI-2, ERR-1).

The samples are the ones the translation's tables use (tests/config/_samples.py); the files
that connect point at our fixture server `tests/servers/basic.py` over stdio.
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys

import pytest

from tests._cli import Ran, run_mcpyard
from tests.config._samples import SAMPLES, sample
from tests.conftest import PYTHON, SERVERS, Home

BASIC = str(SERVERS / "basic.py")


def mcpyard(home: Home, *args: str, environ: dict[str, str] | None = None) -> Ran:
    """`mcpyard ARGS` in this process (`tests/_cli.py`); what `--help` imports is measured in a process of its own."""
    return run_mcpyard(home, *args, environ=environ)


@pytest.mark.parametrize("name", SAMPLES)
def test_import_names_the_format_each_server_and_what_was_ignored_with_why_cfg_3(home: Home, name: str) -> None:
    """CFG-3, CLI-2: what it understood (id, transport, command or URL) and what it ignored, in plain text."""
    done = mcpyard(home, "import", str(sample(home.root, name)))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    as_json = mcpyard(home, "import", str(sample(home.root, name)), "--json")
    assert as_json.returncode == 0, as_json.stderr
    listed = json.loads(as_json.stdout)
    count = len(listed["servers"])
    assert done.stdout.splitlines()[0].endswith(f" with {count} servers" if count != 1 else " with 1 server")
    for server in listed["servers"]:
        what = server["command"] or server["url"]
        assert f"  {server['id']} ({server['transport']}): " in done.stdout
        assert what.split(" ")[0] in done.stdout
    for note in listed["ignored"]:
        assert note["why"] in done.stdout
    if listed["ignored"]:
        assert "Ignored, with why:" in done.stdout
    assert "Nothing was written" in done.stdout


def test_import_json_is_one_object_with_the_format_servers_and_ignored_keys_cfg_3(home: Home) -> None:
    """CFG-3, CLI-2: `--json` prints one object for scripts."""
    done = mcpyard(home, "import", str(sample(home.root, "gemini")), "--json")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 1
    result = json.loads(done.stdout)
    assert {"format", "servers", "ignored"} <= set(result)
    assert result["format"] == "gemini"
    assert result["servers"][1] == {
        "id": "github",
        "transport": "streamable_http",
        "command": None,
        "url": "https://api.githubcopilot.com/mcp/",
        "enabled": True,
    }
    assert {"key": "trust", "server": "pythonTools"} in [
        {"key": n["key"], "server": n["server"]} for n in result["ignored"]
    ]
    assert result["settings"] == {"permissions": {"deny": ["github__delete_repository"]}}
    assert result["written"] is None


def test_a_secret_written_into_the_file_is_reported_and_never_printed_sec_1(home: Home) -> None:
    """SEC-1: the value is named by where it is, never shown; the file written is the owner's alone."""
    source = sample(home.root, "claude-desktop")
    target = home.root / "own.json"
    done = mcpyard(home, "import", str(source), "--write", str(target))
    assert done.returncode == 0, done.stderr
    assert "ghp_16C7e42F" not in done.stdout + done.stderr
    assert "Values that look like secrets" in done.stdout
    assert "'env.GITHUB_PERSONAL_ACCESS_TOKEN'" in done.stdout
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert "ghp_16C7e42F" in target.read_text(encoding="utf-8"), "copied as written, and said so"
    result = json.loads(mcpyard(home, "import", str(source), "--json").stdout)
    assert [(n["server"], n["key"]) for n in result["literal_secrets"]] == [
        ("github", "env.GITHUB_PERSONAL_ACCESS_TOKEN")
    ]


@pytest.mark.parametrize(
    ("fields", "problems"),
    [
        ({"command": "node", "args": "x.js --port 3"}, [("args", "must be a list of strings, not a string")]),
        (
            {"command": "node", "args": ["x.js"], "env": {"PORT": 8080, "DEBUG": True}},
            [
                ("env.PORT", "must be a string, not a number; quote it"),
                ("env.DEBUG", "must be a string, not true/false; quote it"),
            ],
        ),
        ({"url": "https://example.test/mcp", "headers": {"Bad Name": "x"}}, None),
    ],
)
def test_import_says_which_values_keep_a_server_from_loading_as_read_directly_err_1(
    home: Home, fields: dict[str, object], problems: list[tuple[str, str]] | None
) -> None:
    """ERR-1: a value the loader refuses (a string for a list, a number for text) is said by import, as
    `--mcp-config` says it for the same file, never dropped without a word."""
    source = home.root / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {"a": fields}}), encoding="utf-8")
    read_directly = mcpyard(home, "doctor", "a", "--mcp-config", str(source), "--json")
    refused = json.loads(read_directly.stdout)["problem"]
    done = json.loads(mcpyard(home, "import", str(source), "--json").stdout)
    said = [(note["key"], note["why"]) for note in done["problems"]]
    assert [note["server"] for note in done["problems"]] == ["a"] * len(said)
    assert "; ".join(f"{key}: {why}" for key, why in said) == refused, "the loader's own words"
    if problems is not None:
        assert said == problems
    shown = mcpyard(home, "import", str(source))
    assert shown.returncode == 0, shown.stderr
    assert "Will not load as written" in shown.stdout
    lines = shown.stdout.splitlines()
    for _, why in said:
        assert any(line.startswith("  server 'a': ") and line.endswith(why) for line in lines), (why, lines)


def test_a_name_that_holds_a_whole_header_line_or_a_value_is_never_shown_whole_sec_1(home: Home) -> None:
    """SEC-1: a header line written as a header's name, or `NAME=value` as a variable's, is named by its start."""
    token = "sk-live-3b9e1c7a5d0f"
    source = home.root / "mcp.json"
    fields = {
        "a": {"url": "https://example.test/mcp", "headers": {f"Authorization: Bearer {token}": "x"}},
        "b": {"command": "node", "env": {f"API_KEY={token}": "y"}},
    }
    source.write_text(json.dumps({"mcpServers": fields}), encoding="utf-8")
    shown = mcpyard(home, "import", str(source))
    as_json = mcpyard(home, "import", str(source), "--json")
    read_directly = [mcpyard(home, "doctor", name, "--mcp-config", str(source), "--json") for name in ("a", "b")]
    for ran in (shown, as_json, *read_directly):
        assert token not in ran.stdout + ran.stderr
        assert "3b9e1c7a5d0f" not in ran.stdout + ran.stderr
    said = {(note["server"], note["key"]) for note in json.loads(as_json.stdout)["problems"]}
    assert said == {("a", "headers['Authorization…']"), ("b", "env['API_KEY…']")}


def test_cfg4_an_entry_with_neither_command_nor_url_is_shown_with_no_transport_as_the_loader_says(home: Home) -> None:
    """CFG-4: such an entry is skipped when loaded, with no transport; import labels it so, never as streamable HTTP,
    and says why it will not load in the loader's own words."""
    path = home.root / "claude_desktop_config.json"
    entry = {"env": {"NOTES_DIR": "/tmp/notes"}}
    path.write_text(json.dumps({"mcpServers": {"notes": entry, "ok": {"command": "npx"}}}), encoding="utf-8")
    loaded = json.loads(mcpyard(home, "doctor", "notes", "--mcp-config", str(path), "--json").stdout)
    assert (loaded["config_state"], loaded["transport"]) == ("skipped", None)
    done = mcpyard(home, "import", str(path))
    assert done.returncode == 0, done.stderr
    assert "  notes (no transport): no command or url, so it will not load\n" in done.stdout
    assert "  ok (stdio): npx\n" in done.stdout
    assert "streamable_http" not in done.stdout
    assert f"server 'notes': 'command, url': {loaded['problem']}\n" in done.stdout
    as_json = json.loads(mcpyard(home, "import", str(path), "--json").stdout)
    assert [server["transport"] for server in as_json["servers"]] == [None, "stdio"]
    assert as_json["problems"] == [{"key": "command, url", "server": "notes", "why": loaded["problem"]}]


def test_import_of_a_file_that_loads_says_no_problem_cfg_3(home: Home) -> None:
    done = json.loads(mcpyard(home, "import", str(sample(home.root, "claude-desktop")), "--json").stdout)
    assert done["problems"] == []


@pytest.mark.parametrize(("suffix", "marker"), [(".toml", "[[mcp.servers]]"), (".json", '"servers": [')])
def test_write_puts_the_own_form_in_toml_or_json_by_the_name_cfg_2(home: Home, suffix: str, marker: str) -> None:
    """CFG-2: `--write` picks TOML for a .toml name, else JSON; the file is read back as mcpyard's own."""
    target = home.root / f"imported{suffix}"
    done = mcpyard(home, "import", str(sample(home.root, "codex")), "--write", str(target), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["written"] == str(target)
    text = target.read_text(encoding="utf-8")
    assert marker in text
    assert "${FIGMA_OAUTH_TOKEN}" in text
    assert [p.name for p in target.parent.iterdir() if p.name.startswith(".imported")] == [], "no temporary file left"


def test_write_never_replaces_a_file_without_force_err_1(home: Home) -> None:
    """ERR-1: an existing file is left whole unless --force; then it is replaced at once."""
    target = home.root / "config.toml"
    target.write_text("# mine\n", encoding="utf-8")
    source = str(sample(home.root, "vscode"))
    refused = mcpyard(home, "import", source, "--write", str(target))
    assert refused.returncode == 2
    assert refused.stderr.startswith("mcpyard: error: ")
    assert "pass --force to replace it" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    assert target.read_text(encoding="utf-8") == "# mine\n"
    forced = mcpyard(home, "import", source, "--write", str(target), "--force")
    assert forced.returncode == 0, forced.stderr
    assert "[[mcp.servers]]" in target.read_text(encoding="utf-8")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


@pytest.mark.parametrize("force", [(), ("--force",)], ids=["plain", "forced"])
@pytest.mark.parametrize("link", [False, True], ids=["folder", "link to a folder"])
def test_err1_write_to_a_folder_says_it_is_a_folder_and_names_a_file_to_give(
    home: Home, force: tuple[str, ...], link: bool
) -> None:
    """ERR-1: a folder is named as one, with a file path in it to give instead; --force cannot help, so it is never
    suggested, and the folder (or the link to it) stays as it was."""
    folder = home.root / "out"
    folder.mkdir()
    target = folder
    if link:
        target = home.root / "out-link"
        target.symlink_to(folder, target_is_directory=True)
    done = mcpyard(home, "import", str(sample(home.root, "claude-desktop")), "--write", str(target), *force)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"mcpyard: error: --write names {target}, which is a folder; nothing was written: give a file path such as "
        f"{target / 'mcp-servers.toml'}\n"
    )
    assert list(folder.iterdir()) == []
    assert target.is_symlink() is link


def test_write_refuses_the_file_being_read_err_1(home: Home) -> None:
    """ERR-1: importing a file over itself would lose the other client's config; refused even with --force."""
    source = sample(home.root, "claude-code")
    before = source.read_text(encoding="utf-8")
    done = mcpyard(home, "import", str(source), "--write", str(source), "--force")
    assert done.returncode == 2
    assert "the file being read" in done.stderr
    assert source.read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (None, "does not exist; check the path"),
        ("{}", "is not a config mcpyard can read"),
        ('{"mcpServers": ', "is not valid JSON"),
        ('{"mcpServers": {"a": {"command": "x"}} /* mine */}', "JSON has no comments"),
    ],
)
def test_an_unreadable_or_unknown_file_exits_2_with_one_line_naming_the_fix_err_1(
    home: Home, text: str | None, needle: str
) -> None:
    """ERR-1: one line on stderr, exit code 2, never a traceback."""
    path = home.root / "given.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    done = mcpyard(home, "import", str(path))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("mcpyard: error: ")
    assert len(done.stderr.splitlines()) == 1
    assert needle in done.stderr


def test_import_help_is_plain_words_and_fast_to_reach(home: Home) -> None:
    """CLI-2: the help says what it reads and writes, without importing the SDK."""
    done = mcpyard(home, "import", "--help")
    assert done.returncode == 0
    for words in ("claude_desktop_config.json", "--write", "--force", "readable by you only", "Exit codes"):
        assert words in done.stdout
    code = "import sys; from mcpyard.cli import main; main(['import', '--help']); print('mcp.client' in sys.modules)"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert shown.stdout.strip().endswith("False")


# Each client's file, pointing at our fixture server; `${FIXTURE_PYTHON}` is the Python running the tests.
CONNECTING: dict[str, tuple[str, str]] = {
    "claude-code": (
        ".mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "basic": {
                        "type": "stdio",
                        "command": "${FIXTURE_PYTHON:-python3}",
                        "args": [BASIC],
                        "env": {"GREETING": "${GREETING:-hello}"},
                    }
                }
            }
        ),
    ),
    "vscode": (
        "mcp.json",
        "{\n  // mine\n"
        + json.dumps({"inputs": [], "servers": {"basic": {"type": "stdio", "command": PYTHON, "args": [BASIC]}}})[1:],
    ),
    "codex": (
        "config.toml",
        f'model = "o3"\n\n[mcp_servers.basic]\ncommand = {json.dumps(PYTHON)}\nargs = [{json.dumps(BASIC)}]\n',
    ),
    "gemini": (
        "settings.json",
        json.dumps(
            {"mcpServers": {"basic": {"command": "$FIXTURE_PYTHON", "args": [BASIC], "trust": False, "timeout": 30000}}}
        ),
    ),
}


@pytest.mark.anyio
@pytest.mark.parametrize("name", CONNECTING)
async def test_a_clients_file_given_as_mcp_config_connects_its_server_with_its_tools_cfg_1_conn_1(
    home: Home, name: str
) -> None:
    """CFG-1, CONN-1: Claude Code's `type` and `${VAR:-default}`, VS Code's comments, Codex's tables, Gemini's $VAR."""
    file_name, text = CONNECTING[name]
    config_file = home.root / name / file_name
    config_file.parent.mkdir()
    config_file.write_text(text, encoding="utf-8")
    async with home.open(config_file, environ={**home.environ, "FIXTURE_PYTHON": PYTHON}) as host:
        [server] = host.status().servers
        assert (server.id, server.state, server.source) == ("basic", "connected", "flag"), server.reason
        assert {"basic__echo", "basic__add"} <= {tool.name for tool in host.tools()}
        result = await host.call("basic__add", {"a": 2, "b": 40})
        assert result.ok, result.error


def test_an_imported_file_written_and_given_back_connects_cfg_1_cli_2(home: Home) -> None:
    """CFG-1, CLI-2: import a Claude Code .mcp.json, write mcpyard's own TOML, and `status` shows it connected."""
    source = home.root / ".mcp.json"
    source.write_text(CONNECTING["claude-code"][1], encoding="utf-8")
    target = home.root / "own.toml"
    environ = {**home.environ, "FIXTURE_PYTHON": PYTHON}
    written = mcpyard(home, "import", str(source), "--write", str(target), environ=environ)
    assert written.returncode == 0, written.stderr
    status = mcpyard(home, "status", "--mcp-config", str(target), "--json", environ=environ)
    assert status.returncode == 0, status.stderr
    [server] = json.loads(status.stdout)["servers"]
    assert (server["id"], server["state"], server["transport"]) == ("basic", "connected", "stdio")
    assert "basic__echo" in {tool["name"] for tool in server["tools"]}


def test_a_tool_a_gemini_file_excludes_is_refused_with_the_users_separator_pol_4_cat_1(home: Home) -> None:
    """POL-4, CAT-1: `tool_name_separator = "_"` names the tool `b_add`; Gemini's excludeTools still keeps it off."""
    home.config_home.mkdir(parents=True, exist_ok=True)
    (home.config_home / "config.toml").write_text('tool_name_separator = "_"\n', encoding="utf-8")
    gemini = home.root / ".gemini" / "settings.json"
    gemini.parent.mkdir()
    entry = {"command": PYTHON, "args": [BASIC], "excludeTools": ["add", "fail"]}
    gemini.write_text(json.dumps({"mcpServers": {"b": entry}}), encoding="utf-8")
    called = mcpyard(home, "call", "b_add", "--arg", "a=1", "--arg", "b=2", "--mcp-config", str(gemini))
    assert called.returncode != 0, called.stdout
    assert "3" not in called.stdout
    assert "b_add" in called.stdout + called.stderr
    echoed = mcpyard(home, "call", "b_echo", "--arg", "text=hi", "--mcp-config", str(gemini))
    assert echoed.returncode == 0, echoed.stderr
    shown = mcpyard(home, "import", str(gemini), "--json")
    assert json.loads(shown.stdout)["settings"] == {"permissions": {"deny": ["b_add", "b_fail"]}}
    assert "b__" not in mcpyard(home, "import", str(gemini)).stdout


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["--api-key", "sk-live-123456"], "nope-cmd --api-key …"),
        (["--api-key=sk-live-123456"], "nope-cmd --api-key=…"),
        (["--token", "abcdefgh1234", "--port", "8080"], "nope-cmd --token … --port 8080"),
        (["serve", "ghp_0123456789abcdefghijABCDEFGHIJ"], "nope-cmd serve …"),
        (["--verbose", "a b"], "nope-cmd --verbose 'a b'"),
    ],
)
def test_a_secret_in_the_command_line_is_never_shown_by_import_or_doctor_sec_1_sec_2(
    home: Home, args: list[str], shown: str
) -> None:
    """SEC-1, SEC-2: each value listed as a secret written into the file is cut to `…` where the command line shows;
    the file `--write` writes keeps it as written."""
    source = home.root / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {"a": {"command": "nope-cmd", "args": args}}}), encoding="utf-8")
    target = home.root / "own.json"
    done = mcpyard(home, "import", str(source), "--write", str(target))
    as_json = mcpyard(home, "import", str(source), "--json")
    doctor = mcpyard(home, "doctor", "a", "--mcp-config", str(source))
    doctor_json = mcpyard(home, "doctor", "a", "--json", "--mcp-config", str(source))
    hidden = [arg.partition("=")[2] or arg for arg in args if arg not in shown]
    for ran in (done, as_json, doctor, doctor_json):
        assert "Traceback" not in ran.stderr
        assert not [value for value in hidden if value in ran.stdout + ran.stderr]
    assert f"  a (stdio): {shown}\n" in done.stdout
    assert json.loads(as_json.stdout)["servers"][0]["command"] == shown
    assert f"command_line: {shown}\n" in doctor.stdout
    assert json.loads(doctor_json.stdout)["command_line"] == shown
    assert json.loads(target.read_text(encoding="utf-8"))["servers"][0]["args"] == args
