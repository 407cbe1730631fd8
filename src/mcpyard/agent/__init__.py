"""The agent loop: a model drives a turn of tool calls through a host's pipeline, and a parked turn goes on (MOD-2).

Above the host (it drives any `TurnHost`, which `mcpyard.Host` is), beside the faces that run turns:
`mcpyard chat`, the organization's teammates and assistants. What a turn offers the model and the
models it talks to are in `mcpyard.model`, below the host.
"""

from mcpyard.agent._clock import TurnClock, current_turn_clock
from mcpyard.agent._facade import HostFacade
from mcpyard.agent._loop import (
    PARKED,
    CallApprover,
    ParkCall,
    Turn,
    TurnHost,
    TurnLimits,
    TurnState,
    TurnStatus,
    resume_turn,
    run_turn,
)
from mcpyard.agent._search import SearchedSelection

__all__ = [
    "PARKED",
    "CallApprover",
    "HostFacade",
    "ParkCall",
    "SearchedSelection",
    "Turn",
    "TurnClock",
    "TurnHost",
    "TurnLimits",
    "TurnState",
    "TurnStatus",
    "current_turn_clock",
    "resume_turn",
    "run_turn",
]
