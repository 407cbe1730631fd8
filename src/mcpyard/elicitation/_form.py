"""A server's elicitation form read into fields: its flat `requestedSchema`, each default checked against its field.

The MCP form is a flat object of primitive fields: strings (with `format`, `minLength`,
`maxLength`), single choices (`enum`, with `enumNames` or `oneOf` titles), numbers and
integers (`minimum`, `maximum`), booleans, and multiple choices (arrays of `enum` or
`anyOf` items). Everything here is a pure function of the schema: no I/O. Problems name
the field and the rule, never the value (a value may be a secret).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mcpyard.elicitation._answers import check_value
from mcpyard.elicitation._field import FORMATS, Choice, FormField, shorten
from mcpyard.errors import ElicitationRefused

__all__ = ["MAX_CHOICES", "MAX_FIELDS", "form_fields", "secret_looking"]

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
    label = shorten(name, 60)
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
            f"field {label!r} is of type {shorten(shown, 40)!r}; a form holds only strings, numbers, integers, "
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
    return shorten(value, limit)


def secret_looking(name: str, title: str | None = None) -> bool:
    """Whether a field's name or title says it holds a secret: password, passphrase, secret, token, API key…

    Letters only are compared, in any case, so `api_key`, `apiKey` and `API-KEY` all count.
    """
    for text in (name, title or ""):
        letters = "".join(ch for ch in text.casefold() if ch.isalnum())
        if any(word in letters for word in _SECRET_WORDS):
            return True
    return False
