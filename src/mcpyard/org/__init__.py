"""The organization service (`mcpyard org`): registered servers, policies bound to definition hashes, approvals.

Heavy to import (a database layer and a web stack): only `mcpyard org` commands import it, and
its names are imported on first use, each from its own module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpyard._lazy import lazy_names

if TYPE_CHECKING:
    from mcpyard.org._app import OrgSettings, org_app
    from mcpyard.org.demo import DemoConsole, DemoModel, demo_console, demo_servers, run_demo
    from mcpyard.org.hosts import CALL_DEADLINE_SECS
    from mcpyard.org.keys import (
        PRODUCTION_HASHING,
        EnvKeySource,
        FileKeySource,
        PasswordHashing,
        check_new_password,
        key_source,
        rotate_key,
    )
    from mcpyard.org.services import ensure_key, init_organization, issue_token, withdraw_token
    from mcpyard.org.store import (
        DATABASE_ENV,
        check_schema,
        default_database_url,
        describe_url,
        head_revision,
        open_database,
        resolve_database_url,
        upgrade,
    )

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
    "ensure_key": "services",
    "init_organization": "services",
    "issue_token": "services",
    "withdraw_token": "services",
    "OrgSettings": "_app",
    "org_app": "_app",
    "DATABASE_ENV": "store",
    "default_database_url": "store",
    "describe_url": "store",
    "open_database": "store",
    "resolve_database_url": "store",
    "demo_servers": "demo",
    "run_demo": "demo",
    "DemoConsole": "demo",
    "DemoModel": "demo",
    "demo_console": "demo",
    "CALL_DEADLINE_SECS": "hosts",
    "EnvKeySource": "keys",
    "FileKeySource": "keys",
    "key_source": "keys",
    "check_schema": "store",
    "head_revision": "store",
    "upgrade": "store",
    "PRODUCTION_HASHING": "keys",
    "PasswordHashing": "keys",
    "check_new_password": "keys",
    "rotate_key": "keys",
}


__getattr__ = lazy_names(__name__, {name: f"mcpyard.org.{module}" for name, module in _LAZY.items()})
