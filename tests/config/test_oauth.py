"""A remote server's `oauth` table in both forms, secrets only as `${secret:NAME}`, and its errors (AUTH-2, SEC-2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from mcpyard.config import OAuthSettings, ServerSpec
from mcpyard.errors import ConfigError

from ._support import Setup, by_id, mentioning

URL = "https://mcp.example.com/mcp"
SECRET = "s3cr3t-client-value-0001"
ISSUER = "https://auth.example.com"


def pem(key: PrivateKeyTypes) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


EC_KEY = pem(ec.generate_private_key(ec.SECP256R1()))
KEY_BODY = EC_KEY.splitlines()[1]
"""A line of the key's own material: what must never be shown."""


def shown(spec: ServerSpec, *more: object) -> str:
    """Everything anyone may see of a spec: its repr, problem, references, and what else is given."""
    return " ".join([repr(spec), repr(spec.oauth), spec.problem or "", repr(spec.references), *map(str, more)])


def one(cfg: Setup, oauth: object, *, secrets: dict[str, str] | None = None, **entry: Any) -> ServerSpec:
    spec, _ = cfg.load_one({"url": URL, "oauth": oauth, **entry}, secrets=secrets or {"CLIENT": SECRET})
    return spec


OAUTH_FORMS = {
    "json-own": (
        "flag.json",
        json.dumps(
            {
                "servers": [
                    {
                        "id": "gh",
                        "url": URL,
                        "oauth": {
                            "client_id": "mcpyard-ci",
                            "client_secret": "${secret:CLIENT}",
                            "scopes": ["repo", "read:org"],
                        },
                    }
                ]
            }
        ),
    ),
    "json-shared": (
        "flag.json",
        json.dumps(
            {
                "mcpServers": {
                    "gh": {
                        "url": URL,
                        "oauth": {
                            "client_id": "mcpyard-ci",
                            "client_secret": "${secret:CLIENT}",
                            "scopes": ["repo", "read:org"],
                        },
                    }
                }
            }
        ),
    ),
    "toml-own": (
        "flag.toml",
        f'[[mcp.servers]]\nid = "gh"\nurl = "{URL}"\n'
        'oauth = { client_id = "mcpyard-ci", client_secret = "${secret:CLIENT}", scopes = ["repo", "read:org"] }\n',
    ),
    "toml-shared": (
        "flag.toml",
        f'[mcp.mcpServers.gh]\nurl = "{URL}"\n\n[mcp.mcpServers.gh.oauth]\nclient_id = "mcpyard-ci"\n'
        'client_secret = "${secret:CLIENT}"\nscopes = ["repo", "read:org"]\n',
    ),
}


@pytest.mark.parametrize(("name", "text"), OAUTH_FORMS.values(), ids=OAUTH_FORMS.keys())
def test_a_pre_registered_client_is_read_from_either_form_auth_2_cfg_2(cfg: Setup, name: str, text: str) -> None:
    """AUTH-2, CFG-2: the same `oauth` table in JSON and TOML, own and shared form."""
    loaded = cfg.load(config_file=cfg.flag(text, name), secrets={"CLIENT": SECRET})
    (spec,) = loaded.servers
    assert spec.state == "ok", spec.problem
    assert spec.oauth == OAuthSettings(client_id="mcpyard-ci", client_secret=SECRET, scopes=("repo", "read:org"))
    assert loaded.warnings == ()
    assert ("CLIENT", SECRET) in spec.secret_values, "the secret is redacted wherever a server repeats it (SEC-3)"
    assert SECRET not in shown(spec)


def test_no_oauth_table_keeps_the_defaults_auth_2(cfg: Setup) -> None:
    spec, _ = cfg.load_one({"url": URL})
    assert spec.oauth is None


def test_a_client_id_metadata_document_and_an_issuer_are_carried_auth_2(cfg: Setup) -> None:
    spec = one(cfg, {"client_metadata_url": "https://example.org/mcpyard/client.json", "issuer": ISSUER})
    assert spec.state == "ok", spec.problem
    assert spec.oauth == OAuthSettings(client_metadata_url="https://example.org/mcpyard/client.json", issuer=ISSUER)


