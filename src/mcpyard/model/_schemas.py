"""Input schemas as a model API accepts them: local `$ref`s inlined, keywords a provider rejects dropped (MOD-1).

Pure functions of a schema that the catalog already bounded (THREATS). What changes, per provider:

- every local `$ref` (a JSON pointer or an `$anchor` inside the schema) is replaced by what it
  points to, at most `MAX_INLINE_DEPTH` references one inside another; a recursive one, one past
  that depth, one that points outside the schema (never fetched) or does not resolve leaves the
  tool out, with the reason, as does a schema that grows past `MAX_INLINED_PARTS` once inlined;
- `$defs`, `definitions`, `$schema`, `$id`, `$anchor`, `$comment` go (nothing refers to them any more);
  for OpenAI also `contentEncoding` and `contentMediaType`, and an array schema without `items`
  gets `"items": {}` (the API refuses one without);
- boolean subschemas become objects (`true`: `{}`, `false`: `{"not": {}}`);
- the top level is an object schema: `type` is `"object"`, `properties` is present, and
  `anyOf` / `oneOf` / `allOf` / `not` / `enum` / `const` / `if` there (which both APIs refuse at
  the top level) are folded into one set of properties or dropped.

Nothing here loosens what runs: the pipeline checks every call's arguments against the server's own
schema (CALL-1), so a model that reads a looser schema is told exactly what was wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

__all__ = [
    "ANTHROPIC",
    "MAX_INLINED_DEPTH",
    "MAX_INLINED_PARTS",
    "MAX_INLINE_DEPTH",
    "OPENAI",
    "Profile",
    "SchemaLeftOut",
    "normalize_schema",
]

MAX_INLINE_DEPTH = 8
"""`$ref`s inlined one inside another."""
MAX_INLINED_PARTS = 10_000
"""Schema objects in one tool's schema once its `$ref`s are inlined."""
MAX_INLINED_DEPTH = 96
"""Nesting levels of subschemas once inlined."""

_COMMON_DROPPED = frozenset({"$schema", "$id", "$anchor", "$comment", "$defs", "definitions"})
_ONE = frozenset(
    {
        "not",
        "if",
        "then",
        "else",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "contains",
        "additionalItems",
        "unevaluatedItems",
    }
)
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP = frozenset({"properties", "patternProperties", "dependentSchemas"})
_TOP_DROPPED = ("not", "enum", "const", "if", "then", "else")


@dataclass(frozen=True, slots=True)
class Profile:
    """What one model API refuses in a tool's input schema."""

    name: str
    dropped: frozenset[str]
    """Keywords removed wherever they stand as keywords (never a property that bears the name)."""
    array_items: bool = False
    """Whether an array schema must have `items`."""


OPENAI = Profile("openai", _COMMON_DROPPED | {"contentEncoding", "contentMediaType"}, array_items=True)
ANTHROPIC = Profile("anthropic", _COMMON_DROPPED)


