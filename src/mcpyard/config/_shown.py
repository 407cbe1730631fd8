"""How a server's URL and command line are shown to people: whatever may carry a secret is cut to `…` (SEC-2)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["shown_url"]


def shown_url(url: str) -> str:
    """A URL for people to read: scheme, host, port and path; a query or user info is cut to `…`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(not a valid URL)"
    netloc = parts.netloc.rpartition("@")[2]
    shown = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    if parts.query or parts.fragment:
        shown += "?…"
    if "@" in parts.netloc:
        shown = shown.replace("://", "://…@", 1)
    return shown
