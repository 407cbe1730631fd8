"""The organization as an MCP server for its members' own clients: each member's tools, run as API calls are (ORG-10).

The gateway's server code (`gateway.ToolFace`) with the organization behind it: the tools a
member may use now (policy `run_freely` or `ask_first` at the reviewed definition; on a teammate's
endpoint, only that teammate's servers') named as the API names them, plus `read_result`; every call
through the organization's host as `POST /api/v1/calls` runs it (the same pipeline, records, deadline,
caps, redaction and fence), its record naming the client. An `ask_first` call parks in the inbox
and the MCP request waits for the decision (`_decision.py`). A server's question during a call goes
to the client when it declared elicitation, else to the inbox. Any change the organization's change
counter sees (on any replica) tells the organization's connected clients that the tools changed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from sqlalchemy import select

from mcpyard import ToolInfo
from mcpyard._tools import READ_RESULT_INFO
from mcpyard.catalog import ServerTools, build_catalog, server_prefix
from mcpyard.connect import InputRelay, LogFn, ProgressFn
from mcpyard.gateway import (
    FaceTask,
    LogLevels,
    Offer,
    ToolFace,
    elicitation_modes,
    task_state,
    wire_result,
)
from mcpyard.org._caller import Caller
from mcpyard.org.hosts import OrgHost, call_tags, conversation_key
from mcpyard.org.mcp._decision import wait_for_decision
from mcpyard.org.rules import Purpose, ToolFacts, why_not
from mcpyard.org.services import (
    Asker,
    Inbox,
    LimitReached,
    OrgService,
    caller_subjects,
    charge,
    face_task_cancel,
    face_task_given,
    face_task_state,
    keep_connection_state,
    mark_given,
    org_call,
    result_from_json,
)
from mcpyard.org.store import Policy, RegisteredServer, TeammateServer, Tool, new_id
from mcpyard.pipeline import READ_RESULT, CallResult

__all__ = ["INSTRUCTIONS", "STATE_KEY", "McpRequest", "OrgFace"]

STATE_KEY = "mcpyard_mcp"
"""Where the endpoint leaves each request's `McpRequest` in the ASGI scope's state."""
POLL_SECONDS = 2.0
"""How often the face reads the change counter of the organizations whose clients are connected."""
INSTRUCTIONS = (
    "mcpyard organization service: the tools below are your organization's, named <server>__<tool>, each "
    "reviewed by its owners or admins. Some ask first: such a call waits until a person approves it in the "
    "organization's inbox. Results come back fenced as untrusted data; a cut result names a handle to read on "
    "with read_result."
)


@dataclass(frozen=True, slots=True)
class McpRequest:
    """Who sends an MCP request, as the endpoint authenticated it."""

    service: OrgService
    caller: Caller
    teammate_id: str | None
    """On `/mcp/teammates/{id}`: only that teammate's servers are offered."""
    base_url: str
    """Where the service answers (the request's own origin), for the links it gives."""


def mcp_request(ctx: ServerRequestContext[Any]) -> McpRequest:
    """The request's sender, as its endpoint left it in the ASGI scope."""
    scope = getattr(ctx.request, "scope", None) or {}
    found = (scope.get("state") or {}).get(STATE_KEY)
    if not isinstance(found, McpRequest):
        raise TypeError("an MCP request reached the organization's face without its endpoint")
    return found


