"""CALL-6: the idempotent cache's bounds and forgetting, as a unit."""

from __future__ import annotations

import mcp_types as types

from mcpyard.pipeline import IdempotentCache, cache_key


def result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def test_call6_at_most_64_results_least_recently_used_out_first() -> None:
    cache = IdempotentCache()
    for i in range(64):
        cache.put(f"k{i}", "s", result(str(i)))
    assert cache.get("k0") is not None  # k0 is now the most recently used
    cache.put("k64", "s", result("64"))
    assert len(cache) == 64
    assert cache.get("k1") is None
    assert cache.get("k0") is not None


def test_call6_at_most_16_mib_and_a_larger_result_is_not_kept() -> None:
    cache = IdempotentCache()
    big = "x" * (6 * 1024 * 1024)
    for i in range(3):
        cache.put(f"k{i}", "s", result(big))
    assert cache.get("k0") is None, "the third 6 MiB result pushes the first one out"
    assert cache.get("k2") is not None
    cache.put("huge", "s", result("y" * (17 * 1024 * 1024)))
    assert cache.get("huge") is None


def test_call6_forgetting_a_server_drops_only_its_results_and_moves_its_generation() -> None:
    cache = IdempotentCache()
    cache.put("a", "s1", result("1"))
    cache.put("b", "s2", result("2"))
    before = cache.generation("s1")
    cache.forget_server("s1")
    assert cache.get("a") is None
    assert cache.get("b") is not None
    assert cache.generation("s1") == before + 1
    cache.clear()
    assert len(cache) == 0
    assert cache.generation("s2") == 1


def test_call6_file_parameters_count_by_content_digest() -> None:
    one = cache_key("s", "t", {"data": "a.txt", "n": 1}, {"data": "abc"})
    two = cache_key("s", "t", {"data": "b.txt", "n": 1}, {"data": "abc"})
    other = cache_key("s", "t", {"data": "a.txt", "n": 1}, {"data": "def"})
    assert one == two
    assert one != other
    assert cache_key("s", "t", {"n": 1}, {}) != cache_key("s2", "t", {"n": 1}, {})
