"""A remote server's `oauth` table: pre-registered clients, client ID metadata documents, client credentials (AUTH-2).

Secrets (`client_secret`, `private_key`) are only ever written as `${secret:NAME}`: a value
written into a file is refused, so the file can be shared and a secret lives in one place
(SEC-1). Every message names the field and the secret, never a value.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import get_args
from urllib.parse import urlsplit

from mcpyard.config._expand import Expansion
from mcpyard.config._fields import OAUTH_FIELDS, FieldReader
from mcpyard.config._model import OAuthGrant, OAuthSettings, TokenEndpointAuthMethod

__all__ = ["key_algorithm", "oauth_problems", "read_oauth"]

_SECRET_REFERENCE = re.compile(r"\$\{secret:([A-Za-z0-9_][A-Za-z0-9_.\-]*)\}")
_GRANTS: dict[str, OAuthGrant] = {grant: grant for grant in get_args(OAuthGrant)}
_METHODS: dict[str, TokenEndpointAuthMethod] = {method: method for method in get_args(TokenEndpointAuthMethod)}
_RSA = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
_CURVES = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512", "secp256k1": "ES256K"}

Expand = Callable[[str, str], Expansion]
"""`(template, field) -> Expansion`: the entry's expansion, which records secrets for redaction and warns."""
Plain = Callable[[str, str], str]
"""`(field, template) -> value`: expansion of a field that is not a secret (unset variables warn)."""


def read_oauth(raw: object, *, expand: Expand, plain: Plain, problems: list[str]) -> OAuthSettings | None:
    """The `oauth` table of an entry, expanded; what is wrong goes to `problems` (then the server does not start).

    Unknown keys were dealt with when the entry's keys were checked (an error in the own form,
    a warning in the shared form); here they are not read.
    """
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        problems.append("oauth: must be a table (TOML) or an object (JSON) of sign-in settings")
        return None
    fields = {f"oauth.{key}": value for key, value in raw.items() if key in OAUTH_FIELDS}
    read = FieldReader(fields)
    grant_name = read.text("oauth.grant") or "authorization_code"
    grant = _GRANTS.get(grant_name, "authorization_code")
    if grant_name not in _GRANTS:
        read.bad("oauth.grant", f"must be one of {', '.join(_GRANTS)}, not {grant_name!r}")
    method_name = read.text("oauth.token_endpoint_auth_method")
    method = _METHODS.get(method_name) if method_name is not None else None
    if method_name is not None and method is None:
        read.bad("oauth.token_endpoint_auth_method", f"must be one of {', '.join(_METHODS)}")
    scopes = read.texts("oauth.scopes") or ()
    for index, scope in enumerate(scopes):
        if not scope or any(char.isspace() or not char.isprintable() for char in scope):
            read.bad(f"oauth.scopes[{index}]", "a scope is one word; write each scope as its own item")
    port = read.whole("oauth.redirect_port", 0) or None
    if port is not None and port > 65535:
        read.bad("oauth.redirect_port", f"must be a port number from 1 to 65535, not {port}")
    texts = {
        key: read.text(f"oauth.{key}")
        for key in ("client_id", "client_metadata_url", "issuer", "idp_token_endpoint", "idp_client_id")
    }
    secrets = {key: read.text(f"oauth.{key}") for key in ("client_secret", "private_key", "id_token")}
    algorithm = read.text("oauth.signing_algorithm")
    problems.extend(read.problems)
    if read.problems:
        return None
    client_id, metadata_url, issuer, idp_endpoint, idp_client = (
        plain(f"oauth.{key}", value) if value is not None else None for key, value in texts.items()
    )
    secret, key, id_token = (
        _secret(f"oauth.{name}", value, expand, problems) if value is not None else None
        for name, value in secrets.items()
    )
    settings = OAuthSettings(
        grant=grant,
        client_id=client_id or None,
        client_secret=secret,
        private_key=key,
        signing_algorithm=algorithm,
        token_endpoint_auth_method=method,
        scopes=tuple(scopes),
        client_metadata_url=metadata_url or None,
        issuer=issuer or None,
        redirect_port=port,
        idp_token_endpoint=idp_endpoint or None,
        idp_client_id=idp_client or None,
        id_token=id_token,
    )
    # A secret that was written but could not be read already has its problem: judge the rest as if it were there.
    found = oauth_problems(
        settings,
        secret_given=secrets["client_secret"] is not None,
        key_given=secrets["private_key"] is not None,
        token_given=secrets["id_token"] is not None,
    )
    if key is not None:
        chosen, problem = key_algorithm(key, algorithm)
        if problem is not None:
            found.append(f"oauth.private_key: {problem}")
        settings = replace(settings, signing_algorithm=chosen)
    problems.extend(found)
    return None if found else settings


