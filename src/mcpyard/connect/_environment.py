"""The environment a stdio server starts with: a minimal base plus what the entry asks for (CONN-2)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Literal

from mcpyard.config import looks_secret

__all__ = ["BASE_VARIABLES", "server_environment"]

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


def server_environment(
    environ: Mapping[str, str],
    inherit: Iterable[str] | Literal["*"],
    extra: Iterable[tuple[str, str]],
) -> dict[str, str]:
    """Base variables, then inherited ones (`*`: all but secret-looking names), then `env`."""
    env = {name: environ[name] for name in BASE_VARIABLES if name in environ}
    if inherit == "*":
        env.update({name: value for name, value in environ.items() if not looks_secret(name)})
    else:
        env.update({name: environ[name] for name in inherit if name in environ})
    env.update(extra)
    return env
