"""Bounds on the schemas a server sends: size, depth, references and patterns, judged once per definition (THREATS).

A tool's schemas are checked when it is listed, before anything validates against them.
A schema past a bound makes that one tool unavailable, with a reason; the server's other
tools are still offered. What is judged here, by a pure function of the schema:

- its JSON nesting depth and number of values;
- `$ref`: only references inside the schema (starting with `#`) are followed, never a
  network one; each must resolve; no chain of more than `MAX_REF_DEPTH` references; no
  cycle that never steps into the value (validation would recurse forever);
- its size once every `$ref` is expanded (a recursive reference counted once), so no
  `anyOf` over references can grow exponentially;
- each regular expression (`pattern`, the keys of `patternProperties`): its length, its
  size once counted repeats are copied out (the `regex` module compiles them so), and that
  it compiles.

Output schemas are validated by the SDK itself, on the event loop and with Python's `re`,
where nothing can limit the time they take; so an output schema must also have no
regular expression that can backtrack for exponential time (`backtracking_risk`) and no
recursion that checks one value along two paths.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import regex

from mcpyard.catalog._regex_risk import backtracking_risk, expanded_size
from mcpyard.catalog._schema_graph import (
    DEF,
    DESCEND,
    IN_PLACE,
    REF,
    Label,
    Part,
    components,
    self_loop,
    two_recursive_paths,
)

__all__ = [
    "MAX_EXPANDED_PARTS",
    "MAX_PATTERN_CHARS",
    "MAX_PATTERN_SIZE",
    "MAX_REF_DEPTH",
    "MAX_SCHEMA_DEPTH",
    "MAX_SCHEMA_VALUES",
    "SchemaReport",
    "inspect_schema",
]

MAX_SCHEMA_DEPTH = 64
"""JSON nesting levels (objects and arrays) of one schema; real tool schemas use a handful."""
MAX_SCHEMA_VALUES = 20_000
"""JSON values in one schema (every object, array, string, number…)."""
MAX_EXPANDED_PARTS = 100_000
"""Schema parts once every `$ref` is expanded: bounds the work of checking one value against it."""
MAX_REF_DEPTH = 32
"""`$ref`s followed one inside another."""
MAX_PATTERN_CHARS = 1_000
MAX_PATTERN_SIZE = 10_000
"""Parts of one pattern once its counted repeats are copied out (`a{20000}` is 20,000): `regex` compiles it so."""

_SUBSCHEMAS: dict[str, tuple[int, Label, str]] = {
    # keyword: (how it applies, to which child, what it holds: one schema, a list or a map of them)
    **dict.fromkeys(("not", "if", "then", "else"), (IN_PLACE, (), "one")),
    **dict.fromkeys(("allOf", "anyOf", "oneOf"), (IN_PLACE, (), "list")),
    **dict.fromkeys(("dependentSchemas", "dependencies"), (IN_PLACE, (), "map")),
    "properties": (DESCEND, (), "map"),
    "patternProperties": (DESCEND, ("any",), "map"),
    "unevaluatedProperties": (DESCEND, ("any",), "one"),
    "additionalProperties": (DESCEND, ("other",), "one"),
    "propertyNames": (DESCEND, ("name",), "one"),
    **dict.fromkeys(("additionalItems", "contains", "unevaluatedItems"), (DESCEND, ("item",), "one")),
    "items": (DESCEND, ("item",), "list"),  # a schema, or (before 2020-12) a list of them
    "prefixItems": (DESCEND, ("item",), "list"),
    **dict.fromkeys(("$defs", "definitions"), (DEF, (), "map")),
}
_MARKERS = (
    *(f'"{key}"' for key in ("$ref", "$schema", "$id", "$dynamicRef", "$recursiveRef", "$anchor")),
    '"pattern',  # and patternProperties
    '"unevaluatedProperties"',
)
"""Keys whose presence needs the full inspection, as they appear in the schema's JSON text."""
_WATCHED = frozenset(_SUBSCHEMAS) | {"$ref", "pattern", "$anchor", "$schema", "$id", "$dynamicRef", "$recursiveRef"}


@dataclass(frozen=True, slots=True)
class SchemaReport:
    """What `inspect_schema` found: a problem (None: within every bound) and what validation will meet."""

    problem: str | None
    values: int = 0
    expanded: int = 0
    """Schema parts with every `$ref` expanded (recursion counted once)."""
    refs: bool = False
    recursive: bool = False
    patterns: bool = False
    """Whether it holds regular expressions (`pattern`, `patternProperties`)."""


class _Problem(Exception):
    pass


_REPORTS: OrderedDict[tuple[str, bool], SchemaReport] = OrderedDict()
_MAX_REPORTS = 4096


