"""The floor of any process between an MCP client and a stdio server: a bare JSON relay.

Run as `python bench/relay.py` (stdio): it starts `bench/server.py` and passes every line
both ways, each read as JSON and written again (what any process that looks at messages
must do at least), on uvloop where it is installed. It applies no rule and keeps nothing:
`gateway.py --sides ...,relay-stdio` measures what one more process costs by itself.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys

from _common import SERVER_SCRIPT

LIMIT = 64 * 1024 * 1024


async def relay() -> None:
    loop = asyncio.get_running_loop()
    server = await asyncio.create_subprocess_exec(
        sys.executable, str(SERVER_SCRIPT), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=LIMIT
    )
    assert server.stdin is not None
    assert server.stdout is not None
    reader = asyncio.StreamReader(limit=LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def up() -> None:
        assert server.stdin is not None
        while line := await reader.readline():
            server.stdin.write(json.dumps(json.loads(line)).encode() + b"\n")
        server.stdin.close()

    async def down() -> None:
        assert server.stdout is not None
        while line := await server.stdout.readline():
            writer.write(json.dumps(json.loads(line)).encode() + b"\n")

    await asyncio.gather(up(), down())
    await server.wait()


if __name__ == "__main__":
    if importlib.util.find_spec("uvloop") is not None:
        import uvloop

        uvloop.run(relay())
    else:
        asyncio.run(relay())
