"""Read one configuration file and split it into server entries and host settings (CFG-1, CFG-2)."""

from __future__ import annotations

import difflib
import errno
import json
import os
import stat
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mcpyard.config._aliases import aliased
from mcpyard.config._jsonc import strip_jsonc
from mcpyard.config._model import SourceKind
from mcpyard.config._names import describe_source, quote
from mcpyard.errors import ConfigError

__all__ = ["CODEX_KEYS", "SETTING_KEYS", "Form", "Format", "RawEntry", "RawSource", "read_document", "split_source"]

Format = Literal["json", "toml"]
Form = Literal["own", "shared"]

MAX_CONFIG_BYTES = 4 * 1024 * 1024
MAX_CLAUDE_STATE_BYTES = 256 * 1024 * 1024
"""Claude Code's own `~/.claude.json` also keeps each folder's history: tens of megabytes are common."""
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
SETTING_KEYS = (
    "permissions",
    "mode",
    "tool_name_separator",
    "max_result_bytes",
    "max_stored_result_bytes",
    "grants",
    "hooks",
    "model",
    "tool_search",
)
CODEX_KEYS = frozenset(
    {"approval_policy", "sandbox_mode", "sandbox_workspace_write", "shell_environment_policy", "model_provider"}
    | {"model_providers", "model_reasoning_effort", "model_reasoning_summary", "model_verbosity", "profile"}
    | {"profiles", "notify", "projects", "file_opener", "history", "tui", "model_context_window", "review_model"}
    | {"model_max_output_tokens", "model_auto_compact_token_limit", "hide_agent_reasoning", "show_raw_agent_reasoning"}
    | {"disable_response_storage", "preferred_auth_method", "forced_login_method", "project_doc_max_bytes"}
)
"""Top-level keys only Codex writes in its config.toml (beside its [mcp_servers] tables)."""
SLIP_CUTOFF = 0.75
"""How alike an unknown top-level key and one of ours must be for the file to be ours with a slip (`mdoe`: 0.75)
rather than another program's settings (`version` is 0.67 like `permissions`)."""
_FORMS_HELP = (
    "list servers under `servers` (a list of objects with `id`) or `mcpServers` (an object keyed by id); "
    "in TOML write [[mcp.servers]] or [mcp.mcpServers.<id>] tables"
)
_CODEX_HELP = (
    "this is Codex's config.toml (its [mcp_servers] tables), not mcpyard's own: give Codex's file with --mcp-config, "
    "which reads it as it is, or convert it with `mcpyard import FILE --write FILE`; here, write [[mcp.servers]] "
    "or [mcp.mcpServers.<id>] tables"
)
_NOT_A_LIST = {
    "toml": "a list: write [[mcp.servers]] tables, each with an `id`, or [mcp.mcpServers.<id>] tables keyed by id",
    "project": (
        "a list of objects, each with an `id`; for an object keyed by id, as Claude Code writes .mcp.json, rename "
        "`servers` to `mcpServers` (VS Code's `servers` object is read only from a file given with --mcp-config)"
    ),
    "json": (
        "a list of objects, each with an `id`; for an object keyed by id (as other MCP clients write it) use "
        "`mcpServers` (a VS Code mcp.json is read as it is when it holds nothing but servers VS Code would read, "
        "or at .vscode/mcp.json, or once a server has its `type`)"
    ),
}
"""What `servers` must be where it is an object keyed by id: in TOML, in a project file, in another JSON file."""
_EMPTY_HELP: dict[Format, str] = {
    "json": "list them under `mcpServers` (an object keyed by id) or `servers`",
    "toml": "write [mcp.mcpServers.<id>] or [[mcp.servers]] tables in it",
}


@dataclass(frozen=True, slots=True)
class RawEntry:
    """One server entry as written: its id and its fields (without `id`)."""

    id: str
    fields: Mapping[str, object]
    written_as: Mapping[str, str] = field(default_factory=dict)
    """Fields written under another client's name, and that name (`url` → Windsurf's `serverUrl`), for messages."""


