"""One Host per organization per process, built from the database: servers' specs, policies, call records."""

from mcpyard.org.hosts._hosts import OrgHost, OrgHosts, call_tags, conversation_key
from mcpyard.org.hosts._server_spec import CALL_DEADLINE_SECS, model_name

__all__ = ["CALL_DEADLINE_SECS", "OrgHost", "OrgHosts", "call_tags", "conversation_key", "model_name"]
