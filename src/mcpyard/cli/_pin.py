"""`mcpyard pin` / `unpin`: review a tool and bind its policy to the definition you saw (POL-5)."""

from __future__ import annotations

from typing import Annotated

import typer

from mcpyard.cli._common import Globals, environ, fail, open_host, print_json, run, with_globals
from mcpyard.cli._render import safe

__all__ = ["DESTRUCTIVE_NOTE", "pin", "unpin"]

DESTRUCTIVE_NOTE = (
    "the tool is marked destructive, so it still asks before every call (in every mode but auto), "
    "whatever its pinned policy"
)


@with_globals
def pin(
    opts: Globals,
    name: Annotated[str, typer.Argument(help="The tool's model-facing name (see `mcpyard tools`).")],
    policy: Annotated[str, typer.Argument(help="run_freely, ask_first or off.")],
) -> None:
    """Pin a tool's policy to its current definition; if the definition changes, the tool is suspended."""
    from mcpyard._paths import data_home
    from mcpyard.policy import POLICIES, Pin, PinStore

    if policy not in POLICIES:
        fail(f"unknown policy {policy!r}: use one of {', '.join(POLICIES)}")

    async def main() -> None:
        import anyio

        async with open_host(opts) as host:
            entry = host.catalog.get(name)
            if entry is None:
                fail(f"no connected tool {name!r}; list them with `mcpyard tools`")
            record = Pin(entry.server, entry.tool, policy, entry.definition_hash)
            store = PinStore(data_home(environ()) / "pins.json")
            await anyio.to_thread.run_sync(store.pin, record)
            spec = host.view.specs.get(entry.server)
            destructive = entry.destructive and spec is not None and spec.trust_annotations
        # A pinned policy never lifts a destructive tool's card (POL-2): say so now, not at the first call.
        note = DESTRUCTIVE_NOTE if destructive and policy != "off" else None
        if opts.json:
            print_json(
                {
                    "tool": name,
                    "server": record.server,
                    "policy": policy,
                    "definition_hash": record.definition_hash,
                    "note": note,
                }
            )
            return
        opts.console().print(safe(f"{name}: {policy}, bound to definition {entry.definition_hash[:12]}…"))
        opts.console().print(safe(f"description reviewed: {entry.description[:300]}"))
        if note is not None:
            opts.console().print(f"note: {note}")

    run(main)


@with_globals
def unpin(
    opts: Globals,
    name: Annotated[str, typer.Argument(help="The tool's model-facing name, or SERVER/TOOL for a removed one.")],
) -> None:
    """Remove a tool's pinned policy: it follows the mode and its annotations again."""
    from mcpyard._paths import data_home
    from mcpyard.policy import PinStore

    async def main() -> None:
        import anyio

        store = PinStore(data_home(environ()) / "pins.json")
        if "/" in name:
            server, _, tool = name.partition("/")
        else:
            async with open_host(opts) as host:
                entry = host.catalog.get(name)
            if entry is None:
                fail(f"no connected tool {name!r}; for a tool its server no longer lists, give SERVER/TOOL")
            server, tool = entry.server, entry.tool
        removed = await anyio.to_thread.run_sync(store.unpin, server, tool)
        if not removed:
            fail(f"{name!r} is not pinned")
        if opts.json:
            print_json({"tool": name, "unpinned": True})
        else:
            opts.console().print(safe(f"{name}: unpinned"))

    run(main)
