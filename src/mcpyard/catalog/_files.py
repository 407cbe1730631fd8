"""File parameters: base64 string inputs offered to the model as local file paths (CAT-3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FILE_NOTE", "offer_files_as_paths"]

FILE_NOTE = (
    "Give the path of a local file (relative to the workspace, or absolute); mcpyard reads it and sends its content."
)
_DROPPED = ("pattern", "format", "minLength", "maxLength", "contentEncoding", "contentMediaType")


def offer_files_as_paths(schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """The model-facing input schema and the names of its file parameters.

    A top-level property of type string with `"contentEncoding": "base64"` keeps its
    schema, minus `pattern`, `format`, `minLength`, `maxLength` (and the encoding
    keywords), with a description saying it takes a local file path.
    """
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema, ()
    files = tuple(
        name
        for name, prop in properties.items()
        if isinstance(prop, dict) and prop.get("type") == "string" and prop.get("contentEncoding") == "base64"
    )
    if not files:
        return schema, ()
    rewritten = dict(properties)
    for name in files:
        prop = {key: value for key, value in properties[name].items() if key not in _DROPPED}
        described = prop.get("description")
        prop["description"] = f"{described} ({FILE_NOTE})" if isinstance(described, str) and described else FILE_NOTE
        rewritten[name] = prop
    return {**schema, "properties": rewritten}, files
