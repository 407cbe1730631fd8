"""`mcpyard org init|migrate|rotate-key|token create|token revoke` end to end, on SQLite and PostgreSQL (API-5,
ORG-1, ORG-2, ORG-9, ERR-1).

The commands run in this process (`tests/_cli.py`); the two whose subject is the process start a real one: the
password asked on a terminal, and what `--help` imports."""

from __future__ import annotations

import base64
import json
import os
import select
import stat
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from mcpyard.org.keys._keys import KEY_FILE, FileKeySource, new_key
from mcpyard.org.keys._seal import Sealer
from mcpyard.org.services._api_tokens import use_token
from mcpyard.org.services._people import verify_login
from mcpyard.org.store._db import open_database
from mcpyard.org.store._migrate import head_revision
from tests._cli import Ran, run_mcpyard
from tests.conftest import Home
from tests.org._rows import credentials, server_with_token

pytestmark = pytest.mark.empty_database
"""`org init` and `org migrate` are what set a database up: each test starts from an empty one."""

PASSWORD = "the owner's password"


def org(home: Home, *args: str, stdin: str = "", **env: str) -> Ran:
    """`mcpyard org ARGS` in this process, on a thread of its own (an async test's loop may be running on this one),
    with the home's environment and `env`. The terminal prompt and the import cost below start real processes."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run_mcpyard, home, "org", *args, stdin=stdin, environ={**home.environ, **env}).result()


def init_json(home: Home, *args: str, stdin: str = PASSWORD + "\n", **env: str) -> dict[str, str]:
    done = org(home, "init", "--json", *args, stdin=stdin, **env)
    assert done.returncode == 0, done.stderr
    result: dict[str, str] = json.loads(done.stdout)
    return result


def refused(done: Ran) -> str:
    """The one error line of a refused command (exit code 2, no traceback)."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("mcpyard: error: ")
    return line


async def _token_member_email(url: str, token: str) -> str | None:
    async with open_database(url) as db:
        found = await use_token(db.sessions, token)
        return None if found is None else found.email


@pytest.mark.anyio
async def test_api5_init_sets_up_sqlite_and_a_key_file_in_the_data_folder_and_prints_the_owners_token(
    home: Home,
) -> None:
    result = init_json(home, "--owner", "Boss@Example.com")
    assert set(result) == {"org_id", "owner_email", "api_token"}
    assert result["owner_email"] == "boss@example.com"
    assert result["api_token"].startswith("myd_")
    for name in ("org.db", KEY_FILE):
        assert stat.S_IMODE(os.stat(home.data_home / name).st_mode) == 0o600, name
    assert stat.S_IMODE(os.stat(home.data_home).st_mode) == 0o700
    url = f"sqlite:///{home.data_home / 'org.db'}"
    assert await _token_member_email(url, result["api_token"]) == "boss@example.com"


@pytest.mark.anyio
async def test_api5_init_again_with_the_same_org_only_prints_a_new_token_and_another_org_adds_one(
    home: Home, database_url: str
) -> None:
    first = init_json(home, "--database", database_url, "--org", "Acme")
    again = init_json(home, "--database", database_url, "--org", "Acme", stdin="")
    assert again["org_id"] == first["org_id"]
    assert again["owner_email"] == first["owner_email"] == "owner@localhost"
    assert again["api_token"] != first["api_token"]
    other = init_json(home, "--database", database_url, "--org", "Beta", "--owner", "b@example.com")
    assert other["org_id"] != first["org_id"]
    async with open_database(database_url) as db, db.sessions() as session:
        for token in (first["api_token"], again["api_token"]):
            found = await use_token(db.sessions, token)
            assert found is not None
            assert found.org_id == first["org_id"]
        member = await verify_login(session, email="owner@localhost", password=PASSWORD, org_id=first["org_id"])
        assert member is not None, "the password set first still holds"
    not_owner = org(home, "init", "--database", database_url, "--org", "Acme", "--owner", "b@example.com")
    assert "b@example.com is not an owner of the organization 'Acme'" in refused(not_owner)


