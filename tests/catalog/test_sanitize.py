"""CAT-4 and INS-2: cleaning texts a server controls."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpyard.catalog import clean_text, sanitize_text


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
