"""Turn one raw entry into a validated, expanded `ServerSpec` (CFG-3, CFG-4, CFG-5, CFG-6)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, NamedTuple
from urllib.parse import urlsplit, urlunsplit

from mcpyard.config._expand import Expander, Expansion, TemplateError, parse_template
from mcpyard.config._fields import FieldReader, env_label, name_label
from mcpyard.config._model import DEFAULT_MAX_FILE_BYTES, ServerSpec, SourceKind, TransportName
from mcpyard.config._names import credential_header, describe_entry, is_credential_variable, is_http_token
from mcpyard.config._oauth import read_oauth
from mcpyard.config._read import Form, RawEntry

__all__ = ["NO_TRANSPORT", "EntryContext", "build_spec", "value_problems"]

NO_TRANSPORT = (
    "neither `command` nor `url` is set; add `command` to start a local server or `url` to connect to a remote one"
)
"""Why an entry with neither is skipped (CFG-4): it has no transport, so it never loads."""

_REMOTE: tuple[TransportName, ...] = ("streamable_http", "sse", "websocket")
_BREAKS = ("\r", "\n", "\0")
_MOVE = "move this server to your user config or a --mcp-config file"


@dataclass(frozen=True, slots=True)
class EntryContext:
    """Where entries come from, and the expander that applies to them."""

    kind: SourceKind
    path: Path
    form: Form
    expander: Expander


class _Values(NamedTuple):
    common: ServerSpec
    command: str | None
    url: str | None
    cwd: str | None
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    headers: tuple[tuple[str, str], ...]
    inherit_env: tuple[str, ...] | Literal["*"]
    explicit: TransportName | None


def value_problems(raw: RawEntry, context: EntryContext) -> list[tuple[str, str]]:
    """What is wrong with the values of one entry as written (a list that is a string, a number for a string, a
    bad variable or header name…), nothing expanded: the problems `build_spec` fails the entry for first, and
    neither `command` nor `url` (it is skipped), each as the field and what is wrong with it."""
    builder = _Builder(raw, context, [])
    read, values = builder.read()
    if not values.common.enabled:
        return list(read.faults)
    mismatch = builder.mismatch(values)
    wrong = {key for key, _ in read.faults}
    if values.command is None and values.url is None and not wrong & {"command", builder.url_key}:
        mismatch = ("command, url", NO_TRANSPORT)
    return [*read.faults, *([mismatch] if mismatch is not None else []), *_malformed(values, builder.url_key)]


def _malformed(values: _Values, url_key: str) -> list[tuple[str, str]]:
    """Each value that expansion would refuse as written (a `${` never closed, a reference of no kind mcpyard
    reads), with why: found without expanding anything."""
    labelled = [("command", values.command), (url_key, values.url), ("cwd", values.cwd)]
    labelled += [(f"args[{index}]", arg) for index, arg in enumerate(values.args)]
    labelled += [(env_label("env", key), value) for key, value in values.env]
    labelled += [(env_label("headers", key), value) for key, value in values.headers]
    malformed: list[tuple[str, str]] = []
    for label, template in labelled:
        if template is None or "${" not in template:
            continue
        try:
            parse_template(template)
        except TemplateError as exc:
            malformed.append((label, str(exc)))
    return malformed


def build_spec(raw: RawEntry, context: EntryContext, warnings: list[str]) -> ServerSpec:
    """Validate and expand one entry whose keys were checked; a bad value fails only this entry (CFG-4).

    Warnings (unset variables, ignored fields…) are appended to `warnings`. The returned
    spec has `position` 0; the loader numbers the merged list.
    """
    return _Builder(raw, context, warnings).build()


class _Builder:
    def __init__(self, raw: RawEntry, context: EntryContext, warnings: list[str]) -> None:
        self._raw = raw
        self._context = context
        self._warnings = warnings
        self._where = describe_entry(raw.id, context.kind, context.path)
        self.url_key = raw.written_as.get("url", "url")
        """The URL's key as written (Windsurf's `serverUrl`, Gemini CLI's `httpUrl`): messages name it so."""
        self._problems: list[str] = []
        self._secrets: list[tuple[str, str]] = []
        self._references: list[tuple[str, str, str]] = []

    def build(self) -> ServerSpec:
        read, values = self.read()
        if read.problems:
            return replace(values.common, state="failed", problem="; ".join(read.problems))
        return self.finish(values)

    def read(self) -> tuple[FieldReader, _Values]:
        """Every field's value as written, typed; the reader holds what is wrong with them (nothing expanded)."""
        read = FieldReader(self._raw.fields, self._raw.written_as)
        command, url, cwd = read.text("command"), read.text("url"), read.text("cwd")
        args, env, headers = read.texts("args") or (), read.table("env"), read.table("headers")
        inherit_env = read.variable_names("inherit_env")
        explicit = self._explicit_transport(read)
        for key, _ in env:
            if not key or "=" in key or "\0" in key:
                read.bad(name_label("env", key), "is not a variable name (empty, or holds `=` or NUL)")
        for key, _ in headers:
            if not is_http_token(key):
                hint = "use letters, digits and !#$%&'*+-.^_`|~ only"
                read.bad(name_label("headers", key), f"is not a valid header name; {hint}")
        common = ServerSpec(
            id=self._raw.id,
            source=self._context.kind,
            source_path=self._context.path,
            position=0,
            name=read.text("name") or self._raw.id,
            trust_annotations=read.flag("trust_annotations", True),
            max_file_bytes=read.whole("max_file_bytes", DEFAULT_MAX_FILE_BYTES),
            shared_tools=read.texts("shared_tools"),
            always_offer=read.texts("always_offer") or (),
            roots=read.texts("roots") or (),
            connect_timeout_secs=read.seconds("connect_timeout_secs", 30.0) or 30.0,
            call_timeout_secs=read.seconds("call_timeout_secs", 60.0, nullable=True),
            shutdown_timeout_secs=read.seconds("shutdown_timeout_secs", 5.0) or 5.0,
            enabled=read.flag("enabled", True),
        )
        return read, _Values(common, command, url, cwd, args, env, headers, inherit_env, explicit)

    def finish(self, values: _Values) -> ServerSpec:
        common, command, url, cwd, args, env, headers, inherit_env, explicit = values
        if not common.enabled:
            return replace(common, state="disabled", transport=explicit)
        if (mismatch := self.mismatch(values)) is not None:
            return replace(common, state="failed", problem=f"{mismatch[0]}: {mismatch[1]}")
        if command is None:
            if url is None:
                self._warnings.append(f"{self._where} is skipped: {NO_TRANSPORT}")
                return replace(common, state="skipped", problem=NO_TRANSPORT)
            self._ignored(args=bool(args), env=bool(env), cwd=cwd is not None, inherit_env=bool(inherit_env))
            spec = self._remote(common, url, headers, explicit)
        else:
            self._ignored(headers=bool(headers), oauth="oauth" in self._raw.fields)
            spec = self._stdio(common, command=command, args=args, env=env, cwd=cwd, inherit_env=inherit_env)
        unique_secrets = tuple(dict.fromkeys(self._secrets))
        if self._problems:
            return replace(
                spec,
                state="failed",
                problem="; ".join(self._problems),
                secret_values=unique_secrets,
                references=tuple(self._references),
            )
        return replace(spec, secret_values=unique_secrets, references=tuple(self._references))

    def _stdio(
        self,
        common: ServerSpec,
        *,
        command: str,
        args: tuple[str, ...],
        env: tuple[tuple[str, str], ...],
        cwd: str | None,
        inherit_env: tuple[str, ...] | Literal["*"],
    ) -> ServerSpec:
        spec = replace(
            common,
            transport="stdio",
            command=self._plain("command", command),
            args=tuple(self._plain(f"args[{index}]", arg) for index, arg in enumerate(args)),
            env=tuple((key, self._plain(env_label("env", key), value)) for key, value in env),
            # An unset `${DIR}` already warned; starting in the workspace beats failing on "".
            cwd=(self._plain("cwd", cwd) or None) if cwd is not None else None,
            inherit_env=self._inherit(inherit_env),
        )
        self._check_process_strings(spec)
        return spec

    def _remote(
        self,
        common: ServerSpec,
        url: str,
        headers: tuple[tuple[str, str], ...],
        explicit: TransportName | None,
    ) -> ServerSpec:
        expanded_url = self._plain(self.url_key, url)
        transport, fallback = self._check_url(expanded_url, explicit)
        oauth = read_oauth(
            self._raw.fields.get("oauth"), expand=self._expand, plain=self._plain, problems=self._problems
        )
        if oauth is not None and transport == "websocket":
            self._problems.append(
                "oauth: a websocket server is sent no headers, so no OAuth token reaches it; "
                "remove oauth or connect over streamable_http"
            )
        carrying = [key for key, _ in headers if credential_header(key)]
        if oauth is not None and carrying:
            label = env_label("headers", carrying[0])
            self._problems.append(
                f"oauth: the header {label} already carries a credential, and mcpyard never signs in to a "
                "server whose headers do (AUTH-3); keep oauth or the header"
            )
        return replace(
            common,
            transport=transport,
            sse_fallback=fallback,
            url=_without_userinfo(expanded_url),
            headers=tuple((key, self._header(key, value)) for key, value in headers),
            oauth=oauth,
        )

    def mismatch(self, values: _Values) -> tuple[str, str] | None:
        """Fields that contradict each other (both `command` and `url`, a transport the other one needs), as the
        field and what is wrong; None when they agree."""
        command, url, explicit = values.command, values.url, values.explicit
        if command is not None and url is not None:
            return f"command, {self.url_key}", (
                f"both are set; keep `command` for a local server or `{self.url_key}` for a remote one"
            )
        key, written = self._transport_key()
        if command is not None and explicit in _REMOTE:
            return key, (
                f"`{written}` connects to a `url`, but this entry has only `command`; remove `{key}` or set it to stdio"
            )
        if url is not None and command is None and explicit == "stdio":
            remote = "http, sse or ws" if key == "type" else "streamable_http, sse or websocket"
            return key, (
                f"`{written}` starts a local process and needs `command`, but this entry has only `{self.url_key}`; "
                f"remove `{key}` or set it to {remote}"
            )
        return None

    def _explicit_transport(self, read: FieldReader) -> TransportName | None:
        transport = read.transport("transport")
        if self._context.form != "shared" or "type" not in self._raw.fields:
            return transport
        mapped = read.transport("type")
        if transport is not None and mapped is not None and transport != mapped:
            read.bad("type", f"means `{mapped}` but `transport` says `{transport}`; keep one of them")
        return transport or mapped

    def _transport_key(self) -> tuple[str, str]:
        """The key that chose the transport (`transport`, or the shared form's `type`) and its value as written."""
        key = "transport" if self._raw.fields.get("transport") is not None else "type"
        return key, str(self._raw.fields.get(key))

    def _ignored(self, **present: bool) -> None:
        names = [f"`{name}`" for name, there in present.items() if there]
        if names:
            kind = "remote" if "`headers`" in names or "`oauth`" in names else "local (stdio)"
            self._warnings.append(
                f"{self._where}: ignoring {', '.join(names)}, which only {kind} servers use; remove it"
            )

    def _expand(self, template: str, field: str) -> Expansion:
        result = self._context.expander.expand(template)
        if result.error is not None:
            self._problems.append(f"{field}: {result.error}")
        for ref in result.blocked:
            what = "saved secrets" if ref.kind == "secret" else ref.name
            self._warnings.append(
                f"{self._where}: {ref} in {field} expands to empty because a project file may not read "
                f"{what}; to pass it, {_MOVE}"
            )
        self._secrets.extend(result.secrets)
        self._references.extend((field, str(ref), outcome) for ref, outcome in result.outcomes)
        return result

    def _plain(self, field: str, template: str) -> str:
        result = self._expand(template, field)
        for ref in result.unresolved:
            if ref.kind == "secret":
                fix = f"is not saved, so it expands to empty; save it with `mcpyard secrets set {ref.name}`"
            else:
                fix = f"is not set, so it expands to empty; set {ref.name} or write ${{{ref.name}:-default}}"
            self._warnings.append(f"{self._where}: {ref} in {field} {fix}")
        return result.value

    def _header(self, key: str, template: str) -> str:
        label = env_label("headers", key)
        result = self._expand(template, label)
        for ref in result.unresolved:
            if ref.kind == "secret":
                fix = f"save it with `mcpyard secrets set {ref.name}`"
                self._problems.append(f"{label}: secret {ref.name} ({ref}) is not saved; {fix}")
            else:
                fix = f"set it, write ${{{ref.name}:-default}}, or remove the header"
                self._problems.append(f"{label}: {ref} is not set; {fix}")
        if any(mark in result.value for mark in _BREAKS):
            if result.line_breaks:
                names = ", ".join(dict.fromkeys(str(ref) for ref in result.line_breaks))
                self._problems.append(
                    f"{label}: the value of {names} holds a line break, which a header cannot carry; fix it"
                )
            else:
                self._problems.append(f"{label}: the value holds a line break, which a header cannot carry")
        elif result.value != result.value.strip(" \t"):
            # HTTP strips a value's edges, and its clients refuse to send one with a space there ("Bearer " when
            # the token's variable is empty): said before any request is made.
            edge = "begins" if result.value[:1] in (" ", "\t") else "ends"
            how = " once expanded (is a variable in it empty?)" if "$" in template else ""
            self._problems.append(f"{label}: the value {edge} with a space{how}, which a header cannot carry; fix it")
        return result.value

    def _inherit(self, names: tuple[str, ...] | Literal["*"]) -> tuple[str, ...] | Literal["*"]:
        if names == "*" or self._context.kind != "project":
            return names
        kept: list[str] = []
        for index, name in enumerate(names):
            if is_credential_variable(name):
                self._warnings.append(
                    f"{self._where}: inherit_env[{index}] names {name}, which a project file may not pass "
                    f"to a server; it is dropped. To pass it, {_MOVE}"
                )
                continue
            kept.append(name)
        return tuple(kept)

    def _said(self, field: str) -> bool:
        """Whether a problem with `field` was found already (a malformed template expands to empty)."""
        return any(problem.startswith(f"{field}: ") for problem in self._problems)

    def _check_process_strings(self, spec: ServerSpec) -> None:
        if not spec.command and not self._said("command"):
            self._problems.append("command: is empty after expansion; set the variables it uses")
        labelled = [("command", spec.command or ""), ("cwd", spec.cwd or "")]
        labelled += [(f"args[{index}]", arg) for index, arg in enumerate(spec.args)]
        labelled += [(env_label("env", key), value) for key, value in spec.env]
        for field, value in labelled:
            if "\0" in value:
                self._problems.append(f"{field}: holds a NUL character, which a process cannot receive; remove it")

    def _check_url(self, url: str, explicit: TransportName | None) -> tuple[TransportName, bool]:
        # The URL itself is never quoted in a message: it may carry a token in its query.
        transport: TransportName = explicit or "streamable_http"
        if not url:
            if not self._said(self.url_key):
                self._problems.append(f"{self.url_key}: is empty after expansion; set the variables it uses")
            return transport, explicit is None
        if any(char.isspace() or not char.isprintable() for char in url):
            self._problems.append(f"{self.url_key}: holds spaces or control characters; percent-encode them")
            return transport, explicit is None
        try:
            parts = urlsplit(url)
            _ = parts.port
        except ValueError:
            self._problems.append(f"{self.url_key}: is not a valid URL (check the host and the port)")
            return transport, explicit is None
        scheme = parts.scheme.lower()
        if explicit is None and scheme in ("ws", "wss"):
            transport = "websocket"
        if parts.username is not None or parts.password is not None or "@" in parts.netloc:
            self._problems.append(
                f"{self.url_key}: carries a user name or password, which mcpyard refuses to send in a URL; "
                "remove it and send the credential in `headers` (for example Authorization)"
            )
        schemes = ("ws", "wss") if transport == "websocket" else ("http", "https")
        if scheme not in schemes:
            wanted = "ws:// or wss://" if transport == "websocket" else "http:// or https://"
            also = "" if explicit else " (or ws:// or wss:// for a websocket)"
            self._problems.append(f"{self.url_key}: must start with {wanted} for {transport}{also}")
        elif not parts.hostname:
            self._problems.append(f"{self.url_key}: has no host; write it as scheme://host[:port]/path")
        return transport, explicit is None and transport == "streamable_http"


def _without_userinfo(url: str) -> str:
    """The URL kept in the spec: a refused user name or password is not carried along."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
