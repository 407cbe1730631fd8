"""The public face of `mcpyard.agent` is pinned (MOD-2; STYLE 1): adding a name is an API decision."""

from __future__ import annotations

import mcpyard.agent


def test_mod2_the_public_names_of_the_agent_package_are_pinned() -> None:
    assert sorted(mcpyard.agent.__all__) == sorted(
        [
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
    )
    for name in mcpyard.agent.__all__:
        assert getattr(mcpyard.agent, name) is not None
