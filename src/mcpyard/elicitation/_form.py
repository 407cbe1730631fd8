"""A server's elicitation form as fields: read from its flat schema, filled with defaults, answers checked.

The MCP form is a flat object of primitive fields: strings (with `format`, `minLength`,
`maxLength`), single choices (`enum`, with `enumNames` or `oneOf` titles), numbers and
integers (`minimum`, `maximum`), booleans, and multiple choices (arrays of `enum` or
`anyOf` items). Everything here is a pure function of the schema and the answer: no I/O.
Problems name the field and the rule, never the value (a value may be a secret).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any, Literal

from mcpyard.errors import ElicitationRefused

__all__ = [
    "FORMATS",
    "MAX_CHOICES",
    "MAX_FIELDS",
    "Choice",
    "FieldKind",
    "FieldValue",
    "FormField",
    "check_content",
    "check_value",
    "defaults_of",
    "form_fields",
    "parse_entry",
    "secret_looking",
    "shown_value",
]

FieldKind = Literal["string", "number", "integer", "boolean", "choice", "choices"]
FieldValue = str | int | float | bool | list[str]
"""What an answer holds for one field, as sent to the server."""

FORMATS = frozenset({"email", "uri", "date", "date-time"})
"""The string formats MCP forms may ask for; `password` is read as a secret field, others are ignored."""
MAX_FIELDS = 50
MAX_CHOICES = 200
MAX_NAME = 200
TITLE_LIMIT = 200
DESCRIPTION_LIMIT = 1000
_SECRET_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "privatekey",
    "accesskey",
    "credential",
)
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S+")
_YES = frozenset({"y", "yes", "true", "1", "on"})
_NO = frozenset({"n", "no", "false", "0", "off"})


@dataclass(frozen=True, slots=True)
class Choice:
    """One option of a choice field: the value sent, and the title shown."""

    value: str
    title: str


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of a server's form, as its schema describes it (texts cleaned and cut)."""

    name: str
    """The key of the answer's content."""
    kind: FieldKind
    title: str
    """What to call it: the schema's `title`, else the name."""
    description: str | None = None
    required: bool = False
    default: FieldValue | None = None
    """The schema's default when it fits the field, else None: the value sent for a field left empty."""
    format: str | None = None
    """`email`, `uri`, `date` or `date-time` (strings)."""
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Choice, ...] = ()
    min_items: int | None = None
    max_items: int | None = None
    secret: bool = False
    """Looks like a secret (`format: password`, `writeOnly`, or a name such as password, token, secret,
    api key): never echoed while typed, never shown back, never logged."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "title": self.title, "required": self.required}
        optional = {
            "description": self.description,
            "default": None if self.secret else _json_value(self.default),
            "format": self.format,
            "min_length": self.min_length,
            "max_length": self.max_length,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "min_items": self.min_items,
            "max_items": self.max_items,
        }
        out.update({key: value for key, value in optional.items() if value is not None})
        if self.choices:
            out["choices"] = [{"value": c.value, "title": c.title} for c in self.choices]
        out["secret"] = self.secret
        return out

    def describe(self) -> str:
        """The field's type and rules in a few words: `integer, 0 to 120`, `one of: Red, Green`."""
        if self.kind == "string":
            rules = [self.format or "text"]
            if self.min_length is not None and self.max_length is not None:
                rules.append(f"{self.min_length} to {self.max_length} characters")
            elif self.min_length is not None:
                rules.append(f"at least {self.min_length} characters")
            elif self.max_length is not None:
                rules.append(f"at most {self.max_length} characters")
            if self.secret:
                rules.append("secret, not shown")
            return ", ".join(rules)
        if self.kind in ("number", "integer"):
            rules = [self.kind]
            if self.minimum is not None and self.maximum is not None:
                rules.append(f"{_number(self.minimum)} to {_number(self.maximum)}")
            elif self.minimum is not None:
                rules.append(f"at least {_number(self.minimum)}")
            elif self.maximum is not None:
                rules.append(f"at most {_number(self.maximum)}")
            return ", ".join(rules)
        if self.kind == "boolean":
            return "yes or no"
        titles = ", ".join(choice.title for choice in self.choices)
        if self.kind == "choice":
            return f"one of: {titles}"
        counted = ""
        if self.min_items is not None or self.max_items is not None:
            counted = f" ({self.min_items or 0} to {self.max_items if self.max_items is not None else 'all'})"
        return f"any of: {titles}{counted}"


def form_fields(schema: Any) -> tuple[FormField, ...]:
    """The fields of a form's `requestedSchema`, in the order the schema lists them.

    A default that does not fit its field is dropped (the field is then asked without one);
    a `required` name the schema does not define is ignored.

    Raises:
        ElicitationRefused: the schema is not a flat object of primitive fields mcpyard can show.
    """
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise ElicitationRefused("the form's requestedSchema must be an object schema with properties")
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        raise ElicitationRefused("the form's requestedSchema has no properties object")
    if len(properties) > MAX_FIELDS:
        raise ElicitationRefused(f"the form has {len(properties)} fields; mcpyard shows at most {MAX_FIELDS}")
    required_names = schema.get("required")
    required = {name for name in required_names if isinstance(name, str)} if isinstance(required_names, list) else set()
    return tuple(_field(str(name), spec, str(name) in required) for name, spec in properties.items())


