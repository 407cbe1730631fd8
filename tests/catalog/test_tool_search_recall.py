"""MOD-4: tool search finds what a person asks for (recall@5 on real servers' tools) and behaves on any input.

The catalog is 305 real definitions listed from the reference MCP servers and our fixtures,
repeated under several server prefixes (`tool_search/make_catalog.py`); the queries are what a
user would type (`tool_search/queries.json`). A query is a hit when any of the top 5 names, with
its server prefix removed, matches one of its expected tools: any copy of a right tool counts.
"""

from __future__ import annotations

import json
import time
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest

from mcpyard.catalog import ToolIndex, words

HERE = Path(__file__).with_name("tool_search")
RECALL_GOAL = 0.9
HOLDOUT_GOAL = 0.8
K = 5


def _catalog() -> list[dict[str, Any]]:
    tools = json.loads((HERE / "catalog.json").read_text())
    assert isinstance(tools, list)
    return tools


def _queries() -> list[dict[str, Any]]:
    queries = json.loads((HERE / "queries.json").read_text())["queries"]
    assert isinstance(queries, list)
    return queries


def unprefixed(name: str) -> str:
    """`fs1__read_file` → `read_file`: the tool without the server it came from."""
    return name.split("__", 1)[-1]


def is_hit(found: list[str], expected: list[str]) -> bool:
    """Any found tool, on any server, matches any expected pattern."""
    return any(fnmatchcase(unprefixed(name), pattern) for name in found for pattern in expected)


def test_mod4_catalog_and_queries_are_big_enough_to_measure() -> None:
    catalog = _catalog()
    assert len(catalog) >= 300
    assert len({tool["name"] for tool in catalog}) == len(catalog)
    assert len([query for query in _queries() if not query.get("holdout")]) >= 60
    bases = {unprefixed(tool["name"]) for tool in catalog}
    for query in _queries():
        assert any(fnmatchcase(base, pattern) for base in bases for pattern in query["expected"]), query


def recall_at(index: ToolIndex, queries: list[dict[str, Any]], k: int = K) -> tuple[float, list[str]]:
    """The share of `queries` with a hit in the top `k`, and a line for each miss."""
    misses = []
    for query in queries:
        found = index.search(query["query"], k)
        if not is_hit(found, query["expected"]):
            misses.append(f"{query['query']!r}: wanted {query['expected']}, got {[unprefixed(n) for n in found]}")
    return 1 - len(misses) / len(queries), misses


def test_mod4_recall_at_5_on_real_servers_tools_is_at_least_90_percent() -> None:
    index = ToolIndex(_catalog())
    tuned = [query for query in _queries() if not query.get("holdout")]
    recall, misses = recall_at(index, tuned)
    print(f"recall@{K} = {recall:.3f} over {len(tuned)} queries; misses:\n" + "\n".join(misses))
    assert recall >= RECALL_GOAL, f"recall@{K} {recall:.3f} < {RECALL_GOAL}; misses:\n" + "\n".join(misses)


def test_mod4_recall_at_5_on_held_out_queries_is_at_least_80_percent() -> None:
    """Queries the ranker was never tuned on: a floor declared before they were first run, against overfitting."""
    held_out = [query for query in _queries() if query.get("holdout")]
    recall, misses = recall_at(ToolIndex(_catalog()), held_out)
    print(f"held-out recall@{K} = {recall:.3f} over {len(held_out)} queries; misses:\n" + "\n".join(misses))
    assert recall >= HOLDOUT_GOAL, f"held-out recall@{K} {recall:.3f} < {HOLDOUT_GOAL}; misses:\n" + "\n".join(misses)


def test_mod4_search_is_deterministic_and_ties_resolve_by_name_whatever_the_catalog_order() -> None:
    catalog = _catalog()
    index = ToolIndex(catalog)
    shuffled = ToolIndex(sorted(catalog, key=lambda tool: tool["name"][::-1]))
    backwards = ToolIndex(list(reversed(catalog)))
    for query in _queries():
        first = index.search(query["query"], 10)
        assert first == index.search(query["query"], 10)
        assert first == shuffled.search(query["query"], 10) == backwards.search(query["query"], 10)
    # Five copies of the same tool score the same: they come back in name order.
    found = index.search("read the complete contents of a file", len(index))
    copies = [name for name in found if name.endswith("__read_file")]
    assert copies == sorted(copies)
    assert len(copies) >= 5


@pytest.mark.parametrize("query", ["", "   ", "the of and to", "a an the", "?!…", "\x00\x01"])
def test_mod4_an_empty_or_stopword_only_query_finds_nothing(query: str) -> None:
    assert ToolIndex(_catalog()).search(query, 5) == []


@pytest.mark.parametrize("limit", [0, 1, 3, 5, 50, 1000])
def test_mod4_search_returns_at_most_limit_names_each_once(limit: int) -> None:
    index = ToolIndex(_catalog())
    found = index.search("read file", limit)
    assert len(found) <= limit
    assert len(set(found)) == len(found)
    assert set(found) <= set(index.names)
    if limit:
        assert found


