"""Which values mcpyard put into requests or server environments, and under which label they are redacted (SEC-3)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from mcpyard.config._model import ServerSpec
from mcpyard.config._names import credential_header, looks_secret

__all__ = ["secrets_in_use"]

_ENV_REFERENCE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")


def secrets_in_use(specs: Iterable[ServerSpec], environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """`(label, value)` for every value to redact.

    - a saved secret expanded anywhere into an entry: `%NAME%`;
    - an environment variable whose name looks secret that reached a server by any road: a
      reference to it anywhere in the entry (`env` under any name, `args`, `url`, `headers`…),
      a secret-looking name in a stdio server's `env` or `inherit_env`: `${env:NAME}`. The rule
      is about the variable's own name, not where it is put;
    - an environment variable, whatever its name, whose value went into `Authorization`,
      `Proxy-Authorization` or a header whose name looks secret: `${env:NAME}`; such a header
      written into the config with no reference at all is redacted whole, as `[header NAME]`.
    """
    found: list[tuple[str, str]] = []
    for spec in specs:
        found += [(f"%{name}%", value) for name, value in spec.secret_values]
        if spec.transport == "stdio":
            found += [(f"${{env:{name}}}", value) for name, value in spec.env if looks_secret(name)]
            if spec.inherit_env != "*":
                found += [
                    (f"${{env:{name}}}", environ[name])
                    for name in spec.inherit_env
                    if looks_secret(name) and name in environ
                ]
        credential_headers = {name for name, _ in spec.headers if credential_header(name)}
        for field, reference, outcome in spec.references:
            match = _ENV_REFERENCE.fullmatch(reference)
            if match is None or outcome != "set" or (variable := match.group(1)) not in environ:
                continue
            into_credential = field.startswith("headers.") and field.removeprefix("headers.") in credential_headers
            if looks_secret(variable) or into_credential:
                found.append((f"${{env:{variable}}}", environ[variable]))
        # A credential written into the config itself (no reference) is redacted whole.
        referenced = {field.removeprefix("headers.") for field, _, _ in spec.references if field.startswith("headers.")}
        found += [
            (f"[header {name}]", value)
            for name, value in spec.headers
            if name in credential_headers and name not in referenced
        ]
    return found
