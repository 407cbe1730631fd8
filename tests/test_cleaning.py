"""Every text a server controls is cleaned, then redacted, before it goes anywhere: the model, a program, a
gateway client, the status page's JSON (CAT-4, CALL-5, CALL-7, SEC-3, INS-2, CLI-1, API-2, GW-1).

Driven by `tests/servers/sly.py`, which hides a saved secret behind a zero-width space and wraps
its texts in terminal sequences, bidi overrides and tag characters.

Real processes: the `sly` fixture reads its secret from its process's environment and writes to its
stderr.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcpyard.gateway import Gateway
from mcpyard.pipeline import IN_THE_FENCE
from mcpyard.secrets import forms_of
from tests._forkserver import mcpyard_command
from tests.conftest import Home, fixture_server

pytestmark = pytest.mark.anyio

SAVED = "sly-4b3a29187f6e5d4c-secret"
SLY: dict[str, Any] = {**fixture_server("sly"), "env": {"SLY_SECRET": "${secret:API}"}}
TRICK_CHARACTERS = "\x1b\x9b\x9d\x07\x08\u200b\u202e\u202c\U000e0041"


def assert_clean(text: str) -> None:
    """No terminal sequence, control, bidi, zero-width or tag character, and no form of the secret."""
    found = sorted({hex(ord(char)) for char in text if char in TRICK_CHARACTERS})
    assert not found, f"characters that should have been cleaned: {found}"
    for form in forms_of(SAVED):
        assert form not in text, f"a form of the secret leaked: {form!r}"


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


async def test_cat4_sec3_strings_at_any_depth_of_a_schema_are_cleaned_and_redacted(home: Home) -> None:
    config = home.write_config({"sly": SLY})
    async with home.open(config, secrets={"API": SAVED}) as host:
        [nested] = [tool for tool in host.tools() if tool.name == "sly__nested"]
        listed = dump(nested.to_json())
    assert_clean(listed)
    schema = nested.input_schema
    assert "%API%" in schema["properties"]["q"]["description"]
    assert "%API%" in schema["properties"]["deep"]["properties"]["inner"]["items"]["description"]
    assert "%API%" in schema["$defs"]["thing"]["description"]
    assert "%API%" in schema["properties"]["q"]["examples"][0]
    assert "&lt;b>bold&lt;/b>" in schema["properties"]["q"]["description"], "prose deep in a schema is tag-escaped"
    assert "red" in schema["title"], "the words stay, the sequences go"
    assert "Nested" in str(nested.annotations["title"])


async def test_call5_sec3_content_blocks_and_structured_content_are_cleaned_before_redaction(home: Home) -> None:
    config = home.write_config({"sly": SLY})
    async with home.open(config, secrets={"API": SAVED}) as host:
        result = await host.call("sly__blocks", {})
    assert result.ok, result.error
    assert_clean(dump(result.content) + dump(result.structured) + result.text)
    assert result.structured is not None
    assert result.structured["value"] == "%API%"
    kinds = [block["type"] for block in result.content]
    assert kinds == ["text", "resource", "resource_link"], "a program still sees every block, cleaned"
    assert "%API%" in result.content[1]["resource"]["text"]
    assert "EMBEDDED %API%" in result.text, "the embedded text resource is inside the fence"


async def test_call7_gw1_a_gateway_client_gets_every_text_inside_the_fence_and_nothing_raw(home: Home) -> None:
    config = home.write_config({"sly": SLY}, mode="auto")
    async with home.open(config, secrets={"API": SAVED}) as host, anyio.create_task_group() as tg:
        gateway = Gateway(host, share_all=True)
        await tg.start(gateway.run)
        async with Client(gateway.server) as client:
            listed = await client.list_tools()
            result = await client.call_tool("sly__blocks", {})
        tg.cancel_scope.cancel()
    assert_clean(listed.model_dump_json())
    assert_clean(result.model_dump_json())
    fenced, resource = result.content
    assert isinstance(fenced, types.TextContent)
    assert fenced.text.startswith("<mcp-result-")
    assert fenced.text.count("EMBEDDED %API%") == 1, "the resource's text is read once, inside the fence"
    assert isinstance(resource, types.EmbeddedResource), "no link block, and no second copy of any text"
    assert isinstance(resource.resource, types.TextResourceContents)
    assert str(resource.resource.uri) == "file:///sly/notes.txt"
    assert resource.resource.text == IN_THE_FENCE
    assert result.structured_content is not None
    assert result.structured_content["value"] == "%API%"


async def test_ins2_look_alike_closing_tags_cannot_end_the_instructions_section(home: Home) -> None:
    config = home.write_config({"sly": SLY})
    async with home.open(config, secrets={"API": SAVED}) as host:
        prompt = host.system_prompt()
    assert prompt.count("</mcp-server-instructions>") == 1, "only mcpyard's own closing tag is left"
    assert prompt.rstrip().endswith("</mcp-server-instructions>")
    assert "\uff1c" not in prompt
    assert "\ufe64" not in prompt
    assert prompt.count("&lt;/mcp-server-instructions") == 3


def _cli(home: Home, *args: str) -> str:
    done = subprocess.run(
        mcpyard_command(home.environ, *args),
        capture_output=True,
        text=True,
        env=home.environ,
        cwd=home.workspace,
        timeout=60,
        check=False,
    )
    return done.stdout + done.stderr


async def test_cli1_api2_a_servers_stderr_reaches_no_json_with_its_control_sequences(home: Home) -> None:
    config = home.write_config({"sly": fixture_server("sly", "--crash")})
    async with home.open(config) as host:
        [server] = host.status().servers
        snapshot = host.server("sly")
    assert server.state in ("failed", "stopped")
    assert server.reason is not None
    assert "fatal: the sly server gave up" in server.reason
    assert_clean(dump(server.to_json()))
    assert snapshot is not None
    assert_clean(dump(list(snapshot.stderr)) + (snapshot.reason or ""))
    status = json.loads(_cli(home, "status", "--json", "--mcp-config", str(config)))
    assert "fatal: the sly server gave up" in dump(status)
    assert_clean(dump(status))
    doctor = _cli(home, "doctor", "sly", "--json", "--mcp-config", str(config))
    assert "fatal: the sly server gave up" in doctor
    assert_clean(doctor)
