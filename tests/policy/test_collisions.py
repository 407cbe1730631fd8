"""POL-4, CAT-1: a tool whose name another server's tool also wants keeps its deny rule, and neither gets an allow.

Real fixture servers through `Host`: server `a` lists `b__c` (model-facing `a__b__c`), server
`a__b` lists `c`, which wants the same name.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import Home, fixture_server

pytestmark = pytest.mark.anyio

DENIED = "a__b__c"
HOLDER: dict[str, Any] = fixture_server("named", "b__c")
NEWCOMER: dict[str, Any] = fixture_server("named", "c")


async def test_pol4_cat1_a_deny_rule_holds_for_both_tools_when_they_arrive_together(home: Home) -> None:
    config = home.write_config({"a": HOLDER, "a__b": NEWCOMER}, mode="auto", permissions={"deny": [DENIED]})
    async with home.open(config) as host:
        names = {tool.name: tool.server for tool in host.tools() if tool.server in ("a", "a__b")}
        assert set(names.values()) == {"a", "a__b"}, "neither tool replaced the other"
        # Whichever connected first may keep the name; the other is suffixed, never dropped.
        assert all(re.fullmatch(r"a__b__c(-[0-9a-f]{6})?", name) for name in names), names
        for name in names:
            result = await host.call(name, {})
            assert not result.ok
            assert result.error is not None
            assert result.error["code"] == "denied", result.error
            assert DENIED in result.error["message"]
        assert any("deny rules for a__b__c hold for it too" in w for w in host.status().warnings)


async def test_pol4_cat1_a_server_added_later_never_takes_the_name_nor_lifts_the_deny(home: Home) -> None:
    config = home.write_config({"a": HOLDER}, mode="auto", permissions={"deny": [DENIED]})
    async with home.open(config) as host:
        assert [tool.name for tool in host.tools() if tool.server == "a"] == [DENIED]
        home.write_config({"a": HOLDER, "a__b": NEWCOMER}, mode="auto", permissions={"deny": [DENIED]})
        await host.reload()
        by_server = {tool.server: tool.name for tool in host.tools() if tool.server in ("a", "a__b")}
        assert by_server["a"] == DENIED, "the tool that had the name keeps it"
        assert re.fullmatch(r"a__b__c-[0-9a-f]{6}", by_server["a__b"])
        for name in by_server.values():
            result = await host.call(name, {})
            assert result.error is not None
            assert result.error["code"] == "denied", (name, result.error)


async def test_pol4_cat1_an_allow_rule_written_for_one_name_covers_neither_colliding_tool(home: Home) -> None:
    config = home.write_config({"a": HOLDER}, permissions={"allow": [DENIED, f"{DENIED}-*"]})
    async with home.open(config) as host:
        allowed = await host.call(DENIED, {})
        assert allowed.ok, "alone, the allow rule runs the tool without a card"
        home.write_config({"a": HOLDER, "a__b": NEWCOMER}, permissions={"allow": [DENIED, f"{DENIED}-*"]})
        await host.reload()
        for tool in host.tools():
            if tool.server in ("a", "a__b"):
                result = await host.call(tool.name, {})
                assert result.error is not None
                assert result.error["code"] == "approval_required", (tool.name, result.error)


async def test_pol6_cat1_a_hook_written_for_a_name_sees_both_tools_and_its_allow_covers_neither(home: Home) -> None:
    deny = {"pre_call": [{"match": DENIED, "command": "echo deny"}]}
    config = home.write_config({"a": HOLDER}, mode="auto", hooks=deny)
    async with home.open(config) as host:
        home.write_config({"a": HOLDER, "a__b": NEWCOMER}, mode="auto", hooks=deny)
        await host.reload()
        for tool in host.tools():
            if tool.server in ("a", "a__b"):
                result = await host.call(tool.name, {})
                assert result.error is not None
                assert "pre_call hook denied" in result.error["message"], (tool.name, result.error)
    allow = {"pre_call": [{"match": DENIED, "command": "echo allow"}]}
    home.write_config({"a": HOLDER, "a__b": NEWCOMER}, hooks=allow)
    async with home.open(config) as host:
        for tool in host.tools():
            if tool.server in ("a", "a__b"):
                result = await host.call(tool.name, {})
                assert result.error is not None
                assert result.error["code"] == "approval_required", (tool.name, result.error)