@dataclass(slots=True)
class RawSource:
    """One file split into its form, entries in file order, host settings and warnings."""

    kind: SourceKind
    path: Path
    form: Form | None
    entries: tuple[RawEntry, ...]
    settings: dict[str, object]
    warnings: list[str] = field(default_factory=list)


class _Object(dict[str, object]):
    """A JSON object that remembers the keys it saw twice (`json` keeps the last silently)."""

    __slots__ = ("duplicates",)

    def __init__(self, pairs: list[tuple[str, object]]) -> None:
        super().__init__()
        self.duplicates: list[str] = []
        for key, value in pairs:
            if key in self:
                self.duplicates.append(key)
            self[key] = value


def read_document(
    path: Path,
    fmt: Format,
    *,
    kind: SourceKind,
    suggest: bool = False,
    label: str | None = None,
    comments: Callable[[dict[str, object]], bool] | None = None,
) -> dict[str, object]:
    """Read and parse a JSON or TOML file into its top-level object.

    Args:
        suggest: when parsing fails, try the other format and, if that works, say to
            rename the file (for `--mcp-config`, whose format comes from its extension).
        label: how messages name the file (default: its source kind and path).
        comments: for JSON that parses only without its comments and trailing commas (JSONC):
            whether this document may have them (its client reads them); None: never.

    Raises:
        ConfigError: the file cannot be read, is not UTF-8, is empty, is malformed, repeats a key
            or is not an object at the top level.
    """
    label = label or describe_source(kind, path)
    text = _read_text(path, label)
    if not text.strip():
        # Blank text is valid TOML (no tables) and invalid JSON: neither says that nothing was written in it.
        instead = ", or give the file that lists them" if kind == "flag" else ""
        raise ConfigError(f"{label} is empty, so it holds no servers; {_EMPTY_HELP[fmt]}{instead}", source=path)
    try:
        document = _parse(text, fmt)
    except ValueError as error:
        commented = _commented(text) if fmt == "json" and comments is not None else None
        if commented is not None and comments is not None and comments(commented):
            _refuse_duplicates(commented, label, path)
            return commented
        other: Format = "json" if fmt == "toml" else "toml"
        hint = ""
        if commented is not None:
            hint = "; JSON has no comments or trailing commas (only a VS Code or Gemini CLI file may): remove them"
        elif suggest and _parses_as(text, other):
            hint = f"; it reads as {other.upper()}: rename it to end in .{other}"
        raise ConfigError(f"{label} is not valid {fmt.upper()}: {error}{hint}", source=path) from None
    except RecursionError:
        raise ConfigError(f"{label} nests values too deeply to be a configuration", source=path) from None
    if not isinstance(document, dict):
        raise ConfigError(
            f"{label} must hold an object at the top level, with `servers` or `mcpServers` in it",
            source=path,
        )
    _refuse_duplicates(document, label, path)
    return document


def _read_bytes(path: Path) -> bytes:
    # O_NONBLOCK: a FIFO or device planted at the path must not hang the loader.
    fd = os.open(path, _READ_FLAGS)
    with os.fdopen(fd, "rb") as stream:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return stream.read(_limit(path) + 1)


def _limit(path: Path) -> int:
    return MAX_CLAUDE_STATE_BYTES if path.name == ".claude.json" else MAX_CONFIG_BYTES


def _read_text(path: Path, label: str) -> str:
    try:
        data = _read_bytes(path)
    except FileNotFoundError:
        raise ConfigError(f"{label} does not exist; check the path", source=path) from None
    except IsADirectoryError:
        raise ConfigError(f"{label} is a folder; give the path of a configuration file", source=path) from None
    except PermissionError:
        raise ConfigError(f"{label} cannot be read (permission denied); check its permissions", source=path) from None
    except OSError as error:
        raise ConfigError(f"{label} cannot be read ({error.strerror or error})", source=path) from None
    if len(data) > (limit := _limit(path)):
        raise ConfigError(f"{label} is larger than {limit} bytes; is it the right file?", source=path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{label} is not UTF-8 text (byte {error.start + 1}); save it as UTF-8", source=path
        ) from None


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number; write a finite number")


