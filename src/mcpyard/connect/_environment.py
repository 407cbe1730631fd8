"""The environment a stdio server starts with: a minimal base plus what the entry asks for (CONN-2)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Literal

from mcpyard.config import looks_secret

__all__ = ["BASE_VARIABLES", "LOCATION_VARIABLES", "minimal_environment_note", "server_environment"]

BASE_VARIABLES: tuple[str, ...] = (
    ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR")
    if sys.platform != "win32"
    else (
        "PATH",
        "PATHEXT",
        "SYSTEMROOT",
        "SYSTEMDRIVE",
        "APPDATA",
        "LOCALAPPDATA",
        "USERPROFILE",
        "TEMP",
        "TMP",
    )
)


LOCATION_VARIABLES: tuple[str, ...] = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)
"""Where certificates and proxies are: passed on too, unless a value carries a credential (`user:pass@`)."""


def _credential_free(value: str) -> bool:
    return "@" not in value


def minimal_environment_note(inherit: Iterable[str] | Literal["*"], reason: str = "") -> str | None:
    """What a failed stdio server's reason adds about its environment, unless it had the whole one.

    Nothing either when the reason is its `cwd` (`cwd: the folder … does not exist`): no variable would help.
    """
    if inherit == "*" or reason.startswith("cwd:"):
        return None
    return (
        "it started with a minimal environment (PATH, HOME, locale, temp folder, certificate and proxy "
        'locations); pass more with `inherit_env` (a list of names, or "*" for all but secret-looking ones) or `env`'
    )


def server_environment(
    environ: Mapping[str, str],
    inherit: Iterable[str] | Literal["*"],
    extra: Iterable[tuple[str, str]],
) -> dict[str, str]:
    """Base variables and certificate and proxy locations, then inherited ones (`*`: all but secret-looking
    names), then `env`."""
    env = {name: environ[name] for name in BASE_VARIABLES if name in environ}
    env.update(
        (name, value)
        for name in LOCATION_VARIABLES
        if (value := environ.get(name)) is not None and _credential_free(value)
    )
    if inherit == "*":
        env.update({name: value for name, value in environ.items() if not looks_secret(name)})
    else:
        env.update({name: environ[name] for name in inherit if name in environ})
    env.update(extra)
    return env