def _secret(label: str, template: str, expand: Expand, problems: list[str]) -> str | None:
    match = _SECRET_REFERENCE.fullmatch(template)
    if match is None:
        problems.append(
            f"{label}: must be a saved secret, written as ${{secret:NAME}} (save it with "
            "`mcpyard secrets set NAME`); mcpyard never reads a secret written into a config file"
        )
        return None
    name = match.group(1)
    result = expand(template, label)
    if result.blocked:
        problems.append(
            f"{label}: a project file may not read saved secrets, so this server cannot sign in; "
            "move it to your user config or a --mcp-config file"
        )
        return None
    if result.unresolved:
        problems.append(f"{label}: secret {name} is not saved; save it with `mcpyard secrets set {name}`")
        return None
    if not result.value.strip():
        problems.append(f"{label}: secret {name} is empty; save it again with `mcpyard secrets set {name}`")
        return None
    return result.value


def oauth_problems(
    settings: OAuthSettings, *, secret_given: bool = False, key_given: bool = False, token_given: bool = False
) -> list[str]:
    """What does not fit together in an `oauth` table, one sentence each, naming the fix (pure)."""
    found: list[str] = []
    method = settings.token_endpoint_auth_method
    has_secret = settings.client_secret is not None or secret_given
    has_key = settings.private_key is not None or key_given
    if settings.issuer is not None and (problem := _url_problem(settings.issuer, https_only=False)):
        found.append(f"oauth.issuer: {problem}")
    if settings.client_metadata_url is not None:
        problem = _url_problem(settings.client_metadata_url, https_only=True)
        if problem is None and urlsplit(settings.client_metadata_url).path in ("", "/"):
            problem = "must name the document with a path (https://host/path/client.json), not the site's root"
        if problem:
            found.append(f"oauth.client_metadata_url: {problem}")
    if has_secret and has_key:
        found.append("oauth: give client_secret or private_key, not both")
    if settings.signing_algorithm is not None and not has_key:
        found.append("oauth.signing_algorithm: signs with private_key, which is not set")
    if method == "private_key_jwt" and not has_key:
        found.append('oauth.token_endpoint_auth_method: private_key_jwt needs private_key = "${secret:NAME}"')
    if method in ("client_secret_basic", "client_secret_post") and not has_secret:
        found.append(f'oauth.token_endpoint_auth_method: {method} needs client_secret = "${{secret:NAME}}"')
    if method == "none" and (has_secret or has_key):
        found.append("oauth.token_endpoint_auth_method: none sends no credential; remove it or the secret")
    if method not in (None, "private_key_jwt") and has_key:
        found.append(f"oauth.token_endpoint_auth_method: {method} does not use private_key; write private_key_jwt")
    if (has_secret or has_key) and settings.client_id is None:
        found.append("oauth.client_id: is needed with a client secret or key; give the id it was issued with")
    has_token = settings.id_token is not None or token_given
    idp = {"idp_token_endpoint": settings.idp_token_endpoint, "idp_client_id": settings.idp_client_id}
    if settings.grant == "cross_app_access":
        found += _cross_app_problems(settings, has_secret=has_secret, has_key=has_key, has_token=has_token)
    elif has_token or any(value is not None for value in idp.values()):
        named = [f"oauth.{name}" for name, value in {**idp, "id_token": has_token or None}.items() if value]
        found.append(f'{", ".join(named)}: for grant = "cross_app_access" only')
    if settings.grant == "client_credentials" and not has_secret and not has_key:
        found.append(
            "oauth: the client_credentials grant needs client_id with client_secret or private_key "
            "(each as ${secret:NAME})"
        )
    if settings.grant != "authorization_code":
        if settings.issuer is None:
            found.append(
                f"oauth.issuer: the {settings.grant} grant needs the authorization server's issuer, so its "
                "credentials go there and nowhere else a server may point"
            )
        if settings.client_metadata_url is not None:
            found.append("oauth.client_metadata_url: is for browser sign-in (grant = authorization_code) only")
        if settings.redirect_port is not None:
            found.append("oauth.redirect_port: is for browser sign-in (grant = authorization_code) only")
    else:
        if has_key:
            found.append(
                'oauth.private_key: private_key_jwt is for grant = "client_credentials"; a browser sign-in '
                "uses client_secret or no secret"
            )
        if settings.client_id is not None and settings.client_metadata_url is not None:
            found.append(
                "oauth: client_id names a client registered beforehand, client_metadata_url one mcpyard describes "
                "itself; keep one of them"
            )
    return found


