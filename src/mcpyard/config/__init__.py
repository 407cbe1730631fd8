"""Configuration: sources, forms, expansion and trust of MCP server entries (SPEC CFG)."""

from mcpyard.config._consent import ProjectFile, ProjectServer, read_project
from mcpyard.config._digest import EntryDigest, ProjectTrust, entry_digest
from mcpyard.config._expand import home_path
from mcpyard.config._foreign import import_config
from mcpyard.config._imported import ImportedConfig, ImportedServer, ImportNote
from mcpyard.config._inventory import secrets_in_use
from mcpyard.config._load import load_config
from mcpyard.config._model import (
    MODES,
    TOOL_SEARCH_MODES,
    Hook,
    HostSettings,
    LoadedConfig,
    Mode,
    ModelSettings,
    OAuthGrant,
    OAuthSettings,
    ServerSpec,
    SourceKind,
    TokenEndpointAuthMethod,
    ToolSearchMode,
    ToolSearchSettings,
    TransportName,
    is_mode,
)
from mcpyard.config._names import (
    CREDENTIAL_HEADERS,
    CREDENTIAL_VARIABLES,
    credential_header,
    looks_secret,
    nearest,
    source_words,
)
from mcpyard.config._shown import shown_command, shown_url
from mcpyard.config._trust import TrustStore

__all__ = [
    "CREDENTIAL_HEADERS",
    "CREDENTIAL_VARIABLES",
    "MODES",
    "TOOL_SEARCH_MODES",
    "EntryDigest",
    "Hook",
    "HostSettings",
    "ImportNote",
    "ImportedConfig",
    "ImportedServer",
    "LoadedConfig",
    "Mode",
    "ModelSettings",
    "OAuthGrant",
    "OAuthSettings",
    "ProjectFile",
    "ProjectServer",
    "ProjectTrust",
    "ServerSpec",
    "SourceKind",
    "TokenEndpointAuthMethod",
    "ToolSearchMode",
    "ToolSearchSettings",
    "TransportName",
    "TrustStore",
    "credential_header",
    "entry_digest",
    "home_path",
    "import_config",
    "is_mode",
    "load_config",
    "looks_secret",
    "nearest",
    "read_project",
    "secrets_in_use",
    "shown_command",
    "shown_url",
    "source_words",
]
