"""Whether a registered server's tool may serve a purpose now: one pure function of the tool's facts (POL-5, ORG-6).

A policy holds for the definition a person reviewed, never for another: a tool whose server now
lists a different definition is `changed` (suspended) until someone reviews it again, and a
publication or an approval holds only for the definition it was made for. Every place the
organization offers or runs a tool asks `why_not`; `tool_state` is the state the API shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mcpyard.policy import PinPolicy

__all__ = ["PURPOSES", "REASONS", "Purpose", "Reason", "ToolFacts", "ToolState", "tool_state", "why_not"]

Purpose = Literal["member_call", "teammate", "assistant", "approved_run"]
"""What the tool would serve: a member's own call, a teammate's turn, a published assistant (visitors and previews),
or the single run of a call someone approved."""
PURPOSES: tuple[Purpose, ...] = ("member_call", "teammate", "assistant", "approved_run")

Reason = Literal["server_deleted", "removed", "changed", "off", "ask_first", "old_hash"]
"""Why it may not: its server was deleted; the server no longer lists it; its definition changed since it was
reviewed; its policy is off (or it was never reviewed); it asks first, and no one can answer (an assistant's
visitor); the publication or approval was made for another definition."""
REASONS: tuple[Reason, ...] = ("server_deleted", "removed", "changed", "off", "ask_first", "old_hash")

ToolState = Literal["active", "changed", "removed"]


@dataclass(frozen=True, slots=True)
class ToolFacts:
    """What is known of one tool now."""

    listed: bool
    """Whether its server listed it the last time it was asked."""
    server_deleted: bool
    policy: PinPolicy | None
    """The policy set for it; None: never reviewed (new tools start `off`)."""
    reviewed_hash: str | None
    """The definition hash the policy was set for."""
    live_hash: str
    """The hash of the definition the server lists now (CAT-2)."""
    bound_hash: str | None = None
    """The definition a publication or an approval was made for, when the purpose has one."""


def tool_state(facts: ToolFacts) -> ToolState:
    """`removed` when the server no longer lists it; `changed` when it lists another definition than was reviewed."""
    if not facts.listed:
        return "removed"
    if facts.reviewed_hash is not None and facts.reviewed_hash != facts.live_hash:
        return "changed"
    return "active"


def why_not(facts: ToolFacts, purpose: Purpose) -> Reason | None:
    """Why the tool may not serve `purpose` now, or None when it may.

    A member's call and a teammate's turn may use `run_freely` and `ask_first` tools (an `ask_first` call waits
    for a person); an assistant only `run_freely` ones, at the definition it was published with; an approved run
    only the definition that was approved, whatever its policy became, unless it was turned off.
    """
    if facts.server_deleted:
        return "server_deleted"
    state = tool_state(facts)
    if state != "active":
        return state
    stale = facts.bound_hash is not None and facts.bound_hash != facts.live_hash
    if stale and purpose == "approved_run":
        return "old_hash"  # a person approved that definition, not this one
    if facts.policy is None or facts.policy == "off":
        return "off"
    if facts.policy == "ask_first" and purpose == "assistant":
        return "ask_first"
    return "old_hash" if stale else None
