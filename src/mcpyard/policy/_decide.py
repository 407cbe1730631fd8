"""Whether a call may run, must ask, or is refused: one pure function (POL-1 to POL-6, FILE-5)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from mcpyard.config import Mode

__all__ = [
    "CallFacts",
    "Decision",
    "HookAnswer",
    "PinPolicy",
    "Rules",
    "ToolPolicy",
    "Verdict",
    "decide",
    "matching_rule",
]

Verdict = Literal["run", "ask", "refuse"]
PinPolicy = Literal["run_freely", "ask_first", "off"]
"""A reviewed policy, as a person sets it (POL-5)."""
ToolPolicy = Literal["run_freely", "ask_first", "off", "changed", "removed"]
"""A tool's policy at its current definition: the reviewed one, or `changed` (the definition moved since it
was reviewed: suspended) or `removed` (the server no longer lists it)."""
HookAnswer = Literal["allow", "deny", "ask"]


@dataclass(frozen=True, slots=True)
class Rules:
    """Allow and deny globs on model-facing tool names (POL-4)."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


@dataclass(slots=True)
class CallFacts:
    """What the decision depends on, about the tool and this call."""

    name: str
    """Model-facing tool name."""
    base_name: str | None = None
    """The name before a collision's suffix (CAT-1), when it differs: deny rules hold for it too."""
    contested: bool = False
    """Another tool wants the same name: allow rules apply to neither (POL-4)."""
    read_only: bool = False
    """`readOnlyHint` is exactly true."""
    destructive: bool = False
    """`destructiveHint` is exactly true."""
    trust_annotations: bool = True
    sends_files: bool = False
    sends_secret: bool = False
    policy: ToolPolicy | None = None
    """The tool's reviewed policy at its current definition (POL-5); None: the local rules decide."""
    hook: HookAnswer | None = None
    """What the user's pre_call hooks answered (POL-6), once they have run; None: no hook matched."""


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

    Order: deny rules (POL-4) → a reviewed policy (POL-5) → what annotations mean under
    trust (POL-2, POL-3) → the mode (POL-1) → files and secrets (FILE-5) → session allows
    and allow rules → the pre_call hooks' answer (POL-6).
    """
    decision = _decide(facts, mode, rules, session_allows)
    return decision if facts.hook is None else _with_hook(decision, facts)


# The decisions whose words never change are made once.
_READ_ONLY = Decision("run", "read-only tool")
_AUTO = Decision("run", "auto mode")
_SESSION = Decision("run", "allowed for this session")
_DESTRUCTIVE = Decision("ask", "the tool is marked destructive; it always asks")
_NOT_READ_ONLY = {
    True: Decision("ask", "the tool is not read-only (the tool may change things)", session_allowed=True),
    False: Decision(
        "ask", "the tool is not read-only (annotations of this server are not trusted)", session_allowed=True
    ),
}


def _decide(facts: CallFacts, mode: Mode, rules: Rules, session_allows: Collection[str]) -> Decision:
    if rules.deny and (rule := _denying(facts, rules.deny)) is not None:
        return Decision("refuse", f"denied by the rule {rule!r} (deny rules win in every mode)", code="denied")
    if facts.policy is not None:
        return _decide_reviewed(facts, mode)
    trusted = facts.trust_annotations
    read_only = trusted and facts.read_only and not facts.destructive
    sensitive = facts.sends_files or facts.sends_secret

    if mode in ("read-only", "plan"):
        if sensitive:
            return Decision("refuse", f"the call {_sends(facts)}, which {mode} mode never allows", code="mode_refused")
        if read_only:
            return _READ_ONLY
        why = "annotations of this server are not trusted" if not trusted else "the tool may change things"
        return Decision("refuse", f"{mode} mode runs only read-only tools ({why})", code="mode_refused")

    if mode == "auto":
        if sensitive:
            return Decision("ask", f"the call {_sends(facts)}; such calls always ask")
        return _AUTO

    # ask mode
    if sensitive:
        return Decision("ask", f"the call {_sends(facts)}; such calls always ask")
    if trusted and facts.destructive:
        return _DESTRUCTIVE
    if read_only:
        return _READ_ONLY
    if facts.name in session_allows:
        return _SESSION
    if rules.allow and not facts.contested and (rule := matching_rule(facts.name, rules.allow)) is not None:
        return Decision("run", f"allowed by the rule {rule!r}")
    return _NOT_READ_ONLY[trusted]


def _denying(facts: CallFacts, deny: Sequence[str]) -> str | None:
    """The deny rule for the tool's name, or for the name a collision took from it (POL-4, CAT-1)."""
    rule = matching_rule(facts.name, deny)
    if rule is None and facts.base_name:
        rule = matching_rule(facts.base_name, deny)
    return rule


def _sends(facts: CallFacts) -> str:
    return "sends a local file" if facts.sends_files else "sends a secret value"


def _decide_reviewed(facts: CallFacts, mode: Mode) -> Decision:
    """A reviewed tool follows its policy; annotations grant nothing here (POL-5)."""
    if facts.policy == "changed":
        return Decision(
            "refuse",
            "its definition changed since it was reviewed, so it is suspended; review the new definition and set "
            "its policy again (on the console: `mcpyard pin NAME POLICY`)",
            code="tool_changed",
        )
    if facts.policy == "removed":
        return Decision("refuse", "the server no longer lists it, so it cannot run", code="removed")
    if facts.policy == "off":
        return Decision("refuse", "its reviewed policy is `off`", code="off")
    sensitive = facts.sends_files or facts.sends_secret
    if mode in ("read-only", "plan") and (sensitive or not (facts.trust_annotations and facts.read_only)):
        return Decision("refuse", f"{mode} mode runs only read-only tools that send nothing", code="mode_refused")
    if sensitive:
        return Decision("ask", "the call sends a local file or a secret value; such calls always ask")
    if facts.trust_annotations and facts.destructive and mode != "auto":
        return Decision("ask", "the tool is marked destructive; it always asks, whatever its reviewed policy")
    if facts.policy == "ask_first" and mode != "auto":
        return Decision("ask", "its reviewed policy is `ask_first`")
    return Decision("run", "its reviewed policy is `run_freely`" if facts.policy == "run_freely" else "auto mode")


def _with_hook(decision: Decision, facts: CallFacts) -> Decision:
    """A hook's `deny` refuses; its `ask` asks; its `allow` skips the card, never a destructive tool's (POL-6)."""
    if decision.verdict == "refuse":
        return decision
    if facts.hook == "deny":
        return Decision("refuse", "a pre_call hook denied it; nothing was sent", code="denied")
    if facts.hook == "ask" and decision.verdict == "run":
        return Decision("ask", "a pre_call hook asks for this call")
    if facts.hook == "allow" and decision.verdict == "ask" and not (facts.destructive and facts.trust_annotations):
        return Decision("run", "allowed by a pre_call hook")
    return decision
