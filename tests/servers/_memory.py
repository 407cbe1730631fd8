"""The fixture servers a test can reach in memory, built in the test's own process.

`FixtureServers` is the tests' `Connections`: a configured stdio server that runs one of these
fixtures (`python tests/servers/NAME.py ARGS…`) is built here and reached over the SDK's
in-memory transport instead, the whole protocol with no process and no wire; any other server
is reached as configured. A server's configured `env` is what the fixture reads as its
environment. Left out on purpose, so they always run as processes: the fixtures whose subject
is the process or the wire (`deep_listing`, `exits_at_once`, `never_answers`, `detached`,
`grandchild`, `sly`, `ignores_cancel`, `ws_server`, `oauth_server`), those that read their
process's own environment or id (`echo_secrets`, `turns`, `named`), and `conformance_server`,
which serves deprecated features the tests' warnings-are-errors setting refuses in-process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp.client import Transport
from mcp.server import Server
from mcp.server.mcpserver import MCPServer

from mcpyard.config import ServerSpec
from mcpyard.connect import InMemoryServers
from tests.servers import (
    asks_many,
    bad_results,
    basic,
    elicits,
    hostile,
    hostile_schemas,
    legacy_tasks,
    list_changed,
    oddnames,
    paged,
    takes_json,
    watched,
)

__all__ = ["BUILDERS", "FixtureServers", "fixture_of"]

Builder = Callable[[Sequence[str], Mapping[str, str]], "Server[Any] | MCPServer"]
"""Builds a fixture from its command line arguments and its configured environment."""

SERVERS = Path(__file__).resolve().parent


def _without_arguments(build: Callable[[], Server[Any] | MCPServer], name: str) -> Builder:
    def built(args: Sequence[str], environ: Mapping[str, str]) -> Server[Any] | MCPServer:
        del environ
        if args:
            raise ValueError(f"the {name} fixture takes no arguments, got {list(args)}")
        return build()

    return built


def _basic(args: Sequence[str], environ: Mapping[str, str]) -> MCPServer:
    parsed = basic.parser().parse_args(args)
    if parsed.transport != "stdio":
        raise ValueError("only a stdio basic fixture is built in memory")
    return basic.build_server(
        name=parsed.name, many_tools=parsed.many_tools, long_name=parsed.long_name, environ=environ
    )


def _paged(args: Sequence[str], environ: Mapping[str, str]) -> Server[Any]:
    del environ
    return paged.build_server(endless=paged.parser().parse_args(args).endless)


def _list_changed(args: Sequence[str], environ: Mapping[str, str]) -> Server[Any]:
    del environ
    parsed = list_changed.parser().parse_args(args)
    if parsed.transport != "stdio":
        raise ValueError("only a stdio list_changed fixture is built in memory")
    return list_changed.build_server(late_tool=parsed.late_tool)


BUILDERS: dict[str, Builder] = {
    "basic": _basic,
    "paged": _paged,
    "list_changed": _list_changed,
    "asks_many": _without_arguments(asks_many.build_server, "asks_many"),
    "bad_results": _without_arguments(bad_results.build_server, "bad_results"),
    "elicits": _without_arguments(elicits.build_server, "elicits"),
    "hostile": _without_arguments(hostile.build_server, "hostile"),
    "hostile_schemas": _without_arguments(hostile_schemas.build_server, "hostile_schemas"),
    "legacy_tasks": _without_arguments(legacy_tasks.build_server, "legacy_tasks"),
    "oddnames": _without_arguments(oddnames.build_server, "oddnames"),
    "takes_json": _without_arguments(takes_json.build_server, "takes_json"),
    "watched": _without_arguments(watched.build_server, "watched"),
}


def fixture_of(spec: ServerSpec) -> tuple[Builder, Sequence[str]] | None:
    """The builder and arguments of the in-memory fixture `spec` runs, if it runs one."""
    if spec.transport != "stdio" or spec.command is None or not spec.args:
        return None
    script = Path(spec.args[0])
    if script.parent != SERVERS or script.suffix != ".py":
        return None
    builder = BUILDERS.get(script.stem)
    return None if builder is None else (builder, spec.args[1:])


class FixtureServers:
    """Reaches the fixtures of `BUILDERS` in memory, every other server as configured."""

    def transport(self, spec: ServerSpec) -> Transport | None:
        found = fixture_of(spec)
        if found is None:
            return None
        builder, args = found
        environ = dict(spec.env)
        return InMemoryServers({spec.id: lambda: builder(args, environ)}).transport(spec)
