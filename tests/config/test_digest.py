"""What trust covers: the digest of a project server as written, and what it says about a change (CFG-6)."""

from __future__ import annotations

import json

import pytest

from mcpyard.config import EntryDigest, ProjectTrust, entry_digest
from mcpyard.config._digest import changed_parts, variables_read

ARGS = ["-y", "@acme/mcp", "--root=${PROJECT_ROOT}"]
ENV = {"LOG_LEVEL": "info", "API_BASE": "${ACME_BASE:-https://acme.test}"}
BASE: dict[str, object] = {"command": "npx", "args": ARGS, "env": ENV, "cwd": "tools"}
REMOTE: dict[str, object] = {"url": "https://mcp.acme.test/${TENANT}", "headers": {"X-Tenant": "${TENANT}"}}


def _with(base: dict[str, object], **changes: object) -> dict[str, object]:
    fields = dict(base)
    for key, value in changes.items():
        if value is None:
            fields.pop(key, None)
        else:
            fields[key] = value
    return fields


@pytest.mark.parametrize(
    ("base", "after", "changed"),
    [
        pytest.param(BASE, _with(BASE, command="uvx"), ("command",), id="command"),
        pytest.param(BASE, _with(BASE, roots=["~"]), ("roots",), id="roots-added"),
        pytest.param(_with(BASE, roots=["."]), _with(BASE, roots=[".", ".."]), ("roots",), id="roots-widened"),
        pytest.param(BASE, _with(BASE, command="npx "), ("command",), id="command-trailing-space"),
        pytest.param(BASE, _with(BASE, args=["-y", "@evil/mcp", "--root=${PROJECT_ROOT}"]), ("args",), id="args"),
        pytest.param(BASE, _with(BASE, args=["@acme/mcp", "-y", "--root=${PROJECT_ROOT}"]), ("args",), id="args-order"),
        pytest.param(BASE, _with(BASE, args=[*ARGS, "--yes"]), ("args",), id="an-arg-more"),
        pytest.param(
            BASE,
            _with(BASE, env={**ENV, "NODE_OPTIONS": "x"}),
            ("env names",),
            id="env-added",
        ),
        pytest.param(BASE, _with(BASE, env={"LOG_LEVEL": "info"}), ("env names", "variables it reads"), id="env-gone"),
        pytest.param(BASE, _with(BASE, cwd="/"), ("cwd",), id="cwd"),
        pytest.param(BASE, _with(BASE, cwd=None), ("cwd",), id="cwd-removed"),
        pytest.param(REMOTE, _with(REMOTE, url="https://mcp.evil.test/${TENANT}"), ("url",), id="url"),
        pytest.param(
            BASE,
            _with(BASE, env={"LOG_LEVEL": "info", "API_BASE": "${AWS_SECRET_ACCESS_KEY}"}),
            ("variables it reads",),
            id="env-value-reads-another-variable",
        ),
        pytest.param(
            REMOTE, _with(REMOTE, headers={"X-Tenant": "${GITHUB_TOKEN}"}), ("variables it reads",), id="header-reads"
        ),
        pytest.param(BASE, _with(BASE, inherit_env="*"), ("variables it reads",), id="inherit-env"),
        pytest.param(
            BASE,
            _with(BASE, command="${TOOL}"),
            ("command", "variables it reads"),
            id="command-reads-a-variable",
        ),
        pytest.param(BASE, _with(BASE, url="https://x.test"), ("url",), id="url-added-to-a-command"),
    ],
)
def test_cfg6_a_change_to_a_covered_part_changes_the_digest_and_is_named(
    base: dict[str, object], after: dict[str, object], changed: tuple[str, ...]
) -> None:
    before, now = entry_digest(base), entry_digest(after)
    assert before.digest != now.digest
    assert changed_parts(before, now) == changed


@pytest.mark.parametrize(
    ("base", "after"),
    [
        pytest.param(
            BASE, _with(BASE, env={"LOG_LEVEL": "debug", "API_BASE": "${ACME_BASE:-https://acme.test}"}), id="env-value"
        ),
        pytest.param(
            BASE,
            _with(BASE, env={"LOG_LEVEL": "info", "API_BASE": "${ACME_BASE:-https://other.test}"}),
            id="env-default",
        ),
        pytest.param(
            BASE,
            _with(BASE, env={"API_BASE": "${ACME_BASE:-https://acme.test}", "LOG_LEVEL": "info"}),
            id="env-key-order",
        ),
        pytest.param(BASE, dict(reversed(list(BASE.items()))), id="field-order"),
        pytest.param(REMOTE, _with(REMOTE, headers={"X-Tenant": "prefix-${TENANT}"}), id="header-literal-text"),
        pytest.param(
            BASE, _with(BASE, name="acme", transport="stdio", call_timeout_secs=5, enabled=False), id="others"
        ),
        pytest.param(BASE, _with(BASE, inherit_env=[]), id="inherit-env-empty"),
        pytest.param({"command": "x"}, {"command": "x", "args": [], "env": {}}, id="empty-is-missing"),
        pytest.param({"command": "x"}, {"command": "x", "args": None, "cwd": None}, id="null-is-missing"),
        pytest.param(
            _with(BASE, inherit_env=["LANG", "TZ"]), _with(BASE, inherit_env=["TZ", "LANG", "TZ"]), id="inherit-order"
        ),
    ],
)
def test_cfg6_what_trust_does_not_cover_leaves_the_digest_alone(
    base: dict[str, object], after: dict[str, object]
) -> None:
    assert entry_digest(base) == entry_digest(after)
    assert entry_digest(base).digest == entry_digest(after).digest


