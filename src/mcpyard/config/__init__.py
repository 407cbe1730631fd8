"""Configuration: sources, forms, expansion and trust of MCP server entries (SPEC CFG)."""

from mcpyard.config._load import load_config
from mcpyard.config._model import (
    Hook,
    HostSettings,
    LoadedConfig,
    Mode,
    ServerSpec,
    SourceKind,
    TransportName,
)
from mcpyard.config._names import CREDENTIAL_VARIABLES, looks_secret, source_words
from mcpyard.config._trust import TrustStore

__all__ = [
    "CREDENTIAL_VARIABLES",
    "Hook",
    "HostSettings",
    "LoadedConfig",
    "Mode",
    "ServerSpec",
    "SourceKind",
    "TransportName",
    "TrustStore",
    "load_config",
    "looks_secret",
    "source_words",
]
