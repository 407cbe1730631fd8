"""The origin a credential is bound to: scheme, host and port of the URL it was entered for (THREATS: org service).

A sealed token or client secret is sent only to the origin it was given for. Two URLs are the
same origin when their scheme, host and port are equal once normalised (case, default port,
IDNA); any other spelling of a host (`127.1` for `127.0.0.1`, a trailing dot the guard did not
strip) is another origin, so a doubtful case drops the credential rather than send it.
"""

from __future__ import annotations

import httpx2

__all__ = ["origin_of", "same_origin"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> str | None:
    """`scheme://host:port` of `url`, normalised; None when it is no absolute http(s) URL."""
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError, ValueError):
        return None
    scheme = parsed.scheme.lower()
    host = parsed.raw_host.decode("ascii", errors="replace").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    port = parsed.port if parsed.port is not None else _DEFAULT_PORTS[scheme]
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def same_origin(first: str, second: str) -> bool:
    """Whether a credential entered for `first` may be sent to `second` (an unreadable URL is no origin)."""
    origin = origin_of(first)
    return origin is not None and origin == origin_of(second)
