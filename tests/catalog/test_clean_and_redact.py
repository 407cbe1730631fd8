"""Cleaning then redacting, the one way every text and JSON value from a server is made fit to show (CAT-4, SEC-3).

Properties over the whole character range: a secret split by characters that cleaning removes (terminal
sequences, controls, bidi, zero-width and tag characters) never survives, in text or anywhere in a JSON
value, keys included; what comes out is clean.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpyard.catalog import clean_and_redact, clean_and_redact_json, clean_text
from mcpyard.secrets import MIN_SECRET_LENGTH, Redactor

REMOVED = ["\u200b", "\u200d", "\u2060", "\ufeff", "\u202e", "\u2066", "\x07", "\x00", "\x1b[31m", "\x1b]0;x\x07",
           "\U000e0041", "\U000e007f"]  # fmt: skip
"""Characters (and sequences) `clean_text` takes out wherever they stand."""

secret_values = st.text(
    alphabet=st.characters(categories=("Lu", "Ll", "Nd"), max_codepoint=0x2FFF), min_size=MIN_SECRET_LENGTH + 4
).map(lambda s: s[:48])
anything = st.text(max_size=40)


@st.composite
def split(draw: st.DrawFn, secret: str) -> str:
    """`secret` with removed characters put between some of its characters."""
    out = []
    for char in secret:
        out.append(char)
        out.extend(draw(st.lists(st.sampled_from(REMOVED), max_size=2)))
    return "".join(out)


@settings(max_examples=300)
@given(data=st.data(), secret=secret_values, before=anything, after=anything)
def test_a_split_secret_never_survives_cleaning_then_redacting(
    data: st.DataObject, secret: str, before: str, after: str
) -> None:
    redactor = Redactor([("%TOKEN%", secret)])
    shown = clean_and_redact(before + data.draw(split(secret)) + after, redactor.redact)
    assert secret not in shown
    assert clean_text(shown) == shown, "what is shown is clean"


json_leaves = st.one_of(st.none(), st.booleans(), st.integers(), anything)


@settings(max_examples=200)
@given(data=st.data(), secret=secret_values)
def test_a_split_secret_never_survives_anywhere_in_a_json_value(data: st.DataObject, secret: str) -> None:
    hidden = data.draw(split(secret))
    values = st.recursive(
        st.one_of(json_leaves, st.just(hidden)),
        lambda children: st.one_of(
            st.lists(children, max_size=3), st.dictionaries(st.one_of(anything, st.just(hidden)), children, max_size=3)
        ),
        max_leaves=8,
    )
    value: Any = {"in": data.draw(values), hidden: [hidden]}
    shown = clean_and_redact_json(value, Redactor([("%TOKEN%", secret)]).redact_json)
    assert secret not in json.dumps(shown, ensure_ascii=False)
    assert "%TOKEN%" in json.dumps(shown)
