"""The sealing keys live outside the database: `MCPYARD_ORG_KEY` or a 0600 key file, refused when unsafe, never
shown (ORG-2, API-5)."""

from __future__ import annotations

import base64
import json
import os
import pwd
import stat
from pathlib import Path

import pytest

from mcpyard.errors import ConfigError, UsageError
from mcpyard.org.keys._keys import KEY_FILE, EnvKeySource, FileKeySource, Keyring, key_id, key_source, new_key


def _b64(key: bytes) -> str:
    return base64.b64encode(key).decode()


def _shows_no_key(text: str, *keys: bytes) -> bool:
    return not any(_b64(key) in text or _b64(key)[:12] in text or key.hex()[:16] in text for key in keys)


def test_api5_the_key_comes_from_the_environment_else_from_the_key_file_in_the_data_folder(tmp_path: Path) -> None:
    key = new_key()
    source = key_source({"MCPYARD_ORG_KEY": _b64(key)}, tmp_path)
    assert isinstance(source, EnvKeySource)
    assert source.load().current == key_id(key)
    fallback = key_source({"MCPYARD_ORG_KEY": "  "}, tmp_path)
    assert isinstance(fallback, FileKeySource)
    assert fallback.path == tmp_path / KEY_FILE


def test_org2_init_makes_a_0600_key_file_in_a_0700_folder_and_never_replaces_it(tmp_path: Path) -> None:
    source = FileKeySource(tmp_path / "data" / KEY_FILE)
    made = source.create()
    assert stat.S_IMODE(os.stat(source.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(source.path.parent).st_mode) == 0o700
    document = json.loads(source.path.read_text())
    assert document["format"] == "mcpyard-org-keyring/1"
    assert document["current"] == made.current
    assert set(document["keys"]) == {made.current}
    assert source.load().keys == made.keys
    with pytest.raises(ConfigError, match="never replaced"):
        source.create()
    assert source.load().keys == made.keys
    assert [p.name for p in source.path.parent.iterdir()] == [KEY_FILE], "no temporary file is left"


def test_org2_a_key_file_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    real = FileKeySource(tmp_path / "real.key")
    real.create()
    link = tmp_path / KEY_FILE
    link.symlink_to(real.path)
    with pytest.raises(ConfigError, match="symbolic link"):
        FileKeySource(link).load()


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o602])
def test_org2_a_key_file_others_can_use_is_refused(tmp_path: Path, mode: int) -> None:
    source = FileKeySource(tmp_path / KEY_FILE)
    made = source.create()
    os.chmod(source.path, mode)
    with pytest.raises(ConfigError) as raised:
        source.load()
    assert f"run `chmod 600 {source.path}`" in str(raised.value)
    assert _shows_no_key(str(raised.value), *made.keys.values())


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_org2_a_key_file_of_another_user_is_refused(tmp_path: Path) -> None:
    source = FileKeySource(tmp_path / KEY_FILE)
    source.create()
    nobody = pwd.getpwnam("nobody")
    os.chown(source.path, nobody.pw_uid, nobody.pw_gid)
    with pytest.raises(ConfigError, match="belongs to another user"):
        source.load()


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"not json", "not JSON"),
        (b'{"format": "other"}', "not a mcpyard keyring"),
        (b'{"format": "mcpyard-org-keyring/1", "current": "a", "keys": {}}', "current key"),
        (
            json.dumps(
                {"format": "mcpyard-org-keyring/1", "current": "0" * 16, "keys": {"0" * 16: _b64(b"k" * 32)}}
            ).encode(),
            "does not match its id",
        ),
    ],
)
def test_org2_a_damaged_key_file_is_refused_with_a_clear_error(tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / KEY_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, content)
    os.close(fd)
    with pytest.raises(ConfigError, match=says) as raised:
        FileKeySource(path).load()
    assert _shows_no_key(str(raised.value), b"k" * 32)


def test_org2_a_missing_key_file_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"run `mcpyard org init` to make it, or set MCPYARD_ORG_KEY"):
        FileKeySource(tmp_path / KEY_FILE).load()


def test_api5_the_environment_holds_one_key_or_several_the_first_sealing() -> None:
    first, second = new_key(), new_key()
    single = EnvKeySource(_b64(first)).load()
    assert single.current == key_id(first)
    assert dict(single.keys) == {key_id(first): first}
    several = EnvKeySource(f" {_b64(first)} , {base64.urlsafe_b64encode(second).decode().rstrip('=')},").load()
    assert several.current == key_id(first)
    assert dict(several.keys) == {key_id(first): first, key_id(second): second}


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("not base64 at all!", "is not base64"),
        (_b64(b"x" * 16), "decodes to 16 bytes"),
        (_b64(b"y" * 32) + "," + _b64(b"z" * 31), "key 2 of MCPYARD_ORG_KEY decodes to 31 bytes"),
        (",", "holds no key"),
    ],
)
def test_err1_a_bad_environment_key_is_named_but_never_shown(value: str, says: str) -> None:
    with pytest.raises(ConfigError) as raised:
        EnvKeySource(value).load()
    message = str(raised.value)
    assert says in message
    assert "openssl rand -base64 32" in message or "holds no key" in message
    for part in value.split(","):
        if part:
            assert part not in message


def test_org2_an_environment_key_cannot_be_rotated_in_place_and_the_error_says_how() -> None:
    with pytest.raises(UsageError) as raised:
        EnvKeySource(_b64(new_key())).add_key()
    assert "MCPYARD_ORG_KEY=NEW,OLD" in str(raised.value)


def test_org2_the_same_key_has_the_same_id_in_the_file_and_the_environment(tmp_path: Path) -> None:
    source = FileKeySource(tmp_path / KEY_FILE)
    made = source.create()
    [key] = made.keys.values()
    assert EnvKeySource(_b64(key)).load().current == made.current


def test_org2_a_keyring_never_shows_its_keys() -> None:
    key = new_key()
    keyring = Keyring.of(key)
    assert _shows_no_key(repr(keyring) + str(keyring), key)
    assert key_id(key) in repr(keyring)
