"""Another client's lists of tools, in every form and client's file mcpyard reads (POL-4, CFG-3, CFG-1).

A list of tools to leave out (`disabledTools`, `excludeTools`, `disabled_tools`, and any other spelling of a word like
excluded, disallowed, blocked or denied before `tools`) is denied, or the message gives the `permissions.deny` rule to
write; a list of tools to approve (`autoApprove`, `alwaysAllow`, `always_allow`) or to offer alone (`includeTools`,
`enabled_tools`, `allowed_tools`…) and `disabled` say what mcpyard has instead. None of them is ever answered with
"did you mean" a field that means something else (`shared_tools` shares tools, the opposite of leaving them out).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpyard.config import import_config
from mcpyard.errors import ConfigError
from tests._cli import run_mcpyard
from tests.conftest import PYTHON, SERVERS, Home

from ._support import Setup, by_id, mentioning

BASIC = str(SERVERS / "basic.py")
LEAVE_OUT = ["disabledTools", "excludeTools", "excludedTools", "disabled_tools"]
LEAVE_OUT_SPELT = [
    "exclude_tools",
    "excluded_tools",
    "disallowed_tools",
    "blocked_tools",
    "deny_tools",
    "denied_tools",
    "disallowedTools",
    "hidden_tools",
    "Blocked-Tools",
]
"""Other spellings of a list of tools to leave out: each read as `disabledTools` is, in every form."""
OFFER_ALONE = ["includeTools", "includedTools", "enabledTools", "enabled_tools"]
OFFER_ALONE_SPELT = ["include_tools", "allowed_tools", "allowedTools", "only_tools", "whitelisted_tools"]
APPROVE = ["autoApprove", "alwaysAllow"]
APPROVE_SPELT = ["auto_approve", "always_allow"]
NO_ALLOWLIST = "mcpyard has no list of the only tools to offer from a server"


def own_error(cfg: Setup, key: str, value: object) -> str:
    """The error loading a user config whose own-form entry `echo` has `key`."""
    cfg.user(f'[[mcp.servers]]\nid = "echo"\ncommand = "x"\n{key} = {json.dumps(value)}\n')
    with pytest.raises(ConfigError) as raised:
        cfg.load()
    assert raised.value.field == key
    return raised.value.message


@pytest.mark.parametrize("key", [*LEAVE_OUT, *LEAVE_OUT_SPELT])
def test_pol4_cfg3_a_list_of_tools_to_leave_out_in_the_own_form_is_refused_naming_the_deny_rule(
    cfg: Setup, key: str
) -> None:
    """POL-4, CFG-3: the own form stays strict, and the error names the rule that leaves the tools out."""
    message = own_error(cfg, key, ["danger", "wipe"])
    assert f"unknown field '{key}'" in message
    assert 'add permissions.deny = ["echo__danger", "echo__wipe"] to your user config' in message
    assert "did you mean" not in message
    assert "shared_tools" not in message


def test_pol4_cfg3_the_own_form_in_a_json_flag_file_names_the_rule_for_that_file(cfg: Setup) -> None:
    """POL-4, CFG-3: `disabled_tools` in a `servers` list given with --mcp-config: the rule may go in that file."""
    flag = cfg.flag({"servers": [{"id": "e", "command": "x", "name": "files", "disabled_tools": ["add"]}]})
    with pytest.raises(ConfigError) as raised:
        cfg.load(config_file=flag)
    message = raised.value.message
    assert 'permissions.deny = ["files__add"] to your user config or this file' in message
    assert "shared_tools" not in message


def test_pol4_cfg3_the_own_forms_rule_is_named_with_the_users_separator(cfg: Setup) -> None:
    """POL-4, CAT-1: the rule to write names the tools as the model sees them, with the user's separator."""
    cfg.user('tool_name_separator = "_"\n[[mcp.servers]]\nid = "echo"\ncommand = "x"\ndisabledTools = ["danger"]\n')
    with pytest.raises(ConfigError) as raised:
        cfg.load()
    assert 'permissions.deny = ["echo_danger"]' in raised.value.message
    assert "tool_name_separator" not in raised.value.message


