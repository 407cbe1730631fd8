"""The web console's pages are declared once, beside their handlers, and its route table is built from the
declarations: each page takes exactly its declared methods, a method declared twice on one path is refused by
name, and the app serves no route that is neither an API operation, a declared page, a probe, the MCP endpoint nor its
OAuth sign-in (ORG-1, STYLE 14)."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from mcpyard.org import OrgSettings, org_app
from mcpyard.org.api import OPERATIONS
from mcpyard.org.mcp import MCP_METHODS, MCP_PATHS
from mcpyard.org.oauth import OAUTH_ROUTES
from mcpyard.org.web import PAGE_ROUTES, Pages, web_routes
from mcpyard.org.web._pages import PageRoutes, Visit


async def _page(pages: Pages, request: Request, visit: Visit) -> Response:
    del pages, request
    return PlainTextResponse(visit.caller.member_id)


def test_org1_each_declared_page_is_one_route_with_exactly_its_methods() -> None:
    declared = PageRoutes()
    declared.page("/things/{thing_id}", "GET", "POST", back="/things")(_page)
    declared.page("/things", "GET")(_page)
    built = web_routes(tuple(declared.declared))
    assert [(route.path, sorted(route.methods or ())) for route in built] == [
        ("/things/{thing_id}", ["GET", "HEAD", "POST"]),
        ("/things", ["GET", "HEAD"]),
    ]


def test_org1_a_page_method_declared_twice_on_one_path_is_refused_by_name() -> None:
    declared = PageRoutes()
    declared.page("/things", "GET", "POST")(_page)
    declared.page("/things", "POST")(_page)
    with pytest.raises(ValueError, match="POST /things is declared twice"):
        web_routes(tuple(declared.declared))


def test_org1_the_app_serves_the_declared_operations_and_pages_and_nothing_else(tmp_path: Path) -> None:
    app = org_app(OrgSettings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'org.db'}", data_home=tmp_path))
    routes = [route for route in app.routes if isinstance(route, Route)]
    served = {(route.path, method) for route in routes for method in route.methods or ()}
    declared = {(operation.path, operation.method) for operation in OPERATIONS}
    declared |= {(page.path, method) for page in PAGE_ROUTES for method in page.methods}
    declared |= {("/healthz", "GET"), ("/readyz", "GET")}  # the probes, for load balancers (API-8)
    declared |= {("/metrics", "GET")}  # Prometheus, for an owner or admin (OBS-1)
    declared |= {(path, method) for path in MCP_PATHS for method in MCP_METHODS}  # members' own clients (ORG-10)
    declared |= {(path, method) for path, methods in OAUTH_ROUTES for method in methods}  # their sign-in (API-7)
    assert {item for item in served if item[1] != "HEAD"} == declared
    pages = {page.path for page in PAGE_ROUTES}
    assert {"/login", "/servers", "/tools/{tool_id}", "/inbox", "/a/{slug}", "/events", "/static/{name}"} <= pages
