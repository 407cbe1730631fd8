"""`load_config`: read every source, merge them by priority and number the servers (CFG-1, CFG-6)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from mcpyard.config._detect import reads_comments
from mcpyard.config._digest import ProjectTrust, entry_digest
from mcpyard.config._entry import EntryContext, build_spec
from mcpyard.config._expand import Expander
from mcpyard.config._fields import check_keys, deny_hints
from mcpyard.config._foreign import read_directly
from mcpyard.config._model import HostSettings, LoadedConfig, ServerSpec, SourceKind
from mcpyard.config._names import SOURCE_LABELS, describe_entry, describe_source, prefix_users, quote, tool_prefix
from mcpyard.config._read import Form, Format, RawEntry, read_document, split_source
from mcpyard.config._settings import SettingsPatch, merge_settings, read_settings
from mcpyard.config._variables import editor_workspace
from mcpyard.errors import ConfigError

__all__ = ["PROJECT_FILE", "load_config"]

PROJECT_FILE = ".mcp.json"
UNTRUSTED_PROBLEM = "the workspace is not trusted; run `mcpyard trust` (or pass --trust) to start this server"


@dataclass(slots=True)
class _Layer:
    """One source after its checks, before its entries are expanded."""

    kind: SourceKind
    path: Path
    entries: tuple[RawEntry, ...] = ()
    context: EntryContext | None = None
    """`None` for an untrusted project file: its entries are listed, never expanded."""
    untrusted: dict[str, str] = field(default_factory=dict)
    """Entries of a trusted project file that its trust does not cover, with why: listed, never expanded."""
    entry_warnings: dict[str, list[str]] = field(default_factory=dict)
    settings: SettingsPatch = field(default_factory=SettingsPatch)
    warnings: list[str] = field(default_factory=list)
    separator: str = "__"
    """The `tool_name_separator` a hint to deny tools of its entries names them with."""


def load_config(
    *,
    workspace: Path,
    config_file: Path | None,
    user_config_file: Path,
    trusted: bool | ProjectTrust,
    environ: Mapping[str, str],
    secrets: Mapping[str, str],
) -> LoadedConfig:
    """Read the flag file, the user config and the project file into one configuration.

    Pure apart from reading those files: nothing is started, nothing is fetched. Per-entry
    problems become that entry's `state` and `problem`; the project file never raises.

    Args:
        workspace: the workspace root; its `.mcp.json` is the project file.
        config_file: the `--mcp-config` file (JSON, or TOML when it ends in `.toml`), if any.
        user_config_file: the user config (TOML); missing is fine.
        trusted: which servers of the project file may start (CFG-6): True, all of them
            (`--trust`); False, none; a `ProjectTrust`, those whose entry is as it was
            when trusted (`TrustStore.record`). An entry not covered is `untrusted`, with
            the reason as its `problem`, and nothing in it is expanded.
        environ: the environment `${VAR}` references read.
        secrets: saved secrets by name, for `${secret:NAME}`.

    Returns:
        The servers (project, user, flag order; file order within each), merged
        host settings, warnings, and the sources read, highest priority first.

    Raises:
        ConfigError: the flag file or the user config cannot be used (missing flag file,
            malformed file, both forms or neither, an id twice, an unknown field of the
            own form, a bad host setting).
    """
    # Read user, flag, project, so that each knows the separator tools are named with (deny rules and hints
    # name tools as the model sees them); listed in priority order, lowest first.
    own: list[_Layer] = []
    separator = "__"
    if os.path.lexists(user_config_file):
        own.append(
            _own_layer(
                "user", user_config_file, "toml", environ=environ, secrets=secrets, workspace=workspace, separator=None
            )
        )
        separator = own[-1].settings.tool_name_separator or separator
    if config_file is not None:
        fmt: Format = "toml" if config_file.suffix.lower() == ".toml" else "json"
        own.append(
            _own_layer(
                "flag", config_file, fmt, environ=environ, secrets=secrets, workspace=workspace, separator=separator
            )
        )
        separator = own[-1].settings.tool_name_separator or separator
    layers: list[_Layer] = []
    project_path = workspace / PROJECT_FILE
    if os.path.lexists(project_path):
        layers.append(
            _project_layer(
                project_path,
                trusted=trusted,
                environ=environ,
                secrets=secrets,
                workspace=workspace,
                separator=separator,
            )
        )
    layers.extend(own)

    warnings = [warning for layer in layers for warning in layer.warnings]
    winners = _pick_winners(layers, warnings)
    picked = [(raw, layer) for layer in layers for raw in layer.entries if winners[raw.id] is layer]
    servers: list[ServerSpec] = []
    said: list[list[str]] = []
    for raw, layer in picked:
        said.append([])
        servers.append(replace(_spec(raw, layer, said[-1]), position=len(servers)))
    # A hint to deny tools names them by prefix: which server uses each one is known once every server is read.
    used = prefix_users((spec.id, spec.name) for spec in servers if spec.state == "ok")
    by_id = {spec.id: spec for spec in servers}
    for (raw, layer), spec_warnings in zip(picked, said, strict=True):
        warnings.extend(layer.entry_warnings.get(raw.id, ()))
        warnings.extend(_deny_hints(raw, layer, used, by_id))
        warnings.extend(spec_warnings)
    return LoadedConfig(
        servers=tuple(servers),
        settings=_settings(layers),
        warnings=tuple(warnings),
        sources=tuple((layer.kind, layer.path) for layer in reversed(layers)),
    )


def _own_layer(
    kind: SourceKind,
    path: Path,
    fmt: Format,
    *,
    environ: Mapping[str, str],
    secrets: Mapping[str, str],
    workspace: Path,
    separator: str | None,
) -> _Layer:
    """Check a flag file or user config completely; raises ConfigError on any source-level problem.

    A flag file may be another client's (VS Code, Codex, Gemini CLI): it is read through its
    translation into the own form, and each key that has no equivalent is one warning.
    `separator`: the `tool_name_separator` of the sources below this one (None: the user config,
    whose own setting is the one in force).
    """
    label = describe_source(kind, path)
    below = separator or "__"
    if kind == "flag":
        workspace = editor_workspace(path, workspace, environ.get("HOME"))
        document = read_document(path, fmt, kind=kind, suggest=True, comments=reads_comments(path))
        foreign = read_directly(document, fmt=fmt, path=path, workspace=workspace, label=label, separator=below)
        if foreign is not None:
            raw = split_source(foreign.document(), kind=kind, path=path, fmt="json")
            written_as = {server.id: server.written_as for server in foreign.servers}  # messages name keys as written
            raw.entries = tuple(replace(entry, written_as=written_as.get(entry.id, {})) for entry in raw.entries)
            raw.warnings.extend(note.warning(label) for note in foreign.ignored)
        else:
            raw = split_source(document, kind=kind, path=path, fmt=fmt)
    else:
        raw = split_source(read_document(path, fmt, kind=kind), kind=kind, path=path, fmt=fmt)
    form: Form = raw.form or "own"
    # Editors write the shared form: their workspace variables mean the workspace there (CFG-5).
    editor = workspace if form == "shared" else None
    expander = Expander(environ=environ, secrets=secrets, restricted=False, workspace=editor)
    layer = _Layer(
        kind=kind,
        path=path,
        entries=raw.entries,
        context=EntryContext(kind, path, form, expander),
        settings=read_settings(raw.settings, kind=kind, path=path, environ=environ),
        warnings=raw.warnings,
    )
    _check_entries(layer, form, layer.settings.tool_name_separator or below)
    return layer


def _project_layer(
    path: Path,
    *,
    trusted: bool | ProjectTrust,
    environ: Mapping[str, str],
    secrets: Mapping[str, str],
    workspace: Path,
    separator: str,
) -> _Layer:
    """Check the project file; any problem with it becomes one warning, never an error (CFG-6)."""
    label = describe_source("project", path)
    try:
        raw = split_source(read_document(path, "json", kind="project"), kind="project", path=path, fmt="json")
        if trusted is False:
            warnings = []
            if raw.entries:
                warnings.append(_not_started(len(raw.entries), label, "the workspace is not trusted"))
            return _Layer(kind="project", path=path, entries=raw.entries, warnings=warnings)
        untrusted: dict[str, str] = {}
        if isinstance(trusted, ProjectTrust):
            for entry in raw.entries:
                problem = trusted.problem(entry.id, entry_digest(entry.fields))
                if problem is not None:
                    untrusted[entry.id] = problem
        form: Form = raw.form or "shared"
        expander = Expander(
            environ=environ, secrets=secrets, restricted=True, workspace=workspace if form == "shared" else None
        )
        layer = _Layer(
            kind="project",
            path=path,
            entries=raw.entries,
            context=EntryContext("project", path, form, expander),
            untrusted=untrusted,
            warnings=raw.warnings,
        )
        _check_entries(layer, form, separator)
    except ConfigError as error:
        return _Layer(kind="project", path=path, warnings=[f"{error.message}; its servers were not started"])
    if untrusted:
        why = (
            "the workspace was trusted by an older version of mcpyard, which did not record what they run"
            if isinstance(trusted, ProjectTrust) and trusted.legacy
            else "added or changed since you trusted the workspace"
        )
        layer.warnings.append(_not_started(len(untrusted), label, why))
    if raw.settings:
        keys = ", ".join(quote(key) for key in raw.settings)
        layer.warnings.append(
            f"{label} sets host settings ({keys}), which a project file may not set; they are ignored. "
            "Put them in your user config or a --mcp-config file"
        )
    return layer


def _not_started(count: int, label: str, why: str) -> str:
    """The one line about project servers held back (CFG-6)."""
    servers = "1 server" if count == 1 else f"{count} servers"
    verb = "was" if count == 1 else "were"
    them = "it" if count == 1 else "them"
    return f"{servers} in {label} {verb} not started: {why}; run `mcpyard trust` (or pass --trust) to start {them}"


def _check_entries(layer: _Layer, form: Form, separator: str) -> None:
    layer.separator = separator
    for raw in layer.entries:
        if raw.id in layer.untrusted:
            continue  # not trusted: not even its fields are read
        notes: list[str] = []
        fields, kind, path = raw.fields, layer.kind, layer.path
        check_keys(fields, server_id=raw.id, form=form, kind=kind, path=path, warnings=notes, separator=separator)
        layer.entry_warnings[raw.id] = notes


def _deny_hints(raw: RawEntry, layer: _Layer, used: Mapping[str, str], servers: Mapping[str, ServerSpec]) -> list[str]:
    """What to do about the tools another client's list leaves out of a checked shared-form entry (POL-4, CAT-1)."""
    if layer.context is None or layer.context.form != "shared" or raw.id not in layer.entry_warnings:
        return []  # not checked (not trusted), or the own form, where such a key is refused
    owner = servers.get(used.get(tool_prefix(raw.id, raw.fields.get("name")), raw.id))
    other = describe_entry(owner.id, owner.source, owner.source_path) if owner and owner.id != raw.id else None
    return deny_hints(
        raw.fields, server_id=raw.id, kind=layer.kind, path=layer.path, separator=layer.separator, used=other
    )