def test_pol4_cfg3_import_of_the_own_form_denies_its_list_as_another_clients(cfg: Setup) -> None:
    """POL-4, CFG-3: `mcpyard import` of an own-form file with a list of tools to leave out writes the deny rule."""
    entry = {"id": "echo", "command": "x", "disabledTools": ["danger"], "excludeTools": ["wipe"]}
    imported = import_config(cfg.flag({"servers": [entry]}), workspace=cfg.workspace)
    assert imported.settings["permissions"] == {"deny": ["echo__danger", "echo__wipe"]}
    assert not [note for note in imported.ignored if note.key in ("disabledTools", "excludeTools")]


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        *(
            (key, ["read"], 'allow tools yourself with permissions.allow = ["echo__read"] in your user config')
            for key in [*APPROVE, *APPROVE_SPELT]
        ),
        *((key, ["read"], "to block the others, add them to permissions.deny") for key in OFFER_ALONE),
        *((key, ["read"], "to block the others, add them to permissions.deny") for key in OFFER_ALONE_SPELT),
        ("disabled", True, "to list the server and never start it, write `enabled = false`"),
    ],
)
def test_cfg3_pol4_lists_of_tools_to_approve_or_offer_and_disabled_say_mcpyards_setting_never_did_you_mean(
    cfg: Setup, key: str, value: object, needle: str
) -> None:
    """CFG-3, POL-4: `alwaysAllow` is not `always_offer`, `disabled` not a misspelt `enabled`, `enabled_tools` not
    `shared_tools`: the error says what mcpyard has for each."""
    message = own_error(cfg, key, value)
    assert needle in message
    assert "did you mean" not in message
    assert "shared_tools" not in message


def test_pol4_cli2_status_refuses_the_own_forms_list_and_prints_the_rule(home: Home) -> None:
    """POL-4, CLI-2: `mcpyard status` exits 2 with the rule to write, as one line."""
    home.config_home.mkdir(parents=True)
    (home.config_home / "config.toml").write_text(
        f'[[mcp.servers]]\nid = "echo"\ncommand = {json.dumps(PYTHON)}\ndisabledTools = ["danger"]\n', encoding="utf-8"
    )
    done = run_mcpyard(home, "status")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert 'permissions.deny = ["echo__danger"]' in done.stderr
    assert "shared_tools" not in done.stderr
    assert "Traceback" not in done.stderr


CLIENT_FILES = {
    "vscode": (".vscode/mcp.json", '{{"servers": {{"e": {{"type": "stdio", "command": "x", {lists}}}}}}}'),
    "codex": ("config.toml", '[mcp_servers.e]\ncommand = "x"\n{lists}\n'),
    "zed": (".config/zed/settings.json", '{{"context_servers": {{"e": {{"command": "x", {lists}}}}}}}'),
}


def client_file(cfg: Setup, client: str, lists: dict[str, list[str]]) -> Path:
    """`client`'s file with a server `e` holding `lists`, written under the flag folder; its path."""
    name, template = CLIENT_FILES[client]
    if client == "codex":
        written = "\n".join(f"{key} = {json.dumps(tools)}" for key, tools in lists.items())
    else:
        written = ", ".join(f"{json.dumps(key)}: {json.dumps(tools)}" for key, tools in lists.items())
    return cfg.flag(template.format(lists=written), name=name)


@pytest.mark.parametrize("key", [*LEAVE_OUT, *LEAVE_OUT_SPELT])
@pytest.mark.parametrize("client", list(CLIENT_FILES))
def test_pol4_cfg1_a_list_of_tools_to_leave_out_in_a_file_read_directly_is_denied(
    cfg: Setup, client: str, key: str
) -> None:
    """POL-4, CFG-1: in a VS Code, Codex or Zed file, any client's name for the list is denied as Gemini's
    `excludeTools` is, given with --mcp-config and imported alike; nothing is said to be ignored."""
    path = client_file(cfg, client, {key: ["add", "fail"]})
    loaded = cfg.load(config_file=path)
    assert loaded.settings.deny == ("e__add", "e__fail")
    assert not mentioning(loaded, key), loaded.warnings
    imported = import_config(path, workspace=cfg.workspace)
    assert imported.settings == {"permissions": {"deny": ["e__add", "e__fail"]}}
    assert not [note for note in imported.ignored if note.key == key]
    assert "shared_tools" not in json.dumps(imported.to_json())


