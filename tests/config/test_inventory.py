"""SEC-3: which values mcpyard put into a request or a server's environment are redacted, and under which label.

Tests `secrets_in_use` over real configuration files: the rule is about where a value came
from (a saved secret, an environment variable whose name looks secret, a credential header),
never about where the entry puts it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpyard.config import secrets_in_use
from tests.config._support import Setup

TOKEN = "tok-0123456789abcdef-value"
PLAIN = "plain-0123456789-not-secret"
ENVIRON = {"MY_API_KEY": TOKEN, "SERVICE_TOKEN": TOKEN, "REGION_NAME": PLAIN}
STDIO: dict[str, Any] = {"command": "server"}
REMOTE: dict[str, Any] = {"url": "https://example.test/mcp"}


@pytest.fixture
def cfg(tmp_path: Path) -> Setup:
    return Setup(root=tmp_path)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        # A secret-looking variable under a plain name in `env`: the source's name decides.
        ({**STDIO, "env": {"PLAIN_SETTING": "${env:MY_API_KEY}"}}, {("${env:MY_API_KEY}", TOKEN)}),
        ({**STDIO, "env": {"PLAIN_SETTING": "${MY_API_KEY}"}}, {("${env:MY_API_KEY}", TOKEN)}),
        ({**STDIO, "env": {"PLAIN_SETTING": "prefix-${SERVICE_TOKEN}"}}, {("${env:SERVICE_TOKEN}", TOKEN)}),
        # Inside a default that was used.
        ({**STDIO, "env": {"PLAIN_SETTING": "${UNSET_ONE:-${MY_API_KEY}}"}}, {("${env:MY_API_KEY}", TOKEN)}),
        # In the command line, the working folder or the URL.
        ({**STDIO, "args": ["--key", "${MY_API_KEY}"]}, {("${env:MY_API_KEY}", TOKEN)}),
        ({**REMOTE, "url": "https://example.test/mcp?k=${SERVICE_TOKEN}"}, {("${env:SERVICE_TOKEN}", TOKEN)}),
        # A header whose name does not look secret.
        ({**REMOTE, "headers": {"X-Custom-Trace": "${env:MY_API_KEY}"}}, {("${env:MY_API_KEY}", TOKEN)}),
        # A plain variable in a credential header is a credential; in a plain header it is not.
        ({**REMOTE, "headers": {"Authorization": "Bearer ${REGION_NAME}"}}, {("${env:REGION_NAME}", PLAIN)}),
        ({**REMOTE, "headers": {"X-Region": "${REGION_NAME}"}}, set()),
        ({**STDIO, "env": {"PLAIN_SETTING": "${REGION_NAME}"}}, set()),
        # A secret-looking name in a stdio server's env holds a secret whatever it came from.
        ({**STDIO, "env": {"OTHER_TOKEN": "literal-0123456789"}}, {("${env:OTHER_TOKEN}", "literal-0123456789")}),
    ],
)
def test_sec3_a_secret_looking_variable_is_redacted_wherever_the_entry_puts_it(
    cfg: Setup, entry: dict[str, Any], expected: set[tuple[str, str]]
) -> None:
    spec, _ = cfg.load_one(entry, environ=ENVIRON)
    assert spec.problem is None, spec.problem
    assert set(secrets_in_use([spec], ENVIRON)) == expected


def test_sec3_a_saved_secret_is_redacted_by_its_name_wherever_it_went(cfg: Setup) -> None:
    entry = {**REMOTE, "headers": {"X-Trace": "${secret:API}"}, "url": "https://example.test/${secret:API}"}
    flag = cfg.flag({"mcpServers": {"s": entry}})
    [spec] = cfg.load(config_file=flag, environ={}, secrets={"API": TOKEN}).servers
    assert set(secrets_in_use([spec], {})) == {("%API%", TOKEN)}
