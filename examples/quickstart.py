"""List the tools of the servers in config.toml and call one, from Python."""

from pathlib import Path

import anyio

from mcpyard import Host


async def main() -> None:
    config = Path(__file__).with_name("config.toml")
    async with Host.open(workspace=Path.cwd(), config_file=config) as host:
        for tool in host.tools():
            print(tool.name, "-", tool.description.splitlines()[0])
        result = await host.call("notes__add_note", {"title": "hello", "body": "from Python"})
        print(result.ok, result.text)


anyio.run(main)
