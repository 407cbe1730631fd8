"""Cleaning text a server controls before a model or a person reads it (INS-2, CAT-4)."""

from __future__ import annotations

import re

__all__ = ["DESCRIPTION_LIMIT", "clean_text", "sanitize_text"]

DESCRIPTION_LIMIT = 8192
CUT_MARK = "… [cut by mcpyard: the server sent {size} characters]"

# ANSI CSI and OSC sequences, 7-bit and 8-bit forms; removed whole so no payload is left behind.
_ANSI = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?")
_REMOVE = re.compile(
    "["
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 and C1 controls except tab and line feed
    "\u200b-\u200f"  # zero-width space/joiners, LRM, RLM
    "\u202a-\u202e"  # bidi embeddings and overrides
    "\u2060-\u2064\u2066-\u2069"  # word joiner, invisible operators, bidi isolates
    "\ufeff"  # zero-width no-break space
    "\U000e0000-\U000e007f"  # tag characters
    "]"
)


def clean_text(text: str) -> str:
    """Remove ANSI sequences, control, bidi, zero-width and tag characters; keep tabs and line breaks."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _REMOVE.sub("", _ANSI.sub("", text))


def sanitize_text(text: str, *, limit: int = DESCRIPTION_LIMIT) -> str:
    """`clean_text`, cut to `limit` characters with a mark, and every `<` written as `&lt;`."""
    cleaned = clean_text(text)
    if len(cleaned) > limit:
        cleaned = cleaned[:limit] + CUT_MARK.format(size=len(cleaned))
    return cleaned.replace("<", "&lt;")