def _field(name: str, spec: Any, required: bool) -> FormField:
    if not name or len(name) > MAX_NAME:
        raise ElicitationRefused(f"a field name must have 1 to {MAX_NAME} characters ({len(name)} given)")
    label = _short(name, 60)
    if not isinstance(spec, Mapping):
        raise ElicitationRefused(f"field {label!r}: its schema is not an object")
    kind = spec.get("type")
    title = _text(spec.get("title"), TITLE_LIMIT) or name
    base: dict[str, Any] = {
        "name": name,
        "title": title,
        "description": _text(spec.get("description"), DESCRIPTION_LIMIT),
        "required": required,
    }
    secret = spec.get("format") == "password" or spec.get("writeOnly") is True or secret_looking(name, title)
    if kind == "string":
        choices = _string_choices(label, spec)
        if choices:
            made = FormField(kind="choice", choices=choices, secret=secret, **base)
        else:
            fmt = spec.get("format")
            made = FormField(
                kind="string",
                format=fmt if fmt in FORMATS else None,
                min_length=_count(label, spec, "minLength"),
                max_length=_count(label, spec, "maxLength"),
                secret=secret,
                **base,
            )
    elif kind in ("number", "integer"):
        made = FormField(
            kind="integer" if kind == "integer" else "number",
            minimum=_bound(label, spec, "minimum"),
            maximum=_bound(label, spec, "maximum"),
            secret=secret,
            **base,
        )
    elif kind == "boolean":
        made = FormField(kind="boolean", secret=secret, **base)
    elif kind == "array":
        made = FormField(
            kind="choices",
            choices=_array_choices(label, spec),
            min_items=_count(label, spec, "minItems"),
            max_items=_count(label, spec, "maxItems"),
            secret=secret,
            **base,
        )
    else:
        shown = kind if isinstance(kind, str) else type(kind).__name__
        raise ElicitationRefused(
            f"field {label!r} is of type {_short(shown, 40)!r}; a form holds only strings, numbers, integers, "
            "booleans and choices"
        )
    default, problem = check_value(made, spec.get("default"))
    return replace(made, default=default) if problem is None and default is not None else made


def _string_choices(label: str, spec: Mapping[str, Any]) -> tuple[Choice, ...]:
    if "oneOf" in spec:
        return _titled(label, spec["oneOf"])
    values = spec.get("enum")
    if values is None:
        return ()
    names = spec.get("enumNames")
    titles = names if isinstance(names, list) and isinstance(values, list) and len(names) == len(values) else None
    return _untitled(label, values, titles)


def _array_choices(label: str, spec: Mapping[str, Any]) -> tuple[Choice, ...]:
    items = spec.get("items")
    if not isinstance(items, Mapping):
        raise ElicitationRefused(f"field {label!r} is a list without items; a form's lists are lists of choices")
    if "anyOf" in items:
        return _titled(label, items["anyOf"])
    if "oneOf" in items:
        return _titled(label, items["oneOf"])
    if "enum" in items:
        return _untitled(label, items["enum"], None)
    raise ElicitationRefused(f"field {label!r} is a list whose items are not choices (enum or anyOf)")


def _titled(label: str, options: Any) -> tuple[Choice, ...]:
    if not isinstance(options, list) or not options:
        raise ElicitationRefused(f"field {label!r}: its choices must be a non-empty list")
    made: list[Choice] = []
    for option in options:
        if not isinstance(option, Mapping) or not isinstance(option.get("const"), str):
            raise ElicitationRefused(f"field {label!r}: each choice must be an object with a string const")
        made.append(Choice(option["const"], _text(option.get("title"), TITLE_LIMIT) or option["const"]))
    return _distinct(label, made)


def _untitled(label: str, values: Any, titles: list[Any] | None) -> tuple[Choice, ...]:
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise ElicitationRefused(f"field {label!r}: its enum must be a non-empty list of strings")
    made = [
        Choice(value, (_text(titles[i], TITLE_LIMIT) if titles is not None else None) or value)
        for i, value in enumerate(values)
    ]
    return _distinct(label, made)


def _distinct(label: str, choices: list[Choice]) -> tuple[Choice, ...]:
    if len(choices) > MAX_CHOICES:
        raise ElicitationRefused(f"field {label!r} has {len(choices)} choices; mcpyard shows at most {MAX_CHOICES}")
    seen: dict[str, Choice] = {}
    for choice in choices:
        seen.setdefault(choice.value, choice)
    return tuple(seen.values())


def _count(label: str, spec: Mapping[str, Any], key: str) -> int | None:
    value = spec.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ElicitationRefused(f"field {label!r}: {key} must be a whole number of at least 0")
    return value


def _bound(label: str, spec: Mapping[str, Any], key: str) -> float | None:
    value = spec.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ElicitationRefused(f"field {label!r}: {key} must be a number")
    return value


def _text(value: Any, limit: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return _short(value, limit)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number(value: float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def secret_looking(name: str, title: str | None = None) -> bool:
    """Whether a field's name or title says it holds a secret: password, passphrase, secret, token, API key…

    Letters only are compared, in any case, so `api_key`, `apiKey` and `API-KEY` all count.
    """
    for text in (name, title or ""):
        letters = "".join(ch for ch in text.casefold() if ch.isalnum())
        if any(word in letters for word in _SECRET_WORDS):
            return True
    return False


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
            return None, f"must be at least {_number(field.minimum)}"
        if field.maximum is not None and value > field.maximum:
            return None, f"must be at most {_number(field.maximum)}"
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
    problems += [f"{_short(str(name), 60)}: the form has no such field" for name in given]
    return values, problems


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
    if text.isdigit() and 1 <= int(text) <= len(field.choices):
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


def _json_value(value: FieldValue | None) -> Any:
    return list(value) if isinstance(value, list) else value
