"""MOD-1 on the official reference servers' real schemas: server-everything and mcp-server-time in every format.

The official reference servers run as real processes, as people run them: interoperability is the
subject.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from mcpyard.model import FORMATS
from tests.conftest import Home
from tests.model.test_formats import CHECKS

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


async def test_mod1_reference_servers_tools_in_every_format(home: Home, everything: Path, time_server: Path) -> None:
    config = home.write_config(
        {
            "every": {"command": str(everything), "args": ["stdio"]},
            "time": {"command": str(time_server), "args": ["--local-timezone", "UTC"]},
        }
    )
    with anyio.fail_after(60):
        async with home.open(config) as host:
            catalog = {tool.name for tool in host.tools()}
            formats = {fmt: host.tools_for_model(fmt) for fmt in FORMATS}
    assert any(name.startswith("every__") for name in catalog)
    assert "time__get_current_time" in catalog
    for fmt, tools in formats.items():
        json.dumps(list(tools))
        assert set(tools.names.values()) | set(tools.left_out) == catalog
        assert not tools.left_out, f"the reference servers' schemas all fit {fmt}: {tools.left_out}"
        if fmt != "mcp":
            for tool in tools:
                CHECKS[fmt](tool)