@pytest.mark.parametrize("client", list(CLIENT_FILES))
def test_pol4_cat1_two_lists_in_one_entry_are_both_denied_with_the_users_separator(cfg: Setup, client: str) -> None:
    """POL-4, CAT-1: `disabledTools` beside `excludeTools`: both lists denied, named with `tool_name_separator`,
    and said under both keys."""
    cfg.user('tool_name_separator = "_"\n')
    path = client_file(cfg, client, {"disabledTools": ["add"], "excludeTools": ["echo"]})
    assert cfg.load(config_file=path).settings.deny == ("e_add", "e_echo")
    imported = import_config(path, workspace=cfg.workspace, separator="_")
    [note] = [note for note in imported.understood if "permissions.deny" in note.why]
    assert note.key == "disabledTools, excludeTools"
    assert "(e_add, e_echo)" in note.why


@pytest.mark.parametrize("client", list(CLIENT_FILES))
def test_cfg3_pol4_a_file_read_directly_says_the_allow_rule_for_its_approved_tools(cfg: Setup, client: str) -> None:
    """CFG-3, POL-4: `alwaysAllow` is not taken over; the warning names the allow rule to write, never a field."""
    path = client_file(cfg, client, {"alwaysAllow": ["echo"], "includeTools": ["add"]})
    loaded = cfg.load(config_file=path)
    assert loaded.settings.allow in ((), None)
    assert mentioning(loaded, "'alwaysAllow'", 'permissions.allow = ["e__echo"] in your user config')
    assert mentioning(loaded, "'includeTools'", "to block the others, add them to permissions.deny")
    assert not mentioning(loaded, "did you mean")


@pytest.mark.parametrize("client", ["vscode", "codex"])
def test_cfg3_disabled_in_a_file_read_directly_keeps_the_server_from_starting(cfg: Setup, client: str) -> None:
    """CFG-3: `disabled: true` copied into a VS Code or Codex entry is read as `enabled = false`, as in the shared
    form, never ignored (which would start a server its file leaves off)."""
    if client == "codex":
        path = cfg.flag('[mcp_servers.e]\ncommand = "x"\ndisabled = true\n', name="config.toml")
    else:
        path = cfg.flag(
            {"servers": {"e": {"type": "stdio", "command": "x", "disabled": True}}}, name=".vscode/mcp.json"
        )
    loaded = cfg.load(config_file=path)
    assert by_id(loaded)["e"].state == "disabled"
    assert not mentioning(loaded, "'disabled'")


@pytest.mark.parametrize(
    ("key", "needle"),
    [
        *((key, "to block the others, add them to permissions.deny") for key in ["includeTools", *OFFER_ALONE_SPELT]),
        ("enabled_tools", "to block the others, add them to permissions.deny"),
        *((key, 'permissions.allow = ["s__t"] in your user config or this file') for key in [*APPROVE, *APPROVE_SPELT]),
    ],
)
def test_cfg3_pol4_the_shared_forms_lists_to_approve_or_offer_say_what_to_write(
    cfg: Setup, key: str, needle: str
) -> None:
    """CFG-3, POL-4: in a Cursor, Claude or Windsurf file, the warning says how to get the effect, never a field."""
    windsurf = cfg.flag({"mcpServers": {"s": {"command": "x", key: ["t"]}}}, name="mcp_config.json")
    [warning] = mentioning(cfg.load(config_file=windsurf), f"ignoring the key '{key}'")
    assert needle in warning
    assert "did you mean" not in warning
    assert "shared_tools" not in warning


@pytest.mark.parametrize("key", ["disabledTools", "disallowed_tools"])
@pytest.mark.parametrize("client", list(CLIENT_FILES))
def test_pol4_a_tool_a_clients_file_leaves_out_is_refused_by_its_deny_rule(home: Home, client: str, key: str) -> None:
    """POL-4: given with --mcp-config, `disabledTools` (or `disallowed_tools`…) in a VS Code, Codex or Zed file really
    keeps the tool from running, refused by the rule that names it."""
    name, template = CLIENT_FILES[client]
    path = home.root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if client == "codex":
        lists = f'args = [{json.dumps(BASIC)}]\n{key} = ["add"]'
    else:
        lists = f'"args": [{json.dumps(BASIC)}], "{key}": ["add"]'
    path.write_text(template.format(lists=lists).replace('"x"', json.dumps(PYTHON)), encoding="utf-8")
    called = run_mcpyard(home, "call", "e__add", "--arg", "a=1", "--arg", "b=2", "--mcp-config", str(path))
    assert called.returncode != 0, called.stdout
    assert "denied by the rule 'e__add'" in called.stdout + called.stderr