def test_cfg6_the_digest_ignores_the_files_whitespace() -> None:
    compact = json.dumps(BASE, separators=(",", ":"))
    spread = json.dumps(BASE, indent=8).replace("\n", "\r\n\t")
    assert entry_digest(json.loads(compact)).digest == entry_digest(json.loads(spread)).digest


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param(
            {"command": "${A}", "args": ["${B:-${C}}", "$D", "${secret:S}"]},
            ("${A}", "${B}", "${C}", "${secret:S}"),
            id="nested",
        ),
        pytest.param({"url": "https://x/${env:U}", "headers": {"H": "${H}"}}, ("${H}", "${U}"), id="remote"),
        pytest.param({"command": "x", "env": {"K": "${K}", "L": "${K}"}, "cwd": "${W}"}, ("${K}", "${W}"), id="once"),
        pytest.param({"command": "${unclosed", "args": [1, None]}, (), id="malformed-and-wrong-types"),
        pytest.param({"command": "x", "env": "not-a-table", "headers": ["nor"]}, (), id="bad-tables"),
    ],
)
def test_cfg6_the_variables_an_entry_reads_are_found_without_reading_any(
    fields: dict[str, object], expected: tuple[str, ...]
) -> None:
    assert variables_read(fields) == expected


@pytest.mark.parametrize(
    "fields",
    [
        {"command": 1, "args": "not a list", "env": ["A"], "cwd": {"x": 1}, "url": True},
        {"command": "x", "args": [[[[[]]]]], "inherit_env": 3},
        {},
    ],
)
def test_cfg6_any_value_as_written_has_a_stable_digest(fields: dict[str, object]) -> None:
    """CFG-6, ERR-1: a wrongly typed entry still gets a digest (building it fails later), never an error."""
    assert entry_digest(fields) == entry_digest(json.loads(json.dumps(fields)))
    assert len(entry_digest(fields).digest) == 64


TRUSTED = entry_digest(BASE)


@pytest.mark.parametrize(
    ("trust", "server_id", "fields", "expected"),
    [
        pytest.param(ProjectTrust({"a": TRUSTED}), "a", BASE, None, id="unchanged"),
        pytest.param(ProjectTrust({"a": TRUSTED}), "b", BASE, "added since you trusted it; ", id="added"),
        pytest.param(
            ProjectTrust({"a": TRUSTED}),
            "a",
            _with(BASE, command="sh", cwd="/"),
            "changed since you trusted it (command, cwd); ",
            id="changed",
        ),
        pytest.param(
            ProjectTrust({"a": EntryDigest({})}),
            "a",
            BASE,
            "changed since you trusted it (command, args, ",
            id="no-parts",
        ),
        pytest.param(
            ProjectTrust({"a": TRUSTED}, legacy=True),
            "a",
            BASE,
            "trust for this workspace was recorded by an older version of mcpyard",
            id="older-version",
        ),
    ],
)
def test_cfg6_recorded_trust_covers_an_entry_only_as_it_was(
    trust: ProjectTrust, server_id: str, fields: dict[str, object], expected: str | None
) -> None:
    problem = trust.problem(server_id, entry_digest(fields))
    if expected is None:
        assert problem is None
    else:
        assert problem is not None
        assert problem.startswith(expected)
        assert "mcpyard trust" in problem


def test_cfg6_an_entry_without_roots_keeps_the_digest_it_had_before_roots_were_covered() -> None:
    """Trust given before entries could have `roots` still holds: the parts of an entry without them are the six of
    old, so its digest is unchanged; only adding roots asks for trust again."""
    assert set(entry_digest(BASE).parts) == {"command", "args", "env_names", "cwd", "url", "variables"}
    assert set(entry_digest(_with(BASE, roots=["."])).parts) == {*entry_digest(BASE).parts, "roots"}
