"""Bounds on tool schemas, judged at listing time; hostile schemas end within a bound or are refused (ERR-1, CAT-2).

THREATS, Robustness: bound the depth and size of schemas, follow only local `$ref`s, never a
network one; no check of a value against a schema a server sent can hold the host.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mcpyard.catalog import (
    MAX_EXPANDED_PARTS,
    MAX_PATTERN_CHARS,
    MAX_PATTERN_SIZE,
    MAX_REF_DEPTH,
    MAX_SCHEMA_DEPTH,
    MAX_SCHEMA_VALUES,
    CatalogEntry,
    ServerTools,
    backtracking_risk,
    build_catalog,
    expanded_size,
    inspect_schema,
)
from mcpyard.errors import CallError
from mcpyard.pipeline import validate_arguments


def nested(schema: Any, levels: int) -> dict[str, Any]:
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    assert isinstance(schema, dict)
    return schema


def exponential(levels: int) -> dict[str, Any]:
    defs: dict[str, Any] = {
        f"l{i}": {"anyOf": [{"$ref": f"#/$defs/l{i + 1}"}, {"$ref": f"#/$defs/l{i + 1}"}]} for i in range(levels)
    }
    defs[f"l{levels}"] = {"type": "integer"}
    return {"$ref": "#/$defs/l0", "$defs": defs}


def chain(links: int) -> dict[str, Any]:
    defs: dict[str, Any] = {f"c{i}": {"$ref": f"#/$defs/c{i + 1}"} for i in range(links)}
    defs[f"c{links}"] = {"type": "string"}
    return {"$ref": "#/$defs/c0", "$defs": defs}


CYCLE_IN_PLACE = {"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
UNION_OF_TWO = {"oneOf": [{"properties": {"next": {"$ref": "#"}}}, {"properties": {"next": {"$ref": "#"}}}]}
WIDE_TWICE = {"$defs": {"w": {"anyOf": [{"type": "string"}] * 400}}, "anyOf": [{"$ref": "#/$defs/w"}] * 400}
TREE = {"$defs": {"node": {"properties": {"kids": {"items": {"$ref": "#/$defs/node"}}}}}, "$ref": "#/$defs/node"}
ANY_JSON = {"anyOf": [{"type": "string"}, {"items": {"$ref": "#"}}, {"additionalProperties": {"$ref": "#"}}]}
BINARY_TREE = {"properties": {"left": {"$ref": "#"}, "right": {"$ref": "#"}}}
TWO_PATHS = {"properties": {"x": {"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}}}


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": "^[a-z]+$"}}}, None),
        (nested({"type": "string"}, MAX_SCHEMA_DEPTH - 1), None),
        (nested({"type": "string"}, MAX_SCHEMA_DEPTH), f"nests deeper than {MAX_SCHEMA_DEPTH} levels"),
        ({"enum": list(range(MAX_SCHEMA_VALUES - 2))}, None),
        ({"enum": list(range(MAX_SCHEMA_VALUES))}, f"more than {MAX_SCHEMA_VALUES} values"),
        (exponential(12), None),
        (exponential(20), f"more than {MAX_EXPANDED_PARTS} parts"),
        (WIDE_TWICE, f"more than {MAX_EXPANDED_PARTS} parts"),
        (chain(MAX_REF_DEPTH - 1), None),  # the root's own $ref is the first of the chain
        (chain(MAX_REF_DEPTH), f"more than {MAX_REF_DEPTH} $refs"),
        (TREE, None),
        (ANY_JSON, None),
        (CYCLE_IN_PLACE, "never steps into the value"),
        ({"allOf": [{"$ref": "#"}]}, "never steps into the value"),
        ({"$ref": "https://example.com/schema.json"}, "points outside the schema"),
        ({"$ref": "other.json#/a"}, "points outside the schema"),
        ({"$ref": "#/$defs/missing"}, "does not resolve"),
        ({"$ref": "#missing"}, "does not resolve"),
        ({"$defs": {"a": {"$anchor": "here", "type": "string"}}, "$ref": "#here"}, None),
        ({"$defs": {"a b": {"type": "string"}}, "$ref": "#/$defs/a%20b"}, None),
        ({"properties": {"a": {"$schema": "http://json-schema.org/draft-07/schema#"}}}, "declares $schema"),
        ({"properties": {"a": {"$id": "https://example.com/a"}}}, "declares $id"),
        ({"$dynamicRef": "#meta"}, "$dynamicRef"),
        ({"$schema": "http://json-schema.org/draft-03/schema#"}, "draft 3"),
        ({"pattern": "a" * (MAX_PATTERN_CHARS + 1)}, f"longer than {MAX_PATTERN_CHARS} characters"),
        ({"pattern": "(unclosed"}, "not a valid regular expression"),
        ({"pattern": "^[a-z]{1,9990}$"}, None),
        ({"pattern": "(?:a{1000}){1000}"}, f"over {MAX_PATTERN_SIZE} parts"),
        ({"patternProperties": {"(?:(?:(?:a{1000}){1000}){1000})": {}}}, f"over {MAX_PATTERN_SIZE} parts"),
        ({"patternProperties": {"[": {}}}, "not a valid regular expression"),
        ({"patternProperties": {"^a": {}}, "unevaluatedProperties": False}, "unevaluatedProperties"),
        # Keyword-looking names that are property names or data are neither patterns nor references.
        ({"properties": {"pattern": {"type": "string"}, "$ref": {"type": "string"}}}, None),
        ({"default": {"$ref": "https://example.com/x"}, "examples": [{"pattern": "("}]}, None),
        (True, None),
        ([1], "not a JSON Schema object"),
    ],
)
def test_err1_an_input_schema_is_judged_against_every_bound(schema: Any, problem: str | None) -> None:
    report = inspect_schema(schema)
    if problem is None:
        assert report.problem is None, report.problem
    else:
        assert report.problem is not None
        assert problem in report.problem


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"properties": {"s": {"pattern": "^(a+)+$"}}}, "repeats a group that itself repeats"),
        ({"patternProperties": {"(a|aa)*": {}}}, "repeats a choice between alternatives"),
        ({"properties": {"s": {"pattern": "^[a-z]+$"}}}, None),
        (TREE, None),
        (ANY_JSON, None),
        (BINARY_TREE, None),
        (TWO_PATHS, "along two recursive paths"),
        (UNION_OF_TWO, "two recursive"),
        ({"properties": {"next": {"$ref": "#"}}, "patternProperties": {"^n": {"$ref": "#"}}}, "two recursive"),
        # additionalProperties never applies to a key the same part names in its properties.
        ({"properties": {"next": {"$ref": "#"}}, "additionalProperties": {"$ref": "#"}}, None),
    ],
)
def test_err1_an_output_schema_must_also_be_checkable_in_bounded_time_by_the_sdk(
    schema: Any, problem: str | None
) -> None:
    """The SDK checks results on the event loop with Python's `re`: only shapes with a bound pass."""
    assert inspect_schema(schema).problem is None, "as an input schema it is fine: its check has a budget"
    report = inspect_schema(schema, output=True)
    if problem is None:
        assert report.problem is None, report.problem
    else:
        assert report.problem is not None
        assert problem in report.problem


