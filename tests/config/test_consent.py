"""What `mcpyard trust` shows of each project server: as written, exactly, nothing expanded (CFG-6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpyard.config import ProjectTrust, entry_digest, read_project
from mcpyard.config._consent import describe_entry
from mcpyard.config._read import RawEntry
from mcpyard.errors import ConfigError


@pytest.mark.parametrize(
    ("fields", "runs"),
    [
        pytest.param({"command": "npx", "args": ["-y", "@acme/mcp"]}, "runs npx -y @acme/mcp", id="command-line"),
        pytest.param(
            {"command": "/opt/my tools/mcp", "args": ["--name=a b", "it's", "${HOME}/x"]},
            "runs '/opt/my tools/mcp' '--name=a b' 'it'\"'\"'s' '${HOME}/x'",
            id="quoted-as-a-shell-reads-it",
        ),
        pytest.param({"command": "mcp", "cwd": "tools dir"}, "runs mcp in 'tools dir'", id="cwd"),
        pytest.param(
            {"url": "https://mcp.acme.test/${TENANT}"}, "connects to https://mcp.acme.test/${TENANT}", id="url"
        ),
        pytest.param(
            {"command": "npx\u200b", "args": ["a\x1b[2Jb"]},
            "runs $'npx\\u200b' $'a\\x1b[2Jb'",
            id="invisible-characters-escaped-never-dropped",
        ),
        pytest.param({"command": "x", "url": "https://y.test"}, "runs x and connects to https://y.test", id="both"),
        pytest.param({"name": "n"}, "starts nothing (it has neither `command` nor `url`)", id="neither"),
        pytest.param({"command": 7, "args": "--all"}, "runs 7 (args as written: --all)", id="wrong-types"),
    ],
)
def test_cfg6_trust_shows_the_command_line_or_url_as_written(fields: dict[str, object], runs: str) -> None:
    assert describe_entry(RawEntry("s", fields)).runs == runs


def test_cfg6_trust_shows_the_variables_read_and_the_env_names_never_values() -> None:
    fields: dict[str, object] = {
        "command": "${BIN:-mcp}",
        "env": {"TOKEN": "ghp_literal_value", "LEVEL": "${LEVEL}"},
        "inherit_env": ["LANG"],
        "enabled": False,
    }
    server = describe_entry(RawEntry("odd\u202eid", fields))
    assert server.id == "odd\u202eid"
    assert server.label == "odd\\u202eid"
    assert server.reads == ("${BIN}", "${LEVEL}")
    assert server.env_names == ("LEVEL", "TOKEN")
    assert server.inherits == ("LANG",)
    assert not server.enabled
    assert "ghp_literal_value" not in repr(server)
    assert server.digest == entry_digest(fields)


@pytest.mark.parametrize(
    ("trust", "expected"),
    [
        pytest.param(None, ("new", ()), id="never-trusted"),
        pytest.param(ProjectTrust({}, legacy=True), ("new", ()), id="older-version"),
        pytest.param(ProjectTrust({}), ("added", ()), id="added"),
        pytest.param(ProjectTrust({"s": entry_digest({"command": "x"})}), ("unchanged", ()), id="unchanged"),
        pytest.param(ProjectTrust({"s": entry_digest({"command": "y"})}), ("changed", ("command",)), id="changed"),
    ],
)
def test_cfg6_trust_says_how_each_server_stands_against_what_was_recorded(
    trust: ProjectTrust | None, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert describe_entry(RawEntry("s", {"command": "x"})).change(trust) == expected


def test_cfg6_the_project_file_is_read_for_trust_without_expanding_anything(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"servers": [{"id": "b", "command": "${SECRET_BIN}"}, {"id": "a", "url": "https://a.test"}]})
    )
    project = read_project(tmp_path)
    assert project is not None
    assert [(server.id, server.runs) for server in project.servers] == [
        ("b", "runs '${SECRET_BIN}'"),
        ("a", "connects to https://a.test"),
    ]
    assert set(project.digests()) == {"a", "b"}


def test_cfg6_reading_a_missing_or_malformed_project_file_for_trust(tmp_path: Path) -> None:
    """CFG-6, ERR-1: missing is None; malformed is a ConfigError naming the file (nothing can be shown)."""
    assert read_project(tmp_path) is None
    (tmp_path / ".mcp.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"\.mcp\.json is not valid JSON"):
        read_project(tmp_path)