def inspect_schema(schema: Any, *, output: bool = False, key: str | None = None) -> SchemaReport:
    """Judge a tool's input (or, with `output`, output) schema against every bound.

    `key` (a definition hash) caches the report: a listing that comes again costs nothing.
    """
    if key is not None and (cached := _REPORTS.get((key, output))) is not None:
        return cached
    try:
        report = _Inspection(schema, output).run()
    except _Problem as problem:
        report = SchemaReport(problem=str(problem))
    if key is not None:
        _REPORTS[(key, output)] = report
        if len(_REPORTS) > _MAX_REPORTS:
            _REPORTS.popitem(last=False)
    return report


def _count(schema: Any) -> int:
    """Values in `schema`, refusing one nested too deeply or too large (iterative: no recursion limit)."""
    values = 1
    stack: list[tuple[Any, int]] = [(schema, 1)] if isinstance(schema, dict | list) else []
    while stack:
        container, depth = stack.pop()
        children = container.values() if isinstance(container, dict) else container
        values += len(children)
        if values > MAX_SCHEMA_VALUES:
            raise _Problem(f"it has more than {MAX_SCHEMA_VALUES} values")
        for child in children:
            if isinstance(child, dict | list):
                if depth >= MAX_SCHEMA_DEPTH:
                    raise _Problem(f"it nests deeper than {MAX_SCHEMA_DEPTH} levels")
                stack.append((child, depth + 1))
    return values


