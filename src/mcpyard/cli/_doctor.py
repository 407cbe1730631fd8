"""`mcpyard doctor SERVER`: check one server's entry and start it by hand, showing what it printed."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from mcpyard.cli._common import EXIT_TOOL_ERROR, Globals, environ, fail, print_json, run, with_globals
from mcpyard.cli._render import safe
from mcpyard.config import source_words

__all__ = ["doctor"]


@with_globals
def doctor(
    opts: Globals,
    server: Annotated[str, typer.Argument(help="The server's id (or name) to check.")],
) -> None:
    """Check one server: its source, form, expansion, trust and timeouts; then start it and report.

    Exits 1 when the server fails (its entry is wrong, or it was started and did not connect; the
    report says why), 0 otherwise (connected, or not meant to start: disabled, skipped, untrusted).
    """

    async def main() -> bool:
        import anyio

        from mcpyard import Host
        from mcpyard._paths import config_home, data_home
        from mcpyard._plan import read_config, resolve_workspace
        from mcpyard.catalog import clean_and_redact_json
        from mcpyard.config import secrets_in_use, shown_command, shown_url
        from mcpyard.secrets import Redactor, default_secret_store

        env = environ()
        root = await anyio.to_thread.run_sync(resolve_workspace, opts.workspace)
        secrets = default_secret_store(data_home(env)).get_all()
        config = await anyio.to_thread.run_sync(
            lambda: read_config(
                workspace=root,
                config_file=opts.mcp_config,
                trust_project=opts.trust,
                environ=env,
                config_home=config_home(env),
                data_home=data_home(env),
                secrets=secrets,
            )
        )
        redactor = Redactor(secrets_in_use(config.servers, env))
        matches = [s for s in config.servers if server in (s.id, s.name)]
        if not matches:
            known = ", ".join(s.id for s in config.servers) or "none"
            fail(f"no server {server!r} in the configuration (configured: {known})")
        spec = matches[-1]
        report: dict[str, Any] = {
            "id": spec.id,
            "source": spec.source,
            "source_path": str(spec.source_path),
            "config_state": spec.state,
            "problem": spec.problem,
            "transport": spec.transport,
            "command_line": shown_command(spec.command, spec.args) if spec.command else None,
            "url": shown_url(spec.url) if spec.url is not None else None,
            "cwd": spec.cwd or str(root),
            "env_names": [name for name, _ in spec.env],
            "inherit_env": spec.inherit_env,
            "connect_timeout_secs": spec.connect_timeout_secs,
            "call_timeout_secs": spec.call_timeout_secs,
            "shutdown_timeout_secs": spec.shutdown_timeout_secs,
            "references": [f"{ref} in {field}: {outcome}" for field, ref, outcome in spec.references],
            "warnings": [w for w in config.warnings if repr(spec.id) in w],
        }
        if spec.state == "ok":
            # The same host every command opens, on the configuration read above; only this server starts.
            async with Host.open(
                root, config=config, lazy=True, environ=env, secrets=secrets, data_home=data_home(env)
            ) as host:
                await host.start([spec.id])
                seen = next(s for s in host.status().servers if s.id == spec.id)
                report |= {
                    "transport": seen.transport or spec.transport,  # as it connected (a URL alone may be SSE)
                    "state": seen.state,
                    "reason": seen.reason,
                    "protocol_version": seen.protocol_version,
                    "tools": [tool.tool for tool in seen.tools if tool.policy != "removed"],
                    "instructions_bytes": seen.instructions_bytes,
                }
                if spec.transport == "stdio":
                    report["stderr"] = list(seen.stderr)
        # Everything a server printed or sent is cleaned of terminal sequences, then redacted (CLI-1, SEC-3).
        report = clean_and_redact_json(report, redactor.redact_json)
        failed = spec.state == "failed" or (spec.state == "ok" and report.get("state") != "connected")
        if opts.json:
            print_json(report)
            return not failed
        console = opts.console()
        # People read the source in words; the JSON keeps its kind (flag, user, project).
        report["source"] = source_words(spec.source)
        for key, value in report.items():
            if value in (None, [], ()):
                continue
            if isinstance(value, list):
                console.print(f"{key}:")
                for item in value:
                    console.print(f"  {safe(str(item))}")
            else:
                console.print(f"{key}: {safe(str(value))}")
        return not failed

    if not run(main):
        raise typer.Exit(EXIT_TOOL_ERROR)