def test_client_credentials_with_a_secret_or_a_private_key_auth_2(cfg: Setup) -> None:
    """AUTH-2: the unattended grant; a key's algorithm follows from the key."""
    basic = one(
        cfg, {"grant": "client_credentials", "client_id": "svc", "client_secret": "${secret:CLIENT}", "issuer": ISSUER}
    )
    assert basic.state == "ok", basic.problem
    assert basic.oauth is not None
    assert (basic.oauth.grant, basic.oauth.client_secret, basic.oauth.private_key) == (
        "client_credentials",
        SECRET,
        None,
    )
    keyed = one(
        cfg,
        {"grant": "client_credentials", "client_id": "svc", "private_key": "${secret:KEY}", "issuer": ISSUER},
        secrets={"KEY": EC_KEY},
    )
    assert keyed.state == "ok", keyed.problem
    assert keyed.oauth is not None
    assert (keyed.oauth.private_key, keyed.oauth.signing_algorithm) == (EC_KEY, "ES256")
    assert ("KEY", EC_KEY) in keyed.secret_values
    assert EC_KEY not in shown(keyed)
    assert KEY_BODY not in shown(keyed)


@pytest.mark.parametrize(
    ("key", "configured", "expected"),
    [
        (pem(ec.generate_private_key(ec.SECP384R1())), None, "ES384"),
        (pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)), None, "RS256"),
        (pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)), "PS256", "PS256"),
        (pem(ed25519.Ed25519PrivateKey.generate()), None, "EdDSA"),
    ],
    ids=["ec-p384", "rsa", "rsa-pss", "ed25519"],
)
def test_the_signing_algorithm_comes_from_the_key_auth_2(
    cfg: Setup, key: str, configured: str | None, expected: str
) -> None:
    oauth: dict[str, object] = {
        "grant": "client_credentials",
        "client_id": "svc",
        "private_key": "${secret:KEY}",
        "issuer": ISSUER,
    }
    if configured is not None:
        oauth["signing_algorithm"] = configured
    spec = one(cfg, oauth, secrets={"KEY": key})
    assert spec.oauth is not None, spec.problem
    assert spec.oauth.signing_algorithm == expected
    assert spec.oauth.token_endpoint_auth_method is None, "private_key_jwt is implied by the key"


def test_cross_app_access_takes_the_identity_providers_id_token_as_a_secret_auth_2(cfg: Setup) -> None:
    """AUTH-2 (SEP-990): the ID token is a saved secret like any other, redacted wherever it appears."""
    oauth = {
        "grant": "cross_app_access",
        "client_id": "c",
        "client_secret": "${secret:CLIENT}",
        "issuer": ISSUER,
        "idp_token_endpoint": "https://idp.example.com/oauth2/token",
        "idp_client_id": "mcpyard",
        "id_token": "${secret:ID_TOKEN}",
    }
    spec = one(cfg, oauth, secrets={"CLIENT": SECRET, "ID_TOKEN": "eyJ.id-token.value"})
    assert spec.state == "ok", spec.problem
    assert spec.oauth is not None
    assert (spec.oauth.grant, spec.oauth.id_token, spec.oauth.idp_client_id) == (
        "cross_app_access",
        "eyJ.id-token.value",
        "mcpyard",
    )
    assert ("ID_TOKEN", "eyJ.id-token.value") in spec.secret_values
    assert "eyJ.id-token.value" not in shown(spec)


def test_a_secret_written_into_the_file_is_refused_and_never_repeated_auth_2_sec_2(cfg: Setup) -> None:
    """SEC-2: a literal client_secret stops the server; the message says how to save it, not what it was."""
    spec = one(cfg, {"client_id": "c", "client_secret": SECRET})
    assert spec.state == "failed"
    assert spec.problem is not None
    assert "oauth.client_secret: must be a saved secret, written as ${secret:NAME}" in spec.problem
    assert "mcpyard secrets set NAME" in spec.problem
    assert SECRET not in shown(spec)
    key = one(
        cfg, {"grant": "client_credentials", "client_id": "c", "private_key": EC_KEY, "issuer": ISSUER}, secrets={}
    )
    assert key.state == "failed"
    assert "oauth.private_key: must be a saved secret" in (key.problem or "")
    assert KEY_BODY not in shown(key)


@pytest.mark.parametrize(
    "template",
    ["${env:CLIENT_SECRET}", "${CLIENT_SECRET}", "prefix-${secret:CLIENT}", "${secret:CLIENT}${secret:CLIENT}"],
)
def test_a_secret_is_one_secret_reference_and_nothing_else_auth_2(cfg: Setup, template: str) -> None:
    spec, _ = cfg.load_one(
        {"url": URL, "oauth": {"client_id": "c", "client_secret": template}},
        environ={"CLIENT_SECRET": SECRET},
        secrets={"CLIENT": SECRET},
    )
    assert spec.state == "failed"
    assert "oauth.client_secret: must be a saved secret, written as ${secret:NAME}" in (spec.problem or "")
    assert SECRET not in shown(spec)