class _Inspection:
    def __init__(self, schema: Any, output: bool) -> None:
        self.root = schema
        self.output = output
        self.parts: dict[int, Part] = {}
        self.anchors: dict[str, Any] = {}
        self.anchor_refs: list[tuple[int, str]] = []
        self.keywords: set[str] = set()
        self.recursive = False

    def run(self) -> SchemaReport:
        if not isinstance(self.root, dict | bool):
            raise _Problem("it is not a JSON Schema object")
        values = _count(self.root)
        if isinstance(self.root, dict) and "draft-03" in str(self.root.get("$schema", "")):
            raise _Problem("JSON Schema draft 3 is not supported")
        text = json.dumps(self.root, default=str)
        if not any(marker in text for marker in _MARKERS):
            # Most schemas: no reference, no pattern. A tree of at most MAX_SCHEMA_VALUES values
            # is within every other bound, so judging it costs one pass in C.
            return SchemaReport(problem=None, values=values, expanded=values)
        self._walk()
        if "unevaluatedProperties" in self.keywords and "patternProperties" in self.keywords:
            # jsonschema applies patternProperties inside unevaluatedProperties with Python's `re`, unbounded.
            raise _Problem(
                "it combines unevaluatedProperties with patternProperties, which cannot be checked in bounded time"
            )
        if "$ref" not in self.keywords:
            return SchemaReport(problem=None, values=values, expanded=values, patterns=self._has_patterns())
        if any(len(component) > 1 or self_loop(self.parts, component) for component in self._in_place_cycles()):
            raise _Problem("it has a $ref cycle that never steps into the value: checking it would never end")
        expanded = self._expand()
        if self.output and self.recursive and (why := two_recursive_paths(self.parts)) is not None:
            raise _Problem(why)
        return SchemaReport(
            problem=None,
            values=values,
            expanded=expanded,
            refs="$ref" in self.keywords,
            recursive=self.recursive,
            patterns=self._has_patterns(),
        )

    def _has_patterns(self) -> bool:
        return bool(self.keywords & {"pattern", "patternProperties"})

    # ----------------------------------------------------------------- the structure

    def _walk(self) -> None:
        pending = [self.root]
        while pending:
            node = pending.pop()
            if id(node) in self.parts:
                continue
            part = self.parts[id(node)] = Part(node, [])
            if isinstance(node, dict):
                part.edges = self._edges(node)
                pending.extend(target for target, _, _ in part.edges)
        for owner, name in self.anchor_refs:
            target = self.anchors.get(name)
            if target is None:
                raise _Problem(f"its $ref {('#' + name)[:80]!r} does not resolve inside the schema")
            self.parts[owner].edges.append((target, REF, ()))

    def _edges(self, node: dict[str, Any]) -> list[tuple[Any, int, Label]]:
        """Every subschema of `node`: applied in place, to a child of the value, by `$ref`, or a definition."""
        present = node.keys() & _WATCHED  # most parts ({"type": "string"}) hold none: nothing more to do
        if not present:
            return []
        self.keywords |= present
        if node is not self.root and (nested := present & {"$schema", "$id"}):
            raise _Problem(f"it declares {min(nested)} inside the schema, which is not supported")
        if dynamic := present & {"$dynamicRef", "$recursiveRef"}:
            raise _Problem(f"it uses {min(dynamic)}, which is not supported")
        if isinstance(anchor := node.get("$anchor"), str):
            self.anchors[anchor] = node
        if "pattern" in present:
            self._pattern(node["pattern"])
        edges: list[tuple[Any, int, Label]] = []
        if "$ref" in present:
            edges.extend(self._ref(node))
        for keyword in present:
            shape = _SUBSCHEMAS.get(keyword)
            if shape is None:
                continue
            kind, label, value = shape[0], shape[1], node[keyword]
            if isinstance(value, dict | bool) and not (isinstance(value, dict) and shape[2] == "map"):
                edges.append((value, kind, label))
            elif isinstance(value, list) and shape[2] == "list":
                edges.extend((item, kind, label) for item in value if isinstance(item, dict | bool))
            elif isinstance(value, dict) and keyword == "properties":
                edges.extend(
                    (item, kind, ("key", str(name))) for name, item in value.items() if isinstance(item, dict | bool)
                )
            elif isinstance(value, dict):
                if keyword == "patternProperties":
                    for pattern in value:
                        self._pattern(pattern)
                edges.extend((item, kind, label) for item in value.values() if isinstance(item, dict | bool))
        return edges

    def _ref(self, node: dict[str, Any]) -> Iterator[tuple[Any, int, Label]]:
        """The part `node`'s `$ref` names (an anchor is resolved once every anchor is known)."""
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#"):
            shown = ref[:80] if isinstance(ref, str) else ref
            raise _Problem(
                f"its $ref {shown!r} points outside the schema; only references starting with # are followed"
            )
        fragment = unquote(ref[1:])
        if fragment and not fragment.startswith("/"):
            self.anchor_refs.append((id(node), fragment))  # resolved once every anchor is known
            return
        target = _pointer(self.root, fragment)
        if target is None:
            raise _Problem(f"its $ref {ref[:80]!r} does not resolve inside the schema")
        yield target, REF, ()

    def _pattern(self, pattern: Any) -> None:
        if not isinstance(pattern, str):
            return
        shown = pattern[:80]
        if len(pattern) > MAX_PATTERN_CHARS:
            raise _Problem(f"its pattern {shown!r}… is longer than {MAX_PATTERN_CHARS} characters")
        if expanded_size(pattern) > MAX_PATTERN_SIZE:
            raise _Problem(f"its pattern {shown!r} repeats too much (over {MAX_PATTERN_SIZE} parts once expanded)")
        if self.output:
            # The SDK checks output patterns with Python's `re`, on the event loop, with no time limit.
            if (risk := backtracking_risk(pattern)) is not None:
                raise _Problem(
                    f"its pattern {shown!r} {risk}; results are checked with Python's re, which has no time limit"
                )
            return
        try:
            regex.compile(pattern)
        except (regex.error, ValueError, OverflowError):
            raise _Problem(f"its pattern {shown!r} is not a valid regular expression") from None

    # ----------------------------------------------------------------- cost

    def _in_place_cycles(self) -> list[list[int]]:
        return components(self.parts, lambda part: [id(t) for t, kind, _ in part.edges if kind in (IN_PLACE, REF)])

    def _expand(self) -> int:
        """Parts with every `$ref` expanded, a recursive one counted once; refuses too many, or refs too deep."""
        done: dict[int, tuple[int, int]] = {}
        on_path: set[int] = set()
        # Frames: [part, next edge, parts so far, deepest $ref chain below, came by $ref]
        frames: list[list[Any]] = [[self.parts[id(self.root)], 0, 1, 0, False]]
        on_path.add(id(self.root))
        while frames:
            frame = frames[-1]
            part: Part = frame[0]
            if frame[1] < len(part.edges):
                target, kind, _ = part.edges[frame[1]]
                frame[1] += 1
                if kind == DEF:
                    continue
                key = id(target)
                if key in on_path:
                    self.recursive = True
                    frame[2] += 1
                elif key in done:
                    size, chain = done[key]
                    frame[2] += size
                    frame[3] = max(frame[3], chain + (kind == REF))
                else:
                    on_path.add(key)
                    frames.append([self.parts[key], 0, 1, 0, kind == REF])
                if frame[2] > MAX_EXPANDED_PARTS:
                    raise _Problem(f"it expands to more than {MAX_EXPANDED_PARTS} parts once its $refs are followed")
                continue
            frames.pop()
            on_path.discard(id(part.node))
            done[id(part.node)] = (frame[2], frame[3])
            if frame[3] > MAX_REF_DEPTH:
                raise _Problem(f"it follows more than {MAX_REF_DEPTH} $refs one inside another")
            if frames:
                parent = frames[-1]
                parent[2] += frame[2]
                parent[3] = max(parent[3], frame[3] + frame[4])
                if parent[2] > MAX_EXPANDED_PARTS:
                    raise _Problem(f"it expands to more than {MAX_EXPANDED_PARTS} parts once its $refs are followed")
        return done[id(self.root)][0]


def _pointer(root: Any, fragment: str) -> Any:
    """The schema a JSON pointer (`/a/b`, already percent-decoded) names inside `root`, or None."""
    node = root
    for escaped in fragment.split("/")[1:] if fragment else ():
        token = escaped.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node if isinstance(node, dict | bool) else None
