"""A server's question as a person sees it, and the answer that goes back (API-1 elicitation, ERR-1, SEC-2).

URL mode addresses are checked like sign-in pages (only https, or http to this machine; no user
info, no control characters, no leading `-`) and never opened by mcpyard.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpyard.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    ScriptedElicitor,
    answer_for_server,
    check_url,
    request_from_params,
)
from mcpyard.errors import ElicitationRefused

pytestmark = pytest.mark.anyio

FORM = {
    "mode": "form",
    "message": "Who are you?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"},
            "token": {"type": "string", "description": "Your access token"},
        },
        "required": ["name"],
    },
}


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("https://example.org/connect?x=1", "example.org"),
        ("https://bücher.example/pay", "xn--bcher-kva.example"),
        ("http://127.0.0.1:8080/callback", "127.0.0.1"),
        ("http://localhost/x", "localhost"),
        ("http://[::1]/x", "::1"),
    ],
)
def test_a_url_to_show_is_https_or_loopback_and_its_site_is_ascii(url: str, site: str) -> None:
    assert check_url(url) == (url, site)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://example.org/", "must be https"),
        ("ftp://example.org/", "must be an https address"),
        ("javascript:alert(1)", "must be an https address"),
        ("file:///etc/passwd", "must be an https address"),
        ("https://bank.example@evil.example/", "user name or password"),
        ("https://a.example/\nb", "spaces or control characters"),
        ("https://a.example/ b", "spaces or control characters"),
        ("https://a.example/\x00", "spaces or control characters"),
        ("-https://a.example/", "starts with '-'"),
        ("https://" + "a" * 2050, "at most 2048"),
        ("https://exa mple.org", "spaces"),
        ("https://", "must be an https address"),
    ],
)
def test_a_url_mcpyard_will_not_show_is_refused_naming_why(url: str, says: str) -> None:
    with pytest.raises(ElicitationRefused, match=says):
        check_url(url)


def test_a_form_request_carries_its_server_tool_message_and_fields() -> None:
    request = request_from_params("srv", FORM, tool="srv__who")
    assert (request.server, request.tool, request.mode, request.message) == ("srv", "srv__who", "form", "Who are you?")
    assert [f.name for f in request.fields] == ["name", "plan", "token"]
    assert request.asks_for_secrets
    assert request.defaults() == {"plan": "free"}
    lines = request.lines()
    assert lines[0] == "server srv asks, during srv__who:"
    assert "- name (text, at least 1 characters; required)" in lines
    assert "- plan (one of: free, pro; optional, default free)" in lines
    assert "- token (text, secret, not shown; optional)" in lines
    assert "this form asks for something secret" in lines[-1]


def test_a_url_request_shows_the_url_and_its_site_and_says_mcpyard_does_not_open_it() -> None:
    params = {
        "mode": "url",
        "message": "Connect your account",
        "url": "https://xn--80ak6aa92e.com/a",
        "elicitationId": "1",
    }
    request = request_from_params("srv", params)
    assert request.mode == "url"
    assert request.site == "xn--80ak6aa92e.com"
    assert request.lines() == [
        "server srv asks:",
        "Connect your account",
        "it asks you to open: https://xn--80ak6aa92e.com/a",
        "site: xn--80ak6aa92e.com",
        "mcpyard does not open it for you",
    ]
    assert request.to_json()["url"] == "https://xn--80ak6aa92e.com/a"


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"mode": "telepathy", "message": "x"}, "not 'telepathy'"),
        ({"mode": "url", "message": "x"}, "must carry a url"),
        ({"mode": "url", "message": "x", "url": "http://evil.example/"}, "must be https"),
        ({"message": "x", "requestedSchema": {"type": "object", "properties": {"a": {"type": "object"}}}}, "'object'"),
    ],
)
def test_a_request_that_cannot_be_asked_is_refused(params: dict[str, Any], says: str) -> None:
    with pytest.raises(ElicitationRefused, match=says):
        request_from_params("srv", params)


def test_a_long_message_is_cut_and_says_so() -> None:
    request = request_from_params("srv", {**FORM, "message": "x" * 5000})
    assert request.message.endswith("… (cut: 5000 characters in all)")
    assert len(request.message) < 4100


@pytest.mark.parametrize(
    ("answer", "wire"),
    [
        (ElicitationAnswer.accept({"name": "Ada"}), {"action": "accept", "content": {"name": "Ada", "plan": "free"}}),
        (
            ElicitationAnswer.accept({"name": "Ada", "plan": "pro"}),
            {"action": "accept", "content": {"name": "Ada", "plan": "pro"}},
        ),
        (ElicitationAnswer.decline(), {"action": "decline"}),
        (ElicitationAnswer.cancel(), {"action": "cancel"}),
        (ElicitationAnswer("decline", {"name": "dropped"}), {"action": "decline"}),
    ],
)
def test_an_answer_goes_back_completed_with_defaults(answer: ElicitationAnswer, wire: dict[str, Any]) -> None:
    assert answer_for_server(request_from_params("srv", FORM), answer) == wire


def test_an_accepted_url_carries_no_content() -> None:
    request = ElicitationRequest(server="s", message="m", mode="url", url="https://a.example/", site="a.example")
    assert answer_for_server(request, ElicitationAnswer.accept({"x": 1})) == {"action": "accept"}


def test_an_answer_that_does_not_fit_is_refused_naming_fields_never_values() -> None:
    request = request_from_params("srv", FORM)
    with pytest.raises(ElicitationRefused) as refused:
        answer_for_server(request, ElicitationAnswer.accept({"plan": "gold-secret-value", "token": 12}))
    assert refused.value.message == (
        "the answer does not fit the form: name: is required; plan: must be one of its choices; token: must be text"
    )
    assert "gold-secret-value" not in str(refused.value)
    with pytest.raises(ElicitationRefused, match="other than an ElicitationAnswer"):
        answer_for_server(request, "accept")  # type: ignore[arg-type]  # what an untyped elicitor may return


async def test_a_scripted_elicitor_answers_in_order_then_its_default_and_keeps_each_request() -> None:
    elicitor = ScriptedElicitor(answers=[ElicitationAnswer.cancel()])
    request = request_from_params("srv", FORM)
    assert await elicitor(request) == ElicitationAnswer.cancel()
    assert await elicitor(request) == ElicitationAnswer.decline()
    assert elicitor.requests == [request, request]
    assert await ScriptedElicitor.always(ElicitationAnswer.accept())(request) == ElicitationAnswer("accept", {})


@given(url=st.text(max_size=80) | st.builds(lambda rest: "https://" + rest, st.text(max_size=60)))
def test_any_url_is_refused_in_words_or_shown_as_https_without_controls(url: str) -> None:
    try:
        shown, site = check_url(url)
    except ElicitationRefused:
        return
    assert shown == url
    assert url.casefold().startswith(("https://", "http://"))
    assert not any(ch.isspace() or not ch.isprintable() for ch in url)
    assert site
    assert site.isascii()
