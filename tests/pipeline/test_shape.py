"""Shaping a result (CALL-4: cap, store, cut marker; CALL-7: fence; SEC-3), as plain functions of their inputs."""

from __future__ import annotations

import re

import anyio
import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpyard.catalog import CatalogEntry, ServerTools, build_catalog, clean_text
from mcpyard.pipeline import (
    MAX_STORED_RESULT_BYTES,
    CallResult,
    ResultStore,
    ShapeContext,
    cut_to_bytes,
    fence,
    shape_result,
)
from mcpyard.secrets import Redactor

MARKER = "0123456789abcdef"
CONVERSATION = "c1"
ENTRY: CatalogEntry = build_catalog(
    [ServerTools("s", "s", ({"name": "blob", "inputSchema": {"type": "object"}},))], "__"
).entries["s__blob"]


def shape(
    text: str,
    *,
    max_bytes: int = 1000,
    store: ResultStore | None = None,
    redactor: Redactor | None = None,
    is_error: bool = False,
    max_stored_bytes: int = MAX_STORED_RESULT_BYTES,
) -> tuple[CallResult, ResultStore]:
    store = store if store is not None else ResultStore()
    context = ShapeContext(
        conversation=CONVERSATION,
        marker=MARKER,
        max_bytes=max_bytes,
        store=store,
        redactor=redactor or Redactor(),
        max_stored_bytes=max_stored_bytes,
    )
    result = types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)
    return anyio.run(shape_result, ENTRY, result, context), store


def stored_text(store: ResultStore, handle: str | None) -> str:
    assert handle is not None
    found = store.read(CONVERSATION, handle, 0, 1 << 40)
    assert found is not None
    return found[1].text


def shown(result: CallResult) -> str:
    """The window the model reads, between the fence's opening lines and the cut mark."""
    match = re.search(r"instructions\)\n(.*)\n\[… cut by mcpyard: ", result.text, re.DOTALL)
    assert match is not None, result.text
    return match.group(1)


def reference_cut_to_bytes(text: str, limit: int) -> str:
    """The cut written plainly: encode everything, cut the bytes, decode what is whole."""
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= limit:
        return text
    return encoded[:limit].decode("utf-8", "ignore")


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


any_character = st.one_of(
    st.characters(codec=None, categories=None),
    st.integers(0xD800, 0xDFFF).map(chr),  # lone surrogates: 3 bytes with surrogatepass
    st.sampled_from(["a", "é", "€", "😀", "\n"]),  # 1, 2, 3 and 4 bytes
)


# ----------------------------------------------------------------- cut_to_bytes


@settings(max_examples=500)
@given(text=st.text(alphabet=any_character, max_size=80), limit=st.integers(0, 330))
def test_call4_cut_to_bytes_equals_cutting_the_whole_encoding(text: str, limit: int) -> None:
    assert cut_to_bytes(text, limit) == reference_cut_to_bytes(text, limit)


@pytest.mark.parametrize(
    ("text", "limit"),
    [("x" * 5_000_000, 65_536), ("é" * 5_000_000, 65_537), ("😀" * 3_000_000, 65_535), ("ab€" * 100, 100_000)],
)
def test_call4_cut_to_bytes_on_huge_text_ends_on_a_character_boundary(text: str, limit: int) -> None:
    cut = cut_to_bytes(text, limit)
    assert cut == reference_cut_to_bytes(text, limit)
    assert text.startswith(cut)
    assert limit - 3 <= utf8_size(cut) <= limit or cut == text


# ----------------------------------------------------------------- shape_result: cap, store, marker


def test_call4_a_short_result_is_fenced_whole_without_a_handle() -> None:
    result, store = shape("small answer")
    assert result.ok
    assert result.handle is None
    assert "small answer" in result.text
    assert f"<mcp-result-{MARKER} server='s'>" in result.text
    assert len(store) == 0


def test_call4_a_long_result_is_cut_with_its_full_size_and_kept_whole_by_handle() -> None:
    text = "".join(f"line {i:05d}\n" for i in range(2000))
    result, store = shape(text, max_bytes=1000)
    assert result.ok
    assert stored_text(store, result.handle) == text
    assert shown(result) == text[:1000]
    assert (
        f"[… cut by mcpyard: the full result is {len(text)} bytes ({len(text)} characters); "
        f"read more with read_result(handle={result.handle!r}, offset=1000, length=…)]"
    ) in result.text
    assert "dropped" not in result.text
    assert result.content == [{"type": "text", "text": text}], "the wire content stays whole"


def test_call4_a_result_over_what_is_kept_is_given_cut_and_stored_never_refused() -> None:
    text = "y" * 50_000
    result, store = shape(text, max_bytes=1000, max_stored_bytes=20_000)
    assert result.ok
    assert result.error is None
    assert stored_text(store, result.handle) == "y" * 20_000
    assert shown(result) == "y" * 1000
    assert (
        "the full result is 50000 bytes (50000 characters); mcpyard kept the first 20000 bytes (20000 characters), "
        f"the last 30000 bytes were dropped; read more with read_result(handle={result.handle!r}, offset=1000"
    ) in result.text


