"""Whether a call's arguments can be sent at all: JSON that encodes as UTF-8, within bounds (CALL-1, ERR-1).

A message is encoded for the wire inside the server's connection, which every caller shares: a value
that cannot be encoded there (a lone surrogate, NaN, a Python object) fails in the middle of it and
takes the connection down for everyone. So the pipeline asks `sendable_problem` first, and refuses
what it names before anything reaches the connection. Both functions walk the value with a stack of
their own, never by recursion: no nesting reaches Python's recursion limit.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_ARGUMENTS_BYTES", "MAX_ARGUMENTS_DEPTH", "sendable_copy", "sendable_problem", "unsendable_text"]

MAX_ARGUMENTS_DEPTH = 64
"""The deepest a call's arguments may nest (the arguments object itself is level 1): what a tool's schema may
describe (`MAX_SCHEMA_DEPTH`), far below what the SDK and the schema checker can handle."""
MAX_ARGUMENTS_BYTES = 16 * 1024 * 1024
"""The largest a call's arguments may be as JSON (local files sent for file parameters not counted: they are paths
until read, and bounded by `max_file_bytes`)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY_SHOWN = 40
_PATH_SHOWN = 100
_BIG_INT_BITS = 13_000
"""Below this size an integer always has fewer digits than Python will write (4,300 by default)."""


def sendable_problem(arguments: Mapping[str, Any], *, root: str = "arguments") -> str | None:
    """Why `arguments` cannot be sent as a JSON object in UTF-8, naming where (`arguments.note[2]: …`); None if it can.

    Refused: a lone surrogate in a value or a key, a key that is not a string, NaN or an infinity, any
    value JSON has no form for (only dict, list, tuple, str, int, float, bool and None have one), nesting
    deeper than `MAX_ARGUMENTS_DEPTH`, and more than `MAX_ARGUMENTS_BYTES` of JSON. `root` names the object
    in the paths (an answer to a server's question is `content`).
    """
    if not isinstance(arguments, dict):
        return f"{root}: must be a JSON object, not {_kind(arguments)}"
    them = "arguments nest" if root == "arguments" else f"{root} nests"
    size = 0
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(arguments, 1, ())]
    while stack:
        container, depth, path = stack.pop()
        size += 2
        if isinstance(container, dict):
            items: Any = container.items()
        else:
            items = enumerate(container)
        for key, value in items:
            size += 1
            if isinstance(container, dict):
                if not isinstance(key, str):
                    return f"{_path(root, path)}: holds a key that is {_kind(key)}; JSON keys are strings"
                if not key.isascii() and (problem := _text_problem(key)) is not None:
                    return f"{_path(root, (*path, key))}: its key {problem}"
                size += len(key) + 3 if key.isascii() else len(key.encode("utf-8")) + 3
            kind = type(value)
            if kind is str:
                if value.isascii():
                    size += len(value) + 2
                elif (problem := _text_problem(value)) is not None:
                    return f"{_path(root, (*path, key))}: {problem}"
                else:
                    size += len(value.encode("utf-8")) + 2
            elif kind is bool or value is None:
                size += 4
            elif kind is int:
                if value.bit_length() > _BIG_INT_BITS and not _writable(value):
                    return f"{_path(root, (*path, key))}: holds an integer too long to write as JSON"
                size += 1
            elif kind is float:
                if not math.isfinite(value):
                    return f"{_path(root, (*path, key))}: holds {_float_name(value)}, which JSON has no number for"
                size += 1
            elif kind is dict or kind is list or kind is tuple:
                if depth >= MAX_ARGUMENTS_DEPTH:
                    return f"{them} deeper than {MAX_ARGUMENTS_DEPTH} levels (at {_path(root, (*path, key))})"
                stack.append((value, depth + 1, (*path, key)))
            elif (problem := _other_problem(value)) is not None:
                return f"{_path(root, (*path, key))}: {problem}"
            else:
                size += 1
            if size > MAX_ARGUMENTS_BYTES:
                return (
                    f"{root} {'are' if root == 'arguments' else 'is'} larger than {MAX_ARGUMENTS_BYTES} bytes as JSON"
                )
    return None


def unsendable_text(text: str) -> str | None:
    """Why `text` cannot be sent as UTF-8 (`holds a lone surrogate (U+D800), …`), or None when it can."""
    return None if text.isascii() else _text_problem(text)


def sendable_copy(value: Any) -> Any:
    """`value` made sendable, to be shown or kept (a record, a model's history): each lone surrogate becomes U+FFFD,
    what JSON has no form for becomes a short text naming it, and nesting past `MAX_ARGUMENTS_DEPTH` becomes `…`.

    Sizes are left as they are. A value that is already sendable comes back equal to itself.
    """
    if not isinstance(value, dict | list | tuple):
        return _scalar_copy(value)
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any, int]] = [(value, root, 1)]
    while stack:
        source, target, depth = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            copied: Any
            if isinstance(item, dict | list | tuple):
                if depth >= MAX_ARGUMENTS_DEPTH:
                    copied = "…"
                else:
                    copied = {} if isinstance(item, dict) else []
                    stack.append((item, copied, depth + 1))
            else:
                copied = _scalar_copy(item)
            if isinstance(target, dict):
                target[_key_copy(key)] = copied
            else:
                target.append(copied)
    return root


def _text_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"holds a lone surrogate (U+{ord(text[exc.start]):04X}), which cannot be sent as UTF-8"
    return None


def _other_problem(value: Any) -> str | None:
    """The problem with a value of a subclass of a JSON type (an enum, say), or of a type JSON has no form for."""
    if isinstance(value, str):
        return _text_problem(str(value))
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if _writable(int(value)) else "holds an integer too long to write as JSON"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"holds {_float_name(value)}, which JSON has no number for"
    return f"holds {_kind(value)}, which has no JSON form"


def _writable(number: int) -> bool:
    try:
        str(number)
    except ValueError:  # more digits than `sys.set_int_max_str_digits` allows
        return False
    return True


def _float_name(number: float) -> str:
    return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")


def _kind(value: Any) -> str:
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name} value" if value is not None else "null"


def _path(root: str, path: tuple[str | int, ...]) -> str:
    """A JSON path as a person reads it: `arguments.note[2]`, `arguments["two words"]`; always sendable."""
    parts = [root]
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif _NAME.fullmatch(step):
            parts.append(f".{step}")
        else:
            shown = step if len(step) <= _KEY_SHOWN else f"{step[:_KEY_SHOWN]}…"
            # A key that cannot be sent is shown escaped (`"\\udc00"`), so the message itself can be.
            parts.append(f"[{json.dumps(shown, ensure_ascii=_text_problem(shown) is not None)}]")
    text = "".join(parts)
    return text if len(text) <= _PATH_SHOWN else f"{text[: _PATH_SHOWN // 2]}…{text[-_PATH_SHOWN // 2 :]}"


def _scalar_copy(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value if value.isascii() else _SURROGATE.sub("\ufffd", str(value))
    if isinstance(value, int):
        return int(value) if _writable(int(value)) else f"(an integer of {int(value).bit_length()} bits)"
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else _float_name(value)
    return f"({_kind(value)})"


def _key_copy(key: Any) -> str:
    return _scalar_copy(key) if isinstance(key, str) else f"({_kind(key)})"
