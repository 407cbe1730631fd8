"""What the host offers a model: its system prompt, its tools in each model API's format (INS, MOD-1)."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from mcpyard._reading import HostReading
from mcpyard._tools import FIND_TOOLS_INFO
from mcpyard._view import HostView
from mcpyard.model import ModelTools, ToolFormat, format_tool, host_prompt, tool_name
from mcpyard.pipeline import FIND_TOOLS, READ_RESULT, over_budget
from mcpyard.policy import Approver, PinPolicies

__all__ = ["ModelOffer"]


class ModelOffer(HostReading):
    """The host's model-facing side (a part of `Host`): what a model reads, and what the agent loop needs."""

    _offered: dict[ToolFormat, tuple[HostView, int | None, ModelTools]]
    _budgets: dict[int, tuple[ModelTools, object, bool]]
    """Whether a formatted list passes the tool search budget, by the list's identity (with the settings read)."""

    @property
    def approver(self) -> Approver | None:
        """Who answers this session's cards (None: a call that must ask is refused with `approval_required`)."""
        return self.session.approver

    def system_prompt(self) -> str:
        """Each connected server's instructions as sent at its last connect, sanitized and fenced under its prefix
        (INS-1 to INS-3, MOD-1); a stopped stdio server's leave, a reconnecting remote one's stay until reload."""
        return host_prompt(self.view)

    def tools_for_model(self, format: ToolFormat = "mcp", *, conversation: str | None = None) -> ModelTools:
        """`tools()` in a model API's format (MOD-1): `mcp`, `openai` (Chat Completions) or `anthropic`.

        File parameters take a local path (CAT-3); each provider's schema is normalized (local `$ref`s
        inlined, never a network one fetched; keywords it refuses dropped) and its names kept within its
        limits (`ModelTools.names` maps them back). A tool whose schema that API cannot take is left out
        (`ModelTools.left_out`), with a warning on the status page.

        Past the tool search budget (`[tool_search]`: more than 40 tools or 10,000 tokens of definitions by
        default, MOD-4) the list holds `find_tools`, `read_result`, the tools servers name in `always_offer`
        and those found in `conversation` (default: this host session's) so far; `names` still maps every
        tool, so a call to one not found yet runs all the same.

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
        if self._searched(tools):
            return self._search_offer(tools, conversation or self.session.id)
        # A copy of the list and of each tool's outer object: the caller may add to them or take some out.
        return ModelTools(
            (dict(tool) for tool in tools),
            format=format,
            names=tools.names,
            left_out=tools.left_out,
            hashes=tools.hashes,
        )

    def tool_search_on(self, format: ToolFormat = "mcp") -> bool:
        """Whether a model is offered `find_tools` in place of every tool now (the budget is passed, MOD-4)."""
        return self._searched(self._formats.format(self.tools(), format))

    def _searched(self, tools: ModelTools) -> bool:
        settings = self.view.settings.tool_search
        kept = self._budgets.get(id(tools))
        if kept is not None and kept[0] is tools and kept[1] is settings:
            return kept[2]
        passed = over_budget([tool for tool in tools if tools.catalog_name(tool_name(tool)) != READ_RESULT], settings)
        if len(self._budgets) > 8:  # one entry per format and view in use: a handful
            self._budgets.clear()
        self._budgets[id(tools)] = (tools, settings, passed)
        return passed

    def _search_offer(self, tools: ModelTools, conversation: str) -> ModelTools:
        keep = {READ_RESULT, *self.session.found.of(conversation), *_always_offered(self.view)}
        finder = format_tool(FIND_TOOLS_INFO, tools.format)
        return ModelTools(
            [finder, *(dict(tool) for tool in tools if tools.catalog_name(tool_name(tool)) in keep)],
            format=tools.format,
            names={**tools.names, FIND_TOOLS: FIND_TOOLS},
            left_out=tools.left_out,
            hashes=tools.hashes,
        )

    def redact(self, text: str) -> str:
        """`text` with every secret value this session sends replaced by its name (SEC-3)."""
        return self.view.redactor.redact(text)

    def redact_json(self, value: Any) -> Any:
        """A JSON value with every secret value this session sends replaced by its name, in every string (SEC-3)."""
        return self.view.redactor.redact_json(value)


def _always_offered(view: HostView) -> set[str]:
    """The catalog names of the tools their servers' `always_offer` globs name (on the servers' own names)."""
    globs = {spec.id: spec.always_offer for spec in view.plan.config.servers if spec.always_offer}
    return {
        entry.name
        for entry in view.catalog.entries.values()
        if any(fnmatchcase(entry.tool, glob) for glob in globs.get(entry.server, ()))
    }
