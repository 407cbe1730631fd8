"""Where a tool's reviewed policy comes from: the `PolicySource` seam, local pins and an in-memory twin (POL-5)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from mcpyard.policy._decide import PinPolicy, ToolPolicy
from mcpyard.policy._pins import Pin

__all__ = ["MemoryPolicies", "PinPolicies", "PolicySource"]


class PolicySource(Protocol):
    """Reviewed per-tool policies, each bound to the definition hash that was reviewed (POL-5).

    The local host reads `mcpyard pin`'s file (`PinPolicies`); the organization service
    reads its database. Lookups are on the call path: keep them in memory, O(1).
    """

    def policy(self, server: str, tool: str, definition_hash: str) -> ToolPolicy | None:
        """The policy of `tool` on `server` at its current definition.

        `run_freely`, `ask_first` or `off` when it was reviewed at this hash; `changed` when it
        was reviewed at another one; None when it was never reviewed (the local rules decide).
        """
        ...

    def reviewed(self, server: str) -> Mapping[str, str]:
        """The tools of `server` that have a policy, each with the definition hash it was reviewed at.

        The ones the server no longer lists are `removed`.
        """
        ...


class PinPolicies:
    """Policies from pins (`mcpyard pin`), read when the host opens and on reload."""

    def __init__(self, pins: Mapping[tuple[str, str], Pin]) -> None:
        self.pins = dict(pins)
        self._by_server: dict[str, dict[str, str]] = {}
        for (server, tool), pin in self.pins.items():
            self._by_server.setdefault(server, {})[tool] = pin.definition_hash

    def __bool__(self) -> bool:
        return bool(self.pins)

    def policy(self, server: str, tool: str, definition_hash: str) -> ToolPolicy | None:
        pin = self.pins.get((server, tool))
        if pin is None:
            return None
        return pin.policy if pin.definition_hash == definition_hash else "changed"

    def reviewed(self, server: str) -> Mapping[str, str]:
        return self._by_server.get(server, {})


class MemoryPolicies:
    """Policies held in memory and changed while the host runs: a test twin of a database-backed source.

    Every change bumps `version`; the host reads policies at each call, so a change applies
    to the next call without a reload.
    """

    def __init__(self) -> None:
        self._policies: dict[tuple[str, str], tuple[PinPolicy, str]] = {}
        self.version = 0

    def set(self, server: str, tool: str, policy: PinPolicy, definition_hash: str) -> None:
        """Review `tool` at `definition_hash` with `policy`."""
        self._policies[(server, tool)] = (policy, definition_hash)
        self.version += 1

    def clear(self, server: str, tool: str) -> None:
        self._policies.pop((server, tool), None)
        self.version += 1

    def policy(self, server: str, tool: str, definition_hash: str) -> ToolPolicy | None:
        reviewed = self._policies.get((server, tool))
        if reviewed is None:
            return None
        policy, reviewed_hash = reviewed
        return policy if reviewed_hash == definition_hash else "changed"

    def reviewed(self, server: str) -> Mapping[str, str]:
        return {tool: reviewed for (owner, tool), (_, reviewed) in self._policies.items() if owner == server}
