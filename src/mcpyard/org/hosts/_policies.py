"""An organization's tool policies as the call pipeline reads them: in memory, bound to reviewed hashes (POL-5).

Loaded from the database with the organization's host, and again whenever the organization's
change counter moved (any replica's change), so a lookup on the call path is a dictionary
access against what the database held before the call. A tool the organization has not reviewed
is `off`: discovery is not consent, and `readOnlyHint` grants nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mcpyard.org.rules import Reason, ToolFacts, why_not
from mcpyard.policy import PinPolicy, ToolPolicy

__all__ = ["OrgPolicies", "Reviewed"]

_REFUSED: dict[Reason, ToolPolicy] = {"changed": "changed", "removed": "removed", "off": "off"}
"""Why a member's call may not use a tool, as the pipeline's policy words say it (`ask_first` is a policy)."""


@dataclass(frozen=True, slots=True)
class Reviewed:
    """A tool's policy as the database holds it."""

    policy: PinPolicy
    reviewed_hash: str
    """The definition hash the policy was set for."""
    stored_hash: str
    """The hash of the definition the server listed at the last refresh (on any replica)."""
    listed: bool = True
    """Whether the server still listed it then."""


class OrgPolicies:
    """A `PolicySource` for one organization: `(server name, tool)` → its policy and hashes."""

    def __init__(self, reviewed: Mapping[tuple[str, str], Reviewed] | None = None) -> None:
        self._policies: dict[tuple[str, str], Reviewed] = {}
        self._by_server: dict[str, dict[str, str]] = {}
        self.replace_all(reviewed or {})

    def replace_all(self, reviewed: Mapping[tuple[str, str], Reviewed]) -> None:
        """Every policy anew, as the database has them: in place, so whoever reads this sees them."""
        by_server: dict[str, dict[str, str]] = {}
        for (server, tool), found in reviewed.items():
            by_server.setdefault(server, {})[tool] = found.reviewed_hash
        self._policies, self._by_server = dict(reviewed), by_server

    def policy(self, server: str, tool: str, definition_hash: str) -> ToolPolicy | None:
        """The policy at the definition the host lists now; `changed` as well when the database knows of a newer
        definition than was reviewed (a refresh on another replica), `removed` when the server no longer lists it."""
        found = self._policies.get((server, tool))
        if found is None:
            return "off"
        live = definition_hash if found.stored_hash == found.reviewed_hash else found.stored_hash
        facts = ToolFacts(
            listed=found.listed,
            server_deleted=False,
            policy=found.policy,
            reviewed_hash=found.reviewed_hash,
            live_hash=live,
        )
        why = why_not(facts, "member_call")
        return _REFUSED.get(why, found.policy) if why is not None else found.policy

    def reviewed(self, server: str) -> Mapping[str, str]:
        return self._by_server.get(server, {})
