"""The organization's JSON API under `/api/v1`: its operations, declared beside their handlers; the route table
and the OpenAPI document built from them; the bounds on request bodies."""

from mcpyard.org.api._body_limits import BodyLimits
from mcpyard.org.api._health import health_routes, stop_being_ready
from mcpyard.org.api._metrics import metrics_app, metrics_routes
from mcpyard.org.api._openapi import BODY_SCHEMAS, OPERATIONS, api_routes, openapi_document
from mcpyard.org.api._operations import Running, error_response, opened

__all__ = [
    "BODY_SCHEMAS",
    "OPERATIONS",
    "BodyLimits",
    "Running",
    "api_routes",
    "error_response",
    "health_routes",
    "metrics_app",
    "metrics_routes",
    "openapi_document",
    "opened",
    "stop_being_ready",
]
