"""`mcpyard org init|migrate|rotate-key|token create|token revoke`: the organization service's set-up (API-5).

The database and crypto layers are imported inside each command: `mcpyard --help` never loads them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from mcpyard.cli._common import Globals, environ, group_options, print_json, run, with_globals

if TYPE_CHECKING:
    from mcpyard.org import EnvKeySource, FileKeySource

__all__ = ["org_app"]

org_app = typer.Typer(
    name="org",
    help="The organization service: its database, its sealing key and API tokens.",
    no_args_is_help=True,
    add_completion=False,
)
org_app.callback()(group_options("The organization service: its database, its sealing key and API tokens."))
token_app = typer.Typer(
    name="token",
    help="Create and revoke API tokens for the organization service.",
    no_args_is_help=True,
    add_completion=False,
)
token_app.callback()(group_options("Create and revoke API tokens for the organization service."))
org_app.add_typer(token_app)

DatabaseOption = Annotated[
    str | None,
    typer.Option(
        "--database",
        help="The database URL: sqlite:///PATH or postgresql://USER:PASSWORD@HOST/DB "
        "(default: MCPYARD_ORG_DATABASE, else org.db in the data folder).",
        show_default=False,
    ),
]
OrgOption = Annotated[str | None, typer.Option("--org", help="The organization's name.", show_default=False)]


def _database_url(option: str | None) -> str:
    """The URL to use (API-5); the data folder is made (0700) when the default SQLite file goes there."""
    from mcpyard._paths import data_home
    from mcpyard.org import DATABASE_ENV, default_database_url, resolve_database_url

    url = resolve_database_url(option, environ())
    if not option and not environ().get(DATABASE_ENV, "").strip():
        folder = data_home(environ())
        if not folder.is_dir():
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        url = default_database_url(folder)
    return url


def _keys() -> EnvKeySource | FileKeySource:
    from mcpyard._paths import data_home
    from mcpyard.org import key_source

    return key_source(environ(), data_home(environ()))


def _ask_password(email: str) -> str:
    """The new owner's password: the first line of standard input, or typed twice without echo on a terminal."""
    from getpass import getpass

    from mcpyard.errors import UsageError
    from mcpyard.org import check_new_password

    if not sys.stdin.isatty():
        password = sys.stdin.readline().removesuffix("\n").removesuffix("\r")
        if not password:
            raise UsageError(
                f"no password for {email} on standard input: pipe it in (one line), or run on a terminal to type it"
            )
        return check_new_password(password)
    first = check_new_password(getpass(f"password for {email} (not shown): "))
    if getpass("the same password again: ") != first:
        raise UsageError("the two passwords differ; nothing was set up")
    return first


@org_app.command("init")
@with_globals
def init(
    opts: Globals,
    database: DatabaseOption = None,
    org: Annotated[
        str | None, typer.Option("--org", help="The organization's name (default: default).", show_default=False)
    ] = None,
    owner: Annotated[
        str | None,
        typer.Option("--owner", help="Its owner's email (default: owner@localhost).", show_default=False),
    ] = None,
) -> None:
    """Set up the database (migrating it), the sealing key and an organization with its owner; print a new API
    token for the owner. Run again with the same --org, it only prints a new token; with another, it adds that
    organization. The owner's password is read from standard input, or typed twice on a terminal."""
    url = _database_url(database)

    async def main() -> None:
        from mcpyard.org import describe_url, ensure_key, head_revision, init_organization, open_database

        async with open_database(url) as db:
            key = ensure_key(_keys())
            done = await init_organization(
                db, name=org, owner_email=owner, password=lambda: _ask_password(owner or "owner@localhost")
            )
        if opts.json:
            print_json({"org_id": done.org_id, "owner_email": done.owner_email, "api_token": done.api_token})
            return
        if done.created:
            print(f"set up the organization {done.org_name!r} (id {done.org_id}) with its owner {done.owner_email}")
        else:
            print(f"the organization {done.org_name!r} (id {done.org_id}) exists already; nothing else changed")
        print(f"database: {describe_url(url)} (revision {head_revision()})")
        print(f"sealing key: {key}")
        print(f"a new API token for {done.owner_email} (id {done.token_id}), shown this once:")
        print(done.api_token)

    run(main, host=False)


@org_app.command("migrate")
@with_globals
def migrate(opts: Globals, database: DatabaseOption = None) -> None:
    """Upgrade the database to the schema this mcpyard needs (safe to run again, and from several replicas)."""
    url = _database_url(database)

    async def main() -> None:
        from mcpyard.org import describe_url, open_database, upgrade

        async with open_database(url) as db:
            revision = await upgrade(db)
        if opts.json:
            print_json({"database": describe_url(url), "revision": revision})
        else:
            print(f"the database {describe_url(url)} is at revision {revision}, the newest")

    run(main, host=False)


@org_app.command("rotate-key")
@with_globals
def rotate_key(opts: Globals, database: DatabaseOption = None) -> None:
    """Seal every credential with a new key, then drop the old one. With MCPYARD_ORG_KEY, list the new key first
    (MCPYARD_ORG_KEY=NEW,OLD), run this, then remove the old key from it."""
    url = _database_url(database)

    async def main() -> None:
        from mcpyard.org import EnvKeySource, check_schema, open_database, rotate_key

        keys = _keys()
        async with open_database(url) as db:
            await check_schema(db)
            done = await rotate_key(db, keys)
        if opts.json:
            print_json(
                {
                    "key_id": done.key_id,
                    "resealed": done.resealed,
                    "dropped": done.dropped,
                    "still_used": done.still_used,
                }
            )
            return
        print(f"sealed {done.resealed} credential(s) again with the key {done.key_id}")
        if done.dropped and isinstance(keys, EnvKeySource):
            print(f"no credential uses {', '.join(done.dropped)} now: remove every key but the first from {keys.where}")
        elif done.dropped:
            print(f"removed the old key(s) {', '.join(done.dropped)} from {keys.where}")
        if done.still_used:
            print(f"credentials written meanwhile still use {', '.join(done.still_used)}: run rotate-key again")

    run(main, host=False)


@token_app.command("create")
@with_globals
def create_token(
    opts: Globals,
    database: DatabaseOption = None,
    org: OrgOption = None,
    email: Annotated[
        str | None,
        typer.Option("--email", help="The member's email (default: the organization's owner).", show_default=False),
    ] = None,
) -> None:
    """Print a new API token for a member (shown once). Without --org, the only organization there is."""
    url = _database_url(database)

    async def main() -> None:
        from mcpyard.org import issue_token, open_database

        async with open_database(url) as db:
            issued = await issue_token(db, org=org, email=email)
        if opts.json:
            print_json(
                {
                    "token_id": issued.token_id,
                    "api_token": issued.api_token,
                    "org_id": issued.org_id,
                    "email": issued.email,
                }
            )
            return
        print(f"a new API token for {issued.email} in {issued.org_name!r} (id {issued.token_id}), shown this once:")
        print(issued.api_token)

    run(main, host=False)


@token_app.command("revoke")
@with_globals
def revoke_token(
    opts: Globals,
    token_id: Annotated[str, typer.Argument(help="The token's id (printed when it was created).")],
    database: DatabaseOption = None,
) -> None:
    """Revoke an API token: programs using it are refused from now on."""
    url = _database_url(database)

    async def main() -> None:
        from mcpyard.org import open_database, withdraw_token

        async with open_database(url) as db:
            await withdraw_token(db, token_id)
        if opts.json:
            print_json({"revoked": token_id})
        else:
            print(f"revoked the API token {token_id}")

    run(main, host=False)
