"""What a person reads on a page: fenced results as blocks naming their server, code spans, times with their zone.

Each is a template filter returning markup built only from escaped text and tags of ours: nothing a result,
a server or a model wrote ever becomes HTML (ORG-7, CALL-7).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from markupsafe import Markup, escape

from mcpyard.pipeline import FencedResults, fenced_parts

__all__ = ["code_spans", "shown_time", "with_results"]

_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
"""A backtick string, then text, then a backtick string of the same length (Markdown's code span)."""


def code_spans(text: str | None) -> Markup:
    """`text` escaped, its Markdown code spans (`` `ask_first` ``) shown as `<code>`; nothing else of Markdown.

    A backtick with no partner of its length stays a backtick.
    """
    text = text or ""
    shown: list[str] = []
    start = 0
    for span in _CODE_SPAN.finditer(text):
        code = span.group(2).replace("\n", " ")
        if code.startswith(" ") and code.endswith(" ") and code.strip(" "):
            code = code[1:-1]  # `` `a` `` : the spaces that let a code span hold a backtick are not its text
        shown += [escape(text[start : span.start()]), Markup("<code>%s</code>") % code]
        start = span.end()
    shown.append(escape(text[start:]))
    return Markup("").join(shown)


def with_results(text: str | None, fenced: FencedResults) -> Markup:
    """`text` escaped, each result in it that the service fenced (`fenced`) shown as a block naming its server,
    without the fence's markup; any other fence is the words of whoever wrote `text`, shown as text.

    The fence tells the model what is data; a person sees the result as text from its server instead.
    """
    parts = fenced_parts(text or "", fenced=fenced)
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