class SchemaLeftOut(Exception):
    """The schema cannot be offered in this format; `reason` says why (shown on the status page)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def normalize_schema(schema: Mapping[str, Any], profile: Profile) -> dict[str, Any]:
    """The input schema as `profile`'s API accepts it (see the module's docstring).

    Raises:
        SchemaLeftOut: a `$ref` cannot be inlined, or the inlined schema is too large.
    """
    inlined = _Inliner(schema, profile).schema(schema, (), 0)
    return _object_at_top(inlined if isinstance(inlined, dict) else {})


class _Inliner:
    def __init__(self, root: Mapping[str, Any], profile: Profile) -> None:
        self.root = root
        self.profile = profile
        self.parts = 0
        self.anchors: dict[str, Any] | None = None

    def schema(self, node: Any, refs: tuple[int, ...], depth: int) -> Any:
        """`node` with its references inlined; `refs` holds the parts inlined on the way here."""
        if node is True:
            return {}
        if node is False:
            return {"not": {}}
        if not isinstance(node, Mapping):
            return node  # not a schema: the server's own validation will say so
        self.parts += 1
        if self.parts > MAX_INLINED_PARTS:
            raise SchemaLeftOut(f"it grows past {MAX_INLINED_PARTS} parts once its $refs are inlined")
        if depth > MAX_INLINED_DEPTH:
            raise SchemaLeftOut(f"it nests deeper than {MAX_INLINED_DEPTH} levels once its $refs are inlined")
        ref = node.get("$ref")
        if ref is not None:
            return self.inline(node, ref, refs, depth)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in self.profile.dropped or key == "$ref":
                continue
            if key in _ONE:
                out[key] = self.schema(value, refs, depth + 1)
            elif key in _LIST and isinstance(value, list):
                out[key] = [self.schema(item, refs, depth + 1) for item in value]
            elif key == "items":
                items = value if isinstance(value, list) else None
                out[key] = (
                    [self.schema(item, refs, depth + 1) for item in items]
                    if items is not None
                    else self.schema(value, refs, depth + 1)
                )
            elif key in _MAP and isinstance(value, Mapping):
                out[key] = {name: self.schema(item, refs, depth + 1) for name, item in value.items()}
            elif key == "dependencies" and isinstance(value, Mapping):
                # Each is a schema, or (draft 7) a list of property names.
                out[key] = {
                    name: self.schema(item, refs, depth + 1) if isinstance(item, Mapping | bool) else item
                    for name, item in value.items()
                }
            else:
                out[key] = value  # a value, not a schema (`enum`, `default`, `examples`…): never rewritten
        if self.profile.array_items and _is_array(out) and "items" not in out and "prefixItems" not in out:
            out["items"] = {}
        return out

    def inline(self, node: Mapping[str, Any], ref: Any, refs: tuple[int, ...], depth: int) -> Any:
        target = self.resolve(ref)
        shown = repr(ref[:80]) if isinstance(ref, str) else repr(ref)
        if target is self.root or id(target) in refs:
            raise SchemaLeftOut(
                f"its $ref {shown} is recursive, so it cannot be inlined within {MAX_INLINE_DEPTH} levels"
            )
        if len(refs) >= MAX_INLINE_DEPTH:
            raise SchemaLeftOut(f"it follows more than {MAX_INLINE_DEPTH} $refs one inside another")
        inlined = self.schema(target, (*refs, id(target)), depth)
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        if not siblings:
            return inlined
        beside = self.schema(siblings, refs, depth)
        if not isinstance(inlined, dict):
            return beside
        return {**inlined, **beside}  # the words written beside a reference (a description) are its own

    def resolve(self, ref: Any) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            shown = repr(ref[:80]) if isinstance(ref, str) else repr(ref)
            raise SchemaLeftOut(f"its $ref {shown} points outside the schema; mcpyard never fetches one")
        fragment = unquote(ref[1:])
        anchored = fragment and not fragment.startswith("/")
        target = self.anchor(fragment) if anchored else _pointer(self.root, fragment)
        if target is None:
            raise SchemaLeftOut(f"its $ref {ref[:80]!r} does not resolve inside the schema")
        return target

    def anchor(self, name: str) -> Any:
        if self.anchors is None:
            self.anchors = {}
            stack: list[Any] = [self.root]
            while stack:
                node = stack.pop()
                if isinstance(node, Mapping):
                    if isinstance(found := node.get("$anchor"), str):
                        self.anchors.setdefault(found, node)
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
        return self.anchors.get(name)


def _pointer(root: Any, fragment: str) -> Any:
    """The subschema a JSON pointer (`/a/b`, percent-decoded) names inside `root`, or None."""
    node = root
    for escaped in fragment.split("/")[1:] if fragment else ():
        token = escaped.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node if isinstance(node, Mapping | bool) else None


def _is_array(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def _object_at_top(schema: dict[str, Any]) -> dict[str, Any]:
    """An object schema at the top level, as both APIs want it: combinators folded into its properties."""
    out = dict(schema)
    properties = dict(out["properties"]) if isinstance(out.get("properties"), Mapping) else {}
    required = [name for name in out.get("required", ()) if isinstance(name, str)]
    for keyword in ("allOf", "anyOf", "oneOf"):
        branches = out.pop(keyword, None)
        if not isinstance(branches, list):
            continue
        objects = [branch for branch in branches if isinstance(branch, Mapping)]
        for branch in objects:
            for name, prop in (branch.get("properties") or {}).items():
                properties.setdefault(name, prop)
        needed = [[name for name in branch.get("required", ()) if isinstance(name, str)] for branch in objects]
        if keyword == "allOf":
            required += [name for names in needed for name in names]
        elif needed:
            # A property is required when every alternative requires it.
            required += [name for name in needed[0] if all(name in names for names in needed[1:])]
    for keyword in _TOP_DROPPED:
        out.pop(keyword, None)
    out["type"] = "object"
    out["properties"] = properties
    if required:
        out["required"] = list(dict.fromkeys(required))
    else:
        out.pop("required", None)
    return out
