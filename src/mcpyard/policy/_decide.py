"""Whether a call may run, must ask, or is refused: one pure function (POL-1 to POL-4, FILE-5)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from mcpyard.config import Mode

__all__ = ["CallFacts", "Decision", "PinPolicy", "Rules", "Verdict", "decide", "matching_rule"]

Verdict = Literal["run", "ask", "refuse"]
PinPolicy = Literal["run_freely", "ask_first", "off"]


@dataclass(frozen=True, slots=True)
class Rules:
    """Allow and deny globs on model-facing tool names (POL-4)."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CallFacts:
    """What the decision depends on, about the tool and this call."""

    name: str
    """Model-facing tool name."""
    read_only: bool = False
    """`readOnlyHint` is exactly true."""
    destructive: bool = False
    """`destructiveHint` is exactly true."""
    trust_annotations: bool = True
    sends_files: bool = False
    sends_secret: bool = False
    pin: PinPolicy | None = None
    """The reviewed policy of this tool (POL-5), when it is pinned."""
    pin_current: bool = True
    """Whether the tool's definition is still the one that was reviewed."""


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict, why, and whether the card may offer "allow for this session"."""

    verdict: Verdict
    reason: str
    session_allowed: bool = False
    """Whether "allow for this session" may be offered (never for destructive or file-sending calls)."""
    code: str = ""
    """For a refusal: the `CallResult.error.code`."""


def matching_rule(name: str, globs: Sequence[str]) -> str | None:
    """The first glob that matches the tool name, if any (case-sensitive, like the names)."""
    return next((glob for glob in globs if fnmatchcase(name, glob)), None)


def decide(facts: CallFacts, mode: Mode, rules: Rules, session_allows: Collection[str]) -> Decision:
    """Decide one call. Pure: the same inputs always give the same decision.

    Order: deny rules (POL-4) → a pinned policy (POL-5) → what annotations mean under
    trust (POL-2, POL-3) → the mode (POL-1) → files and secrets (FILE-5) → session allows
    and allow rules.
    """
    if (rule := matching_rule(facts.name, rules.deny)) is not None:
        return Decision("refuse", f"denied by the rule {rule!r} (deny rules win in every mode)", code="denied")
    if facts.pin is not None:
        return _decide_pinned(facts, mode)
    trusted = facts.trust_annotations
    read_only = trusted and facts.read_only and not facts.destructive
    destructive = trusted and facts.destructive
    sensitive = facts.sends_files or facts.sends_secret
    what = "sends a local file" if facts.sends_files else "sends a secret value"

    if mode in ("read-only", "plan"):
        if sensitive:
            return Decision("refuse", f"the call {what}, which {mode} mode never allows", code="mode_refused")
        if read_only:
            return Decision("run", "read-only tool")
        why = "annotations of this server are not trusted" if not trusted else "the tool may change things"
        return Decision("refuse", f"{mode} mode runs only read-only tools ({why})", code="mode_refused")

    if mode == "auto":
        if sensitive:
            return Decision("ask", f"the call {what}; such calls always ask")
        return Decision("run", "auto mode")

    # ask mode
    if sensitive:
        return Decision("ask", f"the call {what}; such calls always ask")
    if destructive:
        return Decision("ask", "the tool is marked destructive; it always asks")
    if read_only:
        return Decision("run", "read-only tool")
    if facts.name in session_allows:
        return Decision("run", "allowed for this session")
    if (rule := matching_rule(facts.name, rules.allow)) is not None:
        return Decision("run", f"allowed by the rule {rule!r}")
    why = "annotations of this server are not trusted" if not trusted else "the tool may change things"
    return Decision("ask", f"the tool is not read-only ({why})", session_allowed=True)


def _decide_pinned(facts: CallFacts, mode: Mode) -> Decision:
    """A pinned tool follows its reviewed policy; annotations grant nothing here (POL-5)."""
    if not facts.pin_current:
        return Decision(
            "refuse",
            "its definition changed since it was reviewed, so it is suspended; review it and pin it again "
            "(`mcpyard pin NAME POLICY`)",
            code="tool_changed",
        )
    if facts.pin == "off":
        return Decision("refuse", "its reviewed policy is `off`", code="off")
    sensitive = facts.sends_files or facts.sends_secret
    if mode in ("read-only", "plan") and (sensitive or not (facts.trust_annotations and facts.read_only)):
        return Decision("refuse", f"{mode} mode runs only read-only tools that send nothing", code="mode_refused")
    if sensitive:
        return Decision("ask", "the call sends a local file or a secret value; such calls always ask")
    if facts.trust_annotations and facts.destructive and mode != "auto":
        return Decision("ask", "the tool is marked destructive; it always asks, whatever its reviewed policy")
    if facts.pin == "ask_first" and mode != "auto":
        return Decision("ask", "its reviewed policy is `ask_first`")
    return Decision("run", f"its reviewed policy is `{facts.pin}`" if facts.pin == "run_freely" else "auto mode")
