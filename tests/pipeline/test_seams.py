"""The pipeline's seams: another policy source, an approver that answers later, and a record of every call.

(CALL-1, CALL-6, POL-5, APR-1, APR-2, FILE-3, SEC-3, API-1)
"""

from __future__ import annotations

import json
import os
import signal
from typing import Any

import anyio
import pytest

from mcpyard import Host
from mcpyard.connect import ConfiguredConnections
from mcpyard.pipeline import STAGES, CallRecord, CallResult
from mcpyard.policy import InboxApprover, MemoryPolicies, ScriptedApprover
from tests.conftest import Home, body, fixture_server

pytestmark = pytest.mark.anyio


def definition_hash(host: Host, name: str) -> str:
    entry = host.catalog.get(name)
    assert entry is not None, name
    return entry.definition_hash


class ListRecorder:
    """A recorder of the test's own, as the organization service's would be: it keeps what it is handed."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []

    async def record(self, record: CallRecord) -> None:
        self.records.append(record)


def test_call1_the_stages_run_in_the_order_the_spec_lists() -> None:
    names = [stage.__name__ for stage in STAGES]
    assert names == [
        "check_sendable",
        "resolve",
        "validate",
        "decide_call",
        "read_files",
        "look_up_cache",
        "ask",
        "recheck",
        "dispatch",
        "shape",
    ]


async def test_pol5_another_policy_source_drives_the_same_pipeline_and_changes_apply_to_the_next_call(
    home: Home,
) -> None:
    policies = MemoryPolicies()
    approver = ScriptedApprover(answers=["once"])
    config = home.write_config({"b": fixture_server("basic")})
    async with home.open(config, policies=policies, approver=approver) as host:
        echo = definition_hash(host, "b__echo")
        assert (await host.call("b__echo", {"text": "free"})).ok, "never reviewed: the local rules decide"

        policies.set("b", "echo", "off", echo)
        refused = await host.call("b__echo", {"text": "x"})
        assert refused.error is not None
        assert refused.error["code"] == "off"
        assert "b__echo" not in {tool.name for tool in host.tools()}, "an `off` tool is not offered"

        policies.set("b", "echo", "ask_first", echo)
        asked = await host.call("b__echo", {"text": "asked"})
        assert asked.ok, asked.error
        assert [card.tool for card in approver.cards] == ["b__echo"]
        assert "ask_first" in approver.cards[0].reason

        bump = definition_hash(host, "b__bump")
        policies.set("b", "bump", "run_freely", bump)
        assert (await host.call("b__bump", {})).ok, "run_freely runs a tool that would ask, without a card"
        assert len(approver.cards) == 1

        policies.set("b", "echo", "run_freely", "0" * 64)  # reviewed at another definition
        changed = await host.call("b__echo", {"text": "x"})
        assert changed.error is not None
        assert changed.error["code"] == "tool_changed"
        assert "b__echo" not in {tool.name for tool in host.tools()}, "a changed tool's new text is held back"

        policies.set("b", "vanished", "run_freely", "1" * 64)
        await host.reload()  # the view is published again: the reviewed tool the server no longer lists shows
        removed = await host.call("b__vanished", {})
        assert removed.error is not None
        assert removed.error["code"] == "removed"
        states = {tool.name: tool.policy for tool in host.status().servers[0].tools}
        assert states["b__vanished"] == "removed"
        assert states["b__bump"] == "run_freely"


async def test_apr1_an_approver_that_answers_later_parks_the_call_until_it_does(home: Home) -> None:
    inbox = InboxApprover()
    config = home.write_config({"b": fixture_server("basic")})
    async with home.open(config, approver=inbox) as host:
        results: dict[str, CallResult] = {}

        async def call(key: str) -> None:
            results[key] = await host.call("b__bump", {})

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "first")
                (parked,) = await inbox.waiting(1)
                assert parked.card.tool == "b__bump"
                tg.start_soon(call, "second")
                _, second = await inbox.waiting(2)
                assert results == {}, "parked calls wait; nothing was sent"
                count = await host.call("b__call_count", {})
                assert body(count) == "0", "the server has not been called while both cards wait"
                inbox.answer(second, "deny")  # answered out of order
                inbox.answer(parked, "once")
        assert results["first"].ok, results["first"].error
        assert results["second"].error is not None
        assert results["second"].error["code"] == "denied"
        assert body(await host.call("b__call_count", {})) == "1", "the approved call ran exactly once"
        answers = [(r.tool, r.answer, r.status) for r in host.history() if r.tool == "b__bump"]
        assert sorted(answers, key=str) == sorted([("b__bump", "deny", "refused"), ("b__bump", "once", "ran")], key=str)


async def test_call1_every_call_leaves_a_record_ran_refused_failed_cached(home: Home) -> None:
    recorder = ListRecorder()
    secret = "s3cr3t-value-that-is-long"
    config = home.write_config({"b": {**fixture_server("basic"), "env": {"API_TOKEN": secret}}})
    async with home.open(config, recorder=recorder, approver=ScriptedApprover.always("once")) as host:
        assert (await host.call("b__echo", {"text": f"key {secret} here"})).ok
        assert not (await host.call("b__nope", {})).ok
        assert not (await host.call("b__fail", {})).ok
        assert (await host.call("b__add", {"a": 1, "b": 2})).ok
        cached = await host.call("b__add", {"a": 1, "b": 2})
        assert cached.cached
        assert not (await host.call("b__add", {"a": "one"})).ok
        history = host.history()
    assert history == recorder.records, "the session keeps what the seam is handed"
    by_status = [(record.tool, record.status, record.error_code) for record in history]
    assert by_status == [
        ("b__echo", "ran", None),
        ("b__nope", "refused", "unknown_tool"),
        ("b__fail", "failed", "tool_error"),
        ("b__add", "ran", None),
        ("b__add", "cached", None),
        ("b__add", "refused", "invalid_arguments"),
    ]
    echo = history[0]
    assert echo.server == "b"
    assert echo.server_tool == "echo"
    assert echo.decision == "ask"
    assert echo.why == "the call sends a secret value; such calls always ask"
    assert echo.answer == "once"
    assert secret not in json.dumps(echo.to_json()), "arguments and summary are redacted (SEC-3)"
    assert echo.arguments == {"text": "key ${env:API_TOKEN} here"}
    assert echo.summary == "key ${env:API_TOKEN} here"
    assert echo.duration_ms > 0
    assert echo.result_bytes > len(echo.summary)
    assert history[1].server is None
    assert "unknown tool" in history[1].why
    assert history[2].summary


async def test_call1_a_calls_tags_reach_its_record_as_given_and_only_its_own(home: Home) -> None:
    """The caller's labels (its own id for the call, the turn it belongs to) go with the call to its record."""
    recorder = ListRecorder()
    config = home.write_config({"b": fixture_server("basic")})
    tags = {"call_id": "c-1", "turn_id": "t-1"}
    async with home.open(config, recorder=recorder) as host:
        assert (await host.call("b__add", {"a": 1, "b": 2}, tags=tags)).ok
        tags["call_id"] = "changed afterwards"
        assert (await host.call("b__add", {"a": 2, "b": 2})).ok
        refused = await host.call("b__add", {"a": 3, "b": 2}, tags={"call_id": 7})  # type: ignore[dict-item]
    assert refused.error is not None
    assert refused.error["code"] == "invalid_arguments"
    assert "tags" in refused.error["message"]
    tagged, plain = recorder.records
    assert tagged.tags == {"call_id": "c-1", "turn_id": "t-1"}, "copied when the call began"
    assert tagged.to_json()["tags"] == {"call_id": "c-1", "turn_id": "t-1"}
    assert plain.tags == {}
    assert "tags" not in plain.to_json()


