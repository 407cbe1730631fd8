"""Rotating the sealing key re-seals every credential in one transaction and then drops the old key; stopped
at any step, every credential still unseals (ORG-2)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from sqlalchemy import select

from mcpyard.errors import ConfigError, UsageError
from mcpyard.org.keys import Sealer, model_key_context, task_id_context, webhook_secret_context
from mcpyard.org.keys._keys import KEY_FILE, EnvKeySource, FileKeySource, MemoryKeySource, key_id, new_key
from mcpyard.org.keys._rotate import key_ids_in_use, reseal_all, rotate_key
from mcpyard.org.store import Member, ModelSetting, TaskCall, Webhook, new_id
from mcpyard.org.store._db import Database
from tests.org._rows import credentials, server_with_token

pytestmark = pytest.mark.anyio

TOKENS = ["token-one-sealed", "token-two-sealed", "token-three-sealed"]


async def _three_credentials(db: Database, sealer: Sealer) -> None:
    first = await server_with_token(db, sealer, TOKENS[0])
    await server_with_token(db, sealer, TOKENS[1], org=first.org_id)
    await server_with_token(db, sealer, TOKENS[2])


async def _unseal_all(db: Database, sealer: Sealer) -> list[str]:
    return sorted(sealer.unseal_credential(c) for c in await credentials(db))


async def test_org2_rotate_key_reseals_every_credential_with_a_new_key_and_drops_the_old_one(
    database: Database, tmp_path: Path
) -> None:
    source = FileKeySource(tmp_path / KEY_FILE)
    old = source.create().current
    await _three_credentials(database, Sealer(source))
    done = await rotate_key(database, source)
    assert done.resealed == 3
    assert done.key_id != old
    assert done.dropped == [old]
    assert done.still_used == []
    assert set(source.load().keys) == {done.key_id}
    assert {c.key_id for c in await credentials(database)} == {done.key_id}
    assert await _unseal_all(database, Sealer(FileKeySource(source.path))) == sorted(TOKENS)


async def test_org2_stopped_after_the_new_key_is_saved_every_credential_still_unseals(
    database: Database, tmp_path: Path
) -> None:
    source = FileKeySource(tmp_path / KEY_FILE)
    source.create()
    await _three_credentials(database, Sealer(source))
    source.add_key()  # and then the process dies
    assert await _unseal_all(database, Sealer(FileKeySource(source.path))) == sorted(TOKENS)
    done = await rotate_key(database, source)  # run again: it finishes the job
    assert set(source.load().keys) == {done.key_id}
    assert await _unseal_all(database, Sealer(FileKeySource(source.path))) == sorted(TOKENS)


async def test_org2_stopped_after_the_reseal_before_the_old_key_is_dropped_every_credential_still_unseals(
    database: Database, tmp_path: Path
) -> None:
    source = FileKeySource(tmp_path / KEY_FILE)
    source.create()
    await _three_credentials(database, Sealer(source))
    keyring = source.add_key()
    assert await reseal_all(database, keyring) == 3  # and then the process dies
    assert await _unseal_all(database, Sealer(FileKeySource(source.path))) == sorted(TOKENS)


async def test_org2_a_credential_that_cannot_be_unsealed_stops_the_reseal_and_changes_no_row(
    database: Database, tmp_path: Path
) -> None:
    source = FileKeySource(tmp_path / KEY_FILE)
    old = source.create().current
    await _three_credentials(database, Sealer(source))
    foreign = await server_with_token(database, Sealer(MemoryKeySource()), "sealed-with-a-key-we-lack")
    with pytest.raises(ConfigError) as raised:
        await rotate_key(database, source)
    assert f"the credential {foreign.id} was sealed with key {foreign.key_id}" in str(raised.value)
    assert "sealed-with-a-key-we-lack" not in str(raised.value)
    rows = await credentials(database)
    assert sorted(c.key_id for c in rows if c.id != foreign.id) == [old] * 3, "all or nothing"
    sealer = Sealer(FileKeySource(source.path))
    assert sorted(sealer.unseal_credential(c) for c in rows if c.id != foreign.id) == sorted(TOKENS)
    assert old in source.load().keys


async def test_org2_an_old_key_still_used_by_a_credential_written_meanwhile_is_kept(
    database: Database, tmp_path: Path
) -> None:
    source = FileKeySource(tmp_path / KEY_FILE)
    before = source.create()
    await _three_credentials(database, Sealer(source))
    keyring = source.add_key()
    await reseal_all(database, keyring)
    # A service that loaded the keyring before the rotation seals one more token with the old key.
    late = await server_with_token(database, Sealer(MemoryKeySource(before)), "written-during-the-rotation")
    in_use = await key_ids_in_use(database)
    assert source.drop_keys_except(in_use | {keyring.current}) == []
    assert Sealer(FileKeySource(source.path)).unseal_credential(late) == "written-during-the-rotation"


async def test_org2_one_rotation_at_a_time(database: Database, tmp_path: Path) -> None:
    source = FileKeySource(tmp_path / KEY_FILE)
    source.create()
    with source.lock(), pytest.raises(ConfigError, match="another key rotation"):
        await rotate_key(database, FileKeySource(source.path))


async def test_org2_an_environment_key_rotates_when_the_new_key_is_listed_first(database: Database) -> None:
    old, new = new_key(), new_key()
    encoded = [base64.b64encode(k).decode() for k in (new, old)]
    await _three_credentials(database, Sealer(EnvKeySource(encoded[1])))
    with pytest.raises(UsageError, match="MCPYARD_ORG_KEY=NEW,OLD"):
        await rotate_key(database, EnvKeySource(encoded[1]))
    done = await rotate_key(database, EnvKeySource(",".join(encoded)))
    assert done.key_id == key_id(new)
    assert done.resealed == 3
    assert done.dropped == [key_id(old)], "the old key can leave MCPYARD_ORG_KEY"
    assert await _unseal_all(database, Sealer(EnvKeySource(encoded[0]))) == sorted(TOKENS)


async def test_org2_rotate_key_reseals_the_organizations_model_key_too(database: Database, tmp_path: Path) -> None:
    source = FileKeySource(tmp_path / KEY_FILE)
    old = source.create().current
    sealer = Sealer(source)
    first = await server_with_token(database, sealer, TOKENS[0])
    async with database.sessions.begin() as session:
        setting = ModelSetting(org_id=first.org_id, base_url="https://models.example/v1", model="m")
        session.add(setting)
        await session.flush()
        setting.key_id, setting.sealed_key = sealer.seal("sk-model-secret", context=model_key_context(setting))
    done = await rotate_key(database, source)
    assert done.resealed == 2
    assert done.dropped == [old], "no row is sealed with the old key any more"
    async with database.sessions.begin() as session:
        [stored] = list(await session.scalars(select(ModelSetting)))
    assert stored.key_id == done.key_id
    assert stored.sealed_key is not None
    fresh = Sealer(FileKeySource(source.path))
    assert fresh.unseal(done.key_id, stored.sealed_key, context=model_key_context(stored)) == "sk-model-secret"


async def test_org2_rotate_key_reseals_webhook_secrets_and_drops_the_old_key(
    database: Database, tmp_path: Path
) -> None:
    """A webhook's shared secret is sealed like a credential: re-sealed with the new key, the same secret after."""
    source = FileKeySource(tmp_path / KEY_FILE)
    old = source.create().current
    credential = await server_with_token(database, Sealer(source), TOKENS[0])
    hook = Webhook(
        id=new_id(),
        org_id=credential.org_id,
        url="https://hooks.example/x",
        events=["alert_raised"],
        include_arguments=False,
        console_url="https://console.example",
        created_by="owner@acme.test",
    )
    context = webhook_secret_context(hook.org_id, hook.id)
    hook.key_id, hook.sealed_secret = Sealer(source).seal("whsec_rotated", context=context)
    async with database.sessions.begin() as session:
        session.add(hook)
    done = await rotate_key(database, source)
    assert done.resealed == 2
    assert done.dropped == [old]
    async with database.sessions.begin() as session:
        stored = await session.get(Webhook, hook.id)
    assert stored is not None
    assert stored.key_id == done.key_id
    sealer = Sealer(FileKeySource(source.path))
    assert sealer.unseal(stored.key_id, stored.sealed_secret, context=context) == "whsec_rotated"


