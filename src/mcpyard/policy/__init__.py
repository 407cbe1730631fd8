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
from mcpyard.policy._decide import CallFacts, Decision, Rules, Verdict, decide, matching_rule
from mcpyard.policy._hooks import HOOK_TIMEOUT, HookAnswer, run_hooks

__all__ = [
    "HOOK_TIMEOUT",
    "Answer",
    "ApprovalCard",
    "Approver",
    "CallFacts",
    "Decision",
    "FileFacts",
    "HookAnswer",
    "Rules",
    "ScriptedApprover",
    "Verdict",
    "YesApprover",
    "decide",
    "matching_rule",
    "preview_arguments",
    "run_hooks",
]
