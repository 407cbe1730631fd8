"""SEC-2, SEC-3, AUTH-1: a secret put into headers or a server's environment never comes back to anyone.

Real processes: a secret in a server's process environment is the subject.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import mcp_types as types
import pytest

from mcpyard import Host
from mcpyard.policy import ScriptedApprover
from mcpyard.secrets import forms_of
from tests._forkserver import mcpyard_command
from tests.conftest import Home, fixture_server
from tests.servers.http_runner import HttpTransport, serve_http

pytestmark = pytest.mark.anyio

SAVED = "tok-9f8e7d6c5b4a-saved"
FROM_ENV = "envkey-0a1b2c3d4e5f-private"
LEAKY_ENV = {"SERVICE_TOKEN": "${secret:API}", "ECHO_LEAK_VAR": "SERVICE_TOKEN"}


def assert_clean(text: str, *secrets: str) -> None:
    for secret in secrets:
        for form in forms_of(secret):
            assert form not in text, f"a form of a secret leaked: {form!r}"


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_sec3_auth1_header_secrets_echoed_in_any_form_are_redacted(home: Home, transport: HttpTransport) -> None:
    async with serve_http("echo_secrets", transport) as url:
        entry: dict[str, Any] = {
            "url": url,
            "headers": {"Authorization": "Bearer ${secret:API}", "X-Api-Key": "${env:MY_KEY}", "X-Plain": "hello"},
        }
        config = home.write_config({"e": entry})
        async with Host.open(
            workspace=home.workspace,
            config_file=config,
            mode="auto",
            environ={**home.environ, "MY_KEY": FROM_ENV},
            config_home=home.config_home,
            data_home=home.data_home,
            secrets={"API": SAVED},
        ) as host:
            status = host.status()
            assert status.servers[0].state == "connected", status.servers[0].reason
            assert status.servers[0].headers_sent == ("Authorization", "X-Api-Key", "X-Plain")
            result = await host.call("e__headers", {})
            assert result.ok, result.error
            text = result.text + json.dumps(result.content)
            assert "%API%" in text
            assert "${env:MY_KEY}" in text
            assert "authorization" in text.lower()
            assert "hello" in text, "values that are not secrets stay"
            assert_clean(text, SAVED, FROM_ENV)
            assert_clean(json.dumps(status.to_json()), SAVED, FROM_ENV)


async def test_sec3_a_stdio_servers_secret_environment_never_comes_back(home: Home) -> None:
    entry = {
        **fixture_server("echo_secrets"),
        "env": {"SERVICE_TOKEN": "${secret:API}", "ECHO_LEAK_VAR": "SERVICE_TOKEN"},
    }
    config = home.write_config({"e": entry})
    approver = ScriptedApprover.always("once")
    async with home.open(
        config,
        approver=approver,
        secrets={"API": SAVED},
    ) as host:
        prompt = host.system_prompt()
        tools = json.dumps([tool.to_json() for tool in host.tools()])
        env = await host.call("e__env", {"name": "SERVICE_TOKEN"})
        structured = await host.call("e__structured", {"name": "SERVICE_TOKEN"})
        failed = await host.call("e__fail_with", {"text": SAVED})
        status = json.dumps(host.status().to_json())
    assert "%API%" in prompt
    assert "%API%" in tools
    assert env.ok
    assert "%API%" in env.text
    assert structured.structured is not None
    assert structured.structured["value"] == "%API%"
    # Base64's last characters depend on what follows; only those few bits remain.
    assert structured.structured["b64"].startswith("%API%")
    assert len(structured.structured["b64"]) <= len("%API%") + 3
    assert failed.error is not None
    # An outgoing argument holding a secret value is held for approval, and its card is redacted.
    [card] = approver.cards
    assert card.tool == "e__fail_with"
    assert "secret" in card.reason
    assert "%API%" in card.arguments_preview
    everything = prompt + tools + env.text + json.dumps(env.content) + json.dumps(structured.content)
    everything += failed.text + json.dumps(failed.error) + status + "\n".join(card.lines())
    assert_clean(everything, SAVED)


@pytest.mark.long
def test_sec2_secrets_never_appear_in_console_output(home: Home) -> None:
    entry = {
        **fixture_server("echo_secrets"),
        "env": {"SERVICE_TOKEN": "${secret:API}", "ECHO_LEAK_VAR": "SERVICE_TOKEN"},
    }
    config = str(home.write_config({"e": entry}))
    env = home.environ
    saved = subprocess.run(
        mcpyard_command(env, "secrets", "set", "API"),
        input=SAVED,
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=True,
    )
    assert SAVED not in saved.stdout + saved.stderr
    outputs = []
    for args in (
        ["status", "--mcp-config", config],
        ["status", "--json", "--mcp-config", config],
        ["tools", "--json", "--mcp-config", config],
        ["call", "e__env", "--args", '{"name": "SERVICE_TOKEN"}', "--json", "--mcp-config", config],
        ["doctor", "e", "--json", "--mcp-config", config],
        ["secrets", "list"],
    ):
        done = subprocess.run(
            mcpyard_command(env, *args),
            capture_output=True,
            text=True,
            env=env,
            cwd=home.workspace,
            timeout=60,
            check=False,
        )
        outputs.append(done.stdout + done.stderr)
    assert "API" in outputs[-1]
    assert "%API%" in outputs[3]
    assert_clean("\n".join(outputs), SAVED)


async def test_sec3_a_secret_looking_variable_under_a_plain_name_never_comes_back(home: Home) -> None:
    entry = {**fixture_server("echo_secrets"), "env": {"PLAIN_SETTING": "${env:MY_API_KEY}"}}
    config = home.write_config({"e": entry})
    async with home.open(config, mode="auto", environ={**home.environ, "MY_API_KEY": FROM_ENV}) as host:
        result = await host.call("e__env", {"name": "PLAIN_SETTING"})
    assert result.ok, result.error
    assert "${env:MY_API_KEY}" in result.text
    assert_clean(result.text + json.dumps(result.content), FROM_ENV)


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_sec3_a_secret_looking_variable_in_a_plain_header_never_comes_back(
    home: Home, transport: HttpTransport
) -> None:
    async with serve_http("echo_secrets", transport) as url:
        config = home.write_config({"e": {"url": url, "headers": {"X-Custom-Trace": "${env:MY_API_KEY}"}}})
        async with home.open(config, mode="auto", environ={**home.environ, "MY_API_KEY": FROM_ENV}) as host:
            result = await host.call("e__headers", {})
            status = json.dumps(host.status().to_json())
    assert result.ok, result.error
    assert "${env:MY_API_KEY}" in result.text
    assert_clean(result.text + json.dumps(result.content) + status, FROM_ENV)


async def test_sec3_progress_and_log_messages_are_cleaned_then_redacted(home: Home) -> None:
    entry = {**fixture_server("echo_secrets"), "env": {"SERVICE_TOKEN": "${secret:API}"}}
    config = home.write_config({"e": entry})
    heard: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(message or "")

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(json.dumps(params.data, ensure_ascii=False))

    async with home.open(config, mode="auto", secrets={"API": SAVED}) as host:
        result = await host.call("e__chatty", {"name": "SERVICE_TOKEN"}, on_progress=on_progress, on_log=on_log)
    assert result.ok, result.error
    assert len(heard) == 2, heard
    assert all("%API%" in text for text in heard), heard
    assert not any(char in text for text in heard for char in "\u200b\x1b\x07")
    assert_clean("\n".join(heard), SAVED)
