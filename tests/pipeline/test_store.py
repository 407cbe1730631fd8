"""The result store (CALL-4): scoped by conversation, bounded in total, least recently used out."""

from __future__ import annotations

import sys

import pytest

from mcpyard.pipeline import ResultStore


def text_of(store: ResultStore, conversation: str, handle: str) -> str | None:
    found = store.read(conversation, handle, 0, 1 << 40)
    return None if found is None else found[1].text


def test_call4_a_handle_reads_only_in_the_conversation_that_made_it() -> None:
    store = ResultStore()
    handle = store.put("c1", "0123456789", server="s")
    assert store.read("c2", handle, 0, 5) is None
    found = store.read("c1", handle, 3, 4)
    assert found is not None
    server, window = found
    assert (server, window.text, window.offset, window.total, window.end) == ("s", "3456", 3, 10, 7)
    assert store.read("c1", "r_unknown", 0, 5) is None


def test_call4_the_store_stays_within_its_byte_budget_least_recently_used_out() -> None:
    store = ResultStore(max_bytes=100_000)
    first = store.put("c1", "a" * 30_000)
    second = store.put("c2", "b" * 30_000)
    third = store.put("c1", "c" * 30_000)
    assert text_of(store, "c1", first) is not None  # now the most recently used
    fourth = store.put("c3", "d" * 30_000)
    assert store.total_bytes <= 100_000
    assert text_of(store, "c2", second) is None, "the least recently used result left, whichever conversation"
    assert [text_of(store, c, h) is not None for c, h in (("c1", first), ("c1", third), ("c3", fourth))] == [True] * 3
    assert len(store) == 3
    assert store.total_bytes == sum(sys.getsizeof(c * 30_000) for c in "acd")


def test_call4_the_store_keeps_a_bounded_number_of_results() -> None:
    store = ResultStore(max_results=3)
    handles = [store.put("c", str(i)) for i in range(5)]
    assert len(store) == 3
    assert [text_of(store, "c", h) for h in handles] == [None, None, "2", "3", "4"]


@pytest.mark.parametrize("text", ["a" * 50_000, "é" * 50_000, "€" * 50_000, "a😀" * 25_000])
def test_call4_a_text_larger_than_the_whole_store_is_cut_to_fit(text: str) -> None:
    store = ResultStore(max_bytes=20_000)
    store.put("c", "small")
    handle = store.put("c", text)
    kept = text_of(store, "c", handle)
    assert kept is not None
    assert text.startswith(kept)
    assert 0 < len(kept) < len(text)
    assert sys.getsizeof(kept) <= store.total_bytes <= 20_000


def test_call4_forgetting_a_conversation_drops_its_results_only() -> None:
    store = ResultStore()
    mine = store.put("c1", "x" * 1000)
    theirs = store.put("c2", "y" * 1000)
    store.forget("c1")
    assert text_of(store, "c1", mine) is None
    assert text_of(store, "c2", theirs) == "y" * 1000
    assert store.total_bytes == sys.getsizeof("y" * 1000)


def test_call4_a_store_too_small_to_hold_anything_is_refused() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        ResultStore(max_bytes=100)
    with pytest.raises(ValueError, match="max_results"):
        ResultStore(max_results=0)