def _cross_app_problems(settings: OAuthSettings, *, has_secret: bool, has_key: bool, has_token: bool) -> list[str]:
    found: list[str] = []
    if not has_secret:
        found.append(
            "oauth.client_secret: cross-app access needs the client's secret at the authorization server "
            "(a confidential client, SEP-990)"
        )
    if has_key:
        found.append("oauth.private_key: cross-app access authenticates with client_secret")
    if settings.token_endpoint_auth_method not in (None, "client_secret_basic", "client_secret_post"):
        found.append("oauth.token_endpoint_auth_method: cross-app access sends client_secret_basic or _post")
    if settings.idp_token_endpoint is None:
        found.append("oauth.idp_token_endpoint: cross-app access needs the identity provider's token endpoint")
    elif problem := _url_problem(settings.idp_token_endpoint, https_only=False):
        found.append(f"oauth.idp_token_endpoint: {problem}")
    if settings.idp_client_id is None:
        found.append("oauth.idp_client_id: cross-app access needs mcpyard's client id at the identity provider")
    if not has_token:
        found.append(
            "oauth.id_token: cross-app access needs your ID token from the identity provider, "
            'saved as a secret (id_token = "${secret:NAME}")'
        )
    return found


def key_algorithm(pem: str, configured: str | None) -> tuple[str | None, str | None]:
    """The JWS algorithm a PEM private key signs with, and a problem (never quoting the key) if it cannot."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(pem.strip().encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return None, (
            "the secret is not a PEM private key without a passphrase "
            "(it starts with -----BEGIN PRIVATE KEY----- or -----BEGIN EC/RSA PRIVATE KEY-----)"
        )
    if isinstance(key, rsa.RSAPrivateKey):
        allowed: tuple[str, ...] = _RSA
    elif isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name in _CURVES:
        allowed = (_CURVES[key.curve.name],)
    elif isinstance(key, ed25519.Ed25519PrivateKey):
        allowed = ("EdDSA",)
    else:
        return None, "mcpyard signs with RSA, EC (P-256, P-384, P-521) or Ed25519 keys; this is another kind"
    if configured is None:
        return allowed[0], None
    if configured not in allowed:
        return None, f"signing_algorithm {configured!r} does not fit this key; it signs with {', '.join(allowed)}"
    return configured, None


def _url_problem(url: str, *, https_only: bool) -> str | None:
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port
    except ValueError:
        return "is not a valid URL"
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        return "must be a plain URL, without a user name, password, query or fragment"
    if not host:
        return "has no host; write it as https://host/path"
    if parts.scheme == "https" or (parts.scheme == "http" and not https_only and _loopback(host)):
        return None
    if https_only:
        return "must be an https URL (the authorization server fetches it)"
    return "must be https (http only on a loopback address, for development)"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
