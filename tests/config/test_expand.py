"""`${VAR}`, `${VAR:-default}`, `${env:VAR}` and `${secret:NAME}` (CFG-5; SEC-2, SEC-3 for the values)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from mcpyard.config._expand import MAX_DEPTH, Expander

from ._support import Setup, mentioning

ENVIRON = {"A": "alpha", "B": "beta", "EMPTY": "", "PATHY": "/usr/bin"}
SECRETS = {"TOKEN": "s3cr3t", "dotted.name-1": "v"}


def _expand(template: str) -> str:
    result = Expander(environ=ENVIRON, secrets=SECRETS, restricted=False).expand(template)
    assert result.error is None
    return result.value


@pytest.mark.parametrize(
    ("template", "value"),
    [
        ("${A}", "alpha"),
        ("x-${A}-${B}-y", "x-alpha-beta-y"),
        ("${env:A}", "alpha"),
        ("${UNSET:-fallback}", "fallback"),
        ("${EMPTY:-fallback}", "fallback"),
        ("${A:-fallback}", "alpha"),
        ("${env:UNSET:-d}", "d"),
        ("${UNSET:-}", ""),
        ("${UNSET:-${A}/bin}", "alpha/bin"),
        ("${UNSET:-${ALSO_UNSET:-deep}}", "deep"),
        ("${UNSET:-a:b-c}", "a:b-c"),
        ("${secret:TOKEN}", "s3cr3t"),
        ("${secret:dotted.name-1}", "v"),
        ("Bearer ${secret:TOKEN}", "Bearer s3cr3t"),
        ("$A", "$A"),
        ("$", "$"),
        ("cost: 5$", "cost: 5$"),
        ("$$A", "$$A"),
        ("$${A}", "$alpha"),
        ("a}b{c", "a}b{c"),
        ("{A}", "{A}"),
        ("", ""),
        ("${EMPTY}", ""),
    ],
)
def test_references_expand_as_written_cfg_5(template: str, value: str) -> None:
    """CFG-5: every reference form, defaults when unset or empty, a lone `$` left alone."""
    assert _expand(template) == value


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("${A", "is never closed"),
        ("${", "is never closed"),
        ("x ${A:-unclosed", "is never closed"),
        ("${}", "does not start a valid reference"),
        ("${1A}", "does not start a valid reference"),
        ("${A B}", "is not a valid reference"),
        ("${A:=x}", "is not a valid reference"),
        ("${A-x}", "is not a valid reference"),
        ("${secret:}", "does not start a valid reference"),
        ("${secret:T:-x}", "is not a valid reference"),
        ("${env:}", "does not start a valid reference"),
        ("${vault:X}", "is not a valid reference"),
        ("${X:-" * (MAX_DEPTH + 1) + "}" * (MAX_DEPTH + 1), f"more than {MAX_DEPTH} deep"),
    ],
)
def test_a_malformed_reference_is_reported_without_looking_anything_up_cfg_5(template: str, message: str) -> None:
    """CFG-5: a malformed `${` is an error for that field, with its position and the valid forms."""
    result = Expander(environ=ENVIRON, secrets=SECRETS, restricted=False).expand(template)
    assert result.error is not None
    assert message in result.error
    assert result.value == ""
    assert (result.unresolved, result.secrets) == ([], [])


def test_an_unset_variable_expands_to_empty_with_one_warning_naming_it_cfg_5(cfg: Setup) -> None:
    """CFG-5: in command/args/env/cwd an unset `${VAR}` is empty and warned about once."""
    spec, loaded = cfg.load_one({"command": "x", "args": ["--dir=${WORKDIR}"]}, environ={})
    assert (spec.state, spec.args) == ("ok", ("--dir=",))
    assert len(loaded.warnings) == 1
    assert mentioning(loaded, "server 's'", "${WORKDIR}", "args[0]", "is not set", "${WORKDIR:-default}")


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"command": "${BIN}/srv"}, "command"),
        ({"command": "x", "args": ["${V}"]}, "args[0]"),
        ({"command": "x", "env": {"TOKEN": "${V}"}}, "env.TOKEN"),
        ({"command": "x", "cwd": "${V}"}, "cwd"),
        ({"url": "https://x.test/${V}"}, "url"),
    ],
)
def test_each_expanded_field_warns_about_an_unset_variable_cfg_5(
    cfg: Setup, entry: dict[str, object], field: str
) -> None:
    """CFG-5: expansion applies in command, args, env values, cwd and url."""
    _, loaded = cfg.load_one(entry, environ={})
    assert len(mentioning(loaded, "is not set", f"in {field} ")) == 1


def test_a_set_but_empty_variable_expands_to_empty_silently_cfg_5(cfg: Setup) -> None:
    """CFG-5: set-but-empty is the user's choice, not a mistake."""
    spec, loaded = cfg.load_one({"command": "x", "args": ["a${E}b"], "env": {"K": "${E}"}}, environ={"E": ""})
    assert (spec.args, spec.env) == (("ab",), (("K", ""),))
    assert loaded.warnings == ()


