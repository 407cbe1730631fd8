"""Names the configuration treats specially, and how messages name sources, entries, fields and the rules to write."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

from mcpyard.config._model import SourceKind

__all__ = [
    "CREDENTIAL_VARIABLES",
    "NO_ALLOWLIST",
    "SOURCE_LABELS",
    "allow_hint",
    "approves_tools",
    "deny_hint",
    "deny_rules",
    "describe_entry",
    "describe_source",
    "is_credential_variable",
    "is_http_token",
    "leaves_out_tools",
    "looks_secret",
    "nearest",
    "nearest_field",
    "offers_only_tools",
    "prefix_users",
    "quote",
    "source_words",
    "tool_list",
    "tool_prefix",
]

CREDENTIAL_VARIABLES: frozenset[str] = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENCODE_API_KEY",
        "OPENCODE_GO_API_KEY",
        "DEEPSEEK_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "OPENROUTER_API_KEY",
        "GROQ_API_KEY",
        "XAI_API_KEY",
        "MISTRAL_API_KEY",
    }
)
"""Environment variables a project file may never read (CFG-6); their references expand to empty."""

_SECRET_MARKERS = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
)

# RFC 9110 section 5.6.2: token = 1*tchar.
_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

SOURCE_LABELS: dict[SourceKind, str] = {
    "flag": "--mcp-config file",
    "user": "user config",
    "project": "project file",
}

_QUOTE_LIMIT = 80


def looks_secret(name: str) -> bool:
    """Whether an environment variable or header name looks like it holds a secret (CONN-2).

    True when the name contains KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, AUTH,
    COOKIE or SESSION, in any case. Such variables are not passed by `inherit_env: "*"`.
    """
    folded = name.casefold()
    return any(marker.casefold() in folded for marker in _SECRET_MARKERS)


CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
"""The headers that carry a credential whatever else they hold (any header whose name looks secret does too)."""


def credential_header(name: str) -> bool:
    """`Authorization`, `Proxy-Authorization`, `Cookie`, or a header whose name looks secret (SEC-3, AUTH-3)."""
    return name.lower() in CREDENTIAL_HEADERS or looks_secret(name)


def is_credential_variable(name: str) -> bool:
    """Whether a project file is forbidden to read this variable (CFG-6), in any case."""
    return name.upper() in CREDENTIAL_VARIABLES


def is_http_token(name: str) -> bool:
    """Whether `name` may be an HTTP header name: one or more RFC 9110 token characters."""
    return bool(name) and all(char in _TCHAR for char in name)


def nearest(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to a misspelt `name` (for "did you mean …?"), or None when none is close."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None


def quote(text: str) -> str:
    """Show a name taken from a file (an id, a key) in a message, escaping anything unprintable.

    Ids and keys of a project file are untrusted text: `repr` escapes control, bidi and
    other invisible characters so a message can never carry a terminal escape sequence.
    """
    if len(text) > _QUOTE_LIMIT:
        return repr(text[:_QUOTE_LIMIT]) + "…"
    return repr(text)


def source_words(source: str) -> str:
    """How a message names a source to people: `--mcp-config file`, `user config`, `project file`.

    `source` is a source kind as JSON gives it (`flag`, `user`, `project`); any other text is
    returned as it is.
    """
    words: dict[str, str] = dict(SOURCE_LABELS.items())
    return words.get(source, source)


def describe_source(kind: SourceKind, path: Path) -> str:
    """`user config /home/me/.config/mcpyard/config.toml`, and so on."""
    return f"{SOURCE_LABELS[kind]} {path}"


def describe_entry(server_id: str, kind: SourceKind, path: Path) -> str:
    """`server 'github' in user config /home/me/.config/mcpyard/config.toml`."""
    return f"server {quote(server_id)} in {describe_source(kind, path)}"


_LEAVE_OUT_WORDS = frozenset(
    {"disabled", "disable", "exclude", "excluded", "excludes", "disallowed", "disallow", "blocked", "block"}
    | {"blocklist", "blocklisted", "blacklist", "blacklisted", "deny", "denied", "denylist", "denylisted", "ignored"}
    | {"ignore", "hidden", "hide", "forbidden", "forbid", "banned", "ban", "skip", "skipped", "omit", "omitted"}
    | {"remove", "removed"}
)
"""Words before `tools` in other clients' names for a list of a server's tools to leave out (`disabledTools`,
`excludeTools`, `disabled_tools`, `disallowedTools`…): deny rules here (POL-4)."""
_OFFER_ONLY_WORDS = frozenset(
    {"enabled", "enable", "include", "included", "includes", "allowed", "allow", "allowlist", "allowlisted"}
    | {"whitelist", "whitelisted", "only", "permitted", "permit", "selected", "select", "exposed", "expose"}
    | {"visible", "keep", "kept"}
)
"""Words before `tools` in other clients' names for a list of the only tools to offer (`includeTools`,
`enabled_tools`…): mcpyard has none; deny the others."""
_APPROVE_WORDS = frozenset({"autoapprove", "autoapproved", "alwaysallow", "alwaysallowed", "autoallow", "autoallowed"})
"""Other clients' names for a list of tools to run without asking (Cline's and Roo's `autoApprove`, `alwaysAllow`;
`approved_tools`…): never taken over; `permissions.allow`."""
NO_ALLOWLIST = (
    "mcpyard has no list of the only tools to offer from a server: all of its tools are offered, and a call "
    "still asks as your mode says; to block the others, add them to permissions.deny"
)
"""What to do instead of a list of the only tools to offer (`offers_only_tools`)."""


def _folded(key: str) -> str:
    """A key lower-cased and run together, however a client spells it: `excluded_tools`, `excludedTools`,
    `Excluded-Tools` are all `excludedtools`."""
    return key.casefold().replace("_", "").replace("-", "").replace(" ", "")


def _list_word(key: str) -> str | None:
    """What a key says of a list of tools: the words before `tools` (or `tool`), folded (`excluded_tools`:
    `excluded`); None for a key that does not end so."""
    folded = _folded(key)
    for suffix in ("tools", "tool"):
        if folded.endswith(suffix) and folded != suffix:
            return folded.removesuffix(suffix)
    return None


def leaves_out_tools(key: str) -> bool:
    """Whether `key` is another client's name for a list of a server's tools to leave out, however spelt: a word
    like disabled, excluded, disallowed, blocked or denied before `tools` (POL-4)."""
    return _list_word(key) in _LEAVE_OUT_WORDS


def offers_only_tools(key: str) -> bool:
    """Whether `key` is another client's name for a list of the only tools to offer, however spelt: a word like
    enabled, included, allowed or only before `tools`."""
    return _list_word(key) in _OFFER_ONLY_WORDS


def approves_tools(key: str) -> bool:
    """Whether `key` is another client's name for a list of tools to run without asking, however spelt
    (`autoApprove`, `always_allow`, `approved_tools`…)."""
    return _folded(key) in _APPROVE_WORDS or _list_word(key) in _APPROVE_WORDS | {"approved", "trusted"}


def nearest_field(key: str, fields: Iterable[str]) -> str | None:
    """`nearest`, for a field of a server entry: never a list of tools (`shared_tools`) for a key whose words before
    `tools` are not that list's (`hidden_tools` leaves tools out; it is no slip of `shared_tools`, which shares them).
    """
    close = nearest(key, fields)
    word = _list_word(key)
    if close is None or word is None or not close.endswith("_tools"):
        return close
    return close if nearest(word, [close.removesuffix("_tools").replace("_", "")]) is not None else None


def tool_list(value: object) -> list[str] | None:
    """`value` as another client's list of tool names; None when it is not a list of non-empty names."""
    if not isinstance(value, list) or not all(isinstance(tool, str) and tool for tool in value):
        return None
    return [str(tool) for tool in value]


