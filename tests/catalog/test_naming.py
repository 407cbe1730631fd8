"""CAT-1: model-facing tool names."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpyard.catalog import MAX_NAME_LENGTH, Named, assign_names, name_tools, sanitize_name, server_prefix, tool_name


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("plain", "plain"),
        ("with-dash_and_underscore09", "with-dash_and_underscore09"),
        ("get.weather/v2", "get_weather_v2"),
        ("naïve tool", "na_ve_tool"),
        ("emoji🙂", "emoji_"),
        ("", ""),
    ],
)
def test_cat1_every_character_but_letters_digits_underscore_and_dash_becomes_underscore(
    raw: str, expected: str
) -> None:
    assert sanitize_name(raw) == expected


@pytest.mark.parametrize(
    ("name", "server_id", "position", "expected"),
    [
        ("docs", "documentation", 0, "docs"),
        (None, "files", 3, "files"),
        ("", "files", 3, "files"),
        (None, None, 2, "mcp2"),
        ("my server", "x", 0, "my_server"),
    ],
)
def test_cat1_prefix_is_name_else_id_else_position(
    name: str | None, server_id: str | None, position: int, expected: str
) -> None:
    assert server_prefix(name, server_id, position) == expected


@pytest.mark.parametrize(("separator", "expected"), [("__", "notes__read"), ("_", "notes_read")])
def test_cat1_prefix_and_tool_are_joined_by_the_separator(separator: str, expected: str) -> None:
    assert tool_name("notes", separator, "read") == expected


def test_cat1_long_names_are_cut_to_64_with_a_hash_of_the_full_name() -> None:
    tool = "t" * 80
    name = tool_name("server", "__", tool)
    digest = hashlib.sha256(f"server__{tool}".encode()).hexdigest()[:6]
    assert len(name) == MAX_NAME_LENGTH
    assert name.endswith("-" + digest)
    assert name.startswith("server__ttt")


def test_cat1_cut_names_stay_unique_and_stable() -> None:
    first = tool_name("s", "__", "x" * 70 + "a")
    second = tool_name("s", "__", "x" * 70 + "b")
    assert first != second
    assert first == tool_name("s", "__", "x" * 70 + "a")


def test_cat1_names_colliding_after_sanitizing_both_get_hash_suffixes() -> None:
    names = assign_names("srv", "__", ["a.b", "a/b", "c"])
    assert names[2] == "srv__c"
    assert names[0] != names[1]
    assert all(re.fullmatch(r"srv__a_b-[0-9a-f]{6}", n) for n in names[:2])


def test_cat1_renaming_a_server_renames_its_tools() -> None:
    assert assign_names("old", "__", ["t"]) != assign_names("new", "__", ["t"])


@given(st.lists(st.text(max_size=120), min_size=1, max_size=8, unique=True), st.text(max_size=40))
def test_cat1_names_are_always_valid_unique_and_at_most_64(tools: list[str], prefix: str) -> None:
    names = assign_names(sanitize_name(prefix) or "mcp0", "__", tools)
    assert len(set(names)) == len(names)
    for name in names:
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name)


def test_cat1_names_colliding_across_servers_never_replace_each_other() -> None:
    from mcpyard.catalog import ServerTools, build_catalog

    catalog = build_catalog(
        [
            ServerTools("a", "a", ({"name": "b__c", "inputSchema": {"type": "object"}},)),
            ServerTools("a__b", "a__b", ({"name": "c", "inputSchema": {"type": "object"}},)),
        ],
        "__",
    )
    assert len(catalog) == 2
    assert {entry.server for entry in catalog.entries.values()} == {"a", "a__b"}
    assert all(re.fullmatch(r"a__b__c-[0-9a-f]{6}", name) for name in catalog.entries)


def _names(tools: list[tuple[str, str, str]], held: dict[str, tuple[str, str]] | None = None) -> list[Named]:
    return name_tools(tools, "__", held=held)


def test_cat1_a_tool_keeps_its_name_when_another_server_later_lists_the_same_name() -> None:
    held = {"a__b__c": ("a", "b__c")}
    holder, newcomer = _names([("a", "a", "b__c"), ("a__b", "a__b", "c")], held)
    assert holder == Named("a__b__c", "a__b__c", contested=True)
    assert re.fullmatch(r"a__b__c-[0-9a-f]{6}", newcomer.name)
    assert newcomer.base == "a__b__c"
    assert newcomer.contested
    # The listing order changes nothing.
    newcomer_first, holder_second = _names([("a__b", "a__b", "c"), ("a", "a", "b__c")], held)
    assert (newcomer_first.name, holder_second.name) == (newcomer.name, "a__b__c")


def test_cat1_a_name_is_not_handed_to_another_tool_while_its_own_is_away() -> None:
    [alone] = _names([("a__b", "a__b", "c")], {"a__b__c": ("a", "b__c")})
    assert alone.name != "a__b__c"
    assert alone.contested


def test_cat1_tools_arriving_together_with_no_holder_are_all_suffixed_and_contested() -> None:
    first, second = _names([("a", "a", "b__c"), ("a__b", "a__b", "c")])
    assert first.name != second.name
    assert first.contested
    assert second.contested
    assert all(name.startswith("a__b__c-") for name in (first.name, second.name))


def test_cat1_a_server_tool_never_takes_the_name_of_mcpyards_own_tool() -> None:
    [tool] = name_tools([("read", "read", "result")], "_")
    assert tool.base == "read_result"
    assert tool.name != "read_result"
    assert tool.contested


def test_cat1_a_suffixed_name_never_lands_on_another_tools_name() -> None:
    plain = _names([("s", "s", "x.y"), ("s", "s", "x/y")])
    taken = plain[0].name  # a hostile server lists a tool named exactly like that suffixed name
    named = _names([("s", "s", "x.y"), ("s", "s", "x/y"), ("s", "s", taken.removeprefix("s__"))])
    assert len({entry.name for entry in named}) == 3