def test_a_secret_not_saved_stops_the_server_naming_it_auth_2(cfg: Setup) -> None:
    spec = one(cfg, {"client_id": "c", "client_secret": "${secret:MISSING}"})
    assert spec.state == "failed"
    assert (
        spec.problem == "oauth.client_secret: secret MISSING is not saved; save it with `mcpyard secrets set MISSING`"
    )


def test_a_project_file_cannot_hand_a_saved_secret_to_a_server_auth_2_cfg_6(cfg: Setup) -> None:
    """CFG-6: the project file's `${secret:…}` expands to nothing, so its server cannot sign in with it."""
    cfg.project({"mcpServers": {"p": {"url": URL, "oauth": {"client_id": "c", "client_secret": "${secret:CLIENT}"}}}})
    loaded = cfg.load(secrets={"CLIENT": SECRET})
    spec = by_id(loaded)["p"]
    assert spec.state == "failed"
    assert "oauth.client_secret: a project file may not read saved secrets" in (spec.problem or "")
    assert mentioning(loaded, "${secret:CLIENT} in oauth.client_secret expands to empty")
    assert SECRET not in shown(spec, *loaded.warnings)


def test_an_unknown_oauth_key_is_an_error_in_the_own_form_cfg_3(cfg: Setup) -> None:
    flag = cfg.flag({"servers": [{"id": "a", "url": URL, "oauth": {"clientid": "x"}}]})
    with pytest.raises(ConfigError) as caught:
        cfg.load(config_file=flag)
    assert "unknown field 'oauth.clientid'; did you mean `client_id`?" in caught.value.message
    assert caught.value.field == "oauth.clientid"


def test_an_unknown_oauth_key_is_ignored_with_a_warning_in_the_shared_form_cfg_3(cfg: Setup) -> None:
    spec, loaded = cfg.load_one({"url": URL, "oauth": {"clientId": "x", "callbackPort": 8080}})
    assert spec.state == "ok"
    assert spec.oauth == OAuthSettings()
    assert mentioning(loaded, "ignoring the key 'oauth.clientId'; did you mean `client_id`?")
    assert mentioning(loaded, "ignoring the key 'oauth.callbackPort'")


BAD_TABLES: list[tuple[object, str]] = [
    ("client-id", "oauth: must be a table (TOML) or an object (JSON) of sign-in settings"),
    (
        {"grant": "password"},
        "oauth.grant: must be one of authorization_code, client_credentials, cross_app_access, not 'password'",
    ),
    ({"scopes": "repo read"}, "oauth.scopes: must be a list of strings, not a string"),
    ({"scopes": ["repo read"]}, "oauth.scopes[0]: a scope is one word"),
    ({"redirect_port": 70000}, "oauth.redirect_port: must be a port number from 1 to 65535"),
    ({"token_endpoint_auth_method": "tls"}, "oauth.token_endpoint_auth_method: must be one of client_secret_basic"),
    ({"client_secret": "${secret:CLIENT}"}, "oauth.client_id: is needed with a client secret or key"),
    (
        {"client_id": "c", "client_metadata_url": "https://example.org/c.json"},
        "oauth: client_id names a client registered beforehand",
    ),
    ({"client_metadata_url": "http://example.org/c.json"}, "oauth.client_metadata_url: must be an https URL"),
    ({"client_metadata_url": "https://example.org/"}, "oauth.client_metadata_url: must name the document with a path"),
    ({"issuer": "http://auth.example.com"}, "oauth.issuer: must be https (http only on a loopback address"),
    ({"issuer": "https://u:p@auth.example.com"}, "oauth.issuer: must be a plain URL"),
    (
        {"grant": "client_credentials", "client_id": "c", "issuer": ISSUER},
        "oauth: the client_credentials grant needs client_id with client_secret or private_key",
    ),
    (
        {"grant": "client_credentials", "client_id": "c", "client_secret": "${secret:CLIENT}"},
        "oauth.issuer: the client_credentials grant needs the authorization server's issuer",
    ),
    (
        {"client_id": "c", "client_secret": "${secret:CLIENT}", "token_endpoint_auth_method": "none"},
        "oauth.token_endpoint_auth_method: none sends no credential",
    ),
    (
        {"client_id": "c", "token_endpoint_auth_method": "client_secret_post"},
        "client_secret_post needs client_secret",
    ),
    (
        {"client_id": "c", "private_key": "${secret:KEY}"},
        'oauth.private_key: private_key_jwt is for grant = "client_credentials"',
    ),
    (
        {"grant": "client_credentials", "client_id": "c", "issuer": ISSUER, "private_key": "${secret:CLIENT}"},
        "oauth.private_key: the secret is not a PEM private key without a passphrase",
    ),
    (
        {
            "grant": "client_credentials",
            "client_id": "c",
            "issuer": ISSUER,
            "private_key": "${secret:KEY}",
            "signing_algorithm": "RS256",
        },
        "signing_algorithm 'RS256' does not fit this key; it signs with ES256",
    ),
    (
        {
            "grant": "client_credentials",
            "client_id": "c",
            "issuer": ISSUER,
            "client_secret": "${secret:CLIENT}",
            "private_key": "${secret:KEY}",
        },
        "oauth: give client_secret or private_key, not both",
    ),
    ({"client_id": "c", "id_token": "${secret:CLIENT}"}, 'oauth.id_token: for grant = "cross_app_access" only'),
    (
        {"grant": "cross_app_access", "client_id": "c", "issuer": ISSUER, "client_secret": "${secret:CLIENT}"},
        "oauth.idp_token_endpoint: cross-app access needs the identity provider's token endpoint; "
        "oauth.idp_client_id: cross-app access needs mcpyard's client id at the identity provider; "
        "oauth.id_token: cross-app access needs your ID token from the identity provider",
    ),
    (
        {
            "grant": "cross_app_access",
            "client_id": "c",
            "issuer": ISSUER,
            "idp_token_endpoint": "http://idp.example.com/token",
            "idp_client_id": "i",
            "id_token": "${secret:CLIENT}",
        },
        "(a confidential client, SEP-990); oauth.idp_token_endpoint: must be https",
    ),
]