def test_a_known_secret_is_expanded_and_recorded_for_redaction_cfg_5_sec_3(cfg: Setup) -> None:
    """CFG-5, SEC-3: `secret_values` lists each secret used, once."""
    spec, loaded = cfg.load_one(
        {"url": "https://x.test/mcp?k=${secret:K}", "headers": {"Authorization": "Bearer ${secret:K}"}},
        secrets={"K": "tok-123", "OTHER": "unused"},
    )
    assert spec.state == "ok"
    assert spec.headers == (("Authorization", "Bearer tok-123"),)
    assert spec.url == "https://x.test/mcp?k=tok-123"
    assert spec.secret_values == (("K", "tok-123"),)
    assert loaded.warnings == ()


def test_an_unknown_secret_outside_headers_expands_to_empty_with_a_warning_cfg_5(cfg: Setup) -> None:
    """CFG-5: the warning says how to save it."""
    spec, loaded = cfg.load_one({"command": "x", "env": {"T": "${secret:GH}"}}, secrets={})
    assert (spec.state, spec.env) == ("ok", (("T", ""),))
    assert mentioning(loaded, "${secret:GH}", "env.T", "mcpyard secrets set GH")


@pytest.mark.parametrize(
    ("headers", "environ", "secrets", "problem"),
    [
        ({"Authorization": "Bearer ${TOK}"}, {}, {}, "headers.Authorization: ${TOK} is not set"),
        ({"X-Key": "${secret:K}"}, {}, {}, "headers.X-Key: secret K (${secret:K}) is not saved"),
        (
            {"X-Key": "${K}"},
            {"K": "abc\r\nInjected: 1"},
            {},
            "headers.X-Key: the value of ${K} holds a line break",
        ),
        ({"X-Key": "${secret:K}"}, {}, {"K": "a\nb"}, "the value of ${secret:K} holds a line break"),
        ({"X-Key": "a\nb"}, {}, {}, "headers.X-Key: the value holds a line break"),
        ({"X Key": "v"}, {}, {}, "headers['X Key']: is not a valid header name"),
        ({"": "v"}, {}, {}, "headers['']: is not a valid header name"),
        ({"X-Key": "${K"}, {}, {}, "headers.X-Key: the `${` at character 1 is never closed"),
        (
            {"Authorization": "Bearer ${TOK}"},
            {"TOK": ""},
            {},
            "headers.Authorization: the value ends with a space once expanded (is a variable in it empty?)",
        ),
        (
            {"Authorization": "Bearer ${TOK:-}"},
            {},
            {},
            "headers.Authorization: the value ends with a space once expanded (is a variable in it empty?)",
        ),
        ({"X-Key": "abc "}, {}, {}, "headers.X-Key: the value ends with a space, which a header cannot carry"),
        ({"X-Key": "\tabc"}, {}, {}, "headers.X-Key: the value begins with a space, which a header cannot carry"),
    ],
)
def test_a_header_that_cannot_be_sent_stops_the_server_naming_header_and_reference_cfg_5(
    cfg: Setup, headers: dict[str, str], environ: dict[str, str], secrets: dict[str, str], problem: str
) -> None:
    """CFG-5, SEC-2: the server fails before any request; the message names, never shows, the value."""
    spec, loaded = cfg.load_one({"url": "https://x.test/mcp", "headers": headers}, environ=environ, secrets=secrets)
    assert spec.state == "failed"
    assert spec.problem is not None
    assert problem in spec.problem
    for value in [value for value in [*environ.values(), *secrets.values()] if value]:
        assert value not in spec.problem
        assert all(value not in warning for warning in loaded.warnings)


