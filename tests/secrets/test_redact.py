"""SEC-3: the redactor, as tables and as properties over the whole Unicode range."""

from __future__ import annotations

import base64
import html
import json
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpyard.secrets import Redactor, forms_of

SECRET = "sk-live-4f9a/+Qz=="
R = Redactor([("%API%", SECRET)])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (SECRET, "%API%"),
        (f"Bearer {SECRET}", "Bearer %API%"),
        (f"word{SECRET}word", "word%API%word"),
        (quote(SECRET, safe=""), "%API%"),
        (quote_plus(SECRET), "%API%"),
        (json.dumps({"k": SECRET}), '{"k": "%API%"}'),
        (html.escape(SECRET), "%API%"),
        ("nothing to see", "nothing to see"),
    ],
)
def test_sec3_a_secret_is_replaced_by_its_name_in_every_form(text: str, expected: str) -> None:
    assert R.redact(text) == expected


@pytest.mark.parametrize("shift", range(6))
@pytest.mark.parametrize("urlsafe", [False, True])
def test_sec3_base64_at_every_byte_offset_loses_the_secret(shift: int, urlsafe: bool) -> None:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    text = encode(b"x" * shift + f"header: Bearer {SECRET};".encode() + b"tail").decode()
    out = R.redact(text)
    assert "%API%" in out
    assert base64.b64encode(SECRET.encode()).decode()[:8] not in out


def test_sec3_short_values_are_not_redacted() -> None:
    assert Redactor([("%X%", "ab")]).redact("abcab") == "abcab"


def test_sec3_redact_json_covers_keys_and_nested_values() -> None:
    assert R.redact_json({SECRET: [SECRET, {"n": 1, "s": f"x{SECRET}"}]}) == {
        "%API%": ["%API%", {"n": 1, "s": "x%API%"}]
    }


def test_sec3_contains_spots_a_secret_in_outgoing_arguments() -> None:
    assert R.contains(json.dumps({"q": f"send {SECRET} away"}))
    assert not R.contains(json.dumps({"q": "harmless"}))


secret_text = st.text(min_size=6, max_size=40).filter(lambda s: len(s.strip()) >= 6)


@settings(max_examples=300)
@given(secret=secret_text, before=st.text(max_size=30), after=st.text(max_size=30))
def test_sec3_plain_and_escaped_forms_never_survive(secret: str, before: str, after: str) -> None:
    redactor = Redactor([("%S%", secret)])
    for form in (secret, json.dumps(secret)[1:-1], quote(secret, safe=""), html.escape(secret)):
        out = redactor.redact(before + form + after)
        assert secret not in out or secret in (before + after)


@settings(max_examples=300)
@given(secret=secret_text, before=st.binary(max_size=8), after=st.binary(max_size=8))
def test_sec3_base64_never_carries_the_secret_through(secret: str, before: bytes, after: bytes) -> None:
    redactor = Redactor([("%S%", secret)])
    out = redactor.redact(base64.b64encode(before + secret.encode("utf-8", "surrogatepass") + after).decode())
    for core in forms_of(secret):
        if core not in (
            secret,
            json.dumps(secret)[1:-1],
            quote(secret, safe=""),
            quote_plus(secret),
            html.escape(secret),
        ):
            assert core not in out
