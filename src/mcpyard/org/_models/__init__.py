"""The organization service's storage: typed SQLAlchemy 2 models, one schema for SQLite and PostgreSQL (ORG-9).

Every row that belongs to an organization carries `org_id`, and every query the service makes is
scoped by it (THREATS: an id from another organization answers 404). Ids are random strings
(`new_id`), never sequential numbers. Times are timezone-aware UTC. Sealed credentials live in
a table of their own, apart from the settings they belong to (ORG-2). One module per part of the
service; this package gathers them, so `Base.metadata` holds every table.
"""

from mcpyard.org._models._base import NAMING_CONVENTION, Base, UTCDateTime, new_id, utcnow
from mcpyard.org._models._calls import Approval, CallRow, StoredResult
from mcpyard.org._models._events import Alert, AuditEvent
from mcpyard.org._models._people import ApiToken, BrowserSession, Member, Organization
from mcpyard.org._models._questions import Question
from mcpyard.org._models._servers import Credential, Policy, RegisteredServer, Tool
from mcpyard.org._models._turns import (
    Assistant,
    Conversation,
    ModelSetting,
    Publication,
    Teammate,
    TeammateServer,
    TurnRow,
)

__all__ = [
    "NAMING_CONVENTION",
    "Alert",
    "ApiToken",
    "Approval",
    "Assistant",
    "AuditEvent",
    "Base",
    "BrowserSession",
    "CallRow",
    "Conversation",
    "Credential",
    "Member",
    "ModelSetting",
    "Organization",
    "Policy",
    "Publication",
    "Question",
    "RegisteredServer",
    "StoredResult",
    "Teammate",
    "TeammateServer",
    "Tool",
    "TurnRow",
    "UTCDateTime",
    "new_id",
    "utcnow",
]
