"""POL-5 (with POL-2, POL-4): per-tool policies bound to the reviewed definition hash, locally through `mcpyard pin`."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from mcpyard.config import Mode
from mcpyard.policy import CallFacts, Pin, PinPolicies, PinPolicy, PinStore, Rules, decide

MODES: tuple[Mode, ...] = ("read-only", "plan", "ask", "auto")


@pytest.mark.parametrize(
    ("pin", "read_only", "mode", "expected"),
    [
        ("run_freely", False, "ask", "run"),
        ("run_freely", True, "ask", "run"),
        ("ask_first", True, "ask", "ask"),
        ("ask_first", False, "ask", "ask"),
        ("ask_first", False, "auto", "run"),
        ("off", True, "ask", "refuse"),
        ("off", True, "auto", "refuse"),
        ("run_freely", False, "read-only", "refuse"),
        ("run_freely", True, "plan", "run"),
        ("ask_first", True, "read-only", "ask"),
    ],
)
def test_pol5_a_pinned_tool_follows_its_reviewed_policy(
    pin: PinPolicy, read_only: bool, mode: Mode, expected: str
) -> None:
    facts = CallFacts(name="s__t", read_only=read_only, policy=pin)
    assert decide(facts, mode, Rules(), ()).verdict == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pin", ["run_freely", "ask_first", "off"])
def test_pol5_a_changed_definition_is_suspended_in_every_mode(mode: Mode, pin: PinPolicy) -> None:
    policies = PinPolicies({("s", "t"): Pin("s", "t", pin, "ab" * 32)})
    changed = policies.policy("s", "t", "cd" * 32)
    assert changed == "changed"
    decision = decide(CallFacts(name="s__t", read_only=True, policy=changed), mode, Rules(), ())
    assert decision.verdict == "refuse"
    assert decision.code == "tool_changed"


@pytest.mark.parametrize("mode", MODES)
def test_pol5_a_removed_tool_is_refused_in_every_mode(mode: Mode) -> None:
    decision = decide(CallFacts(name="s__t", read_only=True, policy="removed"), mode, Rules(), ())
    assert decision.verdict == "refuse"
    assert decision.code == "removed"


def test_pol5_pin_policies_answer_the_reviewed_policy_at_its_hash_and_list_reviewed_tools() -> None:
    policies = PinPolicies(
        {("s", "t"): Pin("s", "t", "ask_first", "ab" * 32), ("s", "u"): Pin("s", "u", "off", "cd" * 32)}
    )
    assert policies.policy("s", "t", "ab" * 32) == "ask_first"
    assert policies.policy("s", "u", "cd" * 32) == "off"
    assert policies.policy("s", "t", "ef" * 32) == "changed"
    assert policies.policy("s", "v", "ab" * 32) is None
    assert policies.policy("other", "t", "ab" * 32) is None
    assert dict(policies.reviewed("s")) == {"t": "ab" * 32, "u": "cd" * 32}
    assert dict(policies.reviewed("other")) == {}


def test_pol5_read_only_hint_never_grants_permission_to_a_pinned_tool() -> None:
    decision = decide(CallFacts(name="s__t", read_only=True, policy="ask_first"), "ask", Rules(), ())
    assert decision.verdict == "ask"


def test_pol4_deny_rules_beat_a_pinned_run_freely() -> None:
    decision = decide(CallFacts(name="s__t", policy="run_freely"), "auto", Rules(deny=("s__*",)), ())
    assert decision.verdict == "refuse"
    assert decision.code == "denied"


def test_pol5_file_sending_still_asks_under_run_freely() -> None:
    decision = decide(CallFacts(name="s__t", policy="run_freely", sends_files=True), "ask", Rules(), ())
    assert decision.verdict == "ask"
    assert not decision.session_allowed


def test_pol5_pins_are_stored_atomically_at_0600_and_read_back(tmp_path: Path) -> None:
    store = PinStore(tmp_path / "data" / "pins.json")
    assert store.load() == {}
    store.pin(Pin("s", "t", "ask_first", "ab" * 32))
    store.pin(Pin("s", "u", "off", "cd" * 32))
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert set(store.load()) == {("s", "t"), ("s", "u")}
    assert store.unpin("s", "t")
    assert not store.unpin("s", "t")
    assert set(store.load()) == {("s", "u")}
    assert json.loads(store.path.read_text())["version"] == 1


@pytest.mark.parametrize(("mode", "expected"), [("ask", "ask"), ("auto", "run")])
def test_pol2_a_pinned_run_freely_never_skips_a_destructive_tools_card(mode: Mode, expected: str) -> None:
    facts = CallFacts(name="s__rm", destructive=True, policy="run_freely")
    assert decide(facts, mode, Rules(), ()).verdict == expected