def _pick_winners(layers: list[_Layer], warnings: list[str]) -> dict[str, _Layer]:
    """The highest-priority layer for each id, with one warning per id defined more than once (CFG-1)."""
    owners: dict[str, list[_Layer]] = {}
    for layer in layers:
        for raw in layer.entries:
            owners.setdefault(raw.id, []).append(layer)
    for server_id, found in owners.items():
        if len(found) > 1:
            used, *others = reversed(found)
            shadowed = " and in ".join(describe_source(layer.kind, layer.path) for layer in others)
            warnings.append(
                f"server {quote(server_id)} is defined in {describe_source(used.kind, used.path)} and in "
                f"{shadowed}; the entry in the {SOURCE_LABELS[used.kind]} is used"
            )
    return {server_id: found[-1] for server_id, found in owners.items()}


def _spec(raw: RawEntry, layer: _Layer, warnings: list[str]) -> ServerSpec:
    if layer.context is None or raw.id in layer.untrusted:
        return ServerSpec(
            id=raw.id,
            source=layer.kind,
            source_path=layer.path,
            position=0,
            name=raw.id,
            state="untrusted",
            problem=layer.untrusted.get(raw.id, UNTRUSTED_PROBLEM),
        )
    return build_spec(raw, layer.context, warnings)


def _settings(layers: list[_Layer]) -> HostSettings:
    patches = {layer.kind: layer.settings for layer in layers}
    return merge_settings(patches.get("user", SettingsPatch()), patches.get("flag", SettingsPatch()))
