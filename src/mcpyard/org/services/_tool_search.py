"""The organization's tool search setting: when its teammates' models are offered `find_tools` in place of the tools
they may use (MOD-4).

`auto` (the default) searches once a teammate's tools pass either budget, `always` whatever their number,
`off` never. The setting is read when a turn starts; the tools a conversation found stay offered in its
later turns (`Conversation.found_tools`).
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.config import TOOL_SEARCH_MODES, ToolSearchSettings
from mcpyard.errors import Invalid
from mcpyard.org._caller import ADMINS, Caller, require
from mcpyard.org.services._events import audit
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._views import ToolSearchView
from mcpyard.org.store import OrgToolSearch, utcnow

__all__ = [
    "MAX_TOKEN_BUDGET",
    "MAX_TOOL_BUDGET",
    "TOOL_SEARCH_FIELDS",
    "checked_tool_search",
    "get_tool_search",
    "set_tool_search",
    "tool_search_of",
]

TOOL_SEARCH_FIELDS = ("mode", "max_tools", "max_tokens")
MAX_TOOL_BUDGET = 100_000
MAX_TOKEN_BUDGET = 10_000_000


def _view(settings: ToolSearchSettings) -> ToolSearchView:
    return ToolSearchView(mode=settings.mode, max_tools=settings.max_tools, max_tokens=settings.max_tokens)


async def tool_search_of(session: AsyncSession, org_id: str) -> ToolSearchSettings:
    """The organization's setting (no row: the defaults)."""
    row = await session.get(OrgToolSearch, org_id)
    if row is None:
        return ToolSearchSettings()
    return ToolSearchSettings(mode=row.mode, max_tools=row.max_tools, max_tokens=row.max_tokens)


def checked_tool_search(body: Mapping[str, object]) -> ToolSearchSettings:
    """The setting a request asks for (a field left out takes its default), or `Invalid` naming each problem."""
    default = ToolSearchSettings()
    problems = []
    mode = body.get("mode", default.mode)
    if mode not in TOOL_SEARCH_MODES:
        problems.append(f"`mode` must be one of {', '.join(repr(m) for m in TOOL_SEARCH_MODES)}, not {mode!r}"[:200])
    budgets: dict[str, int] = {}
    for name, default_value, top in (
        ("max_tools", default.max_tools, MAX_TOOL_BUDGET),
        ("max_tokens", default.max_tokens, MAX_TOKEN_BUDGET),
    ):
        value = body.get(name, default_value)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
            problems.append(f"`{name}` must be a whole number from 0 to {top}")
        else:
            budgets[name] = value
    if problems:
        raise Invalid("invalid_request", "; ".join(problems))
    assert mode in TOOL_SEARCH_MODES
    return ToolSearchSettings(mode=mode, max_tools=budgets["max_tools"], max_tokens=budgets["max_tokens"])


async def get_tool_search(svc: OrgService, caller: Caller) -> ToolSearchView:
    """The organization's tool search setting (any member may read it)."""
    async with svc.db.begin() as session:
        return _view(await tool_search_of(session, caller.org_id))


async def set_tool_search(svc: OrgService, caller: Caller, body: Mapping[str, object]) -> ToolSearchView:
    """Replace the setting whole (owner, admin), audited as `tool_search.set`; turns that start after it use it."""
    require(caller, *ADMINS)
    wanted = checked_tool_search(body)
    async with svc.db.begin() as session:
        old = _view(await tool_search_of(session, caller.org_id))
        row = await session.get(OrgToolSearch, caller.org_id)
        if row is None:
            row = OrgToolSearch(org_id=caller.org_id)
            session.add(row)
        row.mode, row.max_tools, row.max_tokens = wanted.mode, wanted.max_tools, wanted.max_tokens
        row.updated_at = utcnow()
        new = _view(wanted)
        if new != old:
            audit(session, caller.org_id, caller.email, "tool_search.set", "tool_search", old=dict(old), new=dict(new))
    return new
