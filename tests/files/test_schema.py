"""CAT-3: base64 string inputs are offered to the model as local file paths (`offer_files_as_paths`)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mcpyard.catalog._files import offer_files_as_paths

DROPPED = ("pattern", "format", "minLength", "maxLength")
"""The keywords CAT-3 drops from a file parameter."""


def _file_param(**extra: Any) -> dict[str, Any]:
    return {"type": "string", "contentEncoding": "base64", **extra}


def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def _says_it_takes_a_local_file_path(description: object) -> bool:
    assert isinstance(description, str)
    lowered = description.lower()
    return "local file" in lowered and "path" in lowered


def test_cat3_a_base64_string_is_offered_as_a_local_file_path() -> None:
    """CAT-3: same property, its description saying it takes a local file path, the string keywords dropped."""
    schema = _schema(
        document=_file_param(
            description="The PDF to convert.",
            title="Document",
            pattern="^[A-Za-z0-9+/]*={0,2}$",
            format="byte",
            minLength=4,
            maxLength=1_000_000,
        ),
        name={"type": "string", "description": "Output name"},
    )
    model_schema, params = offer_files_as_paths(schema)
    assert params == ("document",)
    document = model_schema["properties"]["document"]
    assert document["type"] == "string"
    assert document["title"] == "Document"
    assert "The PDF to convert." in document["description"]
    assert _says_it_takes_a_local_file_path(document["description"])
    assert not set(DROPPED) & set(document)
    assert model_schema["properties"]["name"] == {"type": "string", "description": "Output name"}


@pytest.mark.parametrize("keyword", DROPPED)
def test_cat3_each_string_constraint_of_a_file_parameter_is_dropped(keyword: str) -> None:
    """CAT-3: `pattern`, `format`, `minLength`, `maxLength` describe the encoding, not the path."""
    values: dict[str, Any] = {"pattern": "^[A-Za-z0-9+/=]+$", "format": "byte", "minLength": 8, "maxLength": 16}
    model_schema, _ = offer_files_as_paths(_schema(blob=_file_param(**{keyword: values[keyword]})))
    assert keyword not in model_schema["properties"]["blob"]


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("type", "string"),
        ("title", "Attachment"),
        ("deprecated", True),
        ("readOnly", False),
        ("$comment", "sent as base64"),
        ("x-vendor-hint", {"upload": True}),
    ],
)
def test_cat3_other_keywords_of_a_file_parameter_are_kept(keyword: str, value: object) -> None:
    """CAT-3: "same schema": only the string constraints go."""
    model_schema, params = offer_files_as_paths(_schema(blob=_file_param(**{keyword: value})))
    assert params == ("blob",)
    assert model_schema["properties"]["blob"][keyword] == value


@pytest.mark.parametrize("description", [None, ""], ids=["absent", "empty"])
def test_cat3_a_file_parameter_without_a_description_gets_one(description: str | None) -> None:
    """CAT-3: the description says it takes a local file path even when the server gave none."""
    prop = _file_param() if description is None else _file_param(description=description)
    model_schema, _ = offer_files_as_paths(_schema(blob=prop))
    assert _says_it_takes_a_local_file_path(model_schema["properties"]["blob"]["description"])


def test_cat3_the_rest_of_the_schema_is_kept() -> None:
    """CAT-3: only the file properties change; `required` and every other top-level keyword stay."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "title": "Upload",
        "required": ["blob", "name"],
        "additionalProperties": False,
        "properties": {"blob": _file_param(), "name": {"type": "string"}},
    }
    model_schema, _ = offer_files_as_paths(schema)
    assert {key: value for key, value in model_schema.items() if key != "properties"} == {
        key: value for key, value in schema.items() if key != "properties"
    }
    assert list(model_schema["properties"]) == ["blob", "name"]


@pytest.mark.parametrize(
    "prop",
    [
        pytest.param({"type": "string", "pattern": "^a+$", "maxLength": 4}, id="plain-string"),
        pytest.param({"type": "string", "contentEncoding": "base32"}, id="other-encoding"),
        pytest.param({"type": "string", "contentMediaType": "image/png"}, id="media-type-only"),
        pytest.param({"type": "integer", "contentEncoding": "base64"}, id="not-a-string"),
        pytest.param({"contentEncoding": "base64"}, id="no-type"),
        pytest.param(
            {"type": "object", "properties": {"inner": {"type": "string", "contentEncoding": "base64"}}},
            id="nested-object",
        ),
        pytest.param(
            {"type": "array", "items": {"type": "string", "contentEncoding": "base64", "maxLength": 9}},
            id="array-items",
        ),
        pytest.param(True, id="boolean-schema"),
    ],
)
def test_cat3_properties_that_are_not_top_level_base64_strings_are_left_alone(prop: object) -> None:
    """CAT-3: only a top-level property that is a string with `contentEncoding: base64` is a file parameter."""
    schema = _schema(other=prop)
    model_schema, params = offer_files_as_paths(schema)
    assert params == ()
    assert model_schema == schema
    model_schema, params = offer_files_as_paths(_schema(other=prop, blob=_file_param()))
    assert params == ("blob",)
    assert model_schema["properties"]["other"] == prop


def test_cat3_every_file_parameter_is_named_in_schema_order() -> None:
    """CAT-3: the names returned are the file parameters, in the order the schema lists them."""
    schema = _schema(first=_file_param(), text={"type": "string"}, second=_file_param(), third=_file_param())
    model_schema, params = offer_files_as_paths(schema)
    assert params == ("first", "second", "third")
    for name in params:
        assert _says_it_takes_a_local_file_path(model_schema["properties"][name]["description"])


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param({}, id="empty"),
        pytest.param({"type": "object"}, id="no-properties"),
        pytest.param({"type": "object", "properties": {}}, id="empty-properties"),
        pytest.param({"type": "object", "properties": ["blob"]}, id="properties-not-an-object"),
    ],
)
def test_cat3_a_schema_without_properties_is_returned_unchanged(schema: dict[str, Any]) -> None:
    """CAT-3: nothing to offer as a path: the schema is returned as given, with no file parameters."""
    before = copy.deepcopy(schema)
    model_schema, params = offer_files_as_paths(schema)
    assert params == ()
    assert model_schema == before


def test_cat3_the_server_schema_is_not_modified() -> None:
    """CAT-3: the model-facing schema is a copy; the server's schema still says base64 (it is what gets sent)."""
    schema = _schema(blob=_file_param(description="Bytes.", maxLength=10), name={"type": "string"})
    before = copy.deepcopy(schema)
    offer_files_as_paths(schema)
    assert schema == before
