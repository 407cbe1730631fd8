"""JSON with comments and trailing commas (JSONC), as VS Code and Gemini CLI read their own settings files."""

from __future__ import annotations

__all__ = ["strip_jsonc"]


def strip_jsonc(text: str) -> str:
    """`text` with `//` and `/* */` comments and trailing commas blanked out; what is left is plain JSON.

    Each removed character becomes a space (line breaks stay), so a JSON error in the rest still
    names the right line and column. Text inside strings is never touched.
    """
    chars = list(text)
    _blank_comments(chars)
    _blank_trailing_commas(chars)
    return "".join(chars)


def _blank(chars: list[str], start: int, end: int) -> None:
    for index in range(start, end):
        if chars[index] not in "\r\n":
            chars[index] = " "


def _string_end(chars: list[str], index: int) -> int:
    """The index after the string that opens at `index` (or the end of the text, if it never closes)."""
    index += 1
    while index < len(chars):
        if chars[index] == "\\":
            index += 2
            continue
        if chars[index] == '"':
            return index + 1
        index += 1
    return len(chars)


def _blank_comments(chars: list[str]) -> None:
    index = 0
    while index < len(chars):
        char = chars[index]
        pair = char + chars[index + 1] if index + 1 < len(chars) else char
        if char == '"':
            index = _string_end(chars, index)
        elif pair == "//":
            end = index
            while end < len(chars) and chars[end] not in "\r\n":
                end += 1
            _blank(chars, index, end)
            index = end
        elif pair == "/*":
            end = index + 2
            while end < len(chars) and not (chars[end] == "*" and end + 1 < len(chars) and chars[end + 1] == "/"):
                end += 1
            end = min(end + 2, len(chars))
            _blank(chars, index, end)
            index = end
        else:
            index += 1


def _blank_trailing_commas(chars: list[str]) -> None:
    index = 0
    while index < len(chars):
        char = chars[index]
        if char == '"':
            index = _string_end(chars, index)
            continue
        if char == ",":
            following = index + 1
            while following < len(chars) and chars[following].isspace():
                following += 1
            if following < len(chars) and chars[following] in "}]":
                chars[index] = " "
        index += 1
