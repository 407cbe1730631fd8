"""Host settings (CFG-8): read from the flag file and the user config, merged field by field."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NoReturn, TypeVar

from mcpyard.config._expand import home_path
from mcpyard.config._model import (
    MODES,
    TOOL_SEARCH_MODES,
    Hook,
    HostSettings,
    Mode,
    ModelSettings,
    SourceKind,
    ToolSearchSettings,
)
from mcpyard.config._names import describe_source, quote
from mcpyard.errors import ConfigError

__all__ = ["SettingsPatch", "merge_settings", "read_settings"]

SEPARATORS: tuple[Literal["__", "_"], ...] = ("__", "_")
PROVIDERS: tuple[Literal["openai", "anthropic"], ...] = ("openai", "anthropic")
_SECRET_REFERENCE = re.compile(r"\$\{secret:([A-Za-z_][A-Za-z0-9_.-]*)\}")

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class SettingsPatch:
    """The settings one source sets; `None` means the source leaves that field alone."""

    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] | None = None
    mode: Mode | None = None
    tool_name_separator: Literal["__", "_"] | None = None
    max_result_bytes: int | None = None
    max_stored_result_bytes: int | None = None
    grants: tuple[Path, ...] | None = None
    hooks: tuple[Hook, ...] | None = None
    model: ModelSettings | None = None
    tool_search: ToolSearchSettings | None = None


def merge_settings(lower: SettingsPatch, higher: SettingsPatch) -> HostSettings:
    """Settings of `higher` (the flag file) replace those of `lower` (the user config), field by field.

    Deny rules are the exception: they add up, so a flag file can never lift the user's denials (POL-4).
    """
    default = HostSettings()

    def pick(high: _T | None, low: _T | None, fallback: _T) -> _T:
        if high is not None:
            return high
        return low if low is not None else fallback

    return HostSettings(
        allow=pick(higher.allow, lower.allow, default.allow),
        deny=tuple(dict.fromkeys((*(lower.deny or ()), *(higher.deny or ())))),
        mode=higher.mode or lower.mode,
        tool_name_separator=pick(higher.tool_name_separator, lower.tool_name_separator, default.tool_name_separator),
        max_result_bytes=pick(higher.max_result_bytes, lower.max_result_bytes, default.max_result_bytes),
        max_stored_result_bytes=pick(
            higher.max_stored_result_bytes, lower.max_stored_result_bytes, default.max_stored_result_bytes
        ),
        grants=pick(higher.grants, lower.grants, default.grants),
        hooks=pick(higher.hooks, lower.hooks, default.hooks),
        model=_merge_model(lower.model or ModelSettings(), higher.model or ModelSettings()),
        tool_search=pick(higher.tool_search, lower.tool_search, default.tool_search),
    )


def _merge_model(lower: ModelSettings, higher: ModelSettings) -> ModelSettings:
    """The flag file's `model` fields over the user config's, field by field."""
    return ModelSettings(
        base_url=higher.base_url or lower.base_url,
        model=higher.model or lower.model,
        api_key_secret=higher.api_key_secret or lower.api_key_secret,
        provider=higher.provider or lower.provider,
    )


def read_settings(
    raw: Mapping[str, object], *, kind: SourceKind, path: Path, environ: Mapping[str, str]
) -> SettingsPatch:
    """Validate the host settings of one source.

    Args:
        raw: the top-level settings keys of the file (`permissions`, `mode`, …).
        environ: where `~` in `grants` finds `HOME`.

    Raises:
        ConfigError: a setting is unknown or has a bad value; the message names the
            setting and the source.
    """
    reader = _Reader(kind, path)
    permissions = reader.table(raw, "permissions", ("allow", "deny"))
    hooks_table = reader.table(raw, "hooks", ("pre_call",))
    grants = reader.strings(raw, "grants")
    return SettingsPatch(
        allow=reader.strings(permissions, "permissions.allow", "allow"),
        deny=reader.strings(permissions, "permissions.deny", "deny"),
        mode=reader.choice(raw, "mode", MODES),
        tool_name_separator=reader.choice(raw, "tool_name_separator", SEPARATORS),
        max_result_bytes=reader.whole(raw, "max_result_bytes"),
        max_stored_result_bytes=reader.whole(raw, "max_stored_result_bytes"),
        grants=None if grants is None else tuple(reader.grant(text, environ) for text in grants),
        hooks=reader.hooks(hooks_table),
        model=reader.model(raw),
        tool_search=reader.tool_search(raw),
    )


class _Reader:
    def __init__(self, kind: SourceKind, path: Path) -> None:
        self._path = path
        self._label = describe_source(kind, path)

    def fail(self, field: str, message: str) -> NoReturn:
        raise ConfigError(f"{self._label}: {field}: {message}", source=self._path, field=field)

    def table(self, raw: Mapping[str, object], key: str, keys: tuple[str, ...]) -> Mapping[str, object]:
        value = raw.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(key, f"must be a table (an object) with {' and '.join(keys)}")
        for name in value:
            if name not in keys:
                self.fail(f"{key}.{name}", f"is not a setting; {key} holds {' and '.join(keys)} only")
        return value

    def strings(self, raw: Mapping[str, object], field: str, key: str | None = None) -> tuple[str, ...] | None:
        value = raw.get(key or field)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            self.fail(field, "must be a list of non-empty strings")
        return tuple(value)

    def choice(self, raw: Mapping[str, object], field: str, choices: tuple[_T, ...]) -> _T | None:
        value = raw.get(field)
        if value is None:
            return None
        matches = [choice for choice in choices if value == choice]
        if not matches:
            shown = quote(value) if isinstance(value, str) else repr(value)
            self.fail(field, f"must be one of {', '.join(repr(choice) for choice in choices)}, not {shown}")
        return matches[0]

    def whole(
        self, raw: Mapping[str, object], field: str, *, key: str | None = None, unit: str = "bytes"
    ) -> int | None:
        value = raw.get(key or field)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.fail(field, f"must be a whole number of {unit}, at least 1, not {value!r}")
        return value

    def tool_search(self, raw: Mapping[str, object]) -> ToolSearchSettings | None:
        """`[tool_search]`: `mode`, `max_tools`, `max_tokens` (each left out takes its default)."""
        if raw.get("tool_search") is None:
            return None
        table = self.table(raw, "tool_search", ("mode", "max_tools", "max_tokens"))
        default = ToolSearchSettings()
        mode = table.get("mode")
        if mode is not None and mode not in TOOL_SEARCH_MODES:
            shown = quote(mode) if isinstance(mode, str) else repr(mode)
            self.fail("tool_search.mode", f"must be one of 'auto', 'always' or 'off', not {shown}")
        tools = self.whole(table, "tool_search.max_tools", key="max_tools", unit="tools")
        tokens = self.whole(table, "tool_search.max_tokens", key="max_tokens", unit="tokens")
        return ToolSearchSettings(
            mode=next((m for m in TOOL_SEARCH_MODES if m == mode), default.mode),
            max_tools=tools if tools is not None else default.max_tools,
            max_tokens=tokens if tokens is not None else default.max_tokens,
        )

    def grant(self, text: str, environ: Mapping[str, str]) -> Path:
        """A granted folder; `~` is the user's home, a relative path is relative to the file's folder."""
        if "\0" in text:
            self.fail("grants", "a folder path holds a NUL character; remove it")
        try:
            folder = home_path(text, environ).expanduser()  # `~user`, or `~` where `environ` names no home
        except RuntimeError:
            self.fail("grants", f"cannot expand {quote(text)}: the home folder is unknown; write a full path")
        if not folder.is_absolute():
            folder = self._path.parent.absolute() / folder
        return folder

    def hooks(self, table: Mapping[str, object]) -> tuple[Hook, ...] | None:
        value = table.get("pre_call")
        if value is None:
            return None
        if not isinstance(value, list):
            self.fail("hooks.pre_call", "must be a list of tables (objects) with `match` and `command`")
        hooks: list[Hook] = []
        for index, item in enumerate(value):
            field = f"hooks.pre_call[{index}]"
            if not isinstance(item, dict):
                self.fail(field, "must be a table (an object) with `match` and `command`")
            for key in item:
                if key not in ("match", "command"):
                    self.fail(f"{field}.{key}", "is not a hook field; a hook has `match` and `command` only")
            match, command = item.get("match"), item.get("command")
            if not isinstance(match, str) or not match:
                self.fail(f"{field}.match", "must be a non-empty tool-name or path glob, such as 'github__*'")
            if not isinstance(command, str) or not command:
                self.fail(f"{field}.command", "must be the command to run, a non-empty string")
            hooks.append(Hook(match=match, command=command))
        return tuple(hooks)

    def model(self, raw: Mapping[str, object]) -> ModelSettings | None:
        """The `model` table: `base_url`, `model`, `api_key = "${secret:NAME}"`, `provider` (MOD-3)."""
        if raw.get("model") is None:
            return None
        table = self.table(raw, "model", ("base_url", "model", "api_key", "provider"))
        texts: dict[str, str | None] = {}
        for name in ("base_url", "model", "api_key"):
            value = table.get(name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                self.fail(f"model.{name}", "must be a non-empty string")
            texts[name] = value
        base_url, key = texts["base_url"], texts["api_key"]
        if base_url is not None and not base_url.startswith(("http://", "https://")):
            self.fail("model.base_url", "must be an http:// or https:// address, such as 'http://127.0.0.1:11434/v1'")
        secret = None
        if key is not None:
            found = _SECRET_REFERENCE.fullmatch(key.strip())
            if found is None:
                # Never echo the value: it may be the key itself, written where it should not be.
                self.fail(
                    "model.api_key",
                    'must name a saved secret, as api_key = "${secret:NAME}"; '
                    "save the key with `mcpyard secrets set NAME` and keep it out of config files",
                )
            secret = found.group(1)
        return ModelSettings(
            base_url=base_url,
            model=texts["model"],
            api_key_secret=secret,
            provider=self.choice({"model.provider": table.get("provider")}, "model.provider", PROVIDERS),
        )
