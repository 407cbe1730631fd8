"""Secrets: saved by name (SEC-1) and kept out of everything anyone reads (SEC-2, SEC-3)."""

from mcpyard.secrets._redact import MIN_SECRET_LENGTH, Redactor, forms_of
from mcpyard.secrets._store import (
    SECRETS_FILE,
    FileSecretStore,
    KeyringSecretStore,
    MemorySecretStore,
    SecretStore,
    check_secret_name,
    default_secret_store,
)

__all__ = [
    "MIN_SECRET_LENGTH",
    "SECRETS_FILE",
    "FileSecretStore",
    "KeyringSecretStore",
    "MemorySecretStore",
    "Redactor",
    "SecretStore",
    "check_secret_name",
    "default_secret_store",
    "forms_of",
]