def test_api5_the_database_url_may_come_from_the_environment(home: Home, database_url: str) -> None:
    result = init_json(home, MCPYARD_ORG_DATABASE=database_url)
    assert not (home.data_home / "org.db").exists()
    migrated = org(home, "migrate", "--json", MCPYARD_ORG_DATABASE=database_url)
    assert migrated.returncode == 0, migrated.stderr
    report = json.loads(migrated.stdout)
    assert report["revision"] == head_revision()
    assert "***" in report["database"] or "sqlite" in report["database"]
    created = org(home, "token", "create", "--json", MCPYARD_ORG_DATABASE=database_url)
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["org_id"] == result["org_id"]


@pytest.mark.anyio
async def test_org1_token_create_prints_a_new_token_once_and_revoke_withdraws_it(home: Home, database_url: str) -> None:
    init_json(home, "--database", database_url, "--org", "Acme")
    created = org(home, "token", "create", "--database", database_url, "--org", "Acme", "--json")
    assert created.returncode == 0, created.stderr
    issued = json.loads(created.stdout)
    assert set(issued) == {"token_id", "api_token", "org_id", "email"}
    assert await _token_member_email(database_url, issued["api_token"]) == "owner@localhost"
    revoked = org(home, "token", "revoke", issued["token_id"], "--database", database_url, "--json")
    assert revoked.returncode == 0, revoked.stderr
    assert json.loads(revoked.stdout) == {"revoked": issued["token_id"]}
    assert await _token_member_email(database_url, issued["api_token"]) is None
    assert "there is no API token with the id 'nope'" in refused(
        org(home, "token", "revoke", "nope", "--database", database_url)
    )
    assert "is not a member" in refused(
        org(home, "token", "create", "--database", database_url, "--email", "who@example.com")
    )
    init_json(home, "--database", database_url, "--org", "Beta")
    assert "say which with --org NAME" in refused(org(home, "token", "create", "--database", database_url))


@pytest.mark.anyio
async def test_org2_rotate_key_reseals_with_a_new_key_file_key(home: Home, database_url: str) -> None:
    result = init_json(home, "--database", database_url)
    keys = FileKeySource(home.data_home / KEY_FILE)
    old = keys.load().current
    async with open_database(database_url) as db:
        await server_with_token(db, Sealer(keys), "sealed-bearer-token", org=result["org_id"])
    done = org(home, "rotate-key", "--database", database_url, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["resealed"] == 1
    assert report["dropped"] == [old]
    assert "sealed-bearer-token" not in done.stdout + done.stderr
    async with open_database(database_url) as db:
        [credential] = await credentials(db)
    assert credential.key_id == report["key_id"] != old
    assert Sealer(FileKeySource(keys.path)).unseal_credential(credential) == "sealed-bearer-token"


def test_org2_with_the_key_in_the_environment_no_key_file_is_made_and_rotate_key_says_how(home: Home) -> None:
    key = base64.b64encode(new_key()).decode()
    init_json(home, MCPYARD_ORG_KEY=key)
    assert not (home.data_home / KEY_FILE).exists()
    line = refused(org(home, "rotate-key", MCPYARD_ORG_KEY=key))
    assert "MCPYARD_ORG_KEY=NEW,OLD" in line
    assert key not in line
    two = f"{base64.b64encode(new_key()).decode()},{key}"
    done = org(home, "rotate-key", "--json", MCPYARD_ORG_KEY=two)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["resealed"] == 0


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["--database", "mysql://root:hunter2-secret@db/org"], {}, "cannot use the database URL mysql://root:***@db"),
        ([], {"MCPYARD_ORG_DATABASE": "postgresql://root:hunter2-secret@127.0.0.1:1/org"}, "cannot open the database"),
        ([], {"MCPYARD_ORG_KEY": "hunter2-secret!"}, "MCPYARD_ORG_KEY is not base64"),
    ],
)
def test_err1_a_bad_database_or_key_is_one_line_that_never_shows_the_secret(
    home: Home, args: list[str], env: dict[str, str], says: str
) -> None:
    line = refused(org(home, "init", *args, stdin=PASSWORD, **env))
    assert says in line
    assert "hunter2-secret" not in line


