"""A host session's own state, which every call of that session reads and updates (CALL-4, CALL-5, POL-3)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpyard.config import Mode
from mcpyard.elicitation import Elicitor
from mcpyard.pipeline._cache import IdempotentCache
from mcpyard.pipeline._found import FoundTools
from mcpyard.pipeline._record import CallRecorder, MemoryRecorder
from mcpyard.pipeline._store import Results, ResultStore
from mcpyard.policy import Approver, HookSpawn

if TYPE_CHECKING:
    from mcpyard.catalog import ToolIndex

__all__ = ["Session"]


@dataclass
class Session:
    """One host session's own state: its mode, approver, allows, stored results, cache and records."""

    mode: Mode
    approver: Approver | None
    recorder: CallRecorder = field(default_factory=MemoryRecorder)
    id: str = field(default_factory=lambda: secrets.token_hex(16))
    marker: str = field(default_factory=lambda: secrets.token_hex(8))
    """Random per session, so text inside a result can never close the fence (CALL-7)."""
    session_allows: set[str] = field(default_factory=set)
    store: Results = field(default_factory=ResultStore)
    cache: IdempotentCache = field(default_factory=IdempotentCache)
    start_hooks: HookSpawn | None = None
    """How pre_call hooks are started (the host's reaper, so none of their processes outlives
    the call); None: each in a process group of its own (POL-6)."""
    elicitor: Elicitor | None = None
    """Who answers a server's questions during a call (elicitation); None: no one (not declared)."""
    found: FoundTools = field(default_factory=FoundTools)
    """The tools `find_tools` named in each conversation: offered there from then on (MOD-4)."""
    search_index: tuple[Any, Any, ToolIndex, dict[str, dict[str, Any]]] | None = None
    """The search index of the view (and policy version) it was built for."""