@pytest.mark.parametrize(
    ("pattern", "risky"),
    [
        ("^(a+)+$", True),
        ("(x+x+)+y", True),
        ("^(a|aa)+$", True),
        ("(?:a|b){2,}", True),
        ("(a)\\1", True),
        ("(?P<x>a)(?P=x)", True),
        ("(?(1)a|b)", True),
        ("^[a-z0-9_-]{3,16}$", False),
        ("^\\d{3}-\\d{4}$", False),
        ("(?:ab)*c", False),
        ("(?i)^[a-z]+$", False),
        ("([a-z]{1})+", False),
        ("(?:https?|ftp)://", False),
        ("[(]+[)]*", False),
        ("\\(a+\\)+", False),
        ("(?#(a+)+)a", False),
        ("a{2", False),
    ],
)
def test_err1_patterns_that_can_backtrack_exponentially_are_recognised(pattern: str, risky: bool) -> None:
    assert (backtracking_risk(pattern) is not None) is risky


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        ("abc", 3),
        ("^\\d{3}-\\d{4}$", 10),
        ("[a-z]{2,63}", 63),
        ("a{2,}", 3),
        ("x{,5}", 5),
        ("(?:ab){3}", 6),
        ("(a{2}|b{3}){4}", 20),
        ("(?:a{1000}){1000}", 1_000_000),
        ("(?#x{1000000})a", 1),
        ("[a{1000}]", 1),
        ("a*b+c?", 3),
    ],
)
def test_err1_a_patterns_size_counts_each_counted_repeat_copied_out(pattern: str, size: int) -> None:
    assert expanded_size(pattern) == size


def test_cat2_a_refused_tool_keeps_its_name_and_hash_out_of_the_catalog_and_the_others_stay() -> None:
    tools = (
        {"name": "fine", "inputSchema": {"type": "object"}},
        {"name": "deep", "inputSchema": nested({"type": "string"}, 100)},
        {"name": "out", "inputSchema": {"type": "object"}, "outputSchema": {"properties": {"s": {"pattern": "(a+)+"}}}},
    )
    catalog = build_catalog([ServerTools("s", "s", tools)], "__")
    assert set(catalog.entries) == {"s__fine"}
    assert set(catalog.refused) == {"s__deep", "s__out"}
    assert catalog.refused["s__deep"].tool == "deep"
    assert "its input schema is refused" in catalog.refused["s__deep"].reason
    assert "its output schema is refused" in catalog.refused["s__out"].reason
    assert [refused.name for refused in catalog.refused_of_server("s")] == ["s__deep", "s__out"]


# ----------------------------------------------------------------- hostile schemas, generated

