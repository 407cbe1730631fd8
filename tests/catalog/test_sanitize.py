"""CAT-4, INS-2 and CALL-7: cleaning texts a server controls, the same on fast paths as by the plain rules."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpyard.catalog import LESS_THAN_LOOKALIKES, clean_text, sanitize_text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("plain text", "plain text"),
        ("keeps\ttabs\nand lines", "keeps\ttabs\nand lines"),
        ("bell\x07 and nul\x00", "bell and nul"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x9b31mC1 CSI", "C1 CSI"),
        ("\x1b]8;;http://evil\x07link\x1b]8;;\x07", "link"),
        ("bidi \u202eevil\u202c", "bidi evil"),
        ("isolate \u2066x\u2069", "isolate x"),
        ("lrm\u200e rlm\u200f zw\u200b", "lrm rlm zw"),
        ("tag \U000e0041\U000e0042", "tag "),
        ("crlf\r\nline", "crlf\nline"),
    ],
)
def test_cat4_clean_text_removes_controls_bidi_zero_width_and_tags(raw: str, expected: str) -> None:
    assert clean_text(raw) == expected


def test_cat4_angle_brackets_are_escaped() -> None:
    assert sanitize_text("</instructions><system>") == "&lt;/instructions>&lt;system>"


def test_cat4_long_text_is_cut_with_a_mark() -> None:
    text = sanitize_text("a" * 10_000, limit=100)
    assert text.startswith("a" * 100)
    assert "cut by mcpyard" in text
    assert "10000" in text


FORBIDDEN = {chr(c) for c in range(0x20) if chr(c) not in "\t\n"} | {chr(c) for c in range(0x7F, 0xA0)}
FORBIDDEN |= {"\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e"}
FORBIDDEN |= {"\u2066", "\u2067", "\u2068", "\u2069", "<"}


@given(st.text(alphabet=st.characters(codec=None, categories=None), max_size=300))
def test_cat4_sanitized_text_never_contains_forbidden_characters(raw: str) -> None:
    out = sanitize_text(raw)
    assert not (set(out) & FORBIDDEN)
    assert not any(0xE0000 <= ord(c) <= 0xE007F for c in out)
    assert not any(unicodedata.category(c) == "Cc" and c not in "\t\n" for c in out)


# ----------------------------------------------------------------- the fast paths against the plain rules

# The rules written plainly, as they were before any fast path: CR LF and CR become LF, ANSI
# CSI/OSC sequences (7- and 8-bit) go whole, then every control, bidi, zero-width and tag character.
REFERENCE_ANSI = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?")
REFERENCE_REMOVE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)


def reference_clean_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return REFERENCE_REMOVE.sub("", REFERENCE_ANSI.sub("", text))


def reference_sanitize_text(text: str, limit: int) -> str:
    cleaned = reference_clean_text(text)
    if len(cleaned) > limit:
        cleaned = cleaned[:limit] + f"… [cut by mcpyard: the server sent {len(cleaned)} characters]"
    for less_than in "<" + LESS_THAN_LOOKALIKES:
        cleaned = cleaned.replace(less_than, "&lt;")
    return cleaned


# Pieces that make the rules work: sequence openers and closers, their parameter and final
# characters, CR/LF mixes, every removed range and its neighbours, surrogates.
PIECES = [
    "\x1b[", "\x1b]", "\x1b\\", "\x9b", "\x9c", "\x9d", "\x07", "\x1b", "\x1b[31m", "\x1b[0;1;2m", "\x9b2J",
    "\x1b]8;;https://evil\x07", "\x1b]0;title\x1b\\", "\x9d0;t\x9c", "\x1b[?25h", "\x1b[ q", "\x1b[\x1b[1m",
    "\r", "\n", "\r\n", "\n\r", "\r\r\n", "\t", ";", "0", "?", "m", "@", "~", " ", "/", "[", "]", "<", "x", "é",
    "\u200b", "\u200d", "\u200f", "\u2010", "\u2029", "\u202a", "\u202e", "\u202f", "\u205f", "\u2060", "\u2064",
    "\u2065", "\u2066", "\u2069", "\u206a", "\ufeff", "\ufffd", "\U000dffff", "\U000e0000", "\U000e0041",
    "\U000e007f", "\U000e0080", "\ud800", "\udfff", "\ud83d\ude00", "😀", "\x00", "\x08", "\x0b", "\x1f", "\x7f",
    "\x80", "\x9f", "\xa0",
]  # fmt: skip
any_character = st.one_of(
    st.characters(codec=None, categories=None),  # the whole range but surrogates
    st.integers(0xD800, 0xDFFF).map(chr),  # surrogates
    st.integers(0x00, 0xA0).map(chr),  # C0, DEL, C1
    st.integers(0x2000, 0x2070).map(chr),  # zero-width and bidi controls and their neighbours
    st.integers(0xE0000, 0xE0080).map(chr),  # tag characters
)
ascii_character = st.integers(0x00, 0x7F).map(chr)
hostile_text = st.lists(st.one_of(st.sampled_from(PIECES), any_character), max_size=60).map("".join)
hostile_ascii = st.lists(
    st.one_of(st.sampled_from([piece for piece in PIECES if piece.isascii()]), ascii_character), max_size=60
).map("".join)


@settings(max_examples=600)
@given(st.one_of(hostile_text, hostile_ascii, st.text(alphabet=any_character, max_size=200)))
def test_ins2_clean_text_equals_the_plain_rules_on_any_text(raw: str) -> None:
    assert clean_text(raw) == reference_clean_text(raw)


@settings(max_examples=300)
@given(raw=st.one_of(hostile_text, hostile_ascii), before=st.integers(0, 1200), after=st.integers(0, 1200))
def test_ins2_clean_text_equals_the_plain_rules_on_long_text(raw: str, before: int, after: int) -> None:
    """Long texts take other paths (one `str.find` per character that may need work)."""
    for text in (
        "a" * before + raw + "b\n" * after,
        raw * (1 + (before + after) // max(1, len(raw))),
        "é" * before + raw,
    ):
        assert clean_text(text) == reference_clean_text(text)


@settings(max_examples=300)
@given(raw=st.one_of(hostile_text, hostile_ascii), limit=st.integers(0, 80))
def test_cat4_sanitize_text_equals_the_plain_rules(raw: str, limit: int) -> None:
    assert sanitize_text(raw, limit=limit) == reference_sanitize_text(raw, limit)


@pytest.mark.parametrize(
    "text",
    [
        "x" * 3_000_000,
        "line of text\tcolumn\n" * 150_000,
        "ligne accentuée\n" * 150_000,
        "漢字かなカナ\n" * 150_000,
        "😀 smile\n" * 150_000,
    ],
    ids=["x", "ascii-lines", "latin", "cjk", "emoji"],
)
def test_ins2_a_long_text_that_needs_no_change_is_returned_whole(text: str) -> None:
    assert clean_text(text) == text
    assert clean_text(text + "\x1b[31m!\r\n\u202e") == text + "!\n"


@pytest.mark.parametrize("position", [0, 1, 511, 512, 262_143, 262_144, 262_145, 524_288, 999_999])
@pytest.mark.parametrize("character", ["\x00", "\x07", "\r", "\x1b", "\x1f", "\x7f"])
def test_ins2_a_control_character_anywhere_in_a_long_text_is_found(position: int, character: str) -> None:
    text = "abc\tdef\n" * 125_000  # 1,000,000 characters
    dirty = text[:position] + character + text[position:]
    assert clean_text(dirty) == reference_clean_text(dirty)
    assert character not in clean_text(dirty)
