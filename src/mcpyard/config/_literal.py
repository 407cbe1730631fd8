"""Values written into a config file that look like secrets: a token's shape, or a literal under a secret's name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlsplit

from mcpyard.config._fields import env_label
from mcpyard.config._names import looks_secret

__all__ = ["literal_part", "looks_like_token", "secret_args", "secret_literals"]

_REFERENCE = re.compile(r"\$\{[^{}]*\}")
_SCHEME = re.compile(r"^(?:bearer|basic|token|bot|apikey)\s+", re.IGNORECASE)
_MIN_LITERAL = 8
"""Shorter literals under a secret's name are flags and modes (`AUTH_MODE=oauth`), not secrets."""
_TOKEN_SHAPES = re.compile(
    "|".join(
        (
            r"gh[pousr]_[A-Za-z0-9]{20,}",
            r"github_pat_[A-Za-z0-9_]{20,}",
            r"glpat-[A-Za-z0-9_\-]{20,}",
            r"xox[abposr]-[A-Za-z0-9\-]{10,}",
            r"sk-[A-Za-z0-9_\-]{20,}",
            r"[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
            r"AKIA[0-9A-Z]{16}",
            r"AIza[0-9A-Za-z_\-]{35}",
            r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
        )
    )
)
_SECRET_FLAG = re.compile(
    r"--?[A-Za-z0-9_\-]*(?:key|token|secret|password|passwd|credential|auth)[A-Za-z0-9_\-]*", re.I
)


def literal_part(value: str) -> str:
    """What is left of a value without its `${…}` references and a leading auth scheme (`Bearer `)."""
    previous = None
    while previous != value:
        previous, value = value, _REFERENCE.sub("", value)
    return _SCHEME.sub("", value.strip()).strip()


def looks_like_token(value: str) -> bool:
    """Whether the value holds something shaped like a well-known token or key (GitHub, Slack, AWS, a JWT…)."""
    return _TOKEN_SHAPES.search(_without_references(value)) is not None


def _without_references(value: str) -> str:
    """The value with each `${…}` reference turned into a space, so a token beside one still shows."""
    previous = None
    while previous != value:
        previous, value = value, _REFERENCE.sub(" ", value)
    return value


def _under_secret_name(name: str, value: str) -> bool:
    return looks_secret(name) and len(literal_part(value)) >= _MIN_LITERAL


def secret_literals(fields: Mapping[str, object]) -> list[str]:
    """The fields of an own-form entry that hold a literal secret-looking value, by label (`env.TOKEN`, `args[3]`).

    A literal is what is left when `${…}` references are taken out. It looks secret when it
    has a known token's shape, or when it is at least 8 characters under a secret-looking
    name: an env variable or header (KEY, TOKEN, SECRET, AUTH…), the value after an
    argument like `--api-key`, a URL's password or a secret-looking query parameter.
    """
    found: list[str] = []
    for table in ("env", "headers"):
        pairs = fields.get(table)
        if isinstance(pairs, Mapping):
            for name, value in pairs.items():
                if isinstance(value, str) and (_under_secret_name(str(name), value) or looks_like_token(value)):
                    found.append(env_label(table, str(name)))
    command = fields.get("command")
    if isinstance(command, str) and looks_like_token(command):
        found.append("command")
    args = fields.get("args")
    if isinstance(args, list):
        found.extend(f"args[{index}]" for index in secret_args([arg if isinstance(arg, str) else "" for arg in args]))
    url = fields.get("url")
    if isinstance(url, str) and _secret_url(url):
        found.append("url")
    return found


def secret_args(args: list[str]) -> list[int]:
    """The indexes of the arguments that hold a literal secret-looking value (a token, or a value after `--api-key`)."""
    found: list[int] = []
    for index, arg in enumerate(args):
        flag, equals, value = arg.partition("=")
        after_flag = index > 0 and _SECRET_FLAG.fullmatch(args[index - 1]) is not None and not arg.startswith("-")
        if (
            looks_like_token(arg)
            or (equals and _SECRET_FLAG.fullmatch(flag) and len(literal_part(value)) >= _MIN_LITERAL)
            or (after_flag and len(literal_part(arg)) >= _MIN_LITERAL)
        ):
            found.append(index)
    return found


def _secret_url(url: str) -> bool:
    if looks_like_token(url):
        return True
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return False
    if password and literal_part(password):
        return True
    return any(_under_secret_name(name, value) for name, value in parse_qsl(parts.query, keep_blank_values=True))