async def test_call8_org2_rotate_key_reseals_a_running_long_calls_task_id_and_skips_ended_ones(
    database: Database, tmp_path: Path
) -> None:
    """The server's task id of a long call still running is sealed like a credential: re-sealed with the new key (a
    replica taking the call over after the rotation still opens it); an ended call holds none and keeps no key."""
    source = FileKeySource(tmp_path / KEY_FILE)
    old = source.create().current
    credential = await server_with_token(database, Sealer(source), TOKENS[0])
    member = Member(id=new_id(), org_id=credential.org_id, email="m@acme.test", role="member", password_hash="x")
    running, ended = new_id(), new_id()
    context = task_id_context(credential.org_id, running)
    key_id, sealed = Sealer(source).seal("server-task-7f3a", context=context)
    shared = {"org_id": credential.org_id, "member_id": member.id, "conversation": "c", "tool": "jobs__slow"}
    async with database.sessions.begin() as session:
        session.add(member)
        await session.flush()
        session.add(
            TaskCall(id=running, server="jobs", target="t", arguments={}, key_id=key_id, sealed_task=sealed, **shared)
        )
        session.add(
            TaskCall(
                id=ended, server="jobs", target="t", arguments={}, key_id="", sealed_task=b"", status="read", **shared
            )
        )
    done = await rotate_key(database, source)
    assert done.resealed == 2, "the credential and the running call's task id"
    assert done.dropped == [old]
    async with database.sessions.begin() as session:
        stored = await session.get(TaskCall, running)
    assert stored is not None
    assert stored.key_id == done.key_id
    sealer = Sealer(FileKeySource(source.path))
    assert sealer.unseal(stored.key_id, stored.sealed_task, context=context) == "server-task-7f3a"
