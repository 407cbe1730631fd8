"""The organization service (`mcpyard org`): registered servers, policies bound to definition hashes, approvals.

Heavy to import (a database layer and a web stack): only `mcpyard org` commands import it, and
its names are imported on first use, each from its own module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpyard._lazy import lazy_names

if TYPE_CHECKING:
    from mcpyard.org._admin import ensure_key, init_organization, issue_token, withdraw_token
    from mcpyard.org._app import OrgSettings, org_app
    from mcpyard.org._db import DATABASE_ENV, default_database_url, describe_url, open_database, resolve_database_url
    from mcpyard.org._demo import demo_servers, run_demo
    from mcpyard.org._demo_console import DemoConsole, DemoModel, demo_console
    from mcpyard.org._keys import EnvKeySource, FileKeySource, key_source
    from mcpyard.org._migrate import check_schema, head_revision, upgrade
    from mcpyard.org._passwords import PRODUCTION_HASHING, PasswordHashing, check_new_password
    from mcpyard.org._rotate import rotate_key
    from mcpyard.org._server_spec import CALL_DEADLINE_SECS

__all__ = [
    "CALL_DEADLINE_SECS",
    "DATABASE_ENV",
    "PRODUCTION_HASHING",
    "DemoConsole",
    "DemoModel",
    "EnvKeySource",
    "FileKeySource",
    "OrgSettings",
    "PasswordHashing",
    "check_new_password",
    "check_schema",
    "default_database_url",
    "demo_console",
    "demo_servers",
    "describe_url",
    "ensure_key",
    "head_revision",
    "init_organization",
    "issue_token",
    "key_source",
    "open_database",
    "org_app",
    "resolve_database_url",
    "rotate_key",
    "run_demo",
    "upgrade",
    "withdraw_token",
]

_LAZY = {
    "ensure_key": "_admin",
    "init_organization": "_admin",
    "issue_token": "_admin",
    "withdraw_token": "_admin",
    "OrgSettings": "_app",
    "org_app": "_app",
    "DATABASE_ENV": "_db",
    "default_database_url": "_db",
    "describe_url": "_db",
    "open_database": "_db",
    "resolve_database_url": "_db",
    "demo_servers": "_demo",
    "run_demo": "_demo",
    "DemoConsole": "_demo_console",
    "DemoModel": "_demo_console",
    "demo_console": "_demo_console",
    "CALL_DEADLINE_SECS": "_server_spec",
    "EnvKeySource": "_keys",
    "FileKeySource": "_keys",
    "key_source": "_keys",
    "check_schema": "_migrate",
    "head_revision": "_migrate",
    "upgrade": "_migrate",
    "PRODUCTION_HASHING": "_passwords",
    "PasswordHashing": "_passwords",
    "check_new_password": "_passwords",
    "rotate_key": "_rotate",
}


__getattr__ = lazy_names(__name__, {name: f"mcpyard.org.{module}" for name, module in _LAZY.items()})