@pytest.mark.parametrize(
    ("stdin", "says"),
    [("", "no password for owner@localhost on standard input"), ("tiny-pw\n", "at least 8 characters")],
)
def test_err1_init_without_a_usable_password_sets_nothing_up(home: Home, stdin: str, says: str) -> None:
    line = refused(org(home, "init", stdin=stdin))
    assert says in line
    assert "tiny-pw" not in line
    created = org(home, "token", "create")
    assert "run `mcpyard org init`" in refused(created)


def test_org2_an_unsafe_key_file_is_refused(home: Home) -> None:
    init_json(home)
    os.chmod(home.data_home / KEY_FILE, 0o644)
    line = refused(org(home, "init", stdin=PASSWORD))
    assert f"chmod 600 {home.data_home / KEY_FILE}" in line


def test_err1_commands_on_a_database_never_set_up_say_to_run_init(home: Home) -> None:
    assert "run `mcpyard org init` first" in refused(org(home, "rotate-key"))
    assert "run `mcpyard org init` first" in refused(org(home, "token", "revoke", "x"))


def _talk(process: subprocess.Popen[bytes], leader: int, answers: list[bytes]) -> bytes:
    """Type each answer when its prompt shows on the terminal; everything the terminal showed."""
    shown = since_answer = b""
    end = time.monotonic() + 60
    while answers and time.monotonic() < end:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            chunk = os.read(leader, 4096)
            shown, since_answer = shown + chunk, since_answer + chunk
            # Only once the prompt is shown: getpass flushes what was typed before it.
            if since_answer.rstrip().endswith(b":"):
                os.write(leader, answers.pop(0))
                since_answer = b""
        elif process.poll() is not None:
            break
    return shown


@pytest.mark.parametrize(("second", "code"), [(PASSWORD, 0), ("something else", 2)])
def test_api5_on_a_terminal_the_password_is_asked_twice_without_echo(home: Home, second: str, code: int) -> None:
    leader, follower = os.openpty()
    try:
        # The context manager kills nothing, but closes the pipe and reaps the process on any exit.
        with subprocess.Popen(
            [sys.executable, "-m", "mcpyard", "org", "init", "--json"],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=follower,
            env=home.environ,
            cwd=home.workspace,
            start_new_session=True,  # no controlling terminal: getpass talks on stdin's
        ) as process:
            os.close(follower)
            follower = -1
            try:
                shown = _talk(process, leader, [f"{PASSWORD}\n".encode(), f"{second}\n".encode()])
                out, _ = process.communicate(timeout=60)
            finally:
                if process.poll() is None:
                    process.kill()
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert process.returncode == code, shown
    assert b"password for owner@localhost (not shown):" in shown
    assert PASSWORD.encode() not in shown, "no echo"
    if code == 0:
        assert json.loads(out)["owner_email"] == "owner@localhost"


def test_api5_help_and_org_help_never_import_the_database_or_crypto_layers() -> None:
    code = (
        "import sys, mcpyard\n"
        "from mcpyard.cli import main\n"
        "for argv in (['--help'], ['org', '--help'], ['org', 'init', '--help'], ['org', 'token', 'create', '--help'],\n"
        "             ['org', 'migrate', '--nope']):\n"
        "    main(argv)\n"
        "heavy = ('sqlalchemy', 'alembic', 'cryptography', 'argon2', 'psycopg', 'aiosqlite')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]"
