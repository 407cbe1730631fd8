"""Each server definition's last tool listing, kept in the data folder, so a tool's owner is known before it connects.

A listing is keyed by a digest of what makes the server the server it is (transport, command,
args, env, cwd, url): change any of them and the old listing no longer applies. It is only a
guide to which server to start and what to offer while it starts; a call always runs against
the live definition, whose hash must equal the one offered. A listing that holds a secret mcpyard sent
(a server saying its token back in a description) is not kept: it is dropped from the file instead
(kept redacted, its hashes would no longer be the server's).

A program that keeps listings itself (the organization service: in its database, for every
replica) gives `Host.open` its own `Listings`, such as `MemoryListings`, in place of the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from mcpyard._atomic import read_private, write_atomic
from mcpyard.config import ServerSpec
from mcpyard.errors import ConfigError

__all__ = ["LISTINGS_FILE", "ListingCache", "Listings", "MemoryListings", "listing_key"]

LISTINGS_FILE = "tool-listings.json"
MAX_SERVERS = 256
"""Listings kept; the least recently listed go first."""
MAX_BYTES = 16 * 1024 * 1024
"""The file's size at most: a larger one is not read (and is written anew)."""
_FORMAT = 1


def listing_key(spec: ServerSpec) -> str:
    """The digest a server's listing is kept under: its transport, command, args, env, cwd and url."""
    identity = {
        "transport": spec.transport,
        "command": spec.command,
        "args": list(spec.args),
        "env": sorted([name, value] for name, value in spec.env),
        "cwd": spec.cwd,
        "url": spec.url,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class Listings(Protocol):
    """Where a lazy host finds what a server it has not started listed last time, and keeps each new listing."""

    def get(self, spec: ServerSpec) -> Sequence[Mapping[str, Any]] | None:
        """The tools `spec` listed last time (each as the server sent it), or None when it never did."""
        ...

    def put(
        self, spec: ServerSpec, tools: Sequence[Mapping[str, Any]], *, holds_secret: Callable[[str], bool] | None = None
    ) -> None:
        """Keep what `spec` listed just now; a listing that `holds_secret` says holds a secret is not kept."""
        ...


class MemoryListings:
    """Listings by server id, in memory only: given by a program that keeps them elsewhere (`replace`, from the
    host's event loop: the host offers what changed at once), and kept as the host's servers list their tools (a
    listing kept so applies only to the definition that listed it, as in the file)."""

    def __init__(self, listings: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> None:
        self._listings: dict[str, tuple[Mapping[str, Any], ...]] = {}
        self._listed_by: dict[str, str] = {}
        """Server id → the `listing_key` of the definition whose listing `put` kept (none: `replace` gave it)."""
        self._lock = threading.Lock()
        """The host keeps a new listing from a worker thread (as it writes the file)."""
        self._watchers: list[Callable[[], None]] = []
        self.replace(listings or {})

    def watch(self, changed: Callable[[], None]) -> Callable[[], None]:
        """Call `changed()` after each `replace` that changed a listing; returns what stops it."""
        self._watchers.append(changed)
        return lambda: self._watchers.remove(changed)

    def get(self, spec: ServerSpec) -> Sequence[Mapping[str, Any]] | None:
        with self._lock:
            listed_by = self._listed_by.get(spec.id)
            if listed_by is not None and listed_by != listing_key(spec):
                return None  # listed by the server as it was defined before
            return self._listings.get(spec.id)

    def put(
        self, spec: ServerSpec, tools: Sequence[Mapping[str, Any]], *, holds_secret: Callable[[str], bool] | None = None
    ) -> None:
        secret = holds_secret is not None and holds_secret(json.dumps(list(tools), ensure_ascii=False))
        with self._lock:
            if secret:
                self._listings.pop(spec.id, None)
                self._listed_by.pop(spec.id, None)
            else:
                self._listings[spec.id] = tuple(tools)
                self._listed_by[spec.id] = listing_key(spec)

    def replace(self, listings: Mapping[str, Sequence[Mapping[str, Any]]]) -> bool:
        """Hold exactly these listings (server id → its tools); whether any server's listing changed."""
        fresh = {server: tuple(tools) for server, tools in listings.items()}
        with self._lock:
            changed, self._listings = fresh != self._listings, fresh
            self._listed_by.clear()
        if changed:
            for watcher in list(self._watchers):
                watcher()
        return changed


class ListingCache:
    """Tool listings by server definition, in one JSON file written whole (0600) or not at all.

    Reading fails closed: a missing, oversized, malformed file, a symbolic link, or one that
    others may write is as good as empty.
    """

    def __init__(self, path: Path) -> None:
        self._path = path

    def get(self, spec: ServerSpec) -> tuple[Mapping[str, Any], ...] | None:
        """The tools this definition listed last time, or None when it never did."""
        entry = self._read().get(listing_key(spec))
        if not isinstance(entry, dict) or not isinstance(tools := entry.get("tools"), list):
            return None
        return tuple(tool for tool in tools if isinstance(tool, dict) and isinstance(tool.get("name"), str))

    def put(
        self, spec: ServerSpec, tools: Sequence[Mapping[str, Any]], *, holds_secret: Callable[[str], bool] | None = None
    ) -> None:
        """Keep this definition's listing (a listing that did not change is not written again); one that
        `holds_secret` says holds a secret is dropped instead."""
        listings = self._read()
        key = listing_key(spec)
        known = listings.get(key)
        if holds_secret is not None and holds_secret(json.dumps(list(tools), ensure_ascii=False)):
            if known is None:
                return
            del listings[key]
        elif isinstance(known, dict) and known.get("tools") == list(tools):
            return
        else:
            listings[key] = {"server": spec.id, "listed_at": time.time(), "tools": list(tools)}
        if len(listings) > MAX_SERVERS:
            oldest = sorted(listings, key=lambda k: _listed_at(listings[k]))
            for stale in oldest[: len(listings) - MAX_SERVERS]:
                del listings[stale]
        data = json.dumps({"version": _FORMAT, "listings": listings}, ensure_ascii=False).encode()
        if len(data) > MAX_BYTES:
            return  # too much to keep: the next start lists again
        with contextlib.suppress(OSError):  # a cache: not being able to write it costs only a slower start
            write_atomic(self._path, data, mode=0o600)

    def _read(self) -> dict[str, Any]:
        try:
            data = read_private(self._path, max_bytes=MAX_BYTES)
        except ConfigError:  # a cache no one else may have written: without it, the next start lists again
            return {}
        if data is None:
            return {}
        try:
            document = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            return {}
        listings = document.get("listings") if isinstance(document, dict) else None
        if not isinstance(listings, dict) or document.get("version") != _FORMAT:
            return {}
        return listings


def _listed_at(entry: Any) -> float:
    value = entry.get("listed_at") if isinstance(entry, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0
