"""What the host offers a model: its system prompt, its tools in each model API's format (INS, MOD-1)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpyard._reading import HostReading
from mcpyard.model import ModelTools, ToolFormat, host_prompt
from mcpyard.policy import PinPolicies

if TYPE_CHECKING:
    from mcpyard._view import HostView
    from mcpyard.policy import Approver

__all__ = ["ModelOffer"]


class ModelOffer(HostReading):
    """The host's model-facing side (a part of `Host`): what a model reads, and what the agent loop needs."""

    _offered: dict[ToolFormat, tuple[HostView, int | None, ModelTools]]

    @property
    def approver(self) -> Approver | None:
        """Who answers this session's cards (None: a call that must ask is refused with `approval_required`)."""
        return self.session.approver

    def system_prompt(self) -> str:
        """Each connected server's instructions as sent at its last connect, sanitized and fenced under its prefix
        (INS-1 to INS-3, MOD-1); a stopped stdio server's leave, a reconnecting remote one's stay until reload."""
        return host_prompt(self.view)

    def tools_for_model(self, format: ToolFormat = "mcp") -> ModelTools:
        """`tools()` in a model API's format (MOD-1): `mcp`, `openai` (Chat Completions) or `anthropic`.

        File parameters take a local path (CAT-3); each provider's schema is normalized (local `$ref`s
        inlined, never a network one fetched; keywords it refuses dropped) and its names kept within its
        limits (`ModelTools.names` maps them back). A tool whose schema that API cannot take is left out
        (`ModelTools.left_out`), with a warning on the status page.

        Raises:
            ValueError: `format` is not one of those three.
        """
        view = self.view
        # What is offered changes with the view, or with a policy (a source that changes keeps a version).
        version = getattr(view.policies, "version", None)
        keep = version is not None or isinstance(view.policies, PinPolicies)
        kept = self._offered.get(format) if keep else None
        if kept is not None and kept[0] is view and kept[1] == version:
            tools = kept[2]
        else:
            tools = self._formats.format(self.tools(), format)
            if keep:
                self._offered[format] = (view, version, tools)
        # A copy of the list and of each tool's outer object: the caller may add to them or take some out.
        return ModelTools((dict(tool) for tool in tools), format=format, names=tools.names, left_out=tools.left_out)

    def redact(self, text: str) -> str:
        """`text` with every secret value this session sends replaced by its name (SEC-3)."""
        return self.view.redactor.redact(text)

    def redact_json(self, value: Any) -> Any:
        """A JSON value with every secret value this session sends replaced by its name, in every string (SEC-3)."""
        return self.view.redactor.redact_json(value)
