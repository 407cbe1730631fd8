"""A question's form as it is stored and shown, and answers checked against it (pure functions, no I/O).

The form is kept as the elicitation package describes its fields (`FormField.to_json`): a secret
field's default is never kept, only that it has one. The process holding the call completes an
accepted answer with the real defaults and checks it once more before the server gets it; the
checks here let the person who answers hear at once what does not fit. A problem names the field
and the rule, never the value (a value may be a secret).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from mcpyard.elicitation import Choice, FieldValue, FormField, check_content, parse_entry

__all__ = ["ACTIONS", "Action", "checked_answer", "content_from_form", "form_fields_of", "form_json"]

Action = Literal["accept", "decline", "cancel"]
ACTIONS: tuple[Action, ...] = ("accept", "decline", "cancel")


def form_json(fields: Sequence[FormField]) -> list[dict[str, Any]]:
    """The fields as stored and shown: what `FormField.to_json` gives, and whether the field has a default."""
    return [{**item.to_json(), "has_default": item.default is not None} for item in fields]


def _field(stored: Mapping[str, Any]) -> FormField:
    secret = bool(stored.get("secret"))
    # A secret field's default is not kept here; the holding process fills it in, so it may be left empty.
    required = bool(stored.get("required")) and not (secret and stored.get("has_default"))
    return FormField(
        name=str(stored["name"]),
        kind=stored["kind"],
        title=str(stored.get("title") or stored["name"]),
        description=stored.get("description"),
        required=required,
        default=stored.get("default"),
        format=stored.get("format"),
        min_length=stored.get("min_length"),
        max_length=stored.get("max_length"),
        minimum=stored.get("minimum"),
        maximum=stored.get("maximum"),
        choices=tuple(Choice(str(c["value"]), str(c["title"])) for c in stored.get("choices") or ()),
        min_items=stored.get("min_items"),
        max_items=stored.get("max_items"),
        secret=secret,
    )


def form_fields_of(stored: Sequence[Mapping[str, Any]]) -> tuple[FormField, ...]:
    """The fields back from their stored form."""
    return tuple(_field(item) for item in stored)


def checked_answer(
    mode: str, fields: Sequence[FormField], action: object, content: object
) -> tuple[Action, dict[str, Any] | None, list[str]]:
    """`(action, content to seal, problems)`: send nothing on when there are problems.

    Accepting a form needs its content as an object that fits the form (fields left out take their
    defaults); accepting a URL, declining and cancelling carry no content.
    """
    if action not in ACTIONS:
        return "cancel", None, ["action: must be accept, decline or cancel"]
    chosen: Action = action
    if chosen != "accept" or mode != "form":
        if content not in (None, {}):
            return chosen, None, ["content: only an accepted form carries content"]
        return chosen, None, []
    if content is None:
        content = {}
    if not isinstance(content, Mapping):
        return chosen, None, ["content: must be an object of the form's fields"]
    _, problems = check_content(fields, content)
    given = {key: value for key, value in content.items() if value is not None}
    return chosen, (None if problems else given), problems


def content_from_form(fields: Sequence[FormField], values: Mapping[str, list[str]]) -> tuple[dict[str, Any], list[str]]:
    """What a web form posted (each field's values, as text), read as content: `(content, problems)`.

    An empty field is left out (its default applies); a multiple choice is the values ticked.
    """
    content: dict[str, FieldValue] = {}
    problems: list[str] = []
    for item in fields:
        given = [value for value in values.get(item.name, []) if value.strip()]
        if not given:
            continue
        if item.kind == "choices":
            content[item.name] = given  # each ticked box sends one choice's value; the form's check follows
            continue
        try:
            parsed = parse_entry(item, given[0])
        except ValueError as exc:
            problems.append(f"{item.title}: {exc}")
            continue
        if parsed is not None:
            content[item.name] = parsed
    return content, problems