def _parse(text: str, fmt: Format) -> object:
    if fmt == "toml":
        return tomllib.loads(text)
    try:
        return json.loads(text, object_pairs_hook=_Object, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        raise ValueError(f"{error.msg} at line {error.lineno}, column {error.colno}") from None


def _commented(text: str) -> dict[str, object] | None:
    """The document of JSON with comments (JSONC), or None when it does not parse that way either."""
    try:
        document = _parse(strip_jsonc(text), "json")
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, dict) else None


def _parses_as(text: str, fmt: Format) -> bool:
    try:
        return isinstance(_parse(text, fmt), dict)
    except (ValueError, RecursionError):
        return False


def _refuse_duplicates(document: dict[str, object], label: str, path: Path) -> None:
    stack: list[tuple[str, object]] = [("", document)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, _Object) and value.duplicates:
            key = value.duplicates[0]
            if where == "mcpServers":
                raise ConfigError(
                    f"{label} defines server {quote(key)} twice; ids must be unique within a file",
                    source=path,
                    entry=key,
                )
            place = f"`{where}`" if where else "the top level"
            raise ConfigError(f"{label} repeats the key {quote(key)} in {place}; keep one", source=path)
        if isinstance(value, dict):
            stack.extend((f"{where}.{key}" if where else key, item) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((f"{where}[{index}]", item) for index, item in enumerate(value))


def split_source(document: Mapping[str, object], *, kind: SourceKind, path: Path, fmt: Format) -> RawSource:
    """Find the form (CFG-2), the entries in file order and the host settings (CFG-8).

    Raises:
        ConfigError: both forms or neither, an entry that is not an object or has no
            valid id, an id listed twice, or an unknown key where the file is ours.
    """
    label = describe_source(kind, path)
    warnings: list[str] = []
    container: Mapping[str, object] = document
    if fmt == "toml":
        container = _mcp_table(document, label, path)
    has_own, has_shared = "servers" in container, "mcpServers" in container
    settings = {key: value for key, value in document.items() if key in SETTING_KEYS}
    if has_own and has_shared:
        raise ConfigError(f"{label} has both `servers` and `mcpServers`; keep one form", source=path)
    form: Form | None = "own" if has_own else "shared" if has_shared else None
    form_keys = ("mcp",) if fmt == "toml" else ("servers", "mcpServers")
    codex = kind == "user" and "mcp" not in document  # its tables, or its keys and none of ours (its `model` too)
    codex = codex and ("mcp_servers" in document or (set(settings) <= {"model"} and bool(CODEX_KEYS & set(document))))
    unknown = [key for key in document if key not in SETTING_KEYS and key not in form_keys and key != "$schema"]
    if (
        kind != "user"
        and form is None
        and not settings
        and unknown
        and not any(_close_to_known(key, fmt) for key in unknown)
    ):
        # A file given to read that is another program's settings (no key of ours, none a slip of one): one line
        # on what is missing, not its keys reported as mistakes. The user config is always ours: keys are named.
        raise ConfigError(f"{label} has neither `servers` nor `mcpServers`; {_FORMS_HELP}", source=path)
    for key in document:
        if key in SETTING_KEYS or key in form_keys or key == "$schema":
            continue
        if fmt == "json" and form == "shared":
            warnings.append(f"{label}: ignoring the unknown top-level key {quote(key)}")
            continue
        raise ConfigError(_unknown_top_level(key, label, fmt, codex=codex), source=path, field=key)
    if form is None and kind == "project" and not document:
        return RawSource(kind=kind, path=path, form=None, entries=(), settings={})  # `{}`: a project with no servers
    if form is None and (kind == "project" or not settings):
        raise ConfigError(f"{label} has neither `servers` nor `mcpServers`; {_FORMS_HELP}", source=path)
    entries: tuple[RawEntry, ...] = ()
    if form == "own":
        entries = _own_entries(container["servers"], label, path, "project" if kind == "project" else fmt)
    elif form == "shared":
        entries = _shared_entries(container["mcpServers"], label, path)
    return RawSource(kind=kind, path=path, form=form, entries=entries, settings=settings, warnings=warnings)


def _mcp_table(document: Mapping[str, object], label: str, path: Path) -> Mapping[str, object]:
    table = document.get("mcp", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{label}: `mcp` must be a table; {_FORMS_HELP}", source=path, field="mcp")
    for key in table:
        if key not in ("servers", "mcpServers"):
            raise ConfigError(
                f"{label}: unknown key {quote(key)} in [mcp]; {_FORMS_HELP}", source=path, field=f"mcp.{key}"
            )
    return table


def _known_top_level(fmt: Format) -> list[str]:
    return [*SETTING_KEYS, *(("mcp",) if fmt == "toml" else ("servers", "mcpServers"))]


def _close_to_known(key: str, fmt: Format) -> bool:
    """Whether `key` reads as a slip of a top-level key of ours (or is one misplaced)."""
    known = _known_top_level(fmt)
    return key in ("servers", "mcpServers") or _nearest_top_level(key, known, SLIP_CUTOFF) is not None


def _nearest_top_level(key: str, known: list[str], cutoff: float) -> str | None:
    """The known key `key` is a slip of: the same but for case (`MCPServers`), else the closest spelling."""
    by_case = {name.lower(): name for name in known}
    if key.lower() in by_case:
        return by_case[key.lower()]
    close = difflib.get_close_matches(key, known, n=1, cutoff=cutoff)
    return close[0] if close else None


def _unknown_top_level(key: str, label: str, fmt: Format, *, codex: bool) -> str:
    if fmt == "toml" and key in ("servers", "mcpServers"):
        return f"{label}: `{key}` belongs under [mcp]; write [[mcp.servers]] or [mcp.mcpServers.<id>] tables"
    if codex:
        return f"{label}: unknown top-level key {quote(key)}; {_CODEX_HELP}"
    known = _known_top_level(fmt)
    close = _nearest_top_level(key, known, 0.6)  # difflib's own cutoff
    hint = f"; did you mean `{close}`?" if close else f"; the known keys are {', '.join(known)}"
    return f"{label}: unknown top-level key {quote(key)}{hint}"


def _own_entries(value: object, label: str, path: Path, where: str) -> tuple[RawEntry, ...]:
    if not isinstance(value, list):
        raise ConfigError(f"{label}: `servers` must be {_NOT_A_LIST[where]}", source=path, field="servers")
    entries: list[RawEntry] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise ConfigError(f"{label}: entry {index} of `servers` must be an object", source=path)
        server_id = item.get("id")
        if not isinstance(server_id, str) or not server_id:
            raise ConfigError(
                f"{label}: entry {index} of `servers` needs an `id`, a non-empty string",
                source=path,
                field="id",
            )
        if server_id in seen:
            raise ConfigError(
                f"{label} lists server {quote(server_id)} twice (entries {seen[server_id]} and {index}); "
                "ids must be unique within a file",
                source=path,
                entry=server_id,
            )
        seen[server_id] = index
        entries.append(RawEntry(server_id, {key: item[key] for key in item if key != "id"}))
    return tuple(entries)


def _shared_entries(value: object, label: str, path: Path) -> tuple[RawEntry, ...]:
    if not isinstance(value, dict):
        raise ConfigError(
            f"{label}: `mcpServers` must be an object whose keys are the server ids",
            source=path,
            field="mcpServers",
        )
    entries: list[RawEntry] = []
    for server_id, item in value.items():
        if not server_id:
            raise ConfigError(f"{label}: a server id in `mcpServers` is empty; name it", source=path)
        if not isinstance(item, dict):
            raise ConfigError(
                f"{label}: server {quote(server_id)} in `mcpServers` must be an object",
                source=path,
                entry=server_id,
            )
        entries.append(RawEntry(server_id, *aliased(item)))
    return tuple(entries)
