"""One reader for every private file mcpyard keeps (tokens, secrets, keys, pins, trust, listings): a regular file
of this user's that no one else may read or write, opened so that a FIFO never hangs it; anything else fails closed
with a message naming the file and the fix (SEC-1, AUTH-3, ORG-2, POL-5, CFG-6; THREATS "Secrets").

Real files, FIFOs and symbolic links in a temporary folder; the stores are the ones the host and the console use.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpyard._atomic import read_private, write_atomic
from mcpyard.auth import AuthStore
from mcpyard.config import TrustStore
from mcpyard.errors import ConfigError
from mcpyard.org import FileKeySource
from mcpyard.policy import Pin, PinStore
from mcpyard.secrets import FileSecretStore
from tests.conftest import Home, fixture_server

pytestmark = pytest.mark.anyio


def private(path: Path, data: bytes = b"{}") -> Path:
    write_atomic(path, data, mode=0o600)
    return path


def with_mode(mode: int) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        private(path)
        os.chmod(path, mode)

    return make


def fifo(path: Path) -> None:
    os.mkfifo(path, 0o600)


def symlink(path: Path) -> None:
    path.symlink_to(private(path.with_name("elsewhere.json")))


def folder(path: Path) -> None:
    path.mkdir(mode=0o700)


def too_large(path: Path) -> None:
    private(path, b" " * (8 << 20))  # more than any store keeps, and than the 64 bytes asked for below


UNSAFE: list[Any] = [
    pytest.param(fifo, "not a regular file", id="fifo"),
    pytest.param(folder, "not a regular file", id="folder"),
    pytest.param(symlink, "symbolic link", id="symlink"),
    pytest.param(too_large, "larger than mcpyard ever writes it", id="too-large"),
    *(
        pytest.param(with_mode(mode), "chmod 600", id=f"mode-{mode:o}")
        for mode in (0o640, 0o604, 0o620, 0o602, 0o660, 0o644, 0o606)
    ),
]


def test_a_private_file_reads_back_and_a_missing_one_is_none(tmp_path: Path) -> None:
    path = private(tmp_path / "f.json", b'{"a": 1}')
    assert read_private(path, max_bytes=64) == b'{"a": 1}'
    assert read_private(tmp_path / "missing.json", max_bytes=64) is None


@pytest.mark.parametrize(("make", "says"), UNSAFE)
async def test_anything_but_a_private_regular_file_is_refused_naming_it_and_the_fix(
    tmp_path: Path, make: Callable[[Path], None], says: str
) -> None:
    path = tmp_path / "f.json"
    make(path)
    # Bounded: a FIFO is refused at once, never waited on for a writer.
    with anyio.fail_after(10), pytest.raises(ConfigError) as raised:
        await anyio.to_thread.run_sync(
            lambda: read_private(path, max_bytes=64, what="the f file"), abandon_on_cancel=True
        )
    message = str(raised.value)
    assert says in message
    assert message.startswith("the f file ")
    assert raised.value.source == path


STORES: list[Any] = [
    pytest.param(lambda path: PinStore(path).load(), "the pins file", id="pins"),
    pytest.param(lambda path: FileSecretStore(path).get_all(), "the secrets file", id="secrets"),
    pytest.param(lambda path: AuthStore(path).read(), "the sign-in file", id="sign-in"),
    pytest.param(lambda path: FileKeySource(path).load(), "key", id="organization-key"),
]


@pytest.mark.parametrize(("make", "says"), UNSAFE)
@pytest.mark.parametrize(("read", "named"), STORES)
def test_every_store_of_credentials_or_of_what_runs_freely_refuses_an_unsafe_file(
    tmp_path: Path, read: Callable[[Path], object], named: str, make: Callable[[Path], None], says: str
) -> None:
    path = tmp_path / "store.json"
    make(path)
    with pytest.raises(ConfigError) as raised:
        read(path)
    assert says in str(raised.value)
    assert named in str(raised.value)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o602, 0o644])
def test_cfg6_a_trust_file_others_could_read_or_write_trusts_nothing(tmp_path: Path, mode: int) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    store = TrustStore(tmp_path / "data" / "trusted.json")
    store.trust(workspace, {})
    assert store.is_trusted(workspace)
    os.chmod(store.path, mode)
    assert not store.is_trusted(workspace)


async def test_pol5_a_host_refuses_a_pins_file_others_could_have_written_and_a_fifo_never_hangs_it(home: Home) -> None:
    config = home.write_config({"a": fixture_server("named", "ping")})
    home.data_home.mkdir(parents=True, exist_ok=True)
    pins = home.data_home / "pins.json"
    PinStore(pins).pin(Pin("a", "ping", "run_freely", "0" * 64))
    os.chmod(pins, 0o666)
    with pytest.raises(ConfigError, match=r"the pins file .* can be read or written by others; run `chmod 600"):
        async with home.open(config):
            pass
    pins.unlink()
    os.mkfifo(pins, 0o600)
    with anyio.fail_after(10), pytest.raises(ConfigError, match="not a regular file"):
        async with home.open(config):
            pass
    pins.unlink()
    PinStore(pins).pin(Pin("a", "ping", "run_freely", "0" * 64))
    async with home.open(config) as host:
        assert json.loads(pins.read_text())["pins"], "a private pins file reads as before"
        assert host.status() is not None