SHARED_FILES = {
    "cursor": (".cursor/mcp.json", '{{"mcpServers": {{"b": {{"command": "x", {list}}}}}}}'),
    "own toml mcpServers": ("mine.toml", '[mcp.mcpServers.b]\ncommand = "x"\n{list}\n'),
}


def shared_file(cfg: Setup, form: str, key: str, value: object) -> Path:
    """A shared-form entry `b` holding `key`, in a Cursor mcp.json or mcpyard's own TOML `[mcp.mcpServers.b]`."""
    name, template = SHARED_FILES[form]
    written = f"{json.dumps(key)} = {json.dumps(value)}" if name.endswith(".toml") else f'"{key}": {json.dumps(value)}'
    return cfg.flag(template.format(list=written), name=name)


@pytest.mark.parametrize("key", [*LEAVE_OUT, *LEAVE_OUT_SPELT])
@pytest.mark.parametrize("form", list(SHARED_FILES))
def test_pol4_cfg3_any_spelling_of_a_list_to_leave_out_in_the_shared_form_names_the_rule_and_import_denies_it(
    cfg: Setup, form: str, key: str
) -> None:
    """POL-4, CFG-3: `exclude_tools`, `disallowedTools`… in a shared-form entry are read as `disabledTools`: loading
    warns with the deny rule to write, `mcpyard import` writes it; never "did you mean `shared_tools`"."""
    path = shared_file(cfg, form, key, ["add", "fail"])
    loaded = cfg.load(config_file=path)
    [warning] = mentioning(loaded, f"'{key}'")
    assert f"ignoring the key '{key}'; to keep those tools from running, add " in warning
    assert 'permissions.deny = ["b__add", "b__fail"] to your user config or this file' in warning
    assert "shared_tools" not in warning
    assert "did you mean" not in warning
    imported = import_config(path, workspace=cfg.workspace)
    assert imported.settings["permissions"] == {"deny": ["b__add", "b__fail"]}
    [note] = [note for note in imported.understood if note.key == key]
    assert "each tool listed is denied in permissions.deny (b__add, b__fail)" in note.why
    assert not [note for note in imported.ignored if note.key == key]
    assert "shared_tools" not in json.dumps(imported.to_json())


@pytest.mark.parametrize("key", [*OFFER_ALONE_SPELT, *APPROVE_SPELT])
@pytest.mark.parametrize("form", list(SHARED_FILES))
def test_cfg3_pol4_any_spelling_of_a_list_to_offer_alone_or_approve_in_the_shared_form_says_what_to_write(
    cfg: Setup, form: str, key: str
) -> None:
    """CFG-3, POL-4: `allowed_tools`, `include_tools`, `always_allow`… say what mcpyard has instead, loaded and
    imported alike; none is a slip of `shared_tools` or `always_offer`, and nothing is denied or allowed."""
    path = shared_file(cfg, form, key, ["add"])
    needle = 'permissions.allow = ["b__add"]' if key in APPROVE_SPELT else NO_ALLOWLIST
    loaded = cfg.load(config_file=path)
    [warning] = mentioning(loaded, f"ignoring the key '{key}'")
    assert needle in warning
    assert "did you mean" not in warning
    imported = import_config(path, workspace=cfg.workspace)
    [note] = [note for note in imported.ignored if note.key == key]
    assert needle in note.why
    assert "permissions" not in imported.settings
    assert "did you mean" not in json.dumps(imported.to_json())


@pytest.mark.parametrize("key", LEAVE_OUT_SPELT)
def test_pol4_cfg3_import_of_the_own_toml_denies_any_spelling_of_a_list_to_leave_out(cfg: Setup, key: str) -> None:
    """POL-4, CFG-3: `[[mcp.servers]]` with `excluded_tools` (or any spelling) is imported with the deny rule, as
    with `disabled_tools`; the key is not said to be left out."""
    path = cfg.flag(f'[[mcp.servers]]\nid = "b"\nurl = "http://127.0.0.1:1/mcp"\n{key} = ["add"]\n', name="own.toml")
    imported = import_config(path, workspace=cfg.workspace)
    assert imported.settings == {"permissions": {"deny": ["b__add"]}}
    assert not [note for note in imported.ignored if note.key == key]


