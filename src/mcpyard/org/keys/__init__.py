"""The service's secrets: sealing keys and sealed credentials, key rotation, people's passwords and API tokens."""

from mcpyard.org.keys._keys import EnvKeySource, FileKeySource, key_source
from mcpyard.org.keys._origin import origin_of, same_origin
from mcpyard.org.keys._passwords import (
    MAX_PASSWORD_LENGTH,
    MIN_PASSWORD_LENGTH,
    PRODUCTION_HASHING,
    PasswordHashing,
    check_new_password,
    hash_password,
    needs_rehash,
    verify_password,
)
from mcpyard.org.keys._rotate import rotate_key
from mcpyard.org.keys._seal import Sealer, model_key_context, task_id_context, webhook_secret_context
from mcpyard.org.keys._tokens import looks_like_token, new_token, same_secret, token_hash

__all__ = [
    "MAX_PASSWORD_LENGTH",
    "MIN_PASSWORD_LENGTH",
    "PRODUCTION_HASHING",
    "EnvKeySource",
    "FileKeySource",
    "PasswordHashing",
    "Sealer",
    "check_new_password",
    "hash_password",
    "key_source",
    "looks_like_token",
    "model_key_context",
    "needs_rehash",
    "new_token",
    "origin_of",
    "rotate_key",
    "same_origin",
    "same_secret",
    "task_id_context",
    "token_hash",
    "verify_password",
    "webhook_secret_context",
]
