"""Deciding whether a call may run (POL) and asking a person when it must (APR)."""

from mcpyard.policy._approval import (
    Answer,
    ApprovalCard,
    Approver,
    FileFacts,
    ScriptedApprover,
    YesApprover,
    preview_arguments,
)
from mcpyard.policy._decide import CallFacts, Decision, PinPolicy, Rules, Verdict, decide, matching_rule
from mcpyard.policy._hooks import HOOK_TIMEOUT, HookAnswer, run_hooks
from mcpyard.policy._pins import POLICIES, Pin, PinStore

__all__ = [
    "HOOK_TIMEOUT",
    "POLICIES",
    "Answer",
    "ApprovalCard",
    "Approver",
    "CallFacts",
    "Decision",
    "FileFacts",
    "HookAnswer",
    "Pin",
    "PinPolicy",
    "PinStore",
    "Rules",
    "ScriptedApprover",
    "Verdict",
    "YesApprover",
    "decide",
    "matching_rule",
    "preview_arguments",
    "run_hooks",
]
