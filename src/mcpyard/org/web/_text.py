"""What a person reads on a page: fenced results as blocks naming their server, code spans, times with their zone.

Each is a template filter returning markup built only from escaped text and tags of ours: nothing a result,
a server or a model wrote ever becomes HTML (ORG-7, CALL-7).
"""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup, escape

from mcpyard.pipeline import FencedResults, TextPart, fenced_parts

__all__ = ["code_spans", "pretty", "shown_time", "visible", "with_results"]

_RUN = re.compile(r"`+")


def code_spans(text: str | None) -> Markup:
    """`text` escaped, its Markdown code spans (`` `ask_first` ``) shown as `<code>`; nothing else of Markdown.

    A code span is a run of backticks, then text, then a run of backticks of the same length. A backtick with
    no partner of its length stays a backtick; outside a code span, a backslash before a backtick or a backslash
    shows that character as it is (what someone else wrote, quoted in the service's words: `text_of`).
    """
    text = text or ""
    shown: list[str] = []
    words: list[str] = []
    start = 0
    while start < len(text):
        found = _MARK.search(text, start)
        if found is None:
            break
        words.append(text[start : found.start()])
        mark = found.group()
        if mark.startswith("\\"):
            words.append(mark[1])
            start = found.end()
            continue
        closing = _closing_run(text, found.end(), len(mark))
        if closing is None:
            words.append(mark)
            start = found.end()
            continue
        code = text[found.end() : closing].replace("\n", " ")
        if code.startswith(" ") and code.endswith(" ") and code.strip(" "):
            code = code[1:-1]  # `` `a` `` : the spaces that let a code span hold a backtick are not its text
        shown += [escape("".join(words)), Markup("<code>%s</code>") % code]
        words = []
        start = closing + len(mark)
    words.append(text[start:])
    shown.append(escape("".join(words)))
    return Markup("").join(shown)


_MARK = re.compile(r"\\[\\`]|`+")
"""An escaped backtick or backslash, or a run of backticks (which may open a code span)."""


def _closing_run(text: str, start: int, length: int) -> int | None:
    """Where the first run of exactly `length` backticks from `start` begins, when text comes before it."""
    for run in _RUN.finditer(text, start):
        if len(run.group()) == length:
            return run.start() if run.start() > start else None
    return None


def with_results(text: str | None, fenced: FencedResults) -> Markup:
    """`text` escaped, each result in it that the service fenced (`fenced`) shown as a block naming its server,
    without the fence's markup; any other fence is the words of whoever wrote `text`, shown as text.

    The fence tells the model what is data; a person sees the result as text from its server instead.
    """
    return _shown(fenced_parts(text or "", fenced=fenced))


def with_results_cut(text: str | None, fenced: FencedResults, limit: int) -> tuple[Markup, int]:
    """`with_results` of `text` cut after `limit` characters of what a person reads (the fence's markup, which
    is not shown, counts for nothing), and how many characters were left out."""
    kept: list[TextPart] = []
    left, hidden = limit, 0
    for part in fenced_parts(text or "", fenced=fenced):
        shown = part.text[: max(left, 0)]
        hidden += len(part.text) - len(shown)
        left -= len(shown)
        if shown:
            kept.append(TextPart(shown, part.server))
    return _shown(kept), hidden


def _shown(parts: list[TextPart]) -> Markup:
    shown: list[Markup] = []
    for index, part in enumerate(parts):
        if part.server is not None:
            shown.append(Markup(_RESULT) % (part.server, part.server, part.text))
            continue
        words = part.text
        # A result is a block of its own: the line breaks around it in the text would be empty lines.
        if index > 0:
            words = words.removeprefix("\n")
        if index + 1 < len(parts):
            words = words.removesuffix("\n")
        shown.append(escape(words))
    return Markup("").join(shown)


_RESULT = (
    '<span class="fenced" role="group" aria-label="Result from %s">'
    '<span class="fenced-from">Result from MCP server <strong>%s</strong></span>'
    '<span class="fenced-text">%s</span></span>'
)


def shown_time(value: str | datetime | None) -> Markup:
    """A moment as `<time datetime="…Z">2026-12-05 21:30:15 UTC</time>`; a time without a zone is UTC (the store's).

    Empty for no value; text that is not a time is shown as it is, escaped.
    """
    if not value:
        return Markup("")
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return escape(value)
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    shown = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return Markup('<time datetime="%s">%s</time>') % (moment.strftime("%Y-%m-%dT%H:%M:%SZ"), shown)


_NOT_PLAIN = re.compile(r"[^\x20-\x7e\n\t]")
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Controls, format characters (bidi, zero-width, tags), surrogates, private and unassigned code points, line and
paragraph separators: characters that hide or reorder what is around them."""


def visible(text: str | None) -> str:
    """`text` with every character that hides or reorders text written as its escape (`\\u202e`), so a person sees
    it is there (tool arguments a model wrote, shown for approval)."""
    text = text or ""
    if text.isascii() and _NOT_PLAIN.search(text) is None:
        return text
    return _NOT_PLAIN.sub(_escaped, text)


def _escaped(found: re.Match[str]) -> str:
    char = found.group()
    if unicodedata.category(char) not in _HIDDEN:
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def pretty(value: Any) -> str:
    """A JSON value indented for a page, its hidden characters made visible (`visible`)."""
    return visible(json.dumps(value, indent=2, ensure_ascii=False, default=str))
