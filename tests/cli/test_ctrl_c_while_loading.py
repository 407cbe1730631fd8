"""Ctrl-C while the console is still loading its modules: it stops at once, in one line (CONN-5, ERR-1).

The modules a command's host needs take a second or two to load on a slow machine. Loaded inside the
command's event loop, a Ctrl-C pressed meanwhile waited for the loading to end; one pressed while the
console's own modules loaded ended in a Python traceback. Each test starts `mcpyard call` with Python
reporting every import it completes (`PYTHONPROFILEIMPORTTIME`) and presses Ctrl-C as soon as one
named module is loaded, so the press lands in the middle of the loading, whatever the machine's speed.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import anyio
import pytest
from anyio.streams.text import TextReceiveStream

from tests._processes import with_ctrl_c
from tests.conftest import Home

pytestmark = pytest.mark.anyio

PROMPT_SECS = 1.0
"""What the issue asks of any Ctrl-C: the command ends within a second."""


@pytest.mark.parametrize(
    ("loaded", "message"),
    [
        # The console's own modules: nothing began; before, a traceback and death by the signal.
        pytest.param("typer", "mcpyard: interrupted", id="console"),
        # The host's modules, after the command parsed its arguments: before, they went on loading to the end.
        pytest.param("mcp_types", "mcpyard: interrupted", id="host"),
    ],
)
async def test_conn5_err1_ctrl_c_while_the_modules_load_ends_the_command_at_once_in_one_line(
    home: Home, loaded: str, message: str
) -> None:
    config = home.write_config({})
    command = [sys.executable, "-m", "mcpyard", "call", "basic__echo", "--mcp-config", str(config)]
    environ = {**home.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    cli = await anyio.open_process(with_ctrl_c(command), cwd=home.workspace, env=environ, stderr=subprocess.PIPE)
    lines: list[str] = []
    pressed = 0.0
    async with cli:
        assert cli.stderr is not None
        with anyio.fail_after(60):
            buffered = ""
            async for chunk in TextReceiveStream(cli.stderr):
                buffered += chunk
                *done, buffered = buffered.split("\n")
                lines += done
                if not pressed and any(line.endswith(f"| {loaded}") for line in done):
                    pressed = time.monotonic()
                    cli.send_signal(signal.SIGINT)
            lines += [buffered] if buffered else []
            code = await cli.wait()
        ended = time.monotonic()
    assert pressed, f"{loaded} was never loaded"
    said = [line for line in lines if not line.startswith("import time:")]
    # 130, or ended by the signal itself: CPython 3.11 marks an interrupt that leaves an `exec` of source text (as
    # `dataclasses` builds a class's methods while a module loads) as unhandled even once it is caught, and then ends
    # the process by the signal. A shell reads 130 both ways.
    assert code in (130, -signal.SIGINT), said
    assert said[-1] == message, said
    assert not any("Traceback" in line for line in said), said
    assert not any(line.endswith("| mcpyard._host") for line in lines), "the host's modules were loaded to the end"
    assert ended - pressed < PROMPT_SECS
