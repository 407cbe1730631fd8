"""The organization's JSON API under `/api/v1`: its routes, the bounds on request bodies, the OpenAPI document."""

from mcpyard.org.api._api import api_routes, error_response
from mcpyard.org.api._api_people import people_routes
from mcpyard.org.api._api_questions import question_routes
from mcpyard.org.api._api_turns import turn_routes
from mcpyard.org.api._body_limits import BodyLimits
from mcpyard.org.api._openapi import openapi_document

__all__ = [
    "BodyLimits",
    "api_routes",
    "error_response",
    "openapi_document",
    "people_routes",
    "question_routes",
    "turn_routes",
]
