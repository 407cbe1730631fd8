"""The listings kept per server definition: keyed by what makes the server itself, written whole and privately,
read fail-closed (CONN-3, CAT-2, ERR-1)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from mcpyard import MemoryListings
from mcpyard._listings import MAX_SERVERS, ListingCache, listing_key
from mcpyard.config import ServerSpec
from mcpyard.secrets import Redactor
from tests.config._support import Setup

TOOLS = ({"name": "ping", "inputSchema": {"type": "object"}},)


@pytest.fixture
def spec(tmp_path: Path) -> ServerSpec:
    loaded, _ = Setup(root=tmp_path).load_one({"command": "srv", "args": ["--x"], "env": {"A": "1"}})
    return loaded


@pytest.mark.parametrize(
    "change",
    [
        {"command": "other"},
        {"args": ("--y",)},
        {"env": (("A", "2"),)},
        {"env": (("B", "1"),)},
        {"cwd": "/elsewhere"},
        {"transport": "streamable_http", "url": "https://example.test/mcp"},
    ],
)
def test_cat2_any_change_to_what_runs_makes_another_key(spec: ServerSpec, change: dict[str, object]) -> None:
    assert listing_key(dataclasses.replace(spec, **change)) != listing_key(spec)  # type: ignore[arg-type]  # fields of the spec, by name


def test_cat2_the_name_and_timeouts_do_not_change_the_key(spec: ServerSpec) -> None:
    assert listing_key(dataclasses.replace(spec, name="renamed", call_timeout_secs=5)) == listing_key(spec)


def test_conn3_a_listing_comes_back_as_it_was_kept_in_a_private_file(tmp_path: Path, spec: ServerSpec) -> None:
    cache = ListingCache(tmp_path / "listings.json")
    assert cache.get(spec) is None
    cache.put(spec, TOOLS)
    assert cache.get(spec) == TOOLS
    assert (tmp_path / "listings.json").stat().st_mode & 0o777 == 0o600
    assert ListingCache(tmp_path / "listings.json").get(dataclasses.replace(spec, command="other")) is None


def test_conn3_at_most_so_many_listings_are_kept_the_oldest_going_first(tmp_path: Path, spec: ServerSpec) -> None:
    cache = ListingCache(tmp_path / "listings.json")
    specs = [dataclasses.replace(spec, args=(str(index),)) for index in range(MAX_SERVERS + 3)]
    for each in specs:
        cache.put(each, TOOLS)
    assert cache.get(specs[0]) is None
    assert cache.get(specs[-1]) == TOOLS
    assert len(json.loads((tmp_path / "listings.json").read_text())["listings"]) == MAX_SERVERS


@pytest.mark.parametrize(
    "content",
    [b"not json", b"[1, 2]", b'{"version": 99, "listings": {}}', b"[" * 100_000, b'{"version": 1, "listings": []}'],
)
def test_err1_a_malformed_file_is_as_good_as_empty(tmp_path: Path, spec: ServerSpec, content: bytes) -> None:
    path = tmp_path / "listings.json"
    path.write_bytes(content)
    path.chmod(0o600)
    assert ListingCache(path).get(spec) is None
    ListingCache(path).put(spec, TOOLS)
    assert ListingCache(path).get(spec) == TOOLS, "and it is written anew, whole"


def test_err1_a_file_others_may_write_or_a_link_is_not_read(tmp_path: Path, spec: ServerSpec) -> None:
    path = tmp_path / "listings.json"
    ListingCache(path).put(spec, TOOLS)
    path.chmod(0o666)
    assert ListingCache(path).get(spec) is None
    path.chmod(0o600)
    link = tmp_path / "link.json"
    os.symlink(path, link)
    assert ListingCache(link).get(spec) is None


@pytest.mark.parametrize("spelling", ["tok-3b9e1c7a5d", "xxtok-3b9e1c7a5dyy", "dG9rLTNiOWUxYzdhNWQ="])
def test_sec3_a_listing_holding_a_secret_is_not_kept_and_drops_the_one_kept_before(
    tmp_path: Path, spec: ServerSpec, spelling: str
) -> None:
    """What is stored is what may be shown: a server saying a secret back in its definitions is listed again next
    start rather than kept in a file (kept redacted, its hashes would no longer be the server's)."""
    redactor = Redactor([("token", "tok-3b9e1c7a5d")])
    cache = ListingCache(tmp_path / "listings.json")
    cache.put(spec, TOOLS, holds_secret=redactor.contains)
    assert cache.get(spec) == TOOLS, "a listing holding no secret is kept"
    leaky = ({"name": "ping", "description": f"key {spelling}", "inputSchema": {"type": "object"}},)
    cache.put(spec, leaky, holds_secret=redactor.contains)
    assert cache.get(spec) is None
    assert b"3b9e1c7a5d" not in (tmp_path / "listings.json").read_bytes()


@pytest.mark.parametrize("spelling", ["tok-3b9e1c7a5d", "dG9rLTNiOWUxYzdhNWQ="])
def test_sec3_listings_kept_in_memory_drop_one_holding_a_secret_as_the_file_does(
    spec: ServerSpec, spelling: str
) -> None:
    redactor = Redactor([("token", "tok-3b9e1c7a5d")])
    listings = MemoryListings({spec.id: TOOLS})
    assert listings.get(spec) == TOOLS, "given by the program"
    leaky = ({"name": "ping", "description": f"key {spelling}", "inputSchema": {"type": "object"}},)
    listings.put(spec, leaky, holds_secret=redactor.contains)
    assert listings.get(spec) is None
    listings.put(spec, TOOLS, holds_secret=redactor.contains)
    assert listings.get(spec) == TOOLS
    assert not listings.replace({spec.id: TOOLS}), "the same listings: nothing changed"
    assert listings.replace({}), "a server's listing gone is a change"
    assert listings.get(spec) is None


def test_cat2_a_listing_kept_in_memory_applies_only_to_the_definition_that_listed_it(spec: ServerSpec) -> None:
    """As in the file: change what runs and the listing kept no longer applies; one a program gives applies as given."""
    listings = MemoryListings()
    listings.put(spec, TOOLS)
    assert listings.get(spec) == TOOLS
    assert listings.get(dataclasses.replace(spec, command="other")) is None
    listings.replace({spec.id: TOOLS})
    assert listings.get(dataclasses.replace(spec, command="other")) == TOOLS, "the program's listing is the server's"
