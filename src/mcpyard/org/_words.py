"""How the service's own words quote what others wrote (names people typed, a server's or a model's text).

The service's messages mark its own code-ish words as Markdown code spans (`` `ask_first` ``), which the
console shows as code. What someone else wrote goes in either as text, its backticks (and a backslash before
one) escaped with a backslash so none of it is read as a code span, or, where a field or key is named, as one
code span whole, whatever backticks it holds.
"""

from __future__ import annotations

import re

__all__ = ["code_span", "quoted", "text_of"]

_ESCAPED = re.compile(r"\\(?=[\\`]|\Z)|`")
_RUNS = re.compile(r"`+")


def text_of(words: str) -> str:
    """`words` as text inside a message: each backtick, and each backslash before a backtick, a backslash or the
    end, escaped with a backslash (the console shows them as they are, never as code)."""
    return _ESCAPED.sub(lambda found: "\\" + found.group(), words)


def quoted(words: str) -> str:
    """`words` in quotes, as Python's `repr` quotes them (a line break shows as `\\n`), and as text (`text_of`)."""
    return text_of(repr(words))


def code_span(words: str) -> str:
    """`words` as one Markdown code span: fenced by a backtick run longer than any inside, padded with a space at
    each end where it starts or ends with a backtick or a space (Markdown takes one off each end when reading).

    A line break inside reads back as a space, and empty `words` as one space: a code span is never empty.
    """
    longest = max((len(run) for run in _RUNS.findall(words)), default=0)
    fence = "`" * (longest + 1)
    flat = words.replace("\n", " ")
    if flat.strip(" ") and (flat[0] in " `" or flat[-1] in " `"):
        words = f" {words} "
    return f"{fence}{words or ' '}{fence}"
