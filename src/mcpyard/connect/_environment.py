"""The environment a stdio server starts with: a minimal base plus what the entry asks for (CONN-2)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Literal

__all__ = ["BASE_VARIABLES", "SECRET_MARKERS", "looks_secret", "server_environment"]

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
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION")


def looks_secret(name: str) -> bool:
    """Whether an environment variable's name looks like it holds a secret (CONN-2)."""
    upper = name.upper()
    return any(marker in upper for marker in SECRET_MARKERS)


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
