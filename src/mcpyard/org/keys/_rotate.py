"""Rotating the sealing key: a new key, every credential re-sealed in one transaction, the old key dropped (ORG-2).

Each step leaves every row unsealable if the next never comes: the new key is saved beside the
old ones before any row changes; the rows change all together or not at all; a key is dropped
only once no row uses it (a credential written during the rotation keeps its key).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.org.keys._keys import Keyring, KeySource, MemoryKeySource
from mcpyard.org.keys._seal import (
    Sealer,
    credential_context,
    model_key_context,
    task_id_context,
    webhook_secret_context,
)
from mcpyard.org.store import Credential, Database, ModelSetting, Question, TaskCall, Webhook, database_error

__all__ = ["Rotation", "key_ids_in_use", "reseal_all", "rotate_key"]


@dataclass(frozen=True, slots=True)
class Rotation:
    """What a rotation did."""

    key_id: str
    """The key that seals now."""
    resealed: int
    """Credentials re-sealed with it."""
    dropped: list[str]
    """Keys no credential uses any more: removed from the key file (or to remove from `MCPYARD_ORG_KEY`)."""
    still_used: list[str]
    """Old keys a credential written during the rotation still uses: run the rotation again."""


@dataclass(frozen=True, slots=True)
class _SealedColumn:
    """A table's sealed column other than the credentials' (those seal with their key id in the context)."""

    table: Any
    column: str
    context: Callable[[Any], bytes]
    what: str
    """What the sealed value is, for the error that says it cannot be unsealed."""
    only: tuple[Any, ...] = ()
    """Which rows (every one by default)."""


_SEALED = (
    _SealedColumn(ModelSetting, "sealed_key", model_key_context, "the model's key"),
    _SealedColumn(
        Webhook, "sealed_secret", lambda hook: webhook_secret_context(hook.org_id, hook.id), "a webhook's secret"
    ),
    # A long call's task id is sealed until its call ends.
    _SealedColumn(
        TaskCall,
        "sealed_task",
        lambda task: task_id_context(task.org_id, task.id),
        "a server's task id",
        (TaskCall.status == "running",),
    ),
)


async def reseal_all(db: Database, keyring: Keyring) -> int:
    """Re-seal, in one transaction, every credential not sealed with `keyring`'s current key; how many.

    Raises:
        ConfigError: a credential cannot be unsealed with `keyring` (nothing is changed then),
            or the database cannot be written.
    """
    sealer = Sealer(MemoryKeySource(keyring))
    count = 0
    try:
        async with db.sessions.begin() as session:
            rows = await session.scalars(select(Credential).order_by(Credential.id).with_for_update())
            for credential in rows:
                if credential.key_id == keyring.current:
                    continue
                secret = sealer.unseal_credential(credential)
                context = credential_context(credential, keyring.current)
                credential.key_id, credential.sealed = sealer.seal(secret, context=context)
                count += 1
            for sealed in _SEALED:
                count += await _reseal(session, sealer, keyring.current, sealed)
    except SQLAlchemyError as exc:
        raise database_error(exc, db.url, doing="re-seal the credentials in") from None
    return count


async def _reseal(session: AsyncSession, sealer: Sealer, current: str, sealed: _SealedColumn) -> int:
    """Re-seal `sealed`'s values not sealed with `current` (in the rotation's transaction); how many."""
    count = 0
    table = sealed.table
    for row in await session.scalars(select(table).where(*sealed.only).order_by(table.id).with_for_update()):
        value = getattr(row, sealed.column)
        if value is None or row.key_id in (None, current):
            continue
        context = sealed.context(row)
        secret = sealer.unseal(row.key_id, value, context=context, what=sealed.what)
        row.key_id, resealed = sealer.seal(secret, context=context)
        setattr(row, sealed.column, resealed)
        count += 1
    return count


async def key_ids_in_use(db: Database) -> set[str]:
    """The ids of the keys some credential (or an answer waiting for its call) is sealed with."""
    try:
        async with db.sessions.begin() as session:
            used = set(await session.scalars(select(Credential.key_id).distinct()))
            models = await session.scalars(select(ModelSetting.key_id).where(ModelSetting.key_id.is_not(None)))
            # An answer waiting sealed for its call (seconds at most) keeps its key until it is taken.
            answers = await session.scalars(select(Question.key_id).where(Question.key_id.is_not(None)))
            webhooks = await session.scalars(select(Webhook.key_id).distinct())
            tasks = await session.scalars(select(TaskCall.key_id).where(TaskCall.status == "running").distinct())
            return used | set(webhooks) | set(tasks) | {key for key in [*models, *answers] if key is not None}
    except SQLAlchemyError as exc:
        raise database_error(exc, db.url, doing="read") from None


async def rotate_key(db: Database, keys: KeySource) -> Rotation:
    """Seal every credential with a new key and forget the keys no longer used.

    With the key file, the new key is made here. With `MCPYARD_ORG_KEY`, the new key is the
    first one it lists (see `EnvKeySource`).

    Raises:
        ConfigError: a credential cannot be unsealed, the keys cannot be saved, or the database written.
        UsageError: `MCPYARD_ORG_KEY` holds a single key: the message says how to rotate it.
    """
    with keys.lock():
        keyring = keys.add_key()
        resealed = await reseal_all(db, keyring)
        in_use = await key_ids_in_use(db)
        dropped = keys.drop_keys_except(in_use | {keyring.current})
    still_used = sorted(in_use - {keyring.current})
    return Rotation(keyring.current, resealed, dropped, still_used)
