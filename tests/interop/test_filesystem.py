"""npm's server-filesystem through the Host and `mcpyard serve` (CONN-1, CAT-1, POL-2, APR-1, GW-1, GW-2, ERR-1).

The server is given one allowed folder on its command line; mcpyard declares no roots capability, so
that folder is all it may touch. Its writing tools are annotated destructive, so they always ask.

The official reference servers run as real processes, as people run them: interoperability is the
subject.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcpyard import Answer, ApprovalCard, CallResult, Host
from tests.conftest import Home, body
from tests.gateway.test_serve import serve_params, text_of
from tests.interop.conftest import list_all, own_listing_meanwhile

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

SERVER_ID = "fs"
CALL_SECONDS = 15


@dataclass(frozen=True)
class Folders:
    """The server's one allowed folder, holding a note, and a folder beside it that is not allowed."""

    root: Path
    outside: Path

    @property
    def note(self) -> Path:
        return self.root / "note.txt"

    @property
    def secret(self) -> Path:
        return self.outside / "secret.txt"

    def refusal(self, path: Path) -> str:
        """server-filesystem's own words for a path outside its allowed folder."""
        return f"Access denied - path outside allowed directories: {path} not in {self.root}"


@pytest.fixture
def folders(tmp_path: Path) -> Folders:
    # Resolved: the server compares real paths, and quotes them so in its errors.
    found = Folders(tmp_path.resolve() / "allowed", tmp_path.resolve() / "outside")
    found.root.mkdir()
    found.outside.mkdir()
    found.note.write_text("a note in the allowed folder\n", encoding="utf-8")
    found.secret.write_text("not for the server\n", encoding="utf-8")
    return found


def server_entry(filesystem_server: Path, folders: Folders) -> dict[str, Any]:
    return {"command": str(filesystem_server), "args": [str(folders.root)], "call_timeout_secs": 10}


@asynccontextmanager
async def open_host(home: Home, entry: dict[str, Any], **options: Any) -> AsyncIterator[Host]:
    config = home.write_config({SERVER_ID: entry})
    async with home.open(config, **options) as host:
        yield host


async def call(host: Host, tool: str, arguments: Mapping[str, Any]) -> CallResult:
    with anyio.fail_after(CALL_SECONDS):
        return await host.call(f"{SERVER_ID}__{tool}", arguments)


async def test_conn1_cat1_filesystem_server_has_every_tool_offered_and_reads_a_file_in_its_folder(
    home: Home, filesystem_server: Path, folders: Folders
) -> None:
    entry = server_entry(filesystem_server, folders)
    # Mode "ask": the reading tools are read-only, nothing asks.
    async with own_listing_meanwhile(entry) as listing, open_host(home, entry) as host:
        direct = await listing.tools()
        [status] = host.status().servers
        assert status.state == "connected", status.reason
        assert status.transport == "stdio"

        tools = {info.tool: info for info in host.server_tools()}
        assert sorted(tools) == sorted(direct), "the host does not offer exactly the tools the server lists"
        assert {"read_text_file", "write_file", "list_allowed_directories"} <= tools.keys()
        for name, wire in direct.items():
            assert tools[name].name == f"{SERVER_ID}__{name}"
            assert tools[name].input_schema == wire["inputSchema"], name
            assert tools[name].annotations == wire.get("annotations", {}), name

        read = await call(host, "read_text_file", {"path": str(folders.note)})
        assert read.ok, read.error
        assert body(read).strip() == "a note in the allowed folder"
        assert read.structured == {"content": "a note in the allowed folder\n"}
        allowed = await call(host, "list_allowed_directories", {})
        assert allowed.ok, allowed.error
        assert str(folders.root) in body(allowed)


async def test_pol2_apr1_a_filesystem_write_asks_with_its_card_and_is_written_once_allowed(
    home: Home, filesystem_server: Path, folders: Folders
) -> None:
    cards: list[ApprovalCard] = []

    async def approver(card: ApprovalCard) -> Answer:
        cards.append(card)
        return "once"

    target = folders.root / "written.txt"
    async with open_host(home, server_entry(filesystem_server, folders), approver=approver) as host:
        result = await call(host, "write_file", {"path": str(target), "content": "written through mcpyard"})
    assert result.ok, result.error
    assert f"Successfully wrote to {target}" in body(result)
    assert target.read_text(encoding="utf-8") == "written through mcpyard"

    [card] = cards
    assert (card.tool, card.server, card.server_tool) == ("fs__write_file", SERVER_ID, "write_file")
    assert card.destructive, "server-filesystem marks write_file destructive"
    assert not card.offers_session, "a destructive tool is never allowed for the whole session"
    assert "destructive" in card.reason
    assert str(target) in card.arguments_preview
    assert "written through mcpyard" in card.arguments_preview
    assert card.annotations["destructiveHint"] is True


async def test_err1_a_path_outside_the_filesystem_servers_folder_is_refused_in_its_own_words_on_one_line(
    home: Home, filesystem_server: Path, folders: Folders
) -> None:
    async with open_host(home, server_entry(filesystem_server, folders)) as host:
        result = await call(host, "read_text_file", {"path": str(folders.secret)})
        [status] = host.status().servers
    assert not result.ok
    assert result.error is not None
    assert result.error["code"] == "tool_error"
    assert result.error["message"] == folders.refusal(folders.secret)
    assert folders.refusal(folders.secret) in result.text.splitlines(), "the model reads the server's line whole"
    assert "not for the server" not in result.text
    assert status.state == "connected", "a refused path must not cost the connection"


async def test_gw1_gw2_filesystem_server_through_the_gateway_reads_refuses_an_unapproved_write_and_an_outside_path(
    home: Home, filesystem_server: Path, folders: Folders
) -> None:
    entry = server_entry(filesystem_server, folders)
    config = str(home.write_config({SERVER_ID: entry}))
    target = folders.root / "never.txt"
    with anyio.fail_after(60):
        async with (
            own_listing_meanwhile(entry) as listing,
            Client(serve_params(home, config, "--share-all")) as client,
        ):
            offered, direct = await list_all(client), await listing.tools()
            assert sorted(offered) == sorted([*(f"{SERVER_ID}__{name}" for name in direct), "read_result"])
            for name, wire in direct.items():
                assert offered[f"{SERVER_ID}__{name}"]["inputSchema"] == wire["inputSchema"], name
                assert offered[f"{SERVER_ID}__{name}"].get("annotations") == wire.get("annotations"), name

            read = await client.call_tool(f"{SERVER_ID}__read_text_file", {"path": str(folders.note)})
            assert not read.is_error, text_of(read)
            assert "a note in the allowed folder" in text_of(read)
            assert read.structured_content == {"content": "a note in the allowed folder\n"}

            write = await client.call_tool(f"{SERVER_ID}__write_file", {"path": str(target), "content": "no"})
            assert write.is_error
            assert text_of(write).startswith("fs__write_file needs approval: the tool is marked destructive")
            assert "no one can approve it here" in text_of(write)

            outside = await client.call_tool(f"{SERVER_ID}__read_text_file", {"path": str(folders.secret)})
            assert outside.is_error
            assert folders.refusal(folders.secret) in text_of(outside).splitlines()
            assert "not for the server" not in text_of(outside)
    assert not target.exists(), "a write no one approved never reaches the server"
