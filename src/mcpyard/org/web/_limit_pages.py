"""Pages for owners and admins: the organization's limits on calls, and its usage with a bar per day (ORG-11, API-8).

The limits page edits what `PUT /api/v1/limits` sets (an empty field: no limit). The usage page shows
what `GET /api/v1/usage` answers: a chart of calls per UTC day, drawn on the server as inline SVG (no
script, no style attribute: the Content-Security-Policy stays strict), and tables by member, server
and tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from mcpyard.errors import Forbidden, Invalid
from mcpyard.org.rules import LIMIT_FIELDS, MAX_PER_DAY, MAX_PER_MINUTE
from mcpyard.org.services import UsageView, get_limits, set_limits, usage, usage_period
from mcpyard.org.store import utcnow
from mcpyard.org.web._pages import Notice, PageRoutes, Pages, Visit, field

__all__ = ["PAGES"]

PAGES = PageRoutes()

WHO = (("member", "Each member"), ("token", "Each API token or MCP client"), ("teammate", "Each teammate"))
CHART_HEIGHT = 120
"""The tallest bar, in SVG units; a day's bar is as tall as its share of the busiest day."""
BAR_WIDTH = 16


@dataclass(frozen=True, slots=True)
class Bar:
    """One day of the chart: where its bars stand and what they say."""

    day: str
    x: int
    height: int
    error_height: int
    calls: int
    errors: int


def _admin(visit: Visit, what: str) -> None:
    if not visit.caller.is_admin:
        raise Forbidden("forbidden", f"only owners and admins {what}")


def _form_limit(name: str, text: str) -> int | None:
    """A limit as typed: empty is no limit; anything else must be a whole number (the service checks its range)."""
    text = text.strip()
    if not text:
        return None
    if not (text.isascii() and text.isdigit()):  # "²" is a digit to Python, not a number
        top = MAX_PER_MINUTE if name.endswith("_per_minute") else MAX_PER_DAY
        raise Invalid("invalid_request", f"`{name}` must be a whole number from 0 to {top}, or empty for no limit")
    return int(text)


@PAGES.page("/limits", "GET")
async def limits_page(pages: Pages, request: Request, visit: Visit) -> Response:
    _admin(visit, "see and set the limits")
    limits = await get_limits(pages.svc, visit.caller)
    context = {"title": "Limits", "limits": limits, "who": WHO, "max_minute": MAX_PER_MINUTE, "max_day": MAX_PER_DAY}
    return pages.render(request, "limits.html", context, visit=visit)


@PAGES.page("/limits", "POST")
async def save_limits(pages: Pages, request: Request, visit: Visit) -> Response:
    form = await pages.form(request, visit)
    body: dict[str, Any] = {name: _form_limit(name, field(form, name)) for name in LIMIT_FIELDS}
    await set_limits(pages.svc, visit.caller, body)
    return pages.redirect(request, "/limits", Notice("done", "Limits saved."))


def bars(by_day: list[UsageView], first: date, last: date) -> list[Bar]:
    """A bar for every day from `first` to `last` (a day without calls too), scaled to the busiest day."""
    found = {row["key"]: row for row in by_day}
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    top = max((row["calls"] for row in by_day), default=0) or 1
    drawn = []
    for index, day in enumerate(days):
        row = found.get(day.isoformat())
        calls, errors = (row["calls"], row["errors"]) if row is not None else (0, 0)
        height = round(CHART_HEIGHT * calls / top)
        drawn.append(Bar(day.isoformat(), index * BAR_WIDTH, height, round(CHART_HEIGHT * errors / top), calls, errors))
    return drawn


@PAGES.page("/usage", "GET")
async def usage_page(pages: Pages, request: Request, visit: Visit) -> Response:
    _admin(visit, "read the usage")
    since = request.query_params.get("since", "").strip() or None
    until = request.query_params.get("until", "").strip() or None
    if any(value is not None and "\x00" in value for value in (since, until)):
        raise Invalid("invalid_request", "a date held a NUL character")
    start, end = usage_period(since, until, utcnow())
    svc, caller = pages.svc, visit.caller
    tables = {group: await usage(svc, caller, group, since, until) for group in ("member", "server", "tool")}
    days = bars(await usage(svc, caller, "day", since, until), start.date(), (end - timedelta(microseconds=1)).date())
    context = {
        "title": "Usage",
        "since": start.date().isoformat(),
        "until": (end - timedelta(microseconds=1)).date().isoformat(),
        "bars": days,
        "chart_width": max(len(days), 1) * BAR_WIDTH,
        "chart_height": CHART_HEIGHT,
        "bar_width": BAR_WIDTH - 3,
        "tables": tables,
        "total": sum(row["calls"] for row in tables["member"]),
    }
    return pages.render(request, "usage.html", context, visit=visit)
