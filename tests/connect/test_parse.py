"""Reading one stdio line as a JSON-RPC message: a response takes a shorter road, to the same message (CONN-1, ERR-1).

`parse_message` checks a line that can only be a response against the response model alone;
whatever it gives must be exactly what checking it against every kind of message gives. A long
line (a large result) is checked as a response first without searching it.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared.message import SessionMessage

from mcpyard.connect import parse_message


def every_kind(line: bytes) -> SessionMessage | type[Exception]:
    """What the union of every kind of message makes of the line (the reference)."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:
        return ValueError


def parsed(line: bytes) -> SessionMessage | type[Exception]:
    message = parse_message(line)
    if isinstance(message, SessionMessage):
        return message
    assert isinstance(message, ValueError)
    return ValueError


LINES = [
    b'{"jsonrpc":"2.0","id":1,"result":{}}',
    b'{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"hello"}],"isError":false}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"error"}]}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"method"}]}}',
    b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}',
    b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"both"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}',
    b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}',
    b'{"jsonrpc":"2.0","id":1}',
    b'{"jsonrpc":"1.0","id":1,"result":{}}',
    b'{"jsonrpc":"2.0","id":null,"result":{}}',
    b'{"id":1,"result":{}}',
    b'{"jsonrpc":"2.0","id":1,"result":[]}',
    b"[1, 2]",
    b"{not json",
    b"",
]


@pytest.mark.parametrize("line", LINES)
def test_conn1_a_line_parses_to_what_every_kind_of_message_would_make_of_it(line: bytes) -> None:
    assert parsed(line) == every_kind(line)


KEYS = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error", "extra"])
VALUES = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.sampled_from(["2.0", "method", "error", "ping", "x"]),
    st.dictionaries(st.sampled_from(["code", "message", "method", "error", "text"]), st.integers(0, 2) | st.text()),
    st.lists(st.integers(0, 2), max_size=2),
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=6))
def test_conn1_any_json_object_parses_to_what_every_kind_of_message_would_make_of_it(value: dict[str, Any]) -> None:
    line = json.dumps(value).encode()
    assert parsed(line) == every_kind(line)


LONG = "x" * 70_000


@pytest.mark.parametrize(
    "value",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": LONG}]}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": LONG}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": LONG}},
        {"jsonrpc": "2.0", "id": 1, "result": LONG},
    ],
)
def test_conn1_a_long_line_parses_to_what_every_kind_of_message_would_make_of_it(value: dict[str, Any]) -> None:
    line = json.dumps(value).encode()
    assert parsed(line) == every_kind(line)


def test_conn1_a_long_line_with_a_result_and_a_method_is_taken_for_its_response() -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping", "result": {"text": LONG}}).encode()
    message = parse_message(line)
    assert isinstance(message, SessionMessage)
    assert message.message == types.JSONRPCResponse(jsonrpc="2.0", id=3, result={"text": LONG})
