"""What a person types into a form's field, read as its value; and a value as a person reads it back."""

from __future__ import annotations

import math
from typing import Any

from mcpyard.elicitation._field import FieldKind, FieldValue, FormField

__all__ = ["parse_entry", "shown_value"]

_YES = frozenset({"y", "yes", "true", "1", "on"})
_NO = frozenset({"n", "no", "false", "0", "off"})


def parse_entry(field: FormField, text: str) -> FieldValue | None:
    """What a person typed for a field, as its value; None when left empty (its default then applies).

    Choices are taken by value, by title (any case) or by number in the list; several are
    separated by commas. The value is parsed only: `check_value` then checks its rules.

    Raises:
        ValueError: the text cannot be read as the field's type (the message says what to type).
    """
    if not text.strip():
        return None
    kind = field.kind
    if kind == "string":
        return text
    if kind == "boolean":
        word = text.strip().casefold()
        if word in _YES:
            return True
        if word in _NO:
            return False
        raise ValueError("answer yes or no")
    if kind in ("number", "integer"):
        return _number_entry(kind, text.strip())
    if kind == "choice":
        return _pick(field, text.strip())
    return [_pick(field, part.strip()) for part in text.split(",") if part.strip()]


def _number_entry(kind: FieldKind, raw: str) -> int | float:
    try:
        return int(raw)
    except ValueError:
        if kind == "integer":
            raise ValueError("type a whole number") from None
    try:
        number = float(raw)
    except ValueError:
        raise ValueError("type a number") from None
    if not math.isfinite(number):
        raise ValueError("type a finite number")
    return number


def _pick(field: FormField, text: str) -> str:
    for choice in field.choices:
        if text == choice.value:
            return choice.value
    folded = text.casefold()
    for choice in field.choices:
        if folded in (choice.title.casefold(), choice.value.casefold()):
            return choice.value
    if text.isascii() and text.isdigit() and 1 <= int(text) <= len(field.choices):  # not "²": a digit, not a number
        return field.choices[int(text) - 1].value
    raise ValueError(f"choose by number (1 to {len(field.choices)}) or by name")


def shown_value(field: FormField, value: Any) -> str:
    """A value as a person reads it back: a secret as dots, a choice by its title."""
    if value is None:
        return "(empty)"
    if field.secret:
        return "•" * 8
    titles = {choice.value: choice.title for choice in field.choices}
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(titles.get(str(item), str(item)) for item in value) or "(none)"
    return titles.get(str(value), str(value))
