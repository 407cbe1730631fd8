"""Shared test fixtures: an isolated mcpyard home, config writing, the anyio backend."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from mcpyard import Host
from mcpyard.pipeline import CallResult
from tests._forkserver import SPAWNING, launched, start

# Property tests check what holds, never how fast: five workers on two cores make any example slow now and then.
settings.register_profile("mcpyard", deadline=None)
settings.load_profile("mcpyard")

# The suite never touches the machine's keyring: saved secrets go to each home's data folder, in this process and in
# every process it starts (a home's environment is this one's). Set before anything asks keyring for its backend.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

SERVERS = Path(__file__).resolve().parent / "servers"
PYTHON = sys.executable


def fixture_server(name: str, *args: str) -> dict[str, Any]:
    """A stdio server entry running one of tests/servers/*.py."""
    script = SERVERS / f"{name}.py"
    if SPAWNING["real"]:
        return {"command": PYTHON, "args": [str(script), *args]}
    program, *arguments = launched(script, *args)
    return {"command": program, "args": arguments}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `long` run first (the order is otherwise kept): the workers are handed tests in turn from the
    front, so the long ones are shared among them instead of ending the run one after another."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture(scope="session", autouse=True)
def _fork_servers() -> None:
    """This worker's fork servers start as its session does, for fixture servers and for mcpyard's own processes
    (given the environment of this process, as `home.environ` is): a program launched before its fork server listens
    starts as a process of its own, slower."""
    if not SPAWNING["real"]:
        start()
        start(os.environ)


@pytest.fixture(autouse=True)
def _spawned(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked `spawned` (about process trees: sessions, groups, orphans) gets fixture servers and mcpyard
    processes of their own, not forks of the worker's fork server (tests/_forkserver.py)."""
    if request.node.get_closest_marker("spawned") is None:
        yield
        return
    before, SPAWNING["real"] = SPAWNING["real"], True
    try:
        yield
    finally:
        SPAWNING["real"] = before


@dataclass
class Home:
    """A temporary workspace plus mcpyard config and data folders, isolated from the user's."""

    root: Path
    workspace: Path
    config_home: Path
    data_home: Path
    in_memory: bool = False
    """`open` reaches the fixture servers that can be built here in memory (`tests/servers/_memory.py`),
    unless given `connections` of its own: for tests whose subject is neither the process nor the wire."""

    @classmethod
    def at(cls, root: Path, *, in_memory: bool = False) -> Home:
        workspace = root / "workspace"
        workspace.mkdir()
        return cls(root, workspace, root / "config", root / "data", in_memory=in_memory)

    def write_config(self, servers: dict[str, dict[str, Any]], **settings: Any) -> Path:
        """Write a flag config file in the shared form (`mcpServers`)."""
        path = self.root / "flag.json"
        path.write_text(json.dumps({"mcpServers": servers, **settings}), encoding="utf-8")
        return path

    def open(self, config_file: Path, **options: Any) -> AbstractAsyncContextManager[Host]:
        """`Host.open` on this home's workspace and folders, with the given config file."""
        if self.in_memory and "connections" not in options:
            from tests.servers._memory import FixtureServers

            options["connections"] = FixtureServers()
        return Host.open(
            workspace=self.workspace,
            config_file=config_file,
            environ=options.pop("environ", self.environ),
            config_home=self.config_home,
            data_home=self.data_home,
            **options,
        )

    @property
    def environ(self) -> dict[str, str]:
        return {
            **{k: v for k, v in os.environ.items() if not k.startswith("MCPYARD_")},
            "MCPYARD_CONFIG_HOME": str(self.config_home),
            "MCPYARD_DATA_HOME": str(self.data_home),
        }


@pytest.fixture
def home(tmp_path: Path) -> Home:
    """A home whose servers run as configured (processes); a folder's conftest may give one `in_memory`."""
    return Home.at(tmp_path)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def body(result: CallResult) -> str:
    """The text content a server sent, without mcpyard's fence and file lines."""
    return "\n".join(str(block["text"]) for block in result.content if block.get("type") == "text")
