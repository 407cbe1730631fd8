"""Credentials are sealed with AES-GCM under a key outside the database, carry their key id, and unseal only
in their own row (ORG-2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import update

from mcpyard.errors import ConfigError
from mcpyard.org.keys._keys import KEY_FILE, FileKeySource, Keyring, MemoryKeySource, new_key
from mcpyard.org.keys._seal import Sealer
from mcpyard.org.store._db import Database
from mcpyard.org.store._models import Credential
from tests.org._rows import credentials, server_with_token

pytestmark = pytest.mark.anyio

TOKEN = "bearer-token-that-must-stay-sealed"


async def test_org2_a_sealed_token_is_stored_encrypted_with_its_key_id_and_unseals_on_both_engines(
    database: Database,
) -> None:
    sealer = Sealer(MemoryKeySource())
    await server_with_token(database, sealer, TOKEN)
    [stored] = await credentials(database)
    assert stored.key_id == sealer.key_id
    assert TOKEN.encode() not in stored.sealed
    assert stored.sealed[0] == 1
    assert sealer.unseal_credential(stored) == TOKEN


async def test_org2_the_same_token_seals_differently_every_time(database: Database) -> None:
    sealer = Sealer(MemoryKeySource())
    await server_with_token(database, sealer, TOKEN)
    await server_with_token(database, sealer, TOKEN)
    first, second = await credentials(database)
    assert first.sealed != second.sealed


async def test_org2_a_sealed_value_moved_to_another_row_does_not_unseal(database: Database) -> None:
    sealer = Sealer(MemoryKeySource())
    mine = await server_with_token(database, sealer, TOKEN)
    theirs = await server_with_token(database, sealer, "another organization's token")
    async with database.sessions.begin() as session:
        await session.execute(
            update(Credential).where(Credential.id == theirs.id).values(sealed=mine.sealed, key_id=mine.key_id)
        )
    moved = next(c for c in await credentials(database) if c.id == theirs.id)
    with pytest.raises(ConfigError, match="altered, or moved from another row") as raised:
        sealer.unseal_credential(moved)
    assert TOKEN not in str(raised.value)


@pytest.mark.parametrize("where", [0, 5, -1])
def test_org2_an_altered_sealed_value_does_not_unseal(where: int) -> None:
    sealer = Sealer(MemoryKeySource())
    credential = Credential(org_id="o1", server_id="s1", kind="bearer")
    sealer.seal_credential(credential, TOKEN)
    altered = bytearray(credential.sealed)
    altered[where] ^= 0x01
    credential.sealed = bytes(altered)
    with pytest.raises(ConfigError, match="enter the secret again"):
        sealer.unseal_credential(credential)


def test_org2_a_value_sealed_with_a_key_not_held_names_the_key_and_never_the_secret() -> None:
    credential = Credential(org_id="o1", server_id="s1", kind="bearer")
    Sealer(MemoryKeySource()).seal_credential(credential, TOKEN)
    other = Sealer(MemoryKeySource())
    with pytest.raises(ConfigError) as raised:
        other.unseal_credential(credential)
    message = str(raised.value)
    assert f"sealed with key {credential.key_id}, which the in-memory keyring does not hold" in message
    assert TOKEN not in message


def test_org2_a_running_sealer_follows_a_rotation_of_the_key_file_beside_it(tmp_path: Path) -> None:
    source = FileKeySource(tmp_path / KEY_FILE)
    source.create()
    running = Sealer(FileKeySource(source.path))
    assert running.key_id == source.load().current
    rotated = source.add_key()
    credential = Credential(org_id="o1", server_id="s1", kind="bearer")
    Sealer(MemoryKeySource(rotated.keeping(set()))).seal_credential(credential, TOKEN)
    assert credential.key_id == rotated.current
    assert running.unseal_credential(credential) == TOKEN


def test_org2_a_credential_is_given_its_id_before_it_is_sealed_so_the_seal_binds_to_it() -> None:
    sealer = Sealer(MemoryKeySource(Keyring.of(new_key())))
    credential = Credential(org_id="o1", server_id="s1")
    sealer.seal_credential(credential, TOKEN)
    assert credential.id
    assert credential.kind == "bearer"
    assert sealer.unseal_credential(credential) == TOKEN
