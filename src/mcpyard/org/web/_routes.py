"""Every route of the web console, and its two static files."""

from __future__ import annotations

from importlib.resources import files

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from mcpyard.org.web._live import Live, live_routes
from mcpyard.org.web._pages import Pages
from mcpyard.org.web._people_pages import people_pages
from mcpyard.org.web._question_pages import question_pages
from mcpyard.org.web._registry_pages import registry_pages
from mcpyard.org.web._turn_pages import turn_pages

__all__ = ["Live", "Pages", "web_routes"]

STATIC = {"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}


def _static_files() -> dict[str, bytes]:
    folder = files("mcpyard.org.web") / "static"
    return {name: (folder / name).read_bytes() for name in STATIC}


def web_routes(pages: Pages, live: Live) -> list[BaseRoute]:
    """The pages, their live updates and their static files, made once with the app."""
    content = _static_files()

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(content[name], media_type=STATIC[name], headers={"Cache-Control": "public, max-age=300"})

    return [
        Route("/static/{name}", static, methods=["GET"]),
        *people_pages(pages),
        *registry_pages(pages),
        *turn_pages(pages),
        *question_pages(pages),
        *live_routes(pages, live),
    ]