def test_mod4_a_negative_limit_finds_nothing() -> None:
    assert ToolIndex(_catalog()).search("read file", -3) == []


@pytest.mark.parametrize(
    "query",
    [
        "read " * 20_000,
        "x" * 100_000,
        "".join(chr(code) for code in range(0x250)) * 150,
        "ファイルを読む 東京の時間",
        "прочитать файл",
        "\ud800\udfff broken surrogates",
        "read\x00file\x1b[31m\u202e",
        "🙂" * 25_000,
    ],
)
def test_mod4_hostile_queries_answer_quickly_and_never_raise(query: str) -> None:
    index = ToolIndex(_catalog())
    started = time.perf_counter()
    found = index.search(query, 5)
    assert time.perf_counter() - started < 0.1  # ~1 ms: the query is cut to its first 4 KiB and 64 words
    assert len(found) <= 5


def test_mod4_a_catalog_of_hostile_or_empty_definitions_still_indexes() -> None:
    tools: list[dict[str, Any]] = [
        {"name": ""},
        {"name": "x", "description": None, "inputSchema": None},
        {"name": "y", "inputSchema": {"properties": []}},
        {"name": "z", "inputSchema": {"properties": {"p": "not a mapping"}}},
        {"name": "w" * 10_000, "description": "\x00" * 10_000},
    ]
    index = ToolIndex(tools)
    assert len(index) == 5
    assert index.search("x", 5) == ["x"]
    assert ToolIndex([]).search("anything", 5) == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("readFile", "read file"),
        ("read_file", "read file"),
        ("read-file", "read file"),
        ("fs1__read_text_file", "fs 1 read text file"),
        ("HTTPRequest", "http request"),
        ("getURLContents", "get url contents"),
        ("list.directory", "list directory"),
        ("listDirectoryWithSizes", "list directory with sizes"),
    ],
)
def test_mod4_camel_snake_and_kebab_names_split_into_words(name: str, expected: str) -> None:
    assert words(name) == words(expected)
    assert len(words(name)) == len(expected.split()) - expected.split().count("with")


def test_mod4_a_camel_case_name_is_found_by_its_words() -> None:
    index = ToolIndex([{"name": "createPullRequest"}, {"name": "delete-branch"}, {"name": "other"}])
    assert index.search("create pull request", 5)[0] == "createPullRequest"
    assert index.search("delete branch", 5)[0] == "delete-branch"


def test_mod4_copies_of_one_tool_on_several_servers_give_way_to_different_tools() -> None:
    found = ToolIndex(_catalog()).search("read a file", 5)
    assert len({unprefixed(name) for name in found}) == 5, found


def test_mod4_naming_a_server_brings_its_copy_first() -> None:
    index = ToolIndex(_catalog())
    assert index.search("show the log of repo3", 5)[0] == "repo3__git_log"
    assert index.search("list the files in docs", 5)[0].startswith("docs__list_directory")


def test_mod4_a_deprecated_tool_gives_way_to_its_replacement() -> None:
    index = ToolIndex(
        [
            {"name": "fs__read_file", "description": "Read a file. DEPRECATED: use read_text_file instead."},
            {"name": "fs__read_text_file", "description": "Read a file as text."},
        ]
    )
    assert index.search("read a text", 5) == ["fs__read_text_file", "fs__read_file"]
    assert index.search("read", 5) == ["fs__read_text_file", "fs__read_file"]


def test_mod4_another_separator_still_tells_the_server_from_the_tool() -> None:
    tools = [{"name": f"{server}.read_file", "description": "Read a file."} for server in ("b", "a", "c")]
    tools.append({"name": "z.write_file", "description": "Write a file."})
    assert ToolIndex(tools, separator=".").search("file", 2) == ["a.read_file", "z.write_file"]
    # With the default `__`, the three are different tools: nothing tells they are copies.
    assert ToolIndex(tools).search("file", 2) == ["a.read_file", "b.read_file"]


@pytest.mark.parametrize("query", ["read_file", "readFile", "read file", "READ-FILE"])
def test_mod4_a_query_that_is_a_tools_name_finds_that_tool_first(query: str) -> None:
    """Models often ask by name: the very tool comes first, even a deprecated one among its look-alikes."""
    assert unprefixed(ToolIndex(_catalog()).search(query, 5)[0]) == "read_file"


def test_mod4_tools_described_in_other_scripts_are_found_by_their_words() -> None:
    index = ToolIndex(
        [
            {"name": "chitat", "description": "Прочитать файл"},
            {"name": "yomu", "description": "ファイル を 読む"},
            {"name": "read_file", "description": "Read a file"},
        ]
    )
    assert index.search("прочитать", 5) == ["chitat"]
    assert index.search("ファイル", 5) == ["yomu"]
    assert index.search("read", 5) == ["read_file"]
