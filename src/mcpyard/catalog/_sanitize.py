"""Cleaning text a server controls before a model or a person reads it (INS-2, CAT-4)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "DESCRIPTION_LIMIT",
    "LESS_THAN_LOOKALIKES",
    "clean_and_redact",
    "clean_and_redact_json",
    "clean_json",
    "clean_text",
    "escape_tags",
    "sanitize_text",
]

DESCRIPTION_LIMIT = 8192
CUT_MARK = "… [cut by mcpyard: the server sent {size} characters]"

# ANSI CSI and OSC sequences, 7-bit and 8-bit forms; removed whole so no payload is left behind.
# Written as four branches that each open with one literal character, so the regex engine skips
# ahead to the next ESC, CSI or OSC instead of trying the pattern at every position.
_CSI_TAIL = r"[0-?]*[ -/]*[@-~]"
_OSC_TAIL = r"[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
_ANSI = re.compile(rf"\x1b\[{_CSI_TAIL}|\x9b{_CSI_TAIL}|\x1b\]{_OSC_TAIL}|\x9d{_OSC_TAIL}")
_ANSI_LEADS = ("\x1b", "\x9b", "\x9d")
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
# In ASCII text only these need work: C0 controls but tab and line feed, and DEL; CR and ESC,
# the likeliest, are looked for first.
_ASCII_WORK = "\r\x1b" + "".join(map(chr, [*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F]))
_ASCII_WORK_RE = re.compile(f"[{re.escape(_ASCII_WORK)}]")
_ASCII_REMOVE = str.maketrans(dict.fromkeys(_ASCII_WORK))
_SHORT = 512
"""Below this length one regex search is cheaper than a `str.find` per character; above it, far dearer."""
_BLOCK = 256 * 1024
"""Long text is searched a block at a time, every character per block, so each block is read from the cache."""


def _ascii_needs_work(text: str) -> bool:
    # Not str.isprintable: it looks each character up in the Unicode database, even in ASCII text.
    if len(text) < _SHORT:
        return _ASCII_WORK_RE.search(text) is not None
    for start in range(0, len(text), _BLOCK):
        end = start + _BLOCK
        for char in _ASCII_WORK:
            if text.find(char, start, end) != -1:
                return True
    return False


def clean_text(text: str) -> str:
    """Remove ANSI sequences, control, bidi, zero-width and tag characters; keep tabs and line breaks.

    CR LF and a lone CR become LF first. Text that needs no change is returned as it is, after
    a search that is linear and cheap: ASCII text is checked with one `str.find` (memchr) per
    character that may need work, other text with one regex search.
    """
    if text.isascii():
        if not _ascii_needs_work(text):
            return text
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "\x1b" in text:
            text = _ANSI.sub("", text)
        return text.translate(_ASCII_REMOVE)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if any(lead in text for lead in _ANSI_LEADS):
        text = _ANSI.sub("", text)
    return _REMOVE.sub("", text)


LESS_THAN_LOOKALIKES = (
    "\ufe64"  # small less-than sign (NFKC: `<`)
    "\uff1c"  # fullwidth less-than sign (NFKC: `<`)
    "\u02c2\u1438\u2039\u2329\u276c\u276e\u27e8\u3008"  # arrowheads and angle brackets drawn like `<`
)
"""Characters a model may read as `<`: written as `&lt;` like `<` itself, so none can open or close a tag."""
_ESCAPE_TAGS = str.maketrans(dict.fromkeys("<" + LESS_THAN_LOOKALIKES, "&lt;"))


def escape_tags(text: str) -> str:
    """Every `<`, and every character drawn like one (fullwidth, small-form, angle brackets), as `&lt;` (INS-2)."""
    if text.isascii():
        return text.replace("<", "&lt;")
    return text.translate(_ESCAPE_TAGS)


def clean_json(value: Any) -> Any:
    """A JSON value with every string, keys included, cleaned as `clean_text` cleans text."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean_json(item) for item in value]
    if isinstance(value, Mapping):
        return {clean_text(str(key)): clean_json(item) for key, item in value.items()}
    return value


def clean_and_redact(text: str, redact: Callable[[str], str]) -> str:
    """`text` fit to show anyone: cleaned (`clean_text`), then every secret in it named by `redact` (SEC-3).

    In that order: a secret split by a zero-width or control character is whole again when it is looked for.
    """
    return redact(clean_text(text))


def clean_and_redact_json(value: Any, redact_json: Callable[[Any], Any]) -> Any:
    """A JSON value fit to show anyone: every string, keys included, cleaned (`clean_json`), then redacted."""
    return redact_json(clean_json(value))


def sanitize_text(text: str, *, limit: int = DESCRIPTION_LIMIT) -> str:
    """`clean_text`, cut to `limit` characters with a mark, and every `<` (or look-alike) written as `&lt;`."""
    cleaned = clean_text(text)
    if len(cleaned) > limit:
        cleaned = cleaned[:limit] + CUT_MARK.format(size=len(cleaned))
    return escape_tags(cleaned)
