"""How costly a regular expression is: whether it can backtrack for exponential time, and how large it compiles.

Conservative: a pattern is called risky when it repeats a group that itself repeats (`(a+)+`),
repeats a choice between alternatives (`(a|aa)*`), or refers back to a group (`(a)\\1`); those
are the shapes behind catastrophic backtracking. Some safe patterns look like that too
(`(\\d+\\.)+`); they are refused only where nothing else can bound the time a check takes.
The `regex` module copies counted repeats out when it compiles (`expanded_size`), so nested
counts (`(?:a{1000}){1000}`) would take its memory; those are refused everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["backtracking_risk", "expanded_size"]

_FLAGS = frozenset("aiLmsux-")
_SIZE_CAP = 10**9


@dataclass(slots=True)
class _Group:
    repeats: bool = False
    """Something inside repeats (a quantifier allowing more than one)."""
    alternates: bool = False
    size: int = 0
    """Atoms inside, each counted as often as counted repeats (`{m,n}`) copy it."""


def backtracking_risk(pattern: str) -> str | None:
    """Why `pattern` may take exponential time to match, in words, or None when it has none of the risky shapes."""
    return _scan(pattern)[0]


def expanded_size(pattern: str) -> int:
    """How many atoms `pattern` has once counted repeats are copied out, as the `regex` module compiles it.

    `(?:a{1000}){1000}` is a million: `regex` builds (and holds in memory) a program that large.
    """
    return _scan(pattern)[1]


def _scan(pattern: str) -> tuple[str | None, int]:
    risk: str | None = None
    levels = [_Group()]
    pending = 0  # the size of the atom just read, until it is known whether a quantifier repeats it
    closed: _Group | None = None  # the group just closed, when it is what a quantifier would repeat

    def commit() -> None:
        nonlocal pending
        levels[-1].size = min(_SIZE_CAP, levels[-1].size + pending)
        pending = 0

    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        after_group, closed = closed, None
        if char in "*+?{":
            end, many, copies = _quantifier(pattern, i)
            if end > i:
                if many and after_group is not None and risk is None:
                    if after_group.repeats:
                        risk = "repeats a group that itself repeats"
                    elif after_group.alternates:
                        risk = "repeats a choice between alternatives"
                levels[-1].repeats |= many
                pending = min(_SIZE_CAP, max(pending, 1) * copies)
                commit()
                i = end + 1 if end < n and pattern[end] in "?+" else end  # lazy or possessive
                continue
        commit()
        if char == "\\":
            following = pattern[i + 1 : i + 2]
            if ((following.isdigit() and following != "0") or following == "k") and risk is None:
                risk = "refers back to an earlier group"
            pending, i = 1, i + 2
        elif char == "[":
            pending, i = 1, _skip_class(pattern, i)
        elif char == "(":
            header, refers_back = _group_header(pattern, i)
            risk = risk or refers_back
            i = header
            if pattern.startswith(")", i) and pattern[i - 1] != ":":
                i += 1  # a bare flags group such as `(?i)`: no body
            else:
                levels.append(_Group())
        elif char == ")":
            if len(levels) > 1:
                closed = levels.pop()
                levels[-1].repeats |= closed.repeats
                pending = max(closed.size, 1)
            i += 1
        elif char == "|":
            levels[-1].alternates = True
            i += 1
        else:
            pending, i = 1, i + 1
    commit()
    while len(levels) > 1:  # unbalanced: `regex` refuses it anyway
        inner = levels.pop()
        levels[-1].size = min(_SIZE_CAP, levels[-1].size + inner.size)
    return risk, levels[0].size


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


def _quantifier(pattern: str, start: int) -> tuple[int, bool, int]:
    """The end of the quantifier at `start` (`start` itself when there is none), whether it allows more than
    one, and how many copies of its atom a compiler that copies counted repeats out makes."""
    char = pattern[start]
    if char in "*+?":
        return start + 1, char != "?", 1
    end = pattern.find("}", start)
    if end == -1:
        return start, False, 1
    body = pattern[start + 1 : end]
    low, comma, high = body.partition(",")
    if not (low.isdigit() or (comma and not low)) or (high and not high.isdigit()) or not (low or high or comma):
        return start, False, 1
    least = int(low) if low else 0
    if not comma:
        return end + 1, least > 1, max(least, 1)
    if not high:
        return end + 1, True, least + 1
    return end + 1, int(high) > 1, max(int(high), 1)
