"""The side-by-side diff of a changed tool and the annotation hints, as tables (ORG-3)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpyard.org.web._diff import Row, definition_text, side_by_side
from mcpyard.org.web._registry_pages import hints


@pytest.mark.parametrize(
    ("old", "new", "rows"),
    [
        ("a\nb", "a\nb", [Row("a", "a", "same"), Row("b", "b", "same")]),
        ("a\nb", "a\nc", [Row("a", "a", "same"), Row("b", "c", "changed")]),
        ("a", "a\nb", [Row("a", "a", "same"), Row(None, "b", "added")]),
        ("a\nb", "b", [Row("a", None, "removed"), Row("b", "b", "same")]),
        ("x\ny\nz", "q", [Row("x", "q", "changed"), Row("y", None, "changed"), Row("z", None, "changed")]),
        ("", "", []),
    ],
)
def test_org3_the_reviewed_and_current_lines_are_aligned(old: str, new: str, rows: list[Row]) -> None:
    assert side_by_side(old, new) == rows


def test_org3_a_definition_shows_its_description_first_and_leaves_out_what_it_lacks() -> None:
    text = definition_text({"description": "d", "input_schema": {"type": "object"}, "title": None})
    assert text.splitlines()[1] == '  "description": "d",'
    assert "title" not in text


@pytest.mark.parametrize(
    ("annotations", "shown"),
    [
        ({}, []),
        ({"readOnlyHint": True}, ["read-only"]),
        ({"destructiveHint": False, "idempotent_hint": True}, ["not destructive", "idempotent"]),
        ({"destructiveHint": True, "openWorldHint": True}, ["destructive", "open world"]),
        ({"readOnlyHint": "yes"}, []),
    ],
)
def test_org3_annotations_are_shown_as_hints(annotations: dict[str, Any], shown: list[str]) -> None:
    assert hints(annotations) == shown
