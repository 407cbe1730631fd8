"""The public face of `mcpyard.config` is pinned: adding a name is an API decision (API-1; STYLE 1)."""

from __future__ import annotations

import mcpyard.config


def test_the_public_names_of_the_config_package_are_pinned() -> None:
    """API: the names other packages may import from `mcpyard.config`."""
    assert sorted(mcpyard.config.__all__) == [
        "CREDENTIAL_HEADERS",
        "CREDENTIAL_VARIABLES",
        "EntryDigest",
        "Hook",
        "HostSettings",
        "ImportNote",
        "ImportedConfig",
        "ImportedServer",
        "LoadedConfig",
        "MODES",
        "Mode",
        "ModelSettings",
        "OAuthGrant",
        "OAuthSettings",
        "ProjectFile",
        "ProjectServer",
        "ProjectTrust",
        "ServerSpec",
        "SourceKind",
        "TOOL_SEARCH_MODES",
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
    for name in mcpyard.config.__all__:
        assert getattr(mcpyard.config, name) is not None