@pytest.mark.parametrize(
    ("key", "needle"),
    [
        *((key, NO_ALLOWLIST) for key in OFFER_ALONE_SPELT),
        *((key, 'permissions.allow = ["b__add"] in your user config') for key in APPROVE_SPELT),
    ],
)
def test_cfg3_pol4_import_of_the_own_toml_says_what_to_write_for_a_list_to_offer_alone_or_approve(
    cfg: Setup, key: str, needle: str
) -> None:
    """CFG-3, POL-4: the import says what mcpyard has instead of such a list in its own form, as in the shared."""
    path = cfg.flag(f'[[mcp.servers]]\nid = "b"\nurl = "http://127.0.0.1:1/mcp"\n{key} = ["add"]\n', name="own.toml")
    imported = import_config(path, workspace=cfg.workspace)
    [note] = [note for note in imported.ignored if note.key == key]
    assert needle in note.why
    assert "permissions" not in imported.settings


@pytest.mark.parametrize(
    "key", ["exclude_tools", "excluded_tools", "disallowedTools", "include_tools", "allowed_tools"]
)
def test_pol4_cli2_status_and_import_never_answer_a_list_of_tools_with_shared_tools(home: Home, key: str) -> None:
    """POL-4, CLI-2: the acceptance probe's files: `status --mcp-config` of the own TOML and JSON refuses the key in
    one line that says what to write; the shared form warns so; `import` of both says it too; `shared_tools` never."""
    leave_out = key not in ("include_tools", "allowed_tools")
    needle = 'permissions.deny = ["b__add"]' if leave_out else NO_ALLOWLIST
    entry = {"url": "http://127.0.0.1:1/mcp", key: ["add"]}
    own_toml = home.root / "own.toml"
    own_toml.write_text(f'[[mcp.servers]]\nid = "b"\nurl = "http://127.0.0.1:1/mcp"\n{key} = ["add"]\n', "utf-8")
    own_json = home.root / "own.json"
    own_json.write_text(json.dumps({"servers": [{"id": "b", **entry}]}), encoding="utf-8")
    for own in (own_toml, own_json):
        done = run_mcpyard(home, "status", "--mcp-config", str(own))
        assert done.returncode == 2
        [line] = done.stderr.splitlines()
        assert f"unknown field '{key}'" in line
        assert needle in line
        assert "shared_tools" not in line
    shared = home.root / "shared.json"
    shared.write_text(json.dumps({"mcpServers": {"b": entry}}), encoding="utf-8")
    done = run_mcpyard(home, "status", "--mcp-config", str(shared))
    [warning] = [line for line in (done.stdout + done.stderr).splitlines() if f"'{key}'" in line]
    assert needle in warning
    assert "shared_tools" not in warning
    for path in (own_toml, shared):
        done = run_mcpyard(home, "import", str(path))
        assert done.returncode == 0, done.stderr
        assert "shared_tools" not in done.stdout + done.stderr
        said = "denied in permissions.deny (b__add)" if leave_out else NO_ALLOWLIST
        assert said in done.stdout


@pytest.mark.parametrize(
    ("written", "denied"),
    [("delete_note", ["g__delete_note"]), ([1, "delete_note", "", None, "wipe"], ["g__delete_note", "g__wipe"])],
    ids=["one name, not a list", "a list with items that are no name"],
)
def test_pol4_cfg4_a_list_to_leave_out_written_wrong_still_denies_the_tools_it_names(
    cfg: Setup, written: object, denied: list[str]
) -> None:
    """POL-4, CFG-4: Gemini CLI's `excludeTools` written as one name, or a list holding other things, never lets the
    tools it names run: they are denied, by `--mcp-config` and by import, and what was left out is said."""
    entry = {"command": PYTHON, "args": [BASIC], "excludeTools": written}
    gemini = cfg.flag({"mcpServers": {"g": entry}}, name=".gemini/settings.json")
    imported = import_config(gemini, workspace=cfg.workspace)
    assert imported.settings == {"permissions": {"deny": denied}}
    said = [note.why for note in imported.understood if note.key == "excludeTools"]
    assert any("one name" in why or "left out" in why for why in said), said
    assert list(cfg.load(config_file=gemini).settings.deny) == denied
