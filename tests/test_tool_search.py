"""MOD-4: past its budget a host offers `find_tools` in place of every tool; a tool found stays offered in that
conversation, one not found yet still runs; `always_offer` keeps a server's tools in the list; the settings are
checked like every other; `mcpyard chat` shows the search as an event and the model calls what it found.

Real fixture servers (in memory for the host, as a process for the console) and our HTTP model endpoint.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpyard.errors import ConfigError
from tests._cli import run_mcpyard
from tests.conftest import Home, fixture_server
from tests.model.openai_fixture import serve_model

pytestmark = pytest.mark.anyio


def names(tools: list[dict[str, Any]]) -> list[str]:
    return [tool["name"] for tool in tools]


async def test_mod4_under_the_budget_every_tool_is_offered_and_past_it_find_tools(home: Home) -> None:
    servers = {"t": fixture_server("turns"), "b": fixture_server("basic")}
    small = home.write_config(servers, mode="auto")
    async with home.open(small) as host:
        offered = names(host.tools_for_model())
        assert "find_tools" not in offered
        assert not host.tool_search_on()
        every = len(offered)
    searched = home.write_config(servers, mode="auto", tool_search={"max_tools": 3})
    async with home.open(searched) as host:
        assert host.tool_search_on()
        assert names(host.tools_for_model()) == ["find_tools", "read_result"]
        found = await host.call("find_tools", {"query": "weather in a city", "limit": 2})
        assert found.ok, found.error
        assert found.structured["found"][0] == "t__lookup"
        assert '"name": "t__lookup"' in found.text, "the found tools' whole definitions come back"
        offered = names(host.tools_for_model())
        assert offered == ["find_tools", "t__lookup", "read_result"]
        assert len(offered) < every
        assert "t__lookup" not in names(host.tools_for_model(conversation="another")), "found in its conversation"
        ran = await host.call("b__add", {"a": 2, "b": 3})  # never found: it runs all the same
        assert ran.ok
        openai = host.tools_for_model("openai")
        assert openai[0]["function"]["name"] == "find_tools"
        assert openai.catalog_name("b__add") == "b__add", "every tool keeps its way back"


async def test_mod4_always_offer_keeps_a_servers_tools_in_the_list(home: Home) -> None:
    servers = {"t": {**fixture_server("turns"), "always_offer": ["note", "look*"]}, "b": fixture_server("basic")}
    config = home.write_config(servers, mode="auto", tool_search={"mode": "always"})
    async with home.open(config) as host:
        assert set(names(host.tools_for_model())) == {"find_tools", "read_result", "t__note", "t__lookup"}


async def test_mod4_find_tools_refuses_bad_arguments_and_never_names_a_tool_turned_off(home: Home) -> None:
    config = home.write_config(
        {"t": fixture_server("turns")}, mode="auto", tool_search={"mode": "always"}, permissions={"deny": ["t__lookup"]}
    )
    async with home.open(config) as host:
        for arguments in ({}, {"query": ""}, {"query": "x", "limit": 0}, {"query": "x", "limit": 21}, {"query": 3}):
            refused = await host.call("find_tools", arguments)
            assert refused.error is not None
            assert refused.error["code"] == "invalid_arguments", arguments
        nothing = await host.call("find_tools", {"query": "the the the"})
        assert nothing.ok
        assert nothing.structured == {"found": []}
        long = await host.call("find_tools", {"query": "weather " * 20_000})
        assert long.ok


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ({"mode": "sometimes"}, "tool_search.mode"),
        ({"max_tools": 0}, "tool_search.max_tools"),
        ({"max_tokens": "many"}, "tool_search.max_tokens"),
        ({"max_tool": 3}, "tool_search.max_tool"),
        ("on", "tool_search"),
    ],
)
async def test_mod4_bad_tool_search_settings_name_the_setting(home: Home, table: Any, named: str) -> None:
    config = home.write_config({"t": fixture_server("turns")}, tool_search=table)
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        async with home.open(config):
            pass


def test_mod4_chat_finds_a_tool_and_calls_it(home: Home) -> None:
    config: Path = home.write_config(
        {"t": fixture_server("turns"), "b": fixture_server("basic")}, tool_search={"mode": "always"}
    )
    with serve_model() as endpoint:
        endpoint.replies += [
            {"text": "", "tool_calls": [{"name": "find_tools", "arguments": {"query": "weather for a city"}}]},
            {"text": "", "tool_calls": [{"name": "t__lookup", "arguments": {"city": "Oslo"}}]},
            {"text": "Sunny in Oslo."},
        ]
        model = ["--base-url", endpoint.base_url, "--model", "fixture-model"]
        done = run_mcpyard(home, "chat", "--mcp-config", str(config), *model, "--json", stdin="Weather in Oslo?\n")
        requests = endpoint.requests
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    [search] = [event for event in events if event["type"] == "tool_search"]
    assert search["query"] == "weather for a city"
    assert search["found"][0] == "t__lookup"
    results = [event for event in events if event["type"] == "tool_result"]
    assert [(r["name"], r["ok"]) for r in results] == [("find_tools", True), ("t__lookup", True)]
    offered = [[tool["function"]["name"] for tool in request["tools"]] for request in requests]
    assert "t__lookup" not in offered[0], "first only find_tools (and read_result)"
    assert "t__lookup" in offered[1], "what was found is offered from then on"


async def test_mod4_the_same_catalog_lists_in_the_same_order_every_time(home: Home) -> None:
    """A provider's prompt cache hits only on the same bytes: two hosts on one configuration, and one host asked
    twice, list the same tools in the same order."""
    servers = {"t": fixture_server("turns"), "b": fixture_server("basic"), "e": fixture_server("echo_secrets")}
    config = home.write_config(servers, mode="auto")
    listings = []
    for _ in range(2):
        async with home.open(config) as host:
            listings.append(host.tools_for_model("openai"))
            listings.append(host.tools_for_model("openai"))
    assert all(listing == listings[0] for listing in listings)
    assert len(listings[0]) > 10
