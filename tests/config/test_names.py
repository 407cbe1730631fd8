"""Secret-looking names, credential variables a project file may not read, sources in words (CONN-2, CFG-6, CFG-1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpyard.config import CREDENTIAL_VARIABLES, looks_secret, source_words
from mcpyard.config._fields import FIELDS
from mcpyard.config._names import approves_tools, leaves_out_tools, nearest_field, offers_only_tools


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("GITHUB_TOKEN", True),
        ("api_key", True),
        ("MY_SECRET", True),
        ("DB_PASSWORD", True),
        ("MYSQL_PWD_PASSWD", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("AUTHORIZATION", True),
        ("oauth_state", True),
        ("Cookie_Jar", True),
        ("SESSION_ID", True),
        ("monkey", True),
        ("PATH", False),
        ("HOME", False),
        ("LANG", False),
        ("TERM", False),
        ("NODE_ENV", False),
        ("", False),
    ],
)
def test_a_name_looks_secret_when_it_contains_a_marker_in_any_case_conn_2(name: str, secret: bool) -> None:
    """CONN-2: KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, AUTH, COOKIE, SESSION."""
    assert looks_secret(name) is secret


@given(
    st.text(max_size=20),
    st.sampled_from(["key", "Token", "SECRET", "passwd", "auth", "cookie"]),
    st.text(max_size=20),
)
def test_a_marker_anywhere_makes_a_name_look_secret_conn_2(before: str, marker: str, after: str) -> None:
    """CONN-2: substring match, whatever surrounds it."""
    assert looks_secret(before + marker + after)


def test_the_credential_variables_are_exactly_those_of_the_spec_cfg_6() -> None:
    """CFG-6: the list is a contract; every one of them also looks secret."""
    assert (
        frozenset(
            {
                "ANTHROPIC_API_KEY",
                "OPENAI_API_KEY",
                "OPENCODE_API_KEY",
                "OPENCODE_GO_API_KEY",
                "DEEPSEEK_API_KEY",
                "GEMINI_API_KEY",
                "GOOGLE_API_KEY",
                "OPENROUTER_API_KEY",
                "GROQ_API_KEY",
                "XAI_API_KEY",
                "MISTRAL_API_KEY",
            }
        )
        == CREDENTIAL_VARIABLES
    )
    assert isinstance(CREDENTIAL_VARIABLES, frozenset)
    assert all(looks_secret(name) for name in CREDENTIAL_VARIABLES)


@pytest.mark.parametrize(
    ("source", "words"),
    [("flag", "--mcp-config file"), ("user", "user config"), ("project", "project file"), ("other", "other")],
)
def test_cfg1_sources_are_named_in_words_for_people(source: str, words: str) -> None:
    assert source_words(source) == words


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        *((key, "leave out") for key in ["disabledTools", "excludeTools", "excludedTools", "disabled_tools"]),
        *((key, "leave out") for key in ["exclude_tools", "excluded_tools", "disallowed_tools", "disallowedTools"]),
        *((key, "leave out") for key in ["blocked_tools", "deny_tools", "denied_tools", "ignoredTools", "hide-tools"]),
        *((key, "leave out") for key in ["FORBIDDEN_TOOLS", "blacklisted_tools", "blocklistTools", "disabled_tool"]),
        *((key, "offer alone") for key in ["includeTools", "enabled_tools", "include_tools", "allowed_tools"]),
        *((key, "offer alone") for key in ["allowedTools", "only_tools", "whitelisted-tools", "allowlistTools"]),
        *((key, "approve") for key in ["autoApprove", "alwaysAllow", "auto_approve", "always_allow"]),
        *((key, "approve") for key in ["autoApproveTools", "approved_tools", "trustedTools"]),
        *((key, None) for key in ["tools", "shared_tools", "always_offer", "enabled", "disabled", "trust", "toolsets"]),
        *((key, None) for key in ["tools_disabled", "disabledMcpServers", "excludeMCPServers", "coreTools"]),
    ],
)
def test_pol4_cfg3_a_list_of_tools_is_known_by_its_words_however_spelt(key: str, kind: str | None) -> None:
    """POL-4, CFG-3: a deny-ish word before `tools` (any case, `_` or `-`) is a list of tools to leave out, an
    allow-ish one a list of the only tools to offer, Cline's and Roo's names a list to approve; nothing else is."""
    found = [
        name
        for name, test in [
            ("leave out", leaves_out_tools),
            ("offer alone", offers_only_tools),
            ("approve", approves_tools),
        ]
        if test(key)
    ]
    assert found == ([kind] if kind else [])


@pytest.mark.parametrize(
    ("key", "field"),
    [
        ("hidden_tools", None),
        ("muted_tools", None),
        ("excluded_tools", None),
        ("allowed_tools", None),
        ("shared_tool", "shared_tools"),
        ("sharedTools", "shared_tools"),
        ("share_tools", "shared_tools"),
        ("rooots", "roots"),
        ("comand", "command"),
    ],
)
def test_cfg3_a_field_is_suggested_for_a_slip_never_for_another_list_of_tools(key: str, field: str | None) -> None:
    """CFG-3: "did you mean `shared_tools`" is for a misspelt `shared_tools`, never a list that means its opposite."""
    assert nearest_field(key, FIELDS) == field