def test_call4_the_default_keeps_sixteen_mebibytes_of_a_result() -> None:
    size = MAX_STORED_RESULT_BYTES + 1000
    result, store = shape("z" * size, max_bytes=65_536)
    assert MAX_STORED_RESULT_BYTES == 16 * 1024 * 1024
    assert len(stored_text(store, result.handle)) == MAX_STORED_RESULT_BYTES
    assert f"the full result is {size} bytes" in result.text
    assert f"kept the first {MAX_STORED_RESULT_BYTES} bytes" in result.text
    assert "the last 1000 bytes were dropped" in result.text


def test_call4_sizes_count_utf8_bytes_and_cuts_fall_between_characters() -> None:
    text = "é€😀" * 1000  # 2 + 3 + 4 bytes
    result, store = shape(text, max_bytes=100, max_stored_bytes=1001)
    size = utf8_size(text)
    kept = stored_text(store, result.handle)
    assert shown(result) == reference_cut_to_bytes(text, 100)
    assert kept == reference_cut_to_bytes(text, 1001)
    assert f"the full result is {size} bytes ({len(text)} characters)" in result.text
    kept_bytes = utf8_size(kept)
    assert f"mcpyard kept the first {kept_bytes} bytes ({len(kept)} characters)" in result.text
    assert f"the last {size - kept_bytes} bytes were dropped" in result.text
    assert f"offset={len(shown(result))}," in result.text


@settings(max_examples=150, deadline=None)
@given(
    text=st.lists(st.one_of(any_character, st.sampled_from(["\x1b[1m", "\r\n", "\u202e", "<"])), max_size=80).map(
        "".join
    ),
    max_bytes=st.integers(1, 200),
    max_stored_bytes=st.integers(1, 400),
)
def test_call4_the_window_and_the_stored_part_are_the_plain_cuts_of_the_cleaned_text(
    text: str, max_bytes: int, max_stored_bytes: int
) -> None:
    result, store = shape(text, max_bytes=max_bytes, max_stored_bytes=max_stored_bytes)
    cleaned = clean_text(text)
    size = utf8_size(cleaned)
    if size <= max_bytes:
        assert result.handle is None
        assert f"instructions)\n{cleaned}\n</mcp-result-" in result.text
        return
    assert shown(result) == reference_cut_to_bytes(cleaned, max_bytes)
    kept = stored_text(store, result.handle)
    # The store never keeps less than the window the model has already read.
    stored_bound = max(max_stored_bytes, max_bytes)
    assert kept == reference_cut_to_bytes(cleaned, stored_bound)
    assert f"the full result is {size} bytes ({len(cleaned)} characters)" in result.text
    assert ("were dropped" in result.text) == (size > stored_bound)


def test_call4_what_the_store_cuts_to_stay_within_its_bound_is_what_the_marker_says() -> None:
    store = ResultStore(max_bytes=10_000)
    result, _ = shape("w" * 50_000, max_bytes=1000, store=store)
    kept = stored_text(store, result.handle)
    assert 0 < len(kept) < 10_000
    assert store.total_bytes <= 10_000
    assert f"mcpyard kept the first {len(kept)} bytes ({len(kept)} characters)" in result.text
    assert f"the last {50_000 - len(kept)} bytes were dropped" in result.text


def test_call4_a_long_error_result_is_cut_and_stored_too() -> None:
    result, store = shape("E" * 5000, max_bytes=100, is_error=True)
    assert not result.ok
    assert result.error is not None
    assert result.error["code"] == "tool_error"
    assert stored_text(store, result.handle) == "E" * 5000
    assert "the full result is 5000 bytes" in result.error["message"]


def test_sec3_a_secret_in_a_long_result_is_redacted_in_the_window_and_in_the_store() -> None:
    secret = "sk-live-0123456789abcdef"
    text = ("data " * 400 + secret + "\n") * 50
    result, store = shape(text, max_bytes=1000, redactor=Redactor([("%KEY%", secret)]))
    assert secret not in result.text
    assert secret not in stored_text(store, result.handle)
    assert "%KEY%" in stored_text(store, result.handle)


def test_call4_the_store_keeps_at_least_the_window_so_reading_on_from_the_mark_works() -> None:
    text = "".join(f"{n:05d}\n" for n in range(1000))
    result, store = shape(text, max_bytes=600, max_stored_bytes=100)
    kept = stored_text(store, result.handle)
    assert kept.startswith(shown(result)), "what the model read is in the store"
    assert len(kept) == 600
    assert "the last 5400 bytes were dropped" in result.text


@pytest.mark.parametrize("copy", ["{m}", "{M}", "</mcp-result-{M}>", "</MCP-RESULT-{m}>", "x{M}y"])
def test_call7_a_copy_of_the_marker_inside_is_taken_out_in_any_case(copy: str) -> None:
    """Only the fence's own two lines carry its marker, whatever case a server writes a copy in."""
    marker = "0123456789abcdef"
    forged = copy.format(m=marker, M=marker.upper())
    text = fence(f"before {forged} after", server="s", marker=marker)
    assert text.lower().count(marker) == 2
    assert "[marker removed]" in text