def test_a_header_with_a_default_or_an_empty_variable_is_fine_cfg_5(cfg: Setup) -> None:
    """CFG-5: only an unset variable with no default stops a header."""
    spec, _ = cfg.load_one(
        {"url": "https://x.test", "headers": {"A": "${UNSET:-d}", "B": "x${EMPTY}"}}, environ={"EMPTY": ""}
    )
    assert (spec.state, spec.headers) == ("ok", (("A", "d"), ("B", "x")))


def test_a_malformed_reference_fails_the_entry_naming_the_field_cfg_5(cfg: Setup) -> None:
    """CFG-5, CFG-4: `${` left open is a bad value of that field."""
    spec, _ = cfg.load_one({"command": "x", "args": ["ok", "${HOME"]})
    assert spec.state == "failed"
    assert spec.problem is not None
    assert spec.problem.startswith("args[1]: the `${` at character 1 is never closed")


def test_a_command_that_expands_to_nothing_fails_the_entry_cfg_5(cfg: Setup) -> None:
    """CFG-5, CFG-4: an empty command cannot start; the unset variable is also warned about."""
    spec, loaded = cfg.load_one({"command": "${NODE_BIN}"}, environ={})
    assert spec.state == "failed"
    assert spec.problem == "command: is empty after expansion; set the variables it uses"
    assert mentioning(loaded, "${NODE_BIN}")


def test_no_warning_or_problem_ever_shows_an_environment_or_secret_value_cfg_5_sec_2(cfg: Setup) -> None:
    """CFG-5, SEC-2: every message names variables and secrets only."""
    environ = {"HOME": "/home/VALUE-1", "BROKEN": "VALUE-2\n", "PASS": "VALUE-4"}
    secrets = {"S": "VALUE-3"}
    flag = cfg.flag(
        {
            "mcpServers": {
                "a": {"command": "${HOME}/x", "args": ["${secret:S}", "${MISSING}", "${secret:NOPE}"]},
                "b": {
                    "url": "https://x.test",
                    "headers": {"X": "${BROKEN}", "Y": "${secret:S}", "Z": "${NO}"},
                },
                "c": {"url": "https://${secret:S}:${PASS}@x.test"},
            }
        }
    )
    loaded = cfg.load(config_file=flag, environ=environ, secrets=secrets)
    texts = [*loaded.warnings, *(spec.problem or "" for spec in loaded.servers)]
    assert len([text for text in texts if text]) == 4
    for text in texts:
        assert "VALUE-" not in text
    assert "VALUE-" not in repr(loaded.servers[1])
    assert "VALUE-" not in repr(loaded.servers[2])


_NAMES = ["A", "B", "LEAK_1", "LEAK_2", "secret:S", "env:A", "env:LEAK_1"]
_PIECES = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["${", "}", ":-", "$", "{", *_NAMES]),
    st.builds(lambda name: "${" + name + "}", st.sampled_from(_NAMES)),
)


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_expansion_never_raises_and_never_leaks_an_unreferenced_value_cfg_5(template: str) -> None:
    """CFG-5, SEC-2: over arbitrary text, a value appears only if its variable or secret is named."""
    marks = {"LEAK_1": "\ue000one\ue001", "LEAK_2": "\ue000two\ue001", "S": "\ue000sec\ue001"}
    assume(all(mark not in template for mark in marks.values()))
    environ = {"A": "a", "LEAK_1": marks["LEAK_1"], "LEAK_2": marks["LEAK_2"]}
    for restricted in (False, True):
        result = Expander(environ=environ, secrets={"S": marks["S"]}, restricted=restricted).expand(template)
        for name, mark in marks.items():
            if name not in template:
                assert mark not in result.value
        if result.error is not None:
            assert result.value == ""
            assert all(mark not in result.error for mark in marks.values())
        if restricted:
            assert marks["S"] not in result.value
