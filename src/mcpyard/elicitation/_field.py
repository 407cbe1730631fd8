"""One field of a server's elicitation form: its kind and rules, as JSON and in a few words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["FORMATS", "Choice", "FieldKind", "FieldValue", "FormField", "number_text", "shorten"]

FieldKind = Literal["string", "number", "integer", "boolean", "choice", "choices"]
FieldValue = str | int | float | bool | list[str]
"""What an answer holds for one field, as sent to the server."""

FORMATS = frozenset({"email", "uri", "date", "date-time"})
"""The string formats MCP forms may ask for; `password` is read as a secret field, others are ignored."""


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
                rules.append(f"{number_text(self.minimum)} to {number_text(self.maximum)}")
            elif self.minimum is not None:
                rules.append(f"at least {number_text(self.minimum)}")
            elif self.maximum is not None:
                rules.append(f"at most {number_text(self.maximum)}")
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


def shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, the last one an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def number_text(value: float) -> str:
    """A bound as a person reads it: `3`, not `3.0`."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _json_value(value: FieldValue | None) -> Any:
    return list(value) if isinstance(value, list) else value
