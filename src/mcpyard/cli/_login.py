"""`mcpyard login SERVER` / `logout SERVER`: OAuth sign-in to a remote server, and forgetting it (AUTH-2, AUTH-3)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from mcpyard.cli._common import Globals, environ, fail, open_host, print_json, run, with_globals
from mcpyard.cli._render import safe

__all__ = ["login", "logout"]


@with_globals
def login(
    opts: Globals,
    server: Annotated[str, typer.Argument(help="The server's id.")],
) -> None:
    """Sign in to a remote server: opens its sign-in page (or paste back the address it sends you to)."""
    from mcpyard.auth import SIGN_IN_TIMEOUT

    async def main() -> None:
        import anyio

        from mcpyard._daemon_read import read_in_daemon_thread

        async with open_host(opts, open_browser=True) as host:
            states = {s.id: s for s in host.status().servers}
            if server not in states:
                fail(f"no server {server!r} in the configuration (configured: {', '.join(states) or 'none'})")
            status = states[server]
            if status.state == "waiting_for_sign_in":
                console = opts.console(stderr=True)
                console.print(safe(f"sign in to {server} at: {status.sign_in_url}"))
                console.file.flush()
                console.print("(if no browser opened, open it yourself; on a machine without one, paste here the")
                console.print(" address your browser is sent to after signing in, then press Enter)")
                async with anyio.create_task_group() as tg:

                    async def paste() -> None:
                        while True:
                            line = await read_in_daemon_thread(sys.stdin.readline, abandon_on_cancel=True)
                            if not line:
                                return
                            if host.complete_sign_in(server, line.strip()):
                                return
                            console.print("that is not this sign-in's address (its state must match); try again")

                    tg.start_soon(paste)
                    with anyio.move_on_after(SIGN_IN_TIMEOUT + 30):
                        await host.wait_until(
                            lambda h: (
                                next(s.state for s in h.status().servers if s.id == server)
                                in ("connected", "failed", "stopped")
                            )
                        )
                    tg.cancel_scope.cancel()
            final = next(s for s in host.status().servers if s.id == server)
        if opts.json:
            print_json(final.to_json())
        elif final.state == "connected":
            print(safe(f"signed in to {server}: {len(final.tools)} tools"))
        if final.state != "connected":
            fail(safe(f"{server} is {final.state}: {final.reason or 'no reason given'}"))

    run(main)


@with_globals
def logout(
    opts: Globals,
    server: Annotated[str, typer.Argument(help="The server's id.")],
) -> None:
    """Forget a server's sign-in: its registration and tokens are removed from mcp-auth.json."""
    from mcpyard._paths import data_home
    from mcpyard.auth import AUTH_FILE, AuthStore
    from mcpyard.errors import McpyardError

    try:
        removed = AuthStore(data_home(environ()) / AUTH_FILE).forget(server)
    except McpyardError as exc:
        fail(str(exc))
    if not removed:
        fail(f"mcpyard holds no sign-in for {server!r}")
    if opts.json:
        print_json({"server": server, "signed_out": True})
    else:
        print(f"signed out of {server}; the next connection signs in again")
