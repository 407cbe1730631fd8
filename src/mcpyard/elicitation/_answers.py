"""Answers checked against a form: one value against its field, a whole answer completed with defaults.

Problems name the field and the rule, never the value (a value may be a secret).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from mcpyard.elicitation._field import FieldValue, FormField, number_text, shorten

__all__ = ["check_content", "check_value", "defaults_of"]

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S+")
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_value(field: FormField, value: Any) -> tuple[FieldValue | None, str | None]:
    """`(value as sent, None)` when `value` fits the field (an integer given as 3.0 becomes 3), else `(None, problem)`.

    The problem names the rule, never the value.
    """
    kind = field.kind
    if kind == "string":
        if not isinstance(value, str):
            return None, "must be text"
        return (value, None) if (problem := _string_problem(field, value)) is None else (None, problem)
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return None, "must be a number"
        if kind == "integer" and isinstance(value, float):
            if not value.is_integer():
                return None, "must be a whole number"
            value = int(value)
        if field.minimum is not None and value < field.minimum:
            return None, f"must be at least {number_text(field.minimum)}"
        if field.maximum is not None and value > field.maximum:
            return None, f"must be at most {number_text(field.maximum)}"
        return value, None
    if kind == "boolean":
        return (value, None) if isinstance(value, bool) else (None, "must be true or false")
    values = [choice.value for choice in field.choices]
    if kind == "choice":
        return (value, None) if isinstance(value, str) and value in values else (None, "must be one of its choices")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None, "must be a list of its choices"
    if any(item not in values for item in value):
        return None, "must hold only its choices"
    if len(set(value)) != len(value):
        return None, "must name each choice once"
    if field.min_items is not None and len(value) < field.min_items:
        return None, f"must hold at least {field.min_items} choices"
    if field.max_items is not None and len(value) > field.max_items:
        return None, f"must hold at most {field.max_items} choices"
    return list(value), None


def _string_problem(field: FormField, value: str) -> str | None:
    if not value.isascii() and _SURROGATE.search(value):
        return "must be text that can be sent as UTF-8 (it holds a lone surrogate)"
    if field.min_length is not None and len(value) < field.min_length:
        return f"must have at least {field.min_length} characters"
    if field.max_length is not None and len(value) > field.max_length:
        return f"must have at most {field.max_length} characters"
    fmt = field.format
    if fmt == "email" and not _EMAIL.fullmatch(value):
        return "must be an email address, like name@example.org"
    if fmt == "uri" and not _URI.fullmatch(value):
        return "must be a URI, like https://example.org/page"
    if fmt == "date" and not _is_date(value):
        return "must be a date, like 2025-12-31"
    if fmt == "date-time" and not _is_date_time(value):
        return "must be a date and time, like 2025-12-31T18:30:00Z"
    return None


def _is_date(value: str) -> bool:
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


def _is_date_time(value: str) -> bool:
    if len(value) < 16 or value[10] not in "Tt ":
        return False
    try:
        datetime.fromisoformat(value[:-1] + "+00:00" if value[-1] in "Zz" else value)
    except ValueError:
        return False
    return True


def defaults_of(fields: Sequence[FormField]) -> dict[str, FieldValue]:
    """The answer a person gives by leaving every field empty: each field's default, where it has one."""
    return {field.name: field.default for field in fields if field.default is not None}


def check_content(
    fields: Sequence[FormField], content: Mapping[str, Any] | None
) -> tuple[dict[str, FieldValue], list[str]]:
    """An accepted answer completed and checked: `(content to send, problems)`; send it only with no problems.

    A field the answer leaves out (or gives as null) takes its default; a required one without a
    default is a problem; a name the form does not have is a problem. Problems read `title: rule`.
    """
    given = dict(content or {})
    values: dict[str, FieldValue] = {}
    problems: list[str] = []
    for field in fields:
        value = given.pop(field.name, None)
        if value is None:
            if field.default is not None:
                values[field.name] = field.default
            elif field.required:
                problems.append(f"{field.title}: is required")
            continue
        checked, problem = check_value(field, value)
        if problem is not None or checked is None:
            problems.append(f"{field.title}: {problem}")
        else:
            values[field.name] = checked
    problems += [f"{shorten(str(name), 60)}: the form has no such field" for name in given]
    return values, problems
