"""`mcpyard org serve --demo`: the web console on a demo organization, ready to click through.

A temporary folder holds a SQLite database and a sealing key of its own (both gone when the
service stops); the bundled demo servers are registered with their policies set, three demo
members can sign in (their passwords are new each run and printed), a teammate and a published
assistant are ready, and turns talk to `DemoModel`, a model of rules that needs no network.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import secrets
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from starlette.applications import Starlette

from mcpyard.model import Message, ModelTools, Reply, TextSink, ToolCall, ToolFormat
from mcpyard.org.demo._demo import DemoServers
from mcpyard.org.services import add_member, create_organization, create_token
from mcpyard.org.store import open_database, upgrade

__all__ = ["DemoConsole", "DemoModel", "demo_console"]

POLICIES = {
    "notes__list_notes": "run_freely",
    "notes__read_note": "run_freely",
    "notes__word_count": "run_freely",
    "notes__add_note": "ask_first",
    "notes__delete_note": "off",
    "weather__forecast": "run_freely",
    "weather__convert_temperature": "run_freely",
}
ROLES = ("owner", "admin", "member")
_CITY = re.compile(r"\b(?:in|for|at)\s+([A-Za-z][A-Za-z .'-]{0,40})")
HELP = 'I am the demo\'s scripted model. Ask me to "note that …", to "list the notes", or for "the weather in Lisbon".'


class DemoModel:
    """Picks a tool by a keyword of the last message, and answers a tool's result by quoting it."""

    tool_format: ToolFormat = "openai"

    async def complete(
        self, messages: Sequence[Message], tools: ModelTools, *, on_text: TextSink | None = None
    ) -> Reply:
        answer = self._answer(messages, set(tools.names.values()))
        if answer.text and on_text is not None:
            await on_text(answer.text)
        return answer

    def _answer(self, messages: Sequence[Message], offered: set[str]) -> Reply:
        last = messages[-1] if messages else None
        if last is None:
            return Reply(HELP)
        if last.role == "tool":
            return Reply(f"{last.name or 'The tool'} answered:\n{last.text[:600]}")
        text = last.text.strip()
        lowered = text.lower()

        def call(name: str, arguments: Mapping[str, Any]) -> Reply:
            if name not in offered:
                return Reply(f"I may not use {name} here.")
            return Reply("", (ToolCall("call_1", name, dict(arguments)),))

        if "weather" in lowered or "forecast" in lowered:
            found = _CITY.search(text)
            city = found.group(1).strip(" .") if found else "Paris"
            return call("weather__forecast", {"city": city, "days": 2})
        if "list" in lowered and "note" in lowered:
            return call("notes__list_notes", {})
        if "note" in lowered:
            body = re.sub(r"^(please\s+)?(note|add a note|write a note)( that)?[:,]?\s*", "", text, flags=re.I)
            title = " ".join(body.split()[:3]) or "note"
            return call("notes__add_note", {"title": title[:60], "body": body or text})
        return Reply(HELP)


@dataclass
class DemoConsole:
    """The demo's folder, database and key, and who may sign in."""

    folder: Path
    database_url: str
    environ: dict[str, str]
    passwords: dict[str, str]
    setup_token: tuple[str, str]
    """The owner's API token for setting the demo up, and its id (revoked once it is set up)."""

    async def seed(self, app: Starlette, servers: DemoServers) -> list[str]:
        """Register the demo servers, set their policies, make a teammate and publish an assistant (through the
        API, as a person would); the lines that tell how to sign in."""
        token, token_id = self.setup_token
        transport = httpx2.ASGITransport(app=app)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(transport=transport, base_url="http://org.demo", headers=headers) as api:

            async def send(method: str, path: str, body: Any = None) -> Any:
                response = await api.request(method, path, json=body)
                response.raise_for_status()
                return response.json() if response.content else None

            notes = await send("POST", "/api/v1/servers", {"name": "notes", "url": servers.notes_url})
            weather = await send("POST", "/api/v1/servers", {"name": "weather", "url": servers.weather_url})
            for tool in await send("GET", "/api/v1/tools"):
                if tool["name"] in POLICIES:
                    body = {"policy": POLICIES[tool["name"]], "definition_hash": tool["definition_hash"]}
                    await send("PUT", f"/api/v1/tools/{tool['id']}/policy", body)
            instructions = "Keep the team's notes, and tell the weather when asked."
            body = {"name": "scribe", "instructions": instructions, "server_ids": [notes["id"], weather["id"]]}
            await send("POST", "/api/v1/teammates", body)
            forecast = next(t for t in weather["tools"] if t["tool"] == "forecast")
            assistant = await send("POST", "/api/v1/assistants", {"name": "Weather desk", "tool_ids": [forecast["id"]]})
            await send("POST", f"/api/v1/assistants/{assistant['id']}/publish")
            await send("DELETE", f"/api/v1/tokens/{token_id}")  # the set-up's token is not left behind
        width = max(len(email) for email in self.passwords)
        signs = [f"  {email:<{width}}  password {password}" for email, password in self.passwords.items()]
        return ["sign in to the demo organization as any of:", *signs, f"visitors: /a/{assistant['slug']}"]


@contextlib.asynccontextmanager
async def demo_console() -> AsyncIterator[DemoConsole]:
    """A new demo organization in a temporary folder, removed when the block ends."""
    with tempfile.TemporaryDirectory(prefix="mcpyard-org-console-") as folder:
        url = f"sqlite:///{Path(folder) / 'org.db'}"
        environ = {"MCPYARD_ORG_KEY": base64.b64encode(os.urandom(32)).decode()}
        passwords = {f"{role}@demo.test": secrets.token_urlsafe(9) for role in ROLES}
        async with open_database(url) as db:
            await upgrade(db)
            async with db.sessions() as session:
                org, owner = await create_organization(
                    session, name="demo", owner_email="owner@demo.test", owner_password=passwords["owner@demo.test"]
                )
                for role in ROLES[1:]:
                    email = f"{role}@demo.test"
                    await add_member(session, org_id=org.id, email=email, role=role, password=passwords[email])
                row, token = await create_token(session, owner, label="demo set-up")
        yield DemoConsole(Path(folder), url, environ, passwords, (token, row.id))
