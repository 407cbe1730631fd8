"""The organization's web console: server-rendered pages over the same service functions as the JSON API.

Pages are Jinja2 templates, escaped everywhere; one small script (`static/app.js`) makes them
live, and every core action also works without it (forms post, then redirect).
"""

from mcpyard.org._words import code_span, text_of
from mcpyard.org.web._pages import Pages
from mcpyard.org.web._routes import PAGE_ROUTES, web_routes
from mcpyard.org.web._security import SecurityHeaders
from mcpyard.org.web._streams import Live
from mcpyard.org.web._text import code_spans, shown_time, with_results, with_results_cut

__all__ = [
    "PAGE_ROUTES",
    "Live",
    "Pages",
    "SecurityHeaders",
    "code_span",
    "code_spans",
    "shown_time",
    "text_of",
    "web_routes",
    "with_results",
    "with_results_cut",
]
