"""Every route of the web console, built from the pages each module declares, and its two static files."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpyard.org.web import (
    _limit_pages,
    _live,
    _oauth_pages,
    _people_pages,
    _question_pages,
    _registry_pages,
    _turn_pages,
    _webhook_pages,
)
from mcpyard.org.web._pages import PageRoute, PageRoutes

__all__ = ["PAGE_ROUTES", "web_routes"]

STATIC = {"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}

PAGES = PageRoutes()


@cache
def _static_files() -> dict[str, bytes]:
    folder = files("mcpyard.org.web") / "static"
    return {name: (folder / name).read_bytes() for name in STATIC}


@PAGES.public("/static/{name}", "GET")
async def static(pages: object, request: Request) -> Response:
    del pages
    name = request.path_params["name"]
    if name not in STATIC:
        return Response("not found", status_code=404, media_type="text/plain")
    content = _static_files()[name]
    return Response(content, media_type=STATIC[name], headers={"Cache-Control": "public, max-age=300"})


PAGE_ROUTES: tuple[PageRoute, ...] = (
    *PAGES.declared,
    *_people_pages.PAGES.declared,
    *_registry_pages.PAGES.declared,
    *_turn_pages.PAGES.declared,
    *_question_pages.PAGES.declared,
    *_live.PAGES.declared,
    *_oauth_pages.PAGES.declared,
    *_webhook_pages.PAGES.declared,
    *_limit_pages.PAGES.declared,
)
"""Every page of the console, each declared once beside its handler."""


def web_routes(declared: tuple[PageRoute, ...] = PAGE_ROUTES) -> list[Route]:
    """The console's routes: one per declared page, taking exactly its methods (a method declared twice on one path
    is refused by name)."""
    seen: set[tuple[str, str]] = set()
    for page in declared:
        for method in page.methods:
            if (method, page.path) in seen:
                raise ValueError(f"{method} {page.path} is declared twice")
            seen.add((method, page.path))
    return [Route(page.path, page.endpoint, methods=list(page.methods)) for page in declared]
