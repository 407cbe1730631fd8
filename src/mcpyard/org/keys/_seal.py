"""Sealing credentials with AES-GCM under a key kept outside the database, each bound to its own row (ORG-2).

A sealed value is `0x01 ‖ nonce (12 bytes) ‖ ciphertext and tag`; the row keeps the id of the
key that sealed it (`Credential.key_id`). The additional authenticated data names the row
(organization, credential id, server, kind) and the key id: a sealed value copied into another
row, or another organization, does not unseal there.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mcpyard.errors import ConfigError
from mcpyard.org.keys._keys import Keyring, KeySource
from mcpyard.org.store import new_id

if TYPE_CHECKING:
    from mcpyard.org.store import Credential, ModelSetting

__all__ = [
    "SEALED_VERSION",
    "Sealer",
    "credential_context",
    "model_key_context",
    "task_id_context",
    "webhook_secret_context",
]

SEALED_VERSION = 1
_NONCE_BYTES = 12
_PURPOSE = "mcpyard-org-credential/1"


def credential_context(credential: Credential, key_id: str) -> bytes:
    """The additional authenticated data of a credential's sealed value: its row and its key."""
    if not credential.id or not credential.org_id:
        raise ValueError("a credential is sealed once its id and org_id are set")
    fields = [_PURPOSE, key_id, credential.org_id, credential.id, credential.server_id or "", credential.kind or ""]
    return json.dumps(fields, separators=(",", ":")).encode("utf-8")


def model_key_context(setting: ModelSetting) -> bytes:
    """What the organization's model key is bound to: its row and organization (moved elsewhere, it does not open)."""
    return f"mcpyard model key|{setting.org_id}|{setting.id}".encode()


def task_id_context(org_id: str, call_id: str) -> bytes:
    """What a server's task id is bound to: its long call's row and organization (moved elsewhere, it does not open)."""
    return f"mcpyard task id|{org_id}|{call_id}".encode()


def webhook_secret_context(org_id: str, webhook_id: str) -> bytes:
    """What a webhook's shared secret is bound to: its row and organization (moved elsewhere, it does not open)."""
    return f"mcpyard webhook secret|{org_id}|{webhook_id}".encode()


class Sealer:
    """Seals and unseals with the keys of a `KeySource`; reloads them once when a row names a key it lacks.

    The reload lets a running service follow a `mcpyard org rotate-key` done beside it.
    """

    def __init__(self, keys: KeySource) -> None:
        self._source = keys
        self._keyring: Keyring | None = None

    def keyring(self) -> Keyring:
        if self._keyring is None:
            self._keyring = self._source.load()
        return self._keyring

    @property
    def key_id(self) -> str:
        """The id of the key that seals now."""
        return self.keyring().current

    def seal(self, secret: str, *, context: bytes) -> tuple[str, bytes]:
        """`secret` sealed under the current key: that key's id and the sealed bytes."""
        keyring = self.keyring()
        kid, key = keyring.current, keyring.keys[keyring.current]
        nonce = os.urandom(_NONCE_BYTES)
        sealed = AESGCM(key).encrypt(nonce, secret.encode("utf-8"), context)
        return kid, bytes([SEALED_VERSION]) + nonce + sealed

    def unseal(self, key_id: str, sealed: bytes, *, context: bytes, what: str = "a sealed value") -> str:
        """The secret in `sealed`.

        Raises:
            ConfigError: the key is not held, or the value was altered or moved from its row.
        """
        key = self._key_for(key_id)
        if key is None:
            raise ConfigError(
                f"{what} was sealed with key {key_id}, which {self._source.where} does not hold: "
                "restore the key it was sealed with, or enter the secret again"
            )
        if len(sealed) < 1 + _NONCE_BYTES + 16 or sealed[0] != SEALED_VERSION:
            raise ConfigError(f"{what} is not a sealed value mcpyard can read; enter the secret again")
        nonce, body = sealed[1 : 1 + _NONCE_BYTES], sealed[1 + _NONCE_BYTES :]
        try:
            plain = AESGCM(key).decrypt(nonce, body, context)
        except InvalidTag:
            raise ConfigError(
                f"{what} cannot be unsealed: it was altered, or moved from another row; enter the secret again"
            ) from None
        return plain.decode("utf-8")

    def seal_credential(self, credential: Credential, secret: str) -> None:
        """Seal `secret` into `credential` (giving it an id first if it has none), bound to its row."""
        if not credential.id:
            credential.id = new_id()
        if not credential.kind:
            credential.kind = "bearer"
        context = credential_context(credential, self.key_id)
        credential.key_id, credential.sealed = self.seal(secret, context=context)

    def unseal_credential(self, credential: Credential) -> str:
        """The secret sealed in `credential`, only ever for connecting (never shown, logged or returned).

        Raises:
            ConfigError: its key is not held, or the row's sealed value was altered or moved.
        """
        return self.unseal(
            credential.key_id,
            credential.sealed,
            context=credential_context(credential, credential.key_id),
            what=f"the credential {credential.id}",
        )

    def holds(self, kid: str) -> bool:
        """Whether the key `kid` is held (read again from the source once when it is not)."""
        return self._key_for(kid) is not None

    def _key_for(self, kid: str) -> bytes | None:
        key = self.keyring().key(kid)
        if key is None:
            self._keyring = None  # a rotation beside us may have added it
            key = self.keyring().key(kid)
        return key
