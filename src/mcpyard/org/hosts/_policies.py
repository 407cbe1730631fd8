"""An organization's tool policies as the call pipeline reads them: in memory, bound to reviewed hashes (POL-5).

Loaded from the database when the organization's host opens and changed in place when a
policy is set, so a lookup on the call path is a dictionary access. A tool the organization
has not reviewed is `off`: discovery is not consent, and `readOnlyHint` grants nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mcpyard.org.rules import ToolFacts, why_not
from mcpyard.policy import PinPolicy, ToolPolicy

__all__ = ["OrgPolicies"]


class OrgPolicies:
    """A `PolicySource` for one organization: `(server id, tool)` → the policy and the hash it was reviewed at."""

    def __init__(self, reviewed: Iterable[tuple[str, str, PinPolicy, str]] = ()) -> None:
        self._policies: dict[tuple[str, str], tuple[PinPolicy, str]] = {}
        self._by_server: dict[str, dict[str, str]] = {}
        self.version = 0
        """Bumped on every change."""
        self.replace_all(reviewed)

    def replace_all(self, reviewed: Iterable[tuple[str, str, PinPolicy, str]]) -> None:
        """Every policy anew, as the database has them (a reload): in place, so whoever reads this sees them."""
        self._policies.clear()
        self._by_server.clear()
        for server, tool, policy, reviewed_hash in reviewed:
            self.set(server, tool, policy, reviewed_hash)

    def set(self, server: str, tool: str, policy: PinPolicy, reviewed_hash: str) -> None:
        self._policies[(server, tool)] = (policy, reviewed_hash)
        self._by_server.setdefault(server, {})[tool] = reviewed_hash
        self.version += 1

    def forget_server(self, server: str) -> None:
        """A deleted server: none of its tools has a policy any more (so none can run)."""
        for tool in self._by_server.pop(server, {}):
            self._policies.pop((server, tool), None)
        self.version += 1

    def policy(self, server: str, tool: str, definition_hash: str) -> ToolPolicy | None:
        policy, reviewed_hash = self._policies.get((server, tool), (None, None))
        facts = ToolFacts(
            listed=True, server_deleted=False, policy=policy, reviewed_hash=reviewed_hash, live_hash=definition_hash
        )
        why = why_not(facts, "member_call")
        return "changed" if why == "changed" else "off" if why == "off" or policy is None else policy

    def reviewed(self, server: str) -> Mapping[str, str]:
        return self._by_server.get(server, {})