async def test_file3_a_record_names_files_by_path_size_and_digest_never_bytes(home: Home) -> None:
    (home.workspace / "notes.txt").write_text("the file's content\n")
    approver = ScriptedApprover(answers=["once"])
    config = home.write_config({"b": fixture_server("basic")})
    async with home.open(config, approver=approver) as host:
        result = await host.call("b__file_digest", {"data": "notes.txt"})
        assert result.ok, result.error
        (record,) = host.history()
    assert record.arguments == {"data": "notes.txt"}
    (sent,) = record.files
    assert (sent.path, sent.size) == ("notes.txt", len("the file's content\n"))
    assert len(sent.sha256) == 64
    assert record.decision == "ask"
    assert record.answer == "once"
    assert "the file's content" not in json.dumps(record.to_json())


async def test_apr2_the_recheck_after_a_card_reads_the_view_published_last(home: Home) -> None:
    policies = MemoryPolicies()
    seen: list[Any] = []

    async def approver(card: Any) -> Any:
        # While the card is open, the tool is switched off: the call must not run.
        policies.set("b", "bump", "off", definition_hash(host, "b__bump"))
        seen.append(card)
        return "once"

    config = home.write_config({"b": fixture_server("basic")})
    async with home.open(config, policies=policies, approver=approver) as host:
        result = await host.call("b__bump", {})
        assert result.error is not None
        assert result.error["code"] == "denied"
        assert "no longer allowed" in result.error["message"]
        assert body(await host.call("b__call_count", {})) == "0"
    assert len(seen) == 1


async def test_api1_a_view_is_immutable_and_a_change_publishes_a_new_one(home: Home) -> None:
    config = home.write_config({"b": fixture_server("basic")})
    async with home.open(config, connections=ConfiguredConnections()) as host:  # its process id is shown
        before = host.view
        snapshot = host.server("b")
        assert snapshot is not None
        assert snapshot.pid is not None
        os.kill(snapshot.pid, signal.SIGTERM)
        with anyio.fail_after(10):
            await host.wait_until(lambda h: h.view is not before and not h.catalog.entries)
        assert before.servers["b"].connected, "an earlier view is never changed"
        assert before.catalog.get("b__echo") is not None
        assert host.view.newest() is host.view
        assert before.newest() is host.view, "every view knows the one published last"
        stopped = host.server("b")
        assert stopped is not None
        assert str(stopped.state) == "stopped"
