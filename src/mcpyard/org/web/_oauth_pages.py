"""Pages for members' own MCP clients: how to connect one, the consent a client's sign-in asks for, and the
clients a member let in ("Connected apps"), each revocable.

The consent page names the client as it named itself, where the member's browser goes back to, the
organization, and what the client may do; it cannot be framed. Allowing sends the browser to the
client's registered redirect address with a one-time code; denying, with `access_denied`. The page's
own Content-Security-Policy lets its form lead there (and nowhere else).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from mcpyard.errors import Invalid
from mcpyard.org._bodies import origin_of
from mcpyard.org.oauth import consent_of, decide, redirect_problem
from mcpyard.org.services import list_grants, revoke_grant
from mcpyard.org.web._pages import Notice, PageRoutes, Pages, Visit, field
from mcpyard.org.web._security import CONTENT_SECURITY_POLICY

__all__ = ["PAGES"]

PAGES = PageRoutes()


def _form_action(redirect_uri: str) -> str:
    """The CSP source that lets the consent form's redirect reach the client: its origin, or its own scheme."""
    if redirect_problem(redirect_uri) is not None:
        return ""  # never a source the policy's grammar does not allow (registration refuses such an address)
    parts = urlsplit(redirect_uri)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:"


@PAGES.page("/clients", "GET")
async def clients(pages: Pages, request: Request, visit: Visit) -> Response:
    context = {
        "title": "MCP clients",
        "endpoint": f"{origin_of(request)}/mcp",
        "grants": await list_grants(pages.svc, visit.caller),
    }
    return pages.render(request, "clients.html", context, visit=visit)


@PAGES.page("/clients/{grant_id}/revoke", "POST", back="/clients")
async def revoke(pages: Pages, request: Request, visit: Visit) -> Response:
    await pages.form(request, visit)
    await revoke_grant(pages.svc, visit.caller, request.path_params["grant_id"])
    return pages.redirect(request, "/clients", Notice("done", "Access revoked: that client's tokens no longer work."))


@PAGES.page("/oauth/consent", "GET", "POST")
async def consent(pages: Pages, request: Request, visit: Visit) -> Response:
    if request.method == "POST":
        form = await pages.form(request, visit)
        answer = field(form, "decision")
        if answer not in ("allow", "deny"):
            raise Invalid("invalid_request", "choose Allow or Deny")
        opaque, allow = field(form, "request"), answer == "allow"
        to = await decide(pages.svc, visit.caller, opaque, allow=allow, issuer=origin_of(request))
        return RedirectResponse(to, status_code=303)
    shown = await consent_of(pages.svc, visit.caller, request.query_params.get("request", ""))
    response = pages.render(request, "consent.html", {"title": "Allow access?", "consent": shown}, visit=visit)
    source = _form_action(shown.redirect_uri)
    policy = CONTENT_SECURITY_POLICY.replace("form-action 'self'", f"form-action 'self' {source}".rstrip())
    response.headers["content-security-policy"] = policy
    return response
