"""SEC-3: the redactor, as tables and as properties over the whole Unicode range; fast paths equal the plain regex."""

from __future__ import annotations

import base64
import html
import json
import re
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


# ----------------------------------------------------------------- the fast paths against one regex of every form


def reference(pairs: list[tuple[str, str]]) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """The redactor written plainly: one regex alternation of every form, longest first."""
    labels: dict[str, str] = {}
    for label, value in pairs:
        if len(value) >= 4:
            for form in forms_of(value):
                labels.setdefault(form, label)
    forms = sorted(labels, key=len, reverse=True)
    return (re.compile("|".join(re.escape(form) for form in forms)) if forms else None), labels


def reference_redact(pairs: list[tuple[str, str]], text: str) -> str:
    pattern, labels = reference(pairs)
    if pattern is None or not text:
        return text
    return pattern.sub(lambda match: labels[match.group()], text)


def reference_contains(pairs: list[tuple[str, str]], text: str) -> bool:
    pattern, _ = reference(pairs)
    return pattern is not None and pattern.search(text) is not None


# A small alphabet, so that values overlap, nest and share prefixes and forms often.
value_text = st.text(alphabet='ab+/=%é\n<&"\\', min_size=3, max_size=9)
labels = st.sampled_from(["%A%", "%B%", "${env:C}", "%ab%"])


MANY = [(f"%M{i}%", f"ab+/=%é-{i}") for i in range(8)]
"""Secrets enough to take the redactor past SCANNED_FORMS forms."""


@st.composite
def secrets_and_text(draw: st.DrawFn) -> tuple[list[tuple[str, str]], str]:
    base = draw(value_text)
    # Other values often nest in the first or share a prefix with it: the longer must win.
    related = st.one_of(
        value_text,
        st.integers(4, 9).map(lambda n: base[:n]),
        value_text.map(lambda tail: base + tail),
        value_text.map(lambda head: head + base),
    )
    pairs = [(draw(labels), base), *draw(st.lists(st.tuples(labels, related), max_size=3))]
    forms = sorted({form for _, value in pairs for form in forms_of(value)}) or ["ab"]
    pieces = st.one_of(st.sampled_from(forms), value_text, st.text(max_size=4))
    return pairs, "".join(draw(st.lists(pieces, max_size=12)))


@settings(max_examples=600)
@given(secrets_and_text())
def test_sec3_redact_and_contains_equal_one_regex_of_every_form(case: tuple[list[tuple[str, str]], str]) -> None:
    pairs, text = case
    # Also with many more secrets: past SCANNED_FORMS forms the redactor takes its one-regex path.
    for secrets in (pairs, [*pairs, *MANY]):
        redactor = Redactor(secrets)
        expected = reference_redact(secrets, text)
        assert redactor.redact(text) == expected
        assert redactor.contains(text) == reference_contains(secrets, text)
        assert redactor.redact_json({text: [text, {"k": text}, 1, None]}) == {
            expected: [expected, {"k": expected}, 1, None]
        }


@settings(max_examples=200)
@given(secrets_and_text(), st.integers(0, 3000))
def test_sec3_redact_equals_one_regex_of_every_form_on_long_text(
    case: tuple[list[tuple[str, str]], str], filler: int
) -> None:
    pairs, text = case
    long_text = "x" * filler + text + "é" * filler + text
    for secrets in (pairs, [*pairs, *MANY]):
        assert Redactor(secrets).redact(long_text) == reference_redact(secrets, long_text)


@pytest.mark.parametrize("count", [1, 3, 20])
def test_sec3_a_long_text_without_secrets_comes_back_whole(count: int) -> None:
    redactor = Redactor([(f"%S{i}%", f"secret-value-{i:02d}-kept-away") for i in range(count)])
    text = "lorem ipsum dolor sit amet\n" * 100_000
    assert redactor.redact(text) == text
    assert not redactor.contains(text)
    assert redactor.redact(text + "secret-value-00-kept-away") == text + "%S0%"


def test_sec3_a_redactor_with_more_secrets_redacts_both_and_leaves_the_first_unchanged() -> None:
    first = Redactor([("%A%", "alpha-secret-1")])
    both = first.with_secrets([("%B%", "beta-secret-22")])
    text = "alpha-secret-1 and beta-secret-22"
    assert both.redact(text) == "%A% and %B%"
    assert first.redact(text) == "%A% and beta-secret-22"
    assert first.with_secrets([("%C%", "abc")]) is first, "a value too short to be a secret changes nothing"
    assert Redactor().with_secrets([("%B%", "beta-secret-22")]).redact(text) == "alpha-secret-1 and %B%"