def client_of(ctx: ServerRequestContext[Any]) -> str:
    """The client as it named itself (`clientInfo`), for its calls' records."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    if info is None:
        return "an MCP client"
    return f"{info.name} {info.version}"[:120]


def mcp_conversation(ctx: ServerRequestContext[Any]) -> str:
    """Whose result handles these are: the MCP session of a handshake-era client, else the member's MCP calls."""
    headers = getattr(ctx.request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    return f"mcp-{session[:40]}" if session else "mcp"


def _at(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


class KeptFaceTasks:
    """The tasks the organization's MCP clients were given, answered by any replica from the long calls' rows
    (CALL-8, ORG-9): the replica running a call keeps its task in memory; every replica, and the one that takes
    the call over when the first stops, answers `tasks/get` from the row: `working` with the task's latest status
    while it runs, then `completed` with the result, given once."""

    async def state(self, ctx: ServerRequestContext[Any], task_id: str) -> dict[str, Any] | None:
        asking = mcp_request(ctx)
        row = await face_task_state(asking.service, asking.caller, task_id)
        if row is None:
            return None
        base = task_state(task_id, _at(row.created_at), _at(row.updated_at))
        if row.cancel_requested:
            return {**base, "status": "cancelled", "statusMessage": "cancelled by the client"}
        if row.status == "running" or row.result is None:
            return {**base, "status": "working", **({"statusMessage": row.message} if row.message else {})}
        if await mark_given(asking.service, row.id) is None:
            return None  # another poll took it first: given once
        result = wire_result(result_from_json(row.result))
        return {
            **base,
            "status": "completed",
            "result": result.model_dump(by_alias=True, exclude_none=True, mode="json"),
        }

    async def given(self, ctx: ServerRequestContext[Any], task_id: str) -> None:
        asking = mcp_request(ctx)
        await face_task_given(asking.service, asking.caller, task_id)

    async def cancel(self, ctx: ServerRequestContext[Any], task_id: str) -> bool:
        asking = mcp_request(ctx)  # the replica following the task cancels it at its next renewal
        return await face_task_cancel(asking.service, asking.caller, task_id)

    def made(self, task: FaceTask) -> None:
        del task  # the long call's row is written by the call itself (`TaskKeeper`)

    def ended(self, task: FaceTask) -> None:
        del task


class OrgFace(ToolFace):
    """The MCP server of the organization service, one per process, for every organization and member."""

    def __init__(self) -> None:
        self._offers: dict[tuple[str, str | None], Offer] = {}
        self._buses: dict[str, InMemorySubscriptionBus] = {}
        self._service: OrgService | None = None
        self._attached = anyio.Event()
        super().__init__(INSTRUCTIONS, log_levels=LogLevels(lambda server: False), on_subscriptions_listen=self._listen)
        self.tasks.elsewhere = KeptFaceTasks()

    def attach(self, service: OrgService) -> None:
        """The running service whose changes the face follows (set when the service opens)."""
        self._service = service
        self._attached.set()

    # ----------------------------------------------------------------- the offer

    async def offer(self, ctx: ServerRequestContext[Any]) -> Offer:
        asking = mcp_request(ctx)
        org_id = asking.caller.org_id
        opened = await asking.service.hosts.current(org_id, seen=asking.caller.revision)
        key = (org_id, asking.teammate_id)
        cached = self._offers.get(key)
        if cached is not None and cached.basis == (opened.revision,):
            return cached
        offer = await _work_out(asking, opened)
        self._offers[key] = offer
        return offer

    # ----------------------------------------------------------------- calls

    async def run_call(
        self,
        ctx: ServerRequestContext[Any],
        name: str,
        arguments: dict[str, Any],
        *,
        on_progress: ProgressFn | None,
        on_log: LogFn | None,
        on_input: InputRelay,
        definition_hash: str | None = None,
    ) -> CallResult:
        asking = mcp_request(ctx)
        svc, caller = asking.service, asking.caller
        if name != READ_RESULT:  # counted before anything runs; over a limit, an error result says which (ORG-11)
            try:
                await charge(svc, caller.org_id, caller_subjects(caller), revision=caller.revision)
            except LimitReached as exc:
                return CallResult.refusal(exc.code, exc.message, tool=name)
        opened = await svc.hosts.current(caller.org_id, seen=caller.revision)
        key = conversation_key(caller.member_id, mcp_conversation(ctx))
        client = client_of(ctx)
        inbox = Inbox(svc, caller, name, arguments, key, client=client)
        call_id = new_id()
        # A client that declared elicitation answers its servers' questions itself; else they wait in the inbox.
        asks_client = bool(elicitation_modes(ctx.session.client_capabilities)) and on_input.ask is not None
        asker = None if asks_client else Asker(caller.org_id, caller.member_id, call_id=call_id)
        result = await org_call(
            svc,
            opened.host,
            name,
            arguments,
            conversation=key,
            approver=inbox,
            asker=asker,
            tags={**call_tags(call_id=call_id), "client": client},
            on_input=on_input,
            on_progress=on_progress,
            on_log=on_log,
            member=(caller.org_id, caller.member_id),
            definition_hash=definition_hash,
        )
        if inbox.approval_id is not None:
            return await wait_for_decision(svc, caller, inbox.approval_id, asking.base_url, on_progress, on_input)
        await keep_connection_state(svc, opened, caller.org_id, result)
        return result

    # ----------------------------------------------------------------- changes

    def audience(self, ctx: ServerRequestContext[Any]) -> Hashable:
        asking = mcp_request(ctx)
        return (asking.caller.org_id, asking.caller.member_id)

    def bus_for(self, audience: Hashable) -> InMemorySubscriptionBus | None:
        if not isinstance(audience, tuple):
            return None
        return self._buses.get(str(audience[0]))

    async def _listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """New era: the client's listen stream hears when its organization's tools changed."""
        org_id = mcp_request(ctx).caller.org_id
        bus = self._buses.setdefault(org_id, InMemorySubscriptionBus())
        self._remember(ctx)
        return await ListenHandler(bus)(ctx, params)

    async def next_change(self) -> Callable[[Hashable], bool]:
        """Any organization whose host caught up with a change (on this replica, or announced by another): its
        clients re-list. Organizations with connected clients have their counter read every `POLL_SECONDS`, so a
        change on another replica reaches them on SQLite too."""
        await self._attached.wait()
        assert self._service is not None
        hosts = self._service.hosts
        changed: set[str] = set()
        async with anyio.create_task_group() as tg:

            async def wait() -> None:
                changed.update(await hosts.changed())
                tg.cancel_scope.cancel()

            async def poll() -> None:
                while True:
                    await anyio.sleep(POLL_SECONDS)
                    for org_id in self._connected_organizations():
                        await hosts.current(org_id)

            tg.start_soon(wait)
            tg.start_soon(poll)
        for org_id in changed:
            for key in [key for key in self._offers if key[0] == org_id]:
                del self._offers[key]
        return lambda audience: isinstance(audience, tuple) and audience[0] in changed

    def _connected_organizations(self) -> set[str]:
        orgs = {str(audience[0]) for audience in self._connections.values() if isinstance(audience, tuple)}
        return orgs | set(self._buses)

    def redact(self, text: str) -> str:
        return self._service.hosts.redact(text) if self._service is not None else text


async def _work_out(asking: McpRequest, opened: OrgHost) -> Offer:
    """The tools the caller may use now, from what the database holds (whichever replica listed them), each as
    the host offers it: cleaned, redacted, named `<server>__<tool>`."""
    org_id = asking.caller.org_id
    async with asking.service.db.begin() as session:
        query = (
            select(RegisteredServer.id, RegisteredServer.name, Tool, Policy.policy, Policy.reviewed_hash)
            .join(Tool, Tool.server_id == RegisteredServer.id)
            .outerjoin(Policy, Policy.tool_id == Tool.id)
            .where(RegisteredServer.org_id == org_id, RegisteredServer.deleted_at.is_(None))
            .order_by(RegisteredServer.name, Tool.name)
        )
        if asking.teammate_id is not None:
            allowed = select(TeammateServer.server_id).where(TeammateServer.teammate_id == asking.teammate_id)
            query = query.where(RegisteredServer.id.in_(allowed))
        rows = (await session.execute(query)).all()
    purpose: Purpose = "teammate" if asking.teammate_id is not None else "member_call"
    by_server: dict[str, list[dict[str, Any]]] = {}
    for _server_id, server, tool, policy, reviewed in rows:
        facts = ToolFacts(
            listed=tool.state != "removed",
            server_deleted=False,
            policy=policy,
            reviewed_hash=reviewed,
            live_hash=tool.definition_hash,
        )
        if why_not(facts, purpose) is None:
            by_server.setdefault(server, []).append(tool.definition)
    redactor = opened.host.view.redactor
    tools = []
    for server, definitions in by_server.items():
        listing = ServerTools(server, server_prefix(server, None, 0), tuple(definitions))
        catalog = build_catalog([listing], "__", redactor=redactor)
        for entry in catalog.entries.values():
            tools.append(
                ToolInfo(
                    name=entry.name,
                    description=entry.description,
                    input_schema=entry.input_schema,
                    annotations=entry.annotations,
                    server=entry.server,
                    tool=entry.tool,
                    title=entry.title,
                    definition_hash=entry.definition_hash,
                )
            )
    tools.append(READ_RESULT_INFO)
    names = {tool.name: tool.name for tool in tools}
    return Offer((opened.revision,), tuple(tools), names, {tool.name: tool for tool in tools})
