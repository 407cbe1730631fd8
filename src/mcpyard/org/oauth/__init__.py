"""The organization service as its own OAuth 2.1 authorization server for its members' MCP clients (ORG-10, API-7)."""

from mcpyard.org.oauth._clients import redirect_problem
from mcpyard.org.oauth._consent import Consent, consent_of, decide
from mcpyard.org.oauth._provider import SCOPE, OrgAuthorizationServer
from mcpyard.org.oauth._routes import OAUTH_ROUTES, oauth_routes

__all__ = [
    "OAUTH_ROUTES",
    "SCOPE",
    "Consent",
    "OrgAuthorizationServer",
    "consent_of",
    "decide",
    "oauth_routes",
    "redirect_problem",
]