CATASTROPHIC = ["^(a|aa)+$", "^(a+)+$", "(x+x+)+y", "^(\\w+\\s?)*$", "(a|a)*b", "(?:(?:(?:a{1000}){1000}){1000})"]
REFS = ["#", "#/$defs/d0", "#/$defs/d1", "#/$defs/d2", "#/$defs/nope", "http://127.0.0.1:9/x.json", "#/properties/a"]
COMBINATORS = ["anyOf", "oneOf", "allOf"]

LEAVES: st.SearchStrategy[Any] = st.one_of(
    st.booleans(),
    st.sampled_from(["string", "integer", "object", "array"]).map(lambda kind: {"type": kind}),
    st.sampled_from(CATASTROPHIC).map(lambda pattern: {"type": "string", "pattern": pattern}),
    st.integers(0, MAX_SCHEMA_VALUES + 5_000).map(lambda n: {"enum": list(range(n))}),
    st.sampled_from(REFS).map(lambda ref: {"$ref": ref}),
    st.integers(MAX_PATTERN_CHARS - 10, MAX_PATTERN_CHARS + 10).map(lambda n: {"pattern": "a" * n}),
)


def _grow(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.tuples(st.sampled_from(COMBINATORS), st.lists(inner, min_size=1, max_size=4)).map(lambda t: {t[0]: t[1]}),
        # Wide: the same branch many times over.
        st.tuples(st.sampled_from(COMBINATORS), inner, st.integers(2, 60)).map(lambda t: {t[0]: [t[1]] * t[2]}),
        inner.map(lambda s: {"type": "object", "properties": {"a": s, "b": s}, "required": ["a"]}),
        inner.map(lambda s: {"type": "array", "items": s}),
        st.tuples(st.sampled_from(CATASTROPHIC), inner).map(
            lambda t: {"type": "object", "patternProperties": {t[0]: t[1]}, "additionalProperties": False}
        ),
        st.tuples(inner, st.integers(8, 90)).map(lambda t: nested(t[0], t[1])),
        inner.map(lambda s: {"not": s}),
    )


SCHEMAS: st.SearchStrategy[Any] = st.recursive(LEAVES, _grow, max_leaves=10)
HOSTILE: st.SearchStrategy[Any] = st.tuples(SCHEMAS, SCHEMAS, SCHEMAS, SCHEMAS).map(
    lambda t: {**t[0], "$defs": {"d0": t[1], "d1": t[2], "d2": t[3]}} if isinstance(t[0], dict) else t[0]
)


def hostile_values() -> list[dict[str, Any]]:
    """Values as a model could send them: deep, long, keys the patterns backtrack on (trees, as JSON gives)."""
    bad = "a" * 36 + "!"
    objects: Any = "end"
    arrays: Any = bad
    for _ in range(40):
        objects, arrays = {"a": objects, "b": 1}, [arrays]
    return [
        {"a": bad, "b": [bad] * 20},
        {bad: bad, "a": {bad: [bad]}},
        {"a": objects, "b": arrays},
        {"a": [[[[[[[[[[bad]]]]]]]]]], "b": list(range(200))},
    ]


LISTING_BOUND = 10.0
"""CPU seconds judging one hostile listing may take (it is linear in the schema's size)."""
BUDGET = 0.2
MARGIN = 10.0
"""Beyond the budget, what the steps between two looks at the clock may add: a bound, not a speed test; an unbounded
one would never end. Both are measured in this thread's CPU time: on two cores shared with the rest of the suite,
the wall clock counts the time other processes had the CPU (a validation once took 13 s of it)."""


# Hostile schemas are large by design: Hypothesis warns when it writes one out (hundreds of KiB), and warnings
# are errors in this suite; the warning says nothing of what the test checks.
@pytest.mark.filterwarnings("ignore:Generating overly large repr:hypothesis.errors.HypothesisWarning")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(schema=HOSTILE)
def test_err1_catalog_building_and_validation_finish_within_a_bound_or_refuse_cleanly(schema: Any) -> None:
    """No hostile schema holds the listing path or the call path longer than its bound (THREATS, Robustness)."""
    started = time.thread_time()
    catalog = build_catalog([ServerTools("s", "s", ({"name": "t", "inputSchema": schema},))], "__")
    assert time.thread_time() - started < LISTING_BOUND
    entry = catalog.get("s__t")
    if entry is None:
        reason = catalog.refused["s__t"].reason
        assert reason.startswith("its input schema is refused: ")
        event(f"refused at listing: {reason.split(': ', 1)[1][:30]}")
        return
    for value in hostile_values():
        started = time.thread_time()
        code, message = _validated(entry, value)
        assert time.thread_time() - started < BUDGET + MARGIN
        assert code in {None, "invalid_arguments", "invalid_schema", "validation_timeout"}, message
        assert code is None or message
        event(f"validated: {code}")


def _validated(entry: CatalogEntry, value: dict[str, Any]) -> tuple[str | None, str]:
    """The code and message of the refusal, or (None, "") when the value is accepted."""
    try:
        validate_arguments(entry, value, budget_secs=BUDGET)
    except CallError as exc:
        return exc.code, exc.message
    return None, ""
