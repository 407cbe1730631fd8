"""Deciding whether a call may run (POL), where reviewed policies come from, and asking a person (APR)."""

from mcpyard.policy._approval import (
    NO_TERMINAL,
    Answer,
    ApprovalCard,
    Approver,
    Declined,
    FileFacts,
    InboxApprover,
    ParkedCard,
    ScriptedApprover,
    YesApprover,
    preview_arguments,
)
from mcpyard.policy._decide import (
    CallFacts,
    Decision,
    HookAnswer,
    PinPolicy,
    Rules,
    ToolPolicy,
    Verdict,
    decide,
    matching_rule,
)
from mcpyard.policy._hooks import HOOK_TIMEOUT, HookSpawn, run_hooks
from mcpyard.policy._pins import POLICIES, Pin, PinStore
from mcpyard.policy._source import MemoryPolicies, PinPolicies, PolicySource

__all__ = [
    "HOOK_TIMEOUT",
    "NO_TERMINAL",
    "POLICIES",
    "Answer",
    "ApprovalCard",
    "Approver",
    "CallFacts",
    "Decision",
    "Declined",
    "FileFacts",
    "HookAnswer",
    "HookSpawn",
    "InboxApprover",
    "MemoryPolicies",
    "ParkedCard",
    "Pin",
    "PinPolicies",
    "PinPolicy",
    "PinStore",
    "PolicySource",
    "Rules",
    "ScriptedApprover",
    "ToolPolicy",
    "Verdict",
    "YesApprover",
    "decide",
    "matching_rule",
    "preview_arguments",
    "run_hooks",
]
