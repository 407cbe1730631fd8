"""Set up an organization service database for `bench/org_api.py`, in a process of its own.

`python bench/_org_setup.py DATABASE_URL [MEMBERS]` migrates the database, creates the organization
`bench` with its owner and MEMBERS members (1), and prints `{"owner_token": …, "member_token": …,
"member_tokens": [...]}` (`member_token`: the first member's).
Its own process, because hashing the two passwords (argon2, 64 MiB each) would otherwise
stay in the benchmark's resident memory, which is reported as the client's.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio

from mcpyard.org.services._api_tokens import create_token
from mcpyard.org.services._people import add_member, create_organization
from mcpyard.org.store._db import open_database
from mcpyard.org.store._migrate import upgrade

PASSWORD = "bench password, not a secret"


async def setup(url: str, members: int = 1) -> dict[str, Any]:
    """The organization `bench`: its owner's token and its members'."""
    async with open_database(url) as db:
        await upgrade(db)
        async with db.sessions() as session:
            org, owner = await create_organization(
                session, name="bench", owner_email="owner@bench.test", owner_password=PASSWORD
            )
        async with db.sessions() as session:
            _, owner_token = await create_token(session, owner, label="bench owner")
        member_tokens: list[str] = []
        for number in range(members):
            email = "member@bench.test" if number == 0 else f"member{number}@bench.test"
            async with db.sessions() as session:
                member = await add_member(session, org_id=org.id, email=email, role="member", password=PASSWORD)
            async with db.sessions() as session:
                _, member_token = await create_token(session, member, label="bench member")
            member_tokens.append(member_token)
    return {"owner_token": owner_token, "member_token": member_tokens[0], "member_tokens": member_tokens}


if __name__ == "__main__":
    print(json.dumps(anyio.run(setup, sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)))
