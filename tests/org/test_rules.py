"""POL-5, ORG-6: whether a registered server's tool may serve a purpose now, as a table (no database, no HTTP)."""

from __future__ import annotations

import itertools
from typing import Literal

import pytest

from mcpyard.org.rules import PURPOSES, REASONS, Purpose, Reason, ToolFacts, tool_state, why_not
from mcpyard.policy import PinPolicy

Policy = Literal["unreviewed", "off", "ask_first", "run_freely"]
Bound = Literal["none", "live", "other"]
"""The definition a publication or an approval was made for: none, the live one, another one."""

POLICIES: tuple[Policy, ...] = ("unreviewed", "off", "ask_first", "run_freely")
BOUNDS: tuple[Bound, ...] = ("none", "live", "other")
LIVE = "a" * 64
OTHER = "b" * 64


def facts(
    policy: Policy,
    bound: Bound = "none",
    *,
    listed: bool = True,
    deleted: bool = False,
    reviewed_other: bool = False,
) -> ToolFacts:
    pin: PinPolicy | None = None if policy == "unreviewed" else policy
    reviewed = None if pin is None else (OTHER if reviewed_other else LIVE)
    return ToolFacts(
        listed=listed,
        server_deleted=deleted,
        policy=pin,
        reviewed_hash=reviewed,
        live_hash=LIVE,
        bound_hash={"none": None, "live": LIVE, "other": OTHER}[bound],
    )


# A listed tool of a live server, reviewed at the definition it lists now: (purpose, policy, bound) -> why not.
# Written from the rules: a member's call and a teammate's turn run `ask_first` and `run_freely` tools (an
# `ask_first` call waits for a person); an assistant's visitor has no one to ask, so only `run_freely` tools at
# the definition it was published with; an approved run holds only for the definition approved, checked before
# anything else, and ends if the tool was turned off since. A tool never reviewed is off.
EXPECTED: dict[tuple[Purpose, Policy, Bound], Reason | None] = {
    ("member_call", "unreviewed", "none"): "off",
    ("member_call", "unreviewed", "live"): "off",
    ("member_call", "unreviewed", "other"): "off",
    ("member_call", "off", "none"): "off",
    ("member_call", "off", "live"): "off",
    ("member_call", "off", "other"): "off",
    ("member_call", "ask_first", "none"): None,
    ("member_call", "ask_first", "live"): None,
    ("member_call", "ask_first", "other"): "old_hash",
    ("member_call", "run_freely", "none"): None,
    ("member_call", "run_freely", "live"): None,
    ("member_call", "run_freely", "other"): "old_hash",
    ("teammate", "unreviewed", "none"): "off",
    ("teammate", "unreviewed", "live"): "off",
    ("teammate", "unreviewed", "other"): "off",
    ("teammate", "off", "none"): "off",
    ("teammate", "off", "live"): "off",
    ("teammate", "off", "other"): "off",
    ("teammate", "ask_first", "none"): None,
    ("teammate", "ask_first", "live"): None,
    ("teammate", "ask_first", "other"): "old_hash",
    ("teammate", "run_freely", "none"): None,
    ("teammate", "run_freely", "live"): None,
    ("teammate", "run_freely", "other"): "old_hash",
    ("assistant", "unreviewed", "none"): "off",
    ("assistant", "unreviewed", "live"): "off",
    ("assistant", "unreviewed", "other"): "off",
    ("assistant", "off", "none"): "off",
    ("assistant", "off", "live"): "off",
    ("assistant", "off", "other"): "off",
    ("assistant", "ask_first", "none"): "ask_first",
    ("assistant", "ask_first", "live"): "ask_first",
    ("assistant", "ask_first", "other"): "ask_first",
    ("assistant", "run_freely", "none"): None,
    ("assistant", "run_freely", "live"): None,
    ("assistant", "run_freely", "other"): "old_hash",
    ("approved_run", "unreviewed", "none"): "off",
    ("approved_run", "unreviewed", "live"): "off",
    ("approved_run", "unreviewed", "other"): "old_hash",
    ("approved_run", "off", "none"): "off",
    ("approved_run", "off", "live"): "off",
    ("approved_run", "off", "other"): "old_hash",
    ("approved_run", "ask_first", "none"): None,
    ("approved_run", "ask_first", "live"): None,
    ("approved_run", "ask_first", "other"): "old_hash",
    ("approved_run", "run_freely", "none"): None,
    ("approved_run", "run_freely", "live"): None,
    ("approved_run", "run_freely", "other"): "old_hash",
}

EVERY_CASE = list(itertools.product(PURPOSES, POLICIES, BOUNDS))


def test_the_table_covers_every_purpose_policy_and_bound_definition_once() -> None:
    assert sorted(EXPECTED) == sorted(EVERY_CASE)
    assert {reason for reason in EXPECTED.values() if reason is not None} <= set(REASONS)


@pytest.mark.parametrize(("purpose", "policy", "bound"), EVERY_CASE)
def test_pol5_a_listed_reviewed_tool_serves_a_purpose_as_the_table_says(
    purpose: Purpose, policy: Policy, bound: Bound
) -> None:
    assert why_not(facts(policy, bound), purpose) == EXPECTED[purpose, policy, bound]


@pytest.mark.parametrize(("purpose", "policy", "bound"), EVERY_CASE)
def test_org6_a_deleted_servers_tools_serve_nothing_whatever_else_holds(
    purpose: Purpose, policy: Policy, bound: Bound
) -> None:
    for listed, reviewed_other in itertools.product((True, False), (True, False)):
        tool = facts(policy, bound, listed=listed, deleted=True, reviewed_other=reviewed_other)
        assert why_not(tool, purpose) == "server_deleted"


@pytest.mark.parametrize(("purpose", "policy", "bound"), EVERY_CASE)
def test_pol5_a_tool_its_server_no_longer_lists_serves_nothing(purpose: Purpose, policy: Policy, bound: Bound) -> None:
    for reviewed_other in (True, False):
        tool = facts(policy, bound, listed=False, reviewed_other=reviewed_other)
        assert tool_state(tool) == "removed"
        assert why_not(tool, purpose) == "removed"


@pytest.mark.parametrize(("purpose", "policy", "bound"), [case for case in EVERY_CASE if case[1] != "unreviewed"])
def test_pol5_a_tool_whose_definition_changed_since_review_is_suspended_for_every_purpose(
    purpose: Purpose, policy: Policy, bound: Bound
) -> None:
    tool = facts(policy, bound, reviewed_other=True)
    assert tool_state(tool) == "changed"
    assert why_not(tool, purpose) == "changed"


@pytest.mark.parametrize("policy", POLICIES)
def test_pol5_a_listed_tool_at_its_reviewed_definition_is_active(policy: Policy) -> None:
    assert tool_state(facts(policy)) == "active"
