"""The idempotent cache: an earlier result of the same call, given again without contacting the server (CALL-6)."""

from __future__ import annotations

import json
import sys
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from mcpyard.catalog import canonical_json

__all__ = ["MAX_CACHE_BYTES", "MAX_CACHE_ENTRIES", "IdempotentCache", "cache_key"]

MAX_CACHE_ENTRIES = 64
MAX_CACHE_BYTES = 16 * 1024 * 1024


def cache_key(server: str, tool: str, arguments: Mapping[str, Any], file_digests: Mapping[str, str]) -> str:
    """Same server, tool and arguments; a file parameter counts by the SHA-256 of its content, not its path."""
    shown = dict(arguments)
    for name, digest in file_digests.items():
        shown[name] = {"sha256": digest}
    return canonical_json([server, tool, shown])


@dataclass(frozen=True, slots=True)
class _Entry:
    server: str
    result: types.CallToolResult
    size: int


class IdempotentCache:
    """At most `max_entries` results and `max_bytes`, least recently used out first.

    `generation(server)` changes whenever that server's results are forgotten, so a
    caller holding a result across an await (an open approval card, APR-3) can tell.
    """

    def __init__(self, *, max_entries: int = MAX_CACHE_ENTRIES, max_bytes: int = MAX_CACHE_BYTES) -> None:
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._generations: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> types.CallToolResult | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry.result

    def put(self, key: str, server: str, result: types.CallToolResult) -> None:
        """Keep a successful result; one larger than the whole cache is not kept."""
        size = _size(result)
        if size > self._max_bytes:
            return
        self._drop(key)
        self._entries[key] = _Entry(server, result, size)
        self._bytes += size
        while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
            oldest = next(iter(self._entries))
            self._drop(oldest)

    def generation(self, server: str) -> int:
        return self._generations.get(server, 0)

    def forget_server(self, server: str) -> None:
        """A call that may change the server went to it, or its connection ended."""
        self._generations[server] = self.generation(server) + 1
        for key in [key for key, entry in self._entries.items() if entry.server == server]:
            self._drop(key)

    def clear(self) -> None:
        for server in {entry.server for entry in self._entries.values()}:
            self._generations[server] = self.generation(server) + 1
        self._entries.clear()
        self._bytes = 0

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry.size


def _size(result: types.CallToolResult) -> int:
    """About how much memory a result holds: its texts as they sit in memory, anything else as JSON."""
    size = 0
    for block in result.content:
        if type(block) is types.TextContent:
            size += sys.getsizeof(block.text)
        else:
            size += len(block.model_dump_json(by_alias=True, exclude_none=True))
    if result.structured_content is not None:
        size += len(json.dumps(result.structured_content, default=str))
    return size
