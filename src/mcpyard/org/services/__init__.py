"""What the service does for its callers, below HTTP: servers and policies, calls, the inbox, questions, people."""

from mcpyard.org.services._admin import ensure_key, init_organization, issue_token, withdraw_token
from mcpyard.org.services._answers import (
    QUESTION_STATES,
    answer_from_page,
    answer_question,
    get_question,
    list_questions,
    questions_of_turns,
)
from mcpyard.org.services._auth import COOKIE, Authenticator, SessionSigner
from mcpyard.org.services._call_results import Outcome, result_json
from mcpyard.org.services._calls import TurnCalls
from mcpyard.org.services._events import audit, clear_alert, list_alerts, list_audit, raise_alert
from mcpyard.org.services._inbox import Inbox, approve, decline, list_approvals
from mcpyard.org.services._leases import held_until, holding, sweep
from mcpyard.org.services._member_calls import (
    MAX_CONVERSATION,
    MAX_TOOL_NAME,
    call_tool,
    checked_conversation,
    read_result,
)
from mcpyard.org.services._member_changes import change_role, remove_member
from mcpyard.org.services._membership import invite_member, make_token, revoke_member_token
from mcpyard.org.services._people import (
    add_member,
    create_organization,
    create_token,
    list_members,
    list_tokens,
    verify_login,
)
from mcpyard.org.services._policy_service import get_tool, list_tools, set_policy
from mcpyard.org.services._question_form import ACTIONS
from mcpyard.org.services._questions import Asker, no_one_to_ask, sweep_questions, until_done_or_asked
from mcpyard.org.services._registry import (
    delete_server,
    get_server,
    list_servers,
    refresh_server,
    register_server,
    server_selections,
    update_server,
)
from mcpyard.org.services._review import PUBLICATION_ALERT
from mcpyard.org.services._server_input import MAX_CC_FIELD, MAX_SCOPE, MAX_SCOPES, MAX_SERVER_NAME, NAME_PATTERN
from mcpyard.org.services._service import QUESTION_SECONDS, CredentialSealer, ModelFactory, OrgService
from mcpyard.org.services._throttle import SignInLimits, TooManySignIns

__all__ = [
    "ACTIONS",
    "COOKIE",
    "MAX_CC_FIELD",
    "MAX_CONVERSATION",
    "MAX_SCOPE",
    "MAX_SCOPES",
    "MAX_SERVER_NAME",
    "MAX_TOOL_NAME",
    "NAME_PATTERN",
    "PUBLICATION_ALERT",
    "QUESTION_SECONDS",
    "QUESTION_STATES",
    "Asker",
    "Authenticator",
    "CredentialSealer",
    "Inbox",
    "ModelFactory",
    "OrgService",
    "Outcome",
    "SessionSigner",
    "SignInLimits",
    "TooManySignIns",
    "TurnCalls",
    "add_member",
    "answer_from_page",
    "answer_question",
    "approve",
    "audit",
    "call_tool",
    "change_role",
    "checked_conversation",
    "clear_alert",
    "create_organization",
    "create_token",
    "decline",
    "delete_server",
    "ensure_key",
    "get_question",
    "get_server",
    "get_tool",
    "held_until",
    "holding",
    "init_organization",
    "invite_member",
    "issue_token",
    "list_alerts",
    "list_approvals",
    "list_audit",
    "list_members",
    "list_questions",
    "list_servers",
    "list_tokens",
    "list_tools",
    "make_token",
    "no_one_to_ask",
    "questions_of_turns",
    "raise_alert",
    "read_result",
    "refresh_server",
    "register_server",
    "remove_member",
    "result_json",
    "revoke_member_token",
    "server_selections",
    "set_policy",
    "sweep",
    "sweep_questions",
    "until_done_or_asked",
    "update_server",
    "verify_login",
    "withdraw_token",
]
