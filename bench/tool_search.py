"""Tool search (MOD-4): how fast `ToolIndex` builds and answers on a 1,000-tool catalog, and what it saves.

The catalog is `tests/catalog/tool_search/catalog.json` (305 real definitions listed from the
reference MCP servers, see its `make_catalog.py`), repeated under renamed servers (`fs1-2__read_file`)
up to `--tools` tools; the queries are that folder's `queries.json` (what users ask, in their words).
It measures the index's build time and each search's wall time (p50/p90 over every query, `--rounds`
times), prints recall@5 on the 305-tool and the larger catalog (a copy of a right tool on any server
counts), and the tokens (JSON length / 4, as MOD-4 estimates them) of every definition against the
one `find_tools` definition a model is offered instead (the host's own,
`mcpyard.pipeline.FIND_TOOLS_TOOL`; `read_result` and `always_offer` tools come on top).
Pure CPU: no server, no network.

Goal: search p50 <= 5 ms on 1,000 tools.

Run: `.venv/bin/python bench/tool_search.py [--tools 1000] [--rounds 20]`
"""

from __future__ import annotations

import argparse
import json
import time
from fnmatch import fnmatchcase
from typing import Any

from _common import BENCH, median, percentile, print_table
from mcpyard.catalog import ToolIndex
from mcpyard.pipeline import FIND_TOOLS_TOOL

GOAL_MS = 5.0
DATA = BENCH.parent / "tests" / "catalog" / "tool_search"
K = 5


def load() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The measuring catalog (as servers list tools: name, title, description, inputSchema) and the queries."""
    tools = json.loads((DATA / "catalog.json").read_text())
    catalog = [{key: value for key, value in tool.items() if key != "server"} for tool in tools]
    queries = json.loads((DATA / "queries.json").read_text())["queries"]
    return catalog, queries


def grown(catalog: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """`catalog` repeated under renamed servers (`fs1` → `fs1-2`) until it holds `size` tools."""
    tools = []
    for n in range(size):
        tool = catalog[n % len(catalog)]
        copy = n // len(catalog)
        server, _, own = tool["name"].partition("__")
        tools.append({**tool, "name": f"{server}-{copy}__{own}" if copy else tool["name"]})
    return tools


def recall(index: ToolIndex, queries: list[dict[str, Any]], k: int = K) -> float:
    """The share of queries with any copy of an expected tool in the top `k`."""
    hits = 0
    for query in queries:
        found = [name.split("__", 1)[-1] for name in index.search(query["query"], k)]
        hits += any(fnmatchcase(name, pattern) for name in found for pattern in query["expected"])
    return hits / len(queries)


def tokens(value: Any) -> int:
    """MOD-4's estimate: 4 characters of JSON a token."""
    return len(json.dumps(value, ensure_ascii=False)) // 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=1000, help="tools in the large catalog")
    parser.add_argument("--rounds", type=int, default=20, help="times every query is searched (and the index built)")
    args = parser.parse_args()
    catalog, queries = load()
    large = grown(catalog, args.tools)
    rows = []
    for tools in (catalog, large):
        builds = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            index = ToolIndex(tools)
            builds.append(time.perf_counter() - started)
        searches = []
        for _ in range(args.rounds):
            for query in queries:
                started = time.perf_counter()
                index.search(query["query"], K)
                searches.append(time.perf_counter() - started)
        rows.append(
            [
                f"{len(tools)} tools",
                f"{median(builds) * 1e3:.1f}",
                f"{percentile(searches, 50) * 1e3:.3f}",
                f"{percentile(searches, 90) * 1e3:.3f}",
                f"{percentile(searches, 99) * 1e3:.3f}",
                f"{recall(index, queries, 1):.3f}",
                f"{recall(index, queries):.3f}",
            ]
        )
    print(f"{len(queries)} queries (tuned and held out) x {args.rounds} rounds; times in ms\n")
    print_table(["catalog", "build p50", "search p50", "search p90", "search p99", "recall@1", f"recall@{K}"], rows)
    p50 = float(rows[-1][2])
    verdict = "met" if p50 <= GOAL_MS else "MISSED"
    print(f"\nsearch p50 on {len(large)} tools: {p50:.3f} ms (goal <= {GOAL_MS} ms): {verdict}")
    before, after = tokens(catalog), tokens([FIND_TOOLS_TOOL])
    print(
        f"tokens offered for {len(catalog)} tools: {before:,} with every definition, {after:,} with find_tools alone "
        f"({before / after:.0f}x fewer); found tools are added as the conversation calls for them"
    )


if __name__ == "__main__":
    main()
