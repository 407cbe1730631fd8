"""List the tools of the servers in config.toml and call one, from Python."""

from pathlib import Path

import anyio

from mcpyard import Answer, ApprovalCard, Host


async def approve(card: ApprovalCard) -> Answer:  # asked for each call that must ask
    print("card:", card.tool, "-", card.reason)
    return "once"  # or "session", or "deny"


async def main() -> None:
    config = Path(__file__).with_name("config.toml")
    async with Host.open(workspace=Path.cwd(), config_file=config, approver=approve) as host:
        for tool in host.tools():
            print(tool.name, "-", tool.description.splitlines()[0])
        result = await host.call("notes__add_note", {"title": "hello", "body": "from Python"})
        if not result.ok:  # refused or failed: never raised, always said (result.error has the code)
            raise SystemExit(f"the call did not run: {result.text}")
        print(result.content[0]["text"])


anyio.run(main)
