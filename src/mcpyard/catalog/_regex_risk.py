"""Whether a regular expression can backtrack for exponential time in a backtracking engine such as `re`.

Conservative: a pattern is called risky when it repeats a group that itself repeats (`(a+)+`),
repeats a choice between alternatives (`(a|aa)*`), or refers back to a group (`(a)\\1`); those
are the shapes behind catastrophic backtracking. Some safe patterns look like that too
(`(\\d+\\.)+`); they are refused only where nothing else can bound the time a check takes.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["backtracking_risk"]

_FLAGS = frozenset("aiLmsux-")


@dataclass(slots=True)
class _Group:
    repeats: bool = False
    """Something inside repeats (a quantifier allowing more than one)."""
    alternates: bool = False


def backtracking_risk(pattern: str) -> str | None:
    """Why `pattern` may take exponential time to match, in words, or None when it has none of the risky shapes."""
    levels = [_Group()]
    closed: _Group | None = None  # the group just closed, when it is what a quantifier would repeat
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        after_group, closed = closed, None
        if char == "\\":
            following = pattern[i + 1 : i + 2]
            if (following.isdigit() and following != "0") or following == "k":
                return "refers back to an earlier group"
            i += 2
        elif char == "[":
            i = _skip_class(pattern, i)
        elif char == "(":
            header, risk = _group_header(pattern, i)
            if risk is not None:
                return risk
            i = header
            if pattern.startswith(")", i) and pattern[i - 1] != ":":
                i += 1  # a bare flags group such as `(?i)`: no body
            else:
                levels.append(_Group())
        elif char == ")":
            if len(levels) > 1:
                closed = levels.pop()
                levels[-1].repeats |= closed.repeats
            i += 1
        elif char == "|":
            levels[-1].alternates = True
            i += 1
        elif char in "*+?{":
            end, many = _quantifier(pattern, i)
            if end == i:  # a `{` that is not a quantifier is a literal
                i += 1
                continue
            if many:
                if after_group is not None and after_group.repeats:
                    return "repeats a group that itself repeats"
                if after_group is not None and after_group.alternates:
                    return "repeats a choice between alternatives"
                levels[-1].repeats = True
            i = end + 1 if end < n and pattern[end] in "?+" else end  # lazy or possessive
        else:
            i += 1
    return None


def _skip_class(pattern: str, start: int) -> int:
    """The index after the character class opening at `start` (`]` first in it is a literal)."""
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def _group_header(pattern: str, start: int) -> tuple[int, str | None]:
    """Where the body of the group opening at `start` begins, or why the group is risky."""
    i = start + 1
    if not pattern.startswith("?", i):
        return i, None
    i += 1
    if pattern.startswith(("P=", "("), i):
        return i, "refers back to an earlier group"
    if pattern.startswith("#", i):
        end = pattern.find(")", i)
        return (len(pattern) if end == -1 else end), None
    if pattern.startswith(("P<", "<"), i) and not pattern.startswith(("<=", "<!"), i):
        end = pattern.find(">", i)
        return (len(pattern) if end == -1 else end + 1), None
    if pattern.startswith(("<=", "<!"), i):
        return i + 2, None
    if pattern[i : i + 1] in (":", "=", "!", ">"):
        return i + 1, None
    while i < len(pattern) and pattern[i] in _FLAGS:
        i += 1
    return (i + 1 if pattern.startswith(":", i) else i), None


def _quantifier(pattern: str, start: int) -> tuple[int, bool]:
    """The end of the quantifier at `start` (`start` itself when there is none) and whether it allows more than one."""
    char = pattern[start]
    if char in "*+":
        return start + 1, True
    if char == "?":
        return start + 1, False
    end = pattern.find("}", start)
    if end == -1:
        return start, False
    body = pattern[start + 1 : end]
    low, comma, high = body.partition(",")
    if not (low.isdigit() or (comma and not low)) or (high and not high.isdigit()) or not (low or high or comma):
        return start, False
    if not comma:
        return end + 1, int(low) > 1
    return end + 1, not high or int(high) > 1
