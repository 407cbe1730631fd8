"""A changed tool's reviewed and current definitions side by side, line by line (ORG-3)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["Row", "definition_text", "side_by_side"]

Kind = Literal["same", "changed", "removed", "added"]


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the two columns: the reviewed line (or None), the current line (or None), and how they differ."""

    old: str | None
    new: str | None
    kind: Kind


def definition_text(definition: Mapping[str, object]) -> str:
    """A definition as the diff shows it: title and description first, then its schema and annotations, as JSON."""
    keys = ("title", "description", "input_schema", "annotations")
    shown = {key: definition[key] for key in keys if definition.get(key) is not None}
    return json.dumps(shown, indent=2, ensure_ascii=False, default=str)


def side_by_side(old: str, new: str) -> list[Row]:
    """The lines of `old` and `new` aligned: equal runs once, replaced runs paired, the rest against a gap."""
    left, right = old.splitlines(), new.splitlines()
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(Row(line, line, "same") for line in left[a0:a1])
        elif tag == "delete":
            rows.extend(Row(line, None, "removed") for line in left[a0:a1])
        elif tag == "insert":
            rows.extend(Row(None, line, "added") for line in right[b0:b1])
        else:
            olds, news = left[a0:a1], right[b0:b1]
            for index in range(max(len(olds), len(news))):
                rows.append(
                    Row(
                        olds[index] if index < len(olds) else None,
                        news[index] if index < len(news) else None,
                        "changed",
                    )
                )
    return rows
