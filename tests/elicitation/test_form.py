"""A server's form as fields: schema read, defaults, answers typed and checked (API-1 elicitation, ERR-1, SEC-2).

Pure functions, as tables; properties over whole value ranges where they fit.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from mcpyard.elicitation import (
    Choice,
    FormField,
    check_content,
    check_value,
    defaults_of,
    form_fields,
    parse_entry,
    secret_looking,
    shown_value,
)
from mcpyard.errors import ElicitationRefused


def one(spec: dict[str, Any], *, required: bool = False) -> FormField:
    schema: dict[str, Any] = {"type": "object", "properties": {"f": spec}}
    if required:
        schema["required"] = ["f"]
    [field] = form_fields(schema)
    return field


SEP1034 = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}


def test_the_sep1034_form_left_empty_answers_every_default() -> None:
    fields = form_fields(SEP1034)
    assert [f.kind for f in fields] == ["string", "integer", "number", "choice", "boolean"]
    assert defaults_of(fields) == {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}
    content, problems = check_content(fields, {})
    assert problems == []
    assert content == defaults_of(fields)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"type": "string", "title": "Name", "minLength": 2, "maxLength": 9, "format": "email"},
            FormField("f", "string", "Name", min_length=2, max_length=9, format="email"),
            id="string-rules",
        ),
        pytest.param({"type": "string", "format": "color"}, FormField("f", "string", "f"), id="unknown-format-ignored"),
        pytest.param(
            {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
            FormField("f", "choice", "f", choices=(Choice("r", "Red"), Choice("g", "Green"))),
            id="legacy-enum-names",
        ),
        pytest.param(
            {"type": "string", "enum": ["r", "g"], "enumNames": ["Red"]},
            FormField("f", "choice", "f", choices=(Choice("r", "r"), Choice("g", "g"))),
            id="enum-names-of-another-length-ignored",
        ),
        pytest.param(
            {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g"}]},
            FormField("f", "choice", "f", choices=(Choice("r", "Red"), Choice("g", "g"))),
            id="one-of-titles",
        ),
        pytest.param(
            {"type": "integer", "minimum": 1, "maximum": 5, "default": 9},
            FormField("f", "integer", "f", minimum=1, maximum=5),
            id="default-out-of-range-dropped",
        ),
        pytest.param(
            {"type": "number", "default": 2},
            FormField("f", "number", "f", default=2),
            id="number-default",
        ),
        pytest.param({"type": "integer", "default": 3.0}, FormField("f", "integer", "f", default=3), id="int-as-float"),
        pytest.param({"type": "boolean", "default": "yes"}, FormField("f", "boolean", "f"), id="bad-default-dropped"),
        pytest.param(
            {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 1, "maxItems": 2, "default": ["b"]},
            FormField(
                "f",
                "choices",
                "f",
                choices=(Choice("a", "a"), Choice("b", "b")),
                min_items=1,
                max_items=2,
                default=["b"],
            ),
            id="multi-select",
        ),
        pytest.param(
            {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
            FormField("f", "choices", "f", choices=(Choice("a", "A"),)),
            id="titled-multi-select",
        ),
        pytest.param(
            {"type": "string", "format": "password"},
            FormField("f", "string", "f", secret=True),
            id="password-format-is-secret",
        ),
        pytest.param(
            {"type": "string", "writeOnly": True}, FormField("f", "string", "f", secret=True), id="write-only-is-secret"
        ),
        pytest.param(
            {"type": "string", "title": "Your API key"},
            FormField("f", "string", "Your API key", secret=True),
            id="secret-title",
        ),
    ],
)
def test_each_primitive_schema_becomes_one_typed_field(spec: dict[str, Any], expected: FormField) -> None:
    assert one(spec) == expected


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        pytest.param([], "must be an object schema", id="not-an-object"),
        pytest.param({"type": "array"}, "must be an object schema", id="array-form"),
        pytest.param({"type": "object"}, "no properties object", id="no-properties"),
        pytest.param({"type": "object", "properties": {"f": {"type": "object"}}}, "of type 'object'", id="nested"),
        pytest.param({"type": "object", "properties": {"f": {}}}, "of type 'NoneType'", id="no-type"),
        pytest.param({"type": "object", "properties": {"f": 3}}, "not an object", id="field-not-an-object"),
        pytest.param(
            {"type": "object", "properties": {"f": {"type": "array", "items": {"type": "string"}}}},
            "not choices",
            id="free-list",
        ),
        pytest.param(
            {"type": "object", "properties": {"f": {"type": "string", "enum": [1, 2]}}},
            "list of strings",
            id="int-enum",
        ),
        pytest.param(
            {"type": "object", "properties": {"f": {"type": "string", "maxLength": -1}}}, "maxLength", id="bad-length"
        ),
        pytest.param(
            {"type": "object", "properties": {"f": {"type": "number", "minimum": "0"}}}, "minimum", id="bad-bound"
        ),
        pytest.param(
            {"type": "object", "properties": {f"f{i}": {"type": "boolean"} for i in range(51)}},
            "at most 50",
            id="too-many-fields",
        ),
        pytest.param(
            {"type": "object", "properties": {"f": {"type": "string", "enum": [str(i) for i in range(201)]}}},
            "at most 200",
            id="too-many-choices",
        ),
    ],
)
def test_a_form_mcpyard_cannot_show_is_refused_naming_why(schema: Any, says: str) -> None:
    with pytest.raises(ElicitationRefused, match=says):
        form_fields(schema)


def test_required_names_it_does_not_define_are_ignored() -> None:
    fields = form_fields({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost", 3]})
    assert [(f.name, f.required) for f in fields] == [("a", True)]


STRING = FormField("f", "string", "Name", min_length=2, max_length=4)
EMAIL = FormField("f", "string", "Mail", format="email")
URI = FormField("f", "string", "Page", format="uri")
DAY = FormField("f", "string", "Day", format="date")
WHEN = FormField("f", "string", "When", format="date-time")
AGE = FormField("f", "integer", "Age", minimum=18, maximum=130)
SCORE = FormField("f", "number", "Score", minimum=0, maximum=10)
YES = FormField("f", "boolean", "Yes")
PLAN = FormField("f", "choice", "Plan", choices=(Choice("free", "Free plan"), Choice("pro", "Pro plan")))
TOPICS = FormField("f", "choices", "Topics", choices=(Choice("a", "A"), Choice("b", "B")), min_items=1, max_items=1)


@pytest.mark.parametrize(
    ("field", "value", "sent", "problem"),
    [
        (STRING, "abc", "abc", None),
        (STRING, "a", None, "must have at least 2 characters"),
        (STRING, "abcde", None, "must have at most 4 characters"),
        (STRING, 12, None, "must be text"),
        (STRING, "a\ud800", None, "must be text that can be sent as UTF-8 (it holds a lone surrogate)"),
        (STRING, "\u00e9\U0001f600", "\u00e9\U0001f600", None),
        (EMAIL, "ada@example.org", "ada@example.org", None),
        (EMAIL, "ada@example", None, "must be an email address, like name@example.org"),
        (URI, "https://example.org/a", "https://example.org/a", None),
        (URI, "example.org", None, "must be a URI, like https://example.org/page"),
        (DAY, "2025-12-31", "2025-12-31", None),
        (DAY, "2025-02-30", None, "must be a date, like 2025-12-31"),
        (DAY, "20251231", None, "must be a date, like 2025-12-31"),
        (WHEN, "2025-12-31T18:30:00Z", "2025-12-31T18:30:00Z", None),
        (WHEN, "2025-12-31T18:30:00+02:00", "2025-12-31T18:30:00+02:00", None),
        (WHEN, "2025-12-31", None, "must be a date and time, like 2025-12-31T18:30:00Z"),
        (AGE, 30, 30, None),
        (AGE, 30.0, 30, None),
        (AGE, 30.5, None, "must be a whole number"),
        (AGE, 17, None, "must be at least 18"),
        (AGE, 131, None, "must be at most 130"),
        (AGE, True, None, "must be a number"),
        (AGE, "30", None, "must be a number"),
        (SCORE, 9.5, 9.5, None),
        (SCORE, float("nan"), None, "must be a number"),
        (SCORE, float("inf"), None, "must be a number"),
        (YES, False, False, None),
        (YES, "true", None, "must be true or false"),
        (PLAN, "pro", "pro", None),
        (PLAN, "Pro plan", None, "must be one of its choices"),
        (TOPICS, ["a"], ["a"], None),
        (TOPICS, [], None, "must hold at least 1 choices"),
        (TOPICS, ["a", "b"], None, "must hold at most 1 choices"),
        (TOPICS, ["c"], None, "must hold only its choices"),
        (TOPICS, "a", None, "must be a list of its choices"),
    ],
)
def test_a_value_is_checked_against_its_fields_rules(field: FormField, value: Any, sent: Any, problem: str) -> None:
    assert check_value(field, value) == (sent, problem)


def test_an_answer_is_completed_with_defaults_and_every_problem_named_by_title() -> None:
    fields = form_fields(
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name"},
                "age": {"type": "integer", "minimum": 18},
                "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"},
                "note": {"type": "string"},
            },
            "required": ["name", "age"],
        }
    )
    content, problems = check_content(fields, {"age": 12, "extra": 1, "note": None})
    assert content == {"plan": "free"}
    assert problems == ["Your name: is required", "age: must be at least 18", "extra: the form has no such field"]
    content, problems = check_content(fields, {"name": "Ada", "age": 36, "plan": "pro"})
    assert (content, problems) == ({"name": "Ada", "age": 36, "plan": "pro"}, [])


@pytest.mark.parametrize(
    ("field", "typed", "value"),
    [
        (STRING, "  a b ", "  a b "),
        (STRING, "", None),
        (STRING, "   ", None),
        (AGE, " 42 ", 42),
        (SCORE, "2", 2),
        (SCORE, "2.5", 2.5),
        (SCORE, "1e3", 1000.0),
        (YES, "Yes", True),
        (YES, "n", False),
        (PLAN, "pro", "pro"),
        (PLAN, "free PLAN", "free"),
        (PLAN, "2", "pro"),
        (TOPICS, "a, B", ["a", "b"]),
        (TOPICS, "1,2", ["a", "b"]),
    ],
)
def test_what_a_person_types_is_read_as_the_fields_type(field: FormField, typed: str, value: Any) -> None:
    assert parse_entry(field, typed) == value


@pytest.mark.parametrize(
    ("field", "typed", "says"),
    [
        (AGE, "forty", "type a whole number"),
        (AGE, "4.5", "type a whole number"),
        (SCORE, "lots", "type a number"),
        (SCORE, "inf", "type a finite number"),
        (YES, "maybe", "answer yes or no"),
        (PLAN, "3", r"choose by number \(1 to 2\) or by name"),
        (TOPICS, "a, zz", "choose by number"),
    ],
)
def test_what_cannot_be_read_says_what_to_type(field: FormField, typed: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_entry(field, typed)


@pytest.mark.parametrize(
    ("name", "title", "secret"),
    [
        ("password", None, True),
        ("userPassword", None, True),
        ("api_key", None, True),
        ("API-KEY", None, True),
        ("github_token", None, True),
        ("client_secret", None, True),
        ("passphrase", None, True),
        ("pin_or_name", "Private key", True),
        ("name", "Your name", False),
        ("email", None, False),
        ("keyboard_layout", None, False),
        ("author", None, False),
    ],
)
def test_a_secret_looking_name_or_title_is_read_as_a_secret(name: str, title: str | None, secret: bool) -> None:
    assert secret_looking(name, title) is secret


def test_a_secret_is_shown_back_as_dots_and_a_choice_by_its_title() -> None:
    hidden = FormField("password", "string", "password", secret=True)
    assert shown_value(hidden, "hunter2") == "••••••••"
    assert shown_value(PLAN, "pro") == "Pro plan"
    assert shown_value(TOPICS, ["a", "b"]) == "A, B"
    assert shown_value(YES, False) == "no"
    assert shown_value(STRING, None) == "(empty)"


def test_a_secret_fields_default_is_never_in_its_json() -> None:
    field = one({"type": "string", "format": "password", "default": "hunter2"})
    assert field.default == "hunter2"
    assert "hunter2" not in str(field.to_json())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
FIELDS = (STRING, EMAIL, URI, DAY, WHEN, AGE, SCORE, YES, PLAN, TOPICS)


@given(value=json_values)
def test_any_value_is_either_accepted_as_its_kind_or_refused_without_quoting_it(value: Any) -> None:
    for field in FIELDS:
        sent, problem = check_value(field, value)
        if problem is None:
            assert check_value(field, sent) == (sent, None)
        else:
            assert sent is None
            if isinstance(value, str) and len(value) > 3:
                assert value not in problem


@given(text=st.text())
@example(text="²")  # a digit to `str.isdigit`, yet not a number `int` reads
def test_anything_typed_is_read_as_its_fields_kind_or_refused_with_a_value_error(text: str) -> None:
    """Blank is None (the default applies); else a value of the field's kind, or a ValueError saying what to type."""
    for field in FIELDS:
        try:
            value = parse_entry(field, text)
        except ValueError as refused:
            said = str(refused)
            assert text.strip(), "a blank entry is never refused"
            assert said.startswith(("answer ", "type ", "choose ")), said
            continue
        if not text.strip():
            assert value is None
        elif field.kind == "string":
            assert value == text, "text is taken as typed"
        elif field.kind == "boolean":
            assert isinstance(value, bool)
        elif field.kind == "integer":
            assert type(value) is int
        elif field.kind == "number":
            assert isinstance(value, int | float)
            assert not isinstance(value, bool)
            assert math.isfinite(value)
        elif field.kind == "choice":
            assert value in {choice.value for choice in field.choices}
        else:
            assert isinstance(value, list)
            assert set(value) <= {choice.value for choice in field.choices}


@given(schema=json_values)
def test_any_schema_gives_fields_or_a_refusal(schema: Any) -> None:
    try:
        fields = form_fields({"type": "object", "properties": {"f": schema}})
    except ElicitationRefused:
        return
    content, problems = check_content(fields, {})
    assert problems == []
    assert content == defaults_of(fields)
