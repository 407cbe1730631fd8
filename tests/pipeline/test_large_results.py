"""Large results through `Host.call` on a real server (CALL-4): given, cut and stored, never refused for size."""

from __future__ import annotations

import re

import pytest

from mcpyard import Host
from mcpyard.pipeline import CallResult
from tests.conftest import Home, body, fixture_server

pytestmark = pytest.mark.anyio

ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def big_text(chars: int) -> str:
    """What the basic server's `big_text(chars)` returns."""
    return (ALPHABET * (chars // len(ALPHABET) + 1))[:chars]


def offset_named(result: CallResult) -> int:
    match = re.search(r"read_result\(handle='(r_[0-9a-f]+)', offset=(\d+), length=…\)", result.text)
    assert match is not None, result.text[-400:]
    assert match.group(1) == result.handle
    return int(match.group(2))


async def read(host: Host, handle: str | None, offset: int, length: int) -> CallResult:
    assert handle is not None
    result = await host.call("read_result", {"handle": handle, "offset": offset, "length": length})
    assert result.ok, result.error
    return result


async def test_call4_a_ten_mebibyte_result_is_given_cut_and_readable_to_its_end(home: Home) -> None:
    size = 10 * 1024 * 1024
    config = home.write_config({"b": fixture_server("basic")})
    async with home.open(config) as host:
        result = await host.call("b__big_text", {"chars": size})
        assert result.ok, result.error
        assert result.handle is not None
        assert len(body(result)) == size, "the wire content is whole"
        assert f"the full result is {size} bytes ({size} characters); read more with read_result(" in result.text
        assert "dropped" not in result.text
        assert len(result.text.encode()) < 65_536 + 1000
        offset = offset_named(result)
        assert offset == 65_536
        assert f"instructions)\n{big_text(offset)}\n[… cut by mcpyard" in result.text
        middle = await read(host, result.handle, 7_000_001, 100)
        assert body(middle) == big_text(7_000_101)[7_000_001:]
        assert f"of {size}; more from offset 7000101]" in middle.text
        end = await read(host, result.handle, size - 10, 100)
        assert body(end) == big_text(size)[-10:]
        assert "that is the end" in end.text


async def test_call4_a_result_over_max_stored_result_bytes_keeps_that_much_and_says_what_was_dropped(
    home: Home,
) -> None:
    config = home.write_config({"b": fixture_server("basic")}, max_result_bytes=1000, max_stored_result_bytes=50_000)
    async with home.open(config) as host:
        result = await host.call("b__big_text", {"chars": 200_000})
        assert result.ok, result.error
        assert (
            "the full result is 200000 bytes (200000 characters); mcpyard kept the first 50000 bytes "
            "(50000 characters), the last 150000 bytes were dropped; read more with read_result("
        ) in result.text
        assert offset_named(result) == 1000
        last = await read(host, result.handle, 49_990, 1000)
        assert body(last) == big_text(50_000)[-10:]
        assert "of 50000; that is the end" in last.text


async def test_call4_a_long_multibyte_result_is_cut_between_characters_and_counted_in_bytes(home: Home) -> None:
    text = "é€😀" * 30_000  # 2 + 3 + 4 bytes a group
    size = len(text.encode())
    config = home.write_config({"b": fixture_server("basic")}, max_result_bytes=1000)
    async with home.open(config) as host:
        result = await host.call("b__echo", {"text": text})
        assert result.ok, result.error
        assert f"the full result is {size} bytes ({len(text)} characters)" in result.text
        offset = offset_named(result)
        assert f"instructions)\n{text[:offset]}\n[… cut by mcpyard" in result.text
        assert 997 <= len(text[:offset].encode()) <= 1000
        more = await read(host, result.handle, offset, 5)
        assert body(more) == text[offset : offset + 5]
