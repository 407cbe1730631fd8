"""How a server's URL and command line are shown to people: whatever may carry a secret is cut to `…` (SEC-2)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from urllib.parse import unquote, urlsplit, urlunsplit

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


def shown_url(url: str, *, marked: bool = True) -> str:
    """A URL for people to read: scheme, host, port and path; a query or user info is cut to `…`, and so is each
    part of the path that looks like a key (a token's shape, or a long run of letters and digits: services that
    put their key in the address, `/mcp/<key>/sse`). Not `marked`: the query and user info are left out unmarked.

    An address whose authority may have been cut short by a password holding `/`, `?` or `#` (`user:pa/ss@host`:
    a port that is not a number, or an `@` in the path) shows its scheme alone.
    """
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return "(not a valid URL)"
    if "@" in parts.path:
        return f"{parts.scheme}://{HIDDEN}"
    path = "/".join(HIDDEN if _key_like(segment) else segment for segment in parts.path.split("/"))
    shown = urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], path, "", ""))
    if marked and (parts.query or parts.fragment):
        shown += f"?{HIDDEN}"
    if marked and "@" in parts.netloc:
        shown = shown.replace("://", f"://{HIDDEN}@", 1)
    return shown


_RUN = re.compile(r"[A-Za-z0-9_.~+=-]{24,}")
_DIGITS = re.compile(r"[0-9]")
_LETTERS = re.compile(r"[A-Za-z]")


def _key_like(segment: str) -> bool:
    """Whether a part of a path looks like a key: a token's shape, or 24 letters and digits or more in a row with a
    few of each (a random key or a UUID; not a slug of words like `my-server-v2-production`)."""
    text = unquote(segment)
    if looks_like_token(text):
        return True
    return any(len(_DIGITS.findall(run)) >= 4 and len(_LETTERS.findall(run)) >= 4 for run in _RUN.findall(text))