def deny_hint(server_id: str, name: object, tools: object, *, separator: str, where: str) -> str:
    """How to keep the tools another client's list leaves out from running here: the deny rule to write in `where`
    (POL-4), each tool named as the model sees it with `separator` (CAT-1)."""
    listed = tool_list(tools)
    if not listed:
        rule = deny_rules(server_id, name, ["TOOL"], separator=separator)[0]
        return (
            f'to keep a tool from running, add its name as the model sees it (permissions.deny = ["{rule}"]) to {where}'
        )
    rules = _rules(server_id, name, listed, separator)
    return f"to keep those tools from running, add permissions.deny = [{rules}] to {where}"


def allow_hint(server_id: str, name: object, tools: object, *, separator: str, where: str) -> str:
    """What to do instead of another client's list of tools to run without asking: the allow rule to write (POL-4)."""
    rules = _rules(server_id, name, tool_list(tools) or ["TOOL"], separator)
    return (
        "mcpyard never runs a tool without asking because a server's entry lists it; allow tools yourself with "
        f"permissions.allow = [{rules}] in {where}"
    )


def _rules(server_id: str, name: object, tools: list[str], separator: str) -> str:
    """`"b__add", "b__fail"`: the tools' names as the model sees them, as a rule list writes them."""
    return ", ".join(f'"{rule}"' for rule in deny_rules(server_id, name, tools, separator=separator))


def deny_rules(server_id: str, name: object, tools: Iterable[str], *, separator: str) -> list[str]:
    """The `permissions.deny` rules that keep `tools` of a server from running (POL-4); allow rules name them alike.

    Each names the tool as the model sees it (CAT-1): the server's `name` (else its id) as the
    prefix, then `separator` (the host's `tool_name_separator`), then the tool.
    """
    from mcpyard.catalog import tool_name

    prefix = tool_prefix(server_id, name)
    return [tool_name(prefix, separator, tool) for tool in dict.fromkeys(tools)]


def tool_prefix(server_id: str, name: object) -> str:
    """The prefix of a server's tools (CAT-1): its `name` as written (else its id), sanitized."""
    # The catalog names tools; it imports the config package, so it is imported here.
    from mcpyard.catalog import server_prefix

    return server_prefix(name if isinstance(name, str) else None, server_id, 0)


def prefix_users(servers: Iterable[tuple[str, object]]) -> dict[str, str]:
    """The server whose tools each prefix names (CAT-1), by id, of the servers that run given in order as id and
    `name`: the later of two with the same prefix is used, the earlier one shadowed."""
    return {tool_prefix(server_id, name): server_id for server_id, name in servers}
