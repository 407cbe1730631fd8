"""The organization service's storage: typed SQLAlchemy 2 models, one schema for SQLite and PostgreSQL (ORG-9).

Every row that belongs to an organization carries `org_id`, and every query the service makes is
scoped by it (THREATS: an id from another organization answers 404). Ids are random strings
(`new_id`), never sequential numbers. Times are timezone-aware UTC. Sealed credentials live in
a table of their own, apart from the settings they belong to (ORG-2). One module per part of the
service; this package gathers them, so `Base.metadata` holds every table.
"""

from mcpyard.org.store._models._base import NAMING_CONVENTION, Base, UTCDateTime, new_id, utcnow
from mcpyard.org.store._models._calls import Approval, ApprovalStatus, CallRow, CallRowStatus, StoredResult
from mcpyard.org.store._models._events import Alert, AuditEvent
from mcpyard.org.store._models._limits import LimitCount, OrgLimits
from mcpyard.org.store._models._oauth import (
    ClientKind,
    OAuthClient,
    OAuthCode,
    OAuthGrant,
    OAuthRequest,
    OAuthToken,
    TokenKind,
)
from mcpyard.org.store._models._people import ROLES, ApiToken, BrowserSession, Member, Organization, Role, is_role
from mcpyard.org.store._models._questions import Question, QuestionMode, QuestionStatus
from mcpyard.org.store._models._servers import Credential, Listed, Policy, RegisteredServer, ServerState, Tool
from mcpyard.org.store._models._tasks import TaskCall, TaskCallStatus
from mcpyard.org.store._models._turns import (
    Assistant,
    Conversation,
    ModelSetting,
    OrgToolSearch,
    Publication,
    Teammate,
    TeammateServer,
    TurnRow,
    TurnRowStatus,
)
from mcpyard.org.store._models._webhooks import DeliveryStatus, Webhook, WebhookDelivery

__all__ = [
    "NAMING_CONVENTION",
    "ROLES",
    "Alert",
    "ApiToken",
    "Approval",
    "ApprovalStatus",
    "Assistant",
    "AuditEvent",
    "Base",
    "BrowserSession",
    "CallRow",
    "CallRowStatus",
    "ClientKind",
    "Conversation",
    "Credential",
    "DeliveryStatus",
    "LimitCount",
    "Listed",
    "Member",
    "ModelSetting",
    "OAuthClient",
    "OAuthCode",
    "OAuthGrant",
    "OAuthRequest",
    "OAuthToken",
    "OrgLimits",
    "OrgToolSearch",
    "Organization",
    "Policy",
    "Publication",
    "Question",
    "QuestionMode",
    "QuestionStatus",
    "RegisteredServer",
    "Role",
    "ServerState",
    "StoredResult",
    "TaskCall",
    "TaskCallStatus",
    "Teammate",
    "TeammateServer",
    "TokenKind",
    "Tool",
    "TurnRow",
    "TurnRowStatus",
    "UTCDateTime",
    "Webhook",
    "WebhookDelivery",
    "is_role",
    "new_id",
    "utcnow",
]
