"""One Host per organization per process, built from the database: servers' specs, policies, call records."""

from mcpyard.org.hosts._hosts import OrgHost, OrgHosts
from mcpyard.org.hosts._policies import OrgPolicies, Reviewed
from mcpyard.org.hosts._records import call_tags, conversation_key
from mcpyard.org.hosts._results import ORG_RESULT_BYTES, ORG_RESULTS, OrgResults
from mcpyard.org.hosts._server_spec import CALL_DEADLINE_SECS, model_name

__all__ = [
    "CALL_DEADLINE_SECS",
    "ORG_RESULTS",
    "ORG_RESULT_BYTES",
    "OrgHost",
    "OrgHosts",
    "OrgPolicies",
    "OrgResults",
    "Reviewed",
    "call_tags",
    "conversation_key",
    "model_name",
]
