"""The quick check: a few isinstance checks decide a simple schema, far faster than a general validator (CALL-1).

Most tools take a flat object of strings, numbers and flags. For such schemas a few
isinstance checks decide validity far faster than a general validator. The quick check
only ever says "valid" when the full validator would too; when it says no (or the schema
uses anything it does not know) the full validator decides and words the errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Check", "quick_check"]

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",  # an annotation unless a format checker is asked for, and none is
        "contentEncoding",
        "contentMediaType",
    }
)
_TYPES: dict[str, Check] = {
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
    "number": lambda v: type(v) is int or (type(v) is float and math.isfinite(v)),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "array": lambda v: type(v) is list,
    "object": lambda v: type(v) is dict,
}
_SCALARS = (str, int, float, bool, type(None))
MAX_QUICK_DEPTH = 8


def quick_check(schema: Any) -> Check | None:
    """A fast, conservative check for a simple schema: True only for values the schema accepts.

    None when the schema uses a keyword the quick check does not know (`$ref`, `pattern`,
    `oneOf`…): the full validator is used alone.
    """
    if not isinstance(schema, Mapping):
        return None
    root = {key: value for key, value in schema.items() if key not in ("$schema", "$defs", "definitions")}
    return _compile(root, 0)


_OBJECT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties"})


def _compile(schema: Any, depth: int) -> Check | None:
    if schema is True:
        return lambda v: True
    if not isinstance(schema, Mapping) or depth > MAX_QUICK_DEPTH:
        return None
    keywords = schema.keys() - _ANNOTATIONS
    if keywords <= _OBJECT_KEYWORDS and schema.get("type", "object") == "object":
        return _object(schema, depth)  # the usual shape of a tool's arguments, in one check
    checks: list[Check] = []
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        check = _keyword(key, value, schema, depth)
        if check is None:
            return None
        checks.append(check)
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(check(v) for check in checks)


def _keyword(key: str, value: Any, schema: Mapping[str, Any], depth: int) -> Check | None:
    """One keyword's check, applied as JSON Schema applies it (only to values of its kind)."""
    if key == "type":
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names or any(not isinstance(n, str) or n not in _TYPES for n in names):
            return None
        tests = [_TYPES[name] for name in names]
        return tests[0] if len(tests) == 1 else lambda v: any(test(v) for test in tests)
    if key in ("enum", "const"):
        allowed = value if key == "enum" else [value]
        if not isinstance(allowed, list) or any(not isinstance(item, _SCALARS) for item in allowed):
            return None
        # JSON equality: true is not 1, and 1 is 1.0.
        return lambda v: isinstance(v, _SCALARS) and any(type(v) is type(a) and v == a for a in allowed)
    if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if type(value) not in (int, float):
            return None
        bound = value
        compare: Callable[[Any], bool] = {
            "minimum": lambda v: v >= bound,
            "maximum": lambda v: v <= bound,
            "exclusiveMinimum": lambda v: v > bound,
            "exclusiveMaximum": lambda v: v < bound,
        }[key]
        return lambda v: type(v) not in (int, float) or (math.isfinite(v) and compare(v))
    if key in ("minLength", "maxLength", "minItems", "maxItems"):
        if type(value) is not int:
            return None
        kind, limit = (str if key.endswith("Length") else list), value
        if key.startswith("min"):
            return lambda v: type(v) is not kind or len(v) >= limit
        return lambda v: type(v) is not kind or len(v) <= limit
    if key == "items":
        item = _compile(value, depth + 1)
        if item is None:
            return None
        return lambda v: type(v) is not list or all(item(x) for x in v)
    if key == "anyOf":
        if not isinstance(value, list) or not value:
            return None
        branches = [_compile(branch, depth + 1) for branch in value]
        if any(branch is None for branch in branches):
            return None
        known = [branch for branch in branches if branch is not None]
        return lambda v: any(branch(v) for branch in known)
    if key == "required":
        if not isinstance(value, list) or any(not isinstance(name, str) for name in value):
            return None
        names = tuple(value)
        return lambda v: type(v) is not dict or all(name in v for name in names)
    if key == "properties":
        return _properties(value, schema.get("additionalProperties", True), depth)
    if key == "additionalProperties":
        if "properties" in schema:
            return lambda v: True  # checked with the properties
        return _properties({}, value, depth)
    return None


def _object(schema: Mapping[str, Any], depth: int) -> Check | None:
    """`type: object` with `properties`, `required` and `additionalProperties`, checked in one pass."""
    required = schema.get("required", [])
    if not isinstance(required, list) or any(not isinstance(name, str) for name in required):
        return None
    fields = _properties(schema.get("properties", {}), schema.get("additionalProperties", True), depth)
    if fields is None:
        return None
    names = tuple(required)
    typed = "type" in schema

    def check_object(v: Any) -> bool:
        if type(v) is not dict:
            return not typed
        return all(name in v for name in names) and fields(v)

    return check_object


def _properties(properties: Any, additional: Any, depth: int) -> Check | None:
    if not isinstance(properties, Mapping):
        return None
    checks: dict[str, Check] = {}
    for name, subschema in properties.items():
        check = _compile(subschema, depth + 1)
        if check is None:
            return None
        checks[str(name)] = check
    other = _compile(additional, depth + 1) if additional is not False else None
    if other is None and additional is not False:
        return None

    def check_object(v: Any) -> bool:
        if type(v) is not dict:
            return True
        for name, item in v.items():
            known = checks.get(name)
            if known is not None:
                if not known(item):
                    return False
            elif other is None or not other(item):
                return False
        return True

    return check_object
