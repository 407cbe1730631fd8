"""How a server's URL and command line are shown to people: whatever may carry a secret is cut to `…` (SEC-2)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

from mcpyard.config._literal import looks_like_token, secret_args

__all__ = ["HIDDEN", "shown_command", "shown_url"]

HIDDEN = "…"
"""What stands for a value that is not shown."""


def shown_command(command: str, args: Sequence[str]) -> str:
    """A command line for people to read: each value that looks like a secret written into it is cut to `…`.

    The same values `mcpyard import` lists as secrets written into the file: a token's shape
    anywhere, the value after `--api-key` (or in `--api-key=VALUE`, cut to `--api-key=…`).
    """
    words = [command, *args]
    hidden = {0} if looks_like_token(command) else set()
    hidden |= {index + 1 for index in secret_args(list(args))}
    shown: list[str] = []
    for index, word in enumerate(words):
        flag, equals, _ = word.partition("=")
        if index not in hidden:
            shown.append(shlex.quote(word))
        elif equals and flag.startswith("-") and not looks_like_token(flag):
            shown.append(f"{shlex.quote(flag + equals)}{HIDDEN}")
        else:
            shown.append(HIDDEN)
    return " ".join(shown)


def shown_url(url: str) -> str:
    """A URL for people to read: scheme, host, port and path; a query or user info is cut to `…`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(not a valid URL)"
    netloc = parts.netloc.rpartition("@")[2]
    shown = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    if parts.query or parts.fragment:
        shown += f"?{HIDDEN}"
    if "@" in parts.netloc:
        shown = shown.replace("://", f"://{HIDDEN}@", 1)
    return shown