@pytest.mark.parametrize(("oauth", "problem"), BAD_TABLES)
def test_a_bad_oauth_table_stops_that_server_saying_why_auth_2_cfg_4(cfg: Setup, oauth: object, problem: str) -> None:
    """CFG-4: the server fails with a message naming the field and the fix; the others start."""
    flag = cfg.flag({"mcpServers": {"s": {"url": URL, "oauth": oauth}, "other": {"url": URL}}})
    loaded = cfg.load(config_file=flag, secrets={"CLIENT": SECRET, "KEY": EC_KEY})
    spec = by_id(loaded)["s"]
    assert spec.state == "failed"
    assert problem in (spec.problem or ""), spec.problem
    assert SECRET not in shown(spec)
    assert KEY_BODY not in shown(spec)
    assert by_id(loaded)["other"].state == "ok"


def test_oauth_on_a_local_server_is_ignored_with_a_warning_cfg_3(cfg: Setup) -> None:
    spec, loaded = cfg.load_one({"command": "srv", "oauth": {"client_id": "c"}})
    assert (spec.state, spec.oauth) == ("ok", None)
    assert mentioning(loaded, "ignoring `oauth`, which only remote servers use")


def test_oauth_cannot_go_with_a_credential_header_or_a_websocket_auth_1_auth_3(cfg: Setup) -> None:
    header = one(cfg, {"client_id": "c"}, headers={"Authorization": "Bearer x"})
    assert header.state == "failed"
    assert "oauth: the header headers.Authorization already carries a credential" in (header.problem or "")
    socket, _ = cfg.load_one({"url": "wss://mcp.example.com/ws", "oauth": {"client_id": "c"}})
    assert socket.state == "failed"
    assert "oauth: a websocket server is sent no headers" in (socket.problem or "")


def test_a_changed_secret_restarts_the_server_on_reload_sec_1_cfg_7(cfg: Setup) -> None:
    """SEC-1, CFG-7: a secret saved again is used from the next reload, which restarts the server."""
    oauth = {"client_id": "c", "client_secret": "${secret:CLIENT}"}
    before = one(cfg, oauth)
    after = one(cfg, oauth, secrets={"CLIENT": SECRET + "-rotated"})
    same = one(cfg, oauth)
    assert before.fingerprint() != after.fingerprint()
    assert before.fingerprint() == same.fingerprint()


def test_the_documented_oauth_example_loads_as_written_auth_2(cfg: Setup) -> None:
    """AUTH-2: the "Signing in" example of docs/security.md is a configuration mcpyard reads without a problem."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text(encoding="utf-8")
    example = page.split("## Signing in", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    loaded = cfg.load(
        config_file=cfg.flag(example, "flag.toml"), secrets={"TRACKER_CLIENT": SECRET, "NIGHTLY_KEY": EC_KEY}
    )
    tracker, builds = loaded.servers
    assert (tracker.state, builds.state) == ("ok", "ok"), (tracker.problem, builds.problem)
    assert tracker.oauth == OAuthSettings(client_id="mcpyard-laptop", client_secret=SECRET, redirect_port=53682)
    assert builds.oauth is not None
    assert (builds.oauth.grant, builds.oauth.signing_algorithm) == ("client_credentials", "ES256")
    assert loaded.warnings == ()
