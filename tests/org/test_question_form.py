"""A question's form as stored and the answers checked against it, as tables: pure functions, no I/O (ORG-5, SEC-2)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpyard.elicitation import form_fields
from mcpyard.org.services._question_form import checked_answer, content_from_form, form_fields_of, form_json

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 2},
        "age": {"type": "integer", "minimum": 18},
        "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"},
        "news": {"type": "boolean"},
        "topics": {"type": "array", "items": {"enum": ["mcp", "ai"]}},
        "token": {"type": "string", "default": "kept-out-of-the-form"},
        "password": {"type": "string", "format": "password"},
    },
    "required": ["name", "token", "password"],
}
FIELDS = form_fields_of(form_json(form_fields(SCHEMA)))
ADA = {"name": "Ada", "password": "pw"}


def test_sec2_the_stored_form_keeps_no_secret_default_and_such_a_field_may_be_left_empty() -> None:
    stored = {item["name"]: item for item in form_json(form_fields(SCHEMA))}
    assert "default" not in stored["token"], "a secret field's default is not kept"
    assert stored["token"]["has_default"] is True
    assert stored["plan"]["default"] == "free"
    back = {item.name: item for item in FIELDS}
    assert back["token"].required is False, "the holding process fills its default in"
    assert back["password"].required is True
    assert [c.value for c in back["topics"].choices] == ["mcp", "ai"]
    assert back["name"].title == "Your name"


@pytest.mark.parametrize(
    ("mode", "action", "content", "expected"),
    [
        ("form", "accept", ADA, ("accept", ADA, [])),
        ("form", "accept", {**ADA, "age": None}, ("accept", ADA, [])),
        ("form", "accept", {**ADA, "name": "A", "age": 7},
         ("accept", None, ["Your name: must have at least 2 characters", "age: must be at least 18"])),
        ("form", "accept", {"name": "Ada"}, ("accept", None, ["password: is required"])),
        ("form", "accept", {**ADA, "extra": 1}, ("accept", None, ["extra: the form has no such field"])),
        ("form", "accept", None, ("accept", None, ["Your name: is required", "password: is required"])),
        ("form", "accept", [1], ("accept", None, ["content: must be an object of the form's fields"])),
        ("form", "decline", None, ("decline", None, [])),
        ("form", "cancel", {}, ("cancel", None, [])),
        ("form", "decline", {"name": "x"}, ("decline", None, ["content: only an accepted form carries content"])),
        ("url", "accept", None, ("accept", None, [])),
        ("url", "accept", {"x": 1}, ("accept", None, ["content: only an accepted form carries content"])),
        ("form", "maybe", None, ("cancel", None, ["action: must be accept, decline or cancel"])),
        ("form", None, None, ("cancel", None, ["action: must be accept, decline or cancel"])),
    ],
)  # fmt: skip
def test_api6_an_answer_is_checked_against_its_form_naming_fields_and_rules_never_values(
    mode: str, action: object, content: object, expected: tuple[str, Any, list[str]]
) -> None:
    assert checked_answer(mode, FIELDS, action, content) == expected


@pytest.mark.parametrize(
    ("posted", "expected"),
    [
        ({}, ({}, [])),
        ({"name": ["Ada"], "age": ["36"], "plan": ["pro"]}, ({"name": "Ada", "age": 36, "plan": "pro"}, [])),
        ({"name": [""], "age": ["  "], "plan": [""], "news": [""]}, ({}, [])),
        ({"news": ["yes"], "topics": ["mcp", "ai"]}, ({"news": True, "topics": ["mcp", "ai"]}, [])),
        ({"news": ["no"], "topics": ["", "ai"]}, ({"news": False, "topics": ["ai"]}, [])),
        ({"age": ["thirty"]}, ({}, ["age: type a whole number"])),
        ({"news": ["perhaps"]}, ({}, ["news: answer yes or no"])),
        ({"password": ["s3cret value"]}, ({"password": "s3cret value"}, [])),
    ],
)  # fmt: skip
def test_org5_what_a_page_posts_is_read_as_the_fields_kinds_and_an_empty_field_takes_its_default(
    posted: dict[str, list[str]], expected: tuple[dict[str, Any], list[str]]
) -> None:
    assert content_from_form(FIELDS, posted) == expected
