"""Arguments that cannot be sent are refused before they reach the server's connection, which stays healthy.

CALL-1, ERR-1.

`sendable_problem` is a pure function, tested as a table and with hypothesis over the whole range of code
points (lone surrogates included); then through `Host.call` against a real server over stdio and over
streamable HTTP: a bad call is refused with `invalid_arguments`, and the next call on the same host runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpyard import Host
from mcpyard.pipeline import MAX_ARGUMENTS_BYTES, MAX_ARGUMENTS_DEPTH, sendable_copy, sendable_problem
from tests.conftest import Home, fixture_server
from tests.servers.in_process import serve_http_in_process

EVERY_CHARACTER = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
"""Every code point, lone surrogates (category Cs) included."""


def nested(depth: int, leaf: Any = 1) -> dict[str, Any]:
    """An object nesting `depth` levels deep (the object itself is level 1), built without recursion."""
    root: dict[str, Any] = {}
    inner = root
    for _ in range(depth - 1):
        child: dict[str, Any] = {}
        inner["a"] = child
        inner = child
    inner["leaf"] = leaf
    return root


def depth_of(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({}, None),
        ({"note": ["a", "b", "\u00e9\U0001f600"], "n": 1.5, "ok": True, "none": None, "t": (1, 2)}, None),
        (
            {"note": ["a", "b", "\ud800"]},
            "arguments.note[2]: holds a lone surrogate (U+D800), which cannot be sent as UTF-8",
        ),
        (
            {"a": {"x\udc00": 1}},
            'arguments.a["x\\udc00"]: its key holds a lone surrogate (U+DC00), which cannot be sent as UTF-8',
        ),
        ({"two words": [None, -math.inf]}, 'arguments["two words"][1]: holds -Infinity, which JSON has no number for'),
        ({"n": math.nan}, "arguments.n: holds NaN, which JSON has no number for"),
        ({"n": math.inf}, "arguments.n: holds Infinity, which JSON has no number for"),
        ({"s": {1, 2}}, "arguments.s: holds a set value, which has no JSON form"),
        ({"d": Decimal("1.5")}, "arguments.d: holds a Decimal value, which has no JSON form"),
        ({"b": b"bytes"}, "arguments.b: holds a bytes value, which has no JSON form"),
        ({"m": {1: "one"}}, "arguments.m: holds a key that is an int value; JSON keys are strings"),
        ({"big": 10**5000}, "arguments.big: holds an integer too long to write as JSON"),
        (nested(MAX_ARGUMENTS_DEPTH), None),
        (nested(MAX_ARGUMENTS_DEPTH + 1), f"arguments nest deeper than {MAX_ARGUMENTS_DEPTH} levels"),
        ({"x": "a" * (MAX_ARGUMENTS_BYTES + 1)}, f"arguments are larger than {MAX_ARGUMENTS_BYTES} bytes as JSON"),
        ({"x": "a" * 1000}, None),
    ],
)
def test_call1_sendable_problem_names_why_and_where(arguments: dict[str, Any], problem: str | None) -> None:
    found = sendable_problem(arguments)
    if problem is None:
        assert found is None
        json.dumps(arguments, ensure_ascii=False, allow_nan=False).encode("utf-8")  # it really can be sent
    else:
        assert found is not None
        assert found.startswith(problem), found
        found.encode("utf-8")  # the message itself can always be sent


def test_call1_nesting_far_past_the_recursion_limit_is_refused_and_copied_without_recursion() -> None:
    deep = nested(100_000)
    problem = sendable_problem(deep)
    assert problem is not None
    assert problem.startswith(f"arguments nest deeper than {MAX_ARGUMENTS_DEPTH} levels")
    assert len(problem) < 300, "the path named is cut short"
    copy = sendable_copy(deep)
    assert depth_of(copy) == MAX_ARGUMENTS_DEPTH
    assert sendable_problem(copy) is None


@given(st.text(EVERY_CHARACTER, max_size=40), st.text(EVERY_CHARACTER, max_size=10), st.integers(0, 5))
def test_call1_a_text_anywhere_is_refused_exactly_when_it_cannot_be_encoded_as_utf8(
    text: str, key: str, depth: int
) -> None:
    """Over every code point: refused iff UTF-8 cannot encode it, as a value or as a key, at any depth."""
    try:
        text.encode("utf-8")
        key.encode("utf-8")
    except UnicodeEncodeError:
        encodable = False
    else:
        encodable = True
    arguments = nested(depth + 1, [{key: text}])
    problem = sendable_problem(arguments)
    assert (problem is None) is encodable, problem
    if problem is not None:
        first = next(ch for ch in key + text if 0xD800 <= ord(ch) <= 0xDFFF)
        assert f"(U+{ord(first):04X})" in problem or "(U+D" in problem
        problem.encode("utf-8")
    else:
        json.dumps(arguments, ensure_ascii=False, allow_nan=False).encode("utf-8")


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(EVERY_CHARACTER, max_size=8)
    | st.sampled_from([b"x", {1}, Decimal(1)]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(EVERY_CHARACTER, max_size=4) | st.integers(), children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(EVERY_CHARACTER, max_size=4), JSONISH, max_size=4))
def test_call1_a_sendable_copy_can_always_be_sent_and_leaves_what_can_be_sent_alone(arguments: dict[str, Any]) -> None:
    copy = sendable_copy(arguments)
    assert sendable_problem(copy) is None
    json.dumps(copy, ensure_ascii=False, allow_nan=False).encode("utf-8")
    if sendable_problem(arguments) is None:
        assert json.dumps(copy, sort_keys=True) == json.dumps(arguments, sort_keys=True)


BAD_ARGUMENTS: list[tuple[str, dict[str, Any], str]] = [
    ("echo", {"text": "\ud800"}, "arguments.text: holds a lone surrogate (U+D800)"),
    ("keep", {"data": {"note": ["a", "b", "\ud800"]}}, "arguments.data.note[2]: holds a lone surrogate (U+D800)"),
    ("keep", {"data": {"\udfff": 1}}, 'arguments.data["\\udfff"]: its key holds a lone surrogate (U+DFFF)'),
    ("keep", {"data": {"n": math.nan}}, "arguments.data.n: holds NaN"),
    ("keep", {"data": {"n": -math.inf}}, "arguments.data.n: holds -Infinity"),
    ("keep", {"data": nested(300)}, f"arguments nest deeper than {MAX_ARGUMENTS_DEPTH} levels"),
    ("keep", {"data": {"when": {1, 2}}}, "arguments.data.when: holds a set value, which has no JSON form"),
]


@asynccontextmanager
async def takes_json(home: Home, transport: str) -> AsyncIterator[Host]:
    if transport == "stdio":
        async with home.open(home.write_config({"j": fixture_server("takes_json")})) as host:
            yield host
        return
    async with (
        serve_http_in_process("takes_json", "streamable-http") as url,
        home.open(home.write_config({"j": {"url": url}})) as host,
    ):
        yield host


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
async def test_call1_arguments_that_cannot_be_sent_are_refused_and_the_connection_stays_healthy(
    home: Home, transport: str
) -> None:
    async with takes_json(home, transport) as host:
        assert host.status().servers[0].state == "connected"
        for tool, arguments, problem in BAD_ARGUMENTS:
            with anyio.fail_after(30):
                refused = await host.call(f"j__{tool}", arguments)
                after = await host.call("j__echo", {"text": "still here"})
            assert refused.error is not None, (tool, refused)
            assert refused.error["code"] == "invalid_arguments", refused.error
            assert problem in refused.error["message"], refused.error
            assert "nothing was sent" in refused.error["message"]
            assert after.ok, (problem, after.error)
            assert "still here" in after.text
        with anyio.fail_after(30):
            count = await host.call("j__kept_count")
        assert count.structured == {"result": 0}, "nothing that could not be sent reached the server"
        records = [record for record in host.history() if record.status == "refused"]
        assert len(records) == len(BAD_ARGUMENTS)
        for record in records:
            assert record.error_code == "invalid_arguments"
            json.dumps(record.arguments, ensure_ascii=False, allow_nan=False).encode("utf-8")  # kept as it can be
