"""The official conformance suite's server scenarios against `mcpyard serve` (GW-1, GW-4).

The gateway runs over streamable HTTP, unprefixed, in front of tests/servers/conformance_server.py
(a stdio fixture with what the suite expects). Every scenario must pass and run at least one
check, except those in `server_known_failures.json`, each with its reason; a listed scenario
that starts to pass fails here.

`mcpyard serve` as a real process: the official suite drives the program people run.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._forkserver import mcpyard_command
from tests.conformance.test_client import ANSI, RESULT, suite
from tests.servers.http_runner import GATEWAY_LISTENING

STARTUP_SECONDS = 60

HERE = Path(__file__).resolve().parent
SERVERS = HERE.parent / "servers"
KNOWN_FAILURES: dict[str, str] = json.loads((HERE / "server_known_failures.json").read_text())
SCENARIOS = [
    "server-initialize",
    "logging-set-level",
    "ping",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "json-schema-2020-12",
    "elicitation-sep1034-defaults",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "elicitation-sep1330-enums",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
]

pytestmark = pytest.mark.conformance


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def gateway_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("gateway")
    (root / "ws").mkdir()
    config = root / "config.json"
    entry = {"command": sys.executable, "args": [str(SERVERS / "conformance_server.py")]}
    config.write_text(json.dumps({"mcpServers": {"everything": entry}, "mode": "auto"}))
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MCPYARD_")},
        "MCPYARD_CONFIG_HOME": str(root / "config"),
        "MCPYARD_DATA_HOME": str(root / "data"),
    }
    command = mcpyard_command(env, "serve", "--transport", "http", "--port", str(port), "--share-all", "--no-prefix")
    command += ["--mcp-config", str(config), "--workspace", str(root / "ws")]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    said: list[bytes] = []
    settled = threading.Event()

    def read_stderr() -> None:
        # To the end, so the pipe never fills; settled once the gateway says it listens, or exits.
        assert process.stderr is not None
        for line in process.stderr:
            said.append(line)
            if GATEWAY_LISTENING.encode() in line:
                settled.set()
        settled.set()

    reader = threading.Thread(target=read_stderr, name="gateway stderr", daemon=True)
    reader.start()
    try:
        # A synchronous fixture (module-scoped, for every scenario): the event's own time limit.
        if not settled.wait(timeout=STARTUP_SECONDS):
            pytest.fail(f"the gateway did not listen within {STARTUP_SECONDS} s")
        if not any(GATEWAY_LISTENING.encode() in line for line in said):
            process.wait(timeout=15)
            pytest.fail(f"the gateway exited with code {process.returncode}: {b''.join(said).decode()}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=15)
        if process.stderr is not None:
            process.stderr.close()


def test_the_server_known_failures_list_only_names_real_scenarios() -> None:
    assert set(KNOWN_FAILURES) <= set(SCENARIOS)
    assert all(reason.strip() for reason in KNOWN_FAILURES.values())


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_server_scenario(gateway_url: str, scenario: str) -> None:
    conformance, node_bin = suite()
    done = subprocess.run(
        [str(conformance), "server", "--url", gateway_url, "--scenario", scenario],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"},
        timeout=120,
        check=False,
        cwd=conformance.parent.parent.parent,
    )
    output = ANSI.sub("", done.stdout + done.stderr)
    counts = RESULT.findall(output)
    assert counts, f"{scenario}: no result line from the suite:\n{output[-2000:]}"
    passed, total = (int(n) for n in counts[-1])
    clean = passed == total and total > 0 and "0 failed" in output
    if scenario in KNOWN_FAILURES:
        assert not clean, f"{scenario} passes now: remove it from server_known_failures.json"
        return
    assert total > 0, f"{scenario} ran no check"
    assert clean, f"{scenario}: {passed}/{total} checks passed:\n{output[-3000:]}"
