"""Secret-looking names, credential variables a project file may not read, sources in words (CONN-2, CFG-6, CFG-1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpyard.config import CREDENTIAL_VARIABLES, looks_secret, source_words


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
