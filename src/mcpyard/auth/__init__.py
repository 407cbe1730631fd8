"""Signing in to remote servers with OAuth, and keeping their tokens (AUTH-2 to AUTH-4)."""

from mcpyard.auth._cross_app import CrossAppProvider, HttpClients
from mcpyard.auth._provider import SignInProvider, client_metadata, secret_method
from mcpyard.auth._signin import SIGN_IN_TIMEOUT, SignIn, SignInError, free_loopback_port, is_loopback, safe_page_url
from mcpyard.auth._store import AUTH_FILE, AuthStore, MemoryAuthStore, ServerTokens
from mcpyard.auth._unattended import ClientCredentialsProvider, PrivateKeyJWTProvider, server_auth

__all__ = [
    "AUTH_FILE",
    "SIGN_IN_TIMEOUT",
    "AuthStore",
    "ClientCredentialsProvider",
    "CrossAppProvider",
    "HttpClients",
    "MemoryAuthStore",
    "PrivateKeyJWTProvider",
    "ServerTokens",
    "SignIn",
    "SignInError",
    "SignInProvider",
    "client_metadata",
    "free_loopback_port",
    "is_loopback",
    "safe_page_url",
    "secret_method",
    "server_auth",
]
