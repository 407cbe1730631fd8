"""Secrets: saved by name (SEC-1) and kept out of everything anyone reads (SEC-2, SEC-3)."""

from mcpyard.secrets._inventory import AUTH_HEADERS, credential_header, secrets_in_use
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
    "AUTH_HEADERS",
    "MIN_SECRET_LENGTH",
    "SECRETS_FILE",
    "FileSecretStore",
    "KeyringSecretStore",
    "MemorySecretStore",
    "Redactor",
    "SecretStore",
    "check_secret_name",
    "credential_header",
    "default_secret_store",
    "forms_of",
    "secrets_in_use",
]
