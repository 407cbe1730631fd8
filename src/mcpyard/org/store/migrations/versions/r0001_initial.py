"""The organization service's tables: organizations, members, tokens, servers, credentials, tools, policies,
approvals, calls, results, audit events, alerts.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels = None
depends_on = None

# Self-contained on purpose: a migration describes the schema as it was then, whatever the
# models say later.


def _id(name: str = "id") -> sa.Column[Any]:
    return sa.Column(name, sa.String(32), nullable=False)


def _org(table: str) -> list[Any]:
    return [
        sa.Column("org_id", sa.String(32), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"], ["organizations.id"], name=f"fk_{table}_org_id_organizations", ondelete="CASCADE"
        ),
    ]


def _when(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint([column], [f"{target}.id"], name=f"fk_{table}_{column}_{target}", ondelete="CASCADE")


def _table(name: str, *parts: Any, org: bool = True) -> None:
    op.create_table(name, *parts, *(_org(name) if org else []), sa.PrimaryKeyConstraint(*_key(name), name=f"pk_{name}"))
    if org:
        op.create_index(f"ix_{name}_org_id", name, ["org_id"])


def _key(name: str) -> list[str]:
    return ["handle"] if name == "results" else ["id"]


def upgrade() -> None:
    _table(
        "organizations",
        _id(),
        sa.Column("name", sa.String(200), nullable=False),
        _when("created_at"),
        sa.UniqueConstraint("name", name="uq_organizations_name"),
        org=False,
    )
    _table(
        "members",
        _id(),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("failed_logins", sa.Integer(), nullable=False),
        _when("locked_until", nullable=True),
        _when("created_at"),
        sa.UniqueConstraint("org_id", "email", name="uq_members_org_id_email"),
    )
    op.create_index("ix_members_email", "members", ["email"])
    _table(
        "api_tokens",
        _id(),
        _id("member_id"),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        _when("created_at"),
        _when("last_used_at", nullable=True),
        _when("revoked_at", nullable=True),
        _fk("api_tokens", "member_id", "members"),
        sa.UniqueConstraint("token_hash", name="uq_api_tokens_token_hash"),
    )
    op.create_index("ix_api_tokens_member_id", "api_tokens", ["member_id"])
    _table(
        "servers",
        _id(),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("protocol_version", sa.String(32), nullable=True),
        _when("created_at"),
        _when("refreshed_at", nullable=True),
        _when("deleted_at", nullable=True),
        sa.UniqueConstraint("org_id", "name", name="uq_servers_org_id_name"),
    )
    _table(
        "credentials",
        _id(),
        _id("server_id"),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("key_id", sa.String(32), nullable=False),
        sa.Column("sealed", sa.LargeBinary(), nullable=False),
        _when("created_at"),
        _fk("credentials", "server_id", "servers"),
    )
    op.create_index("ix_credentials_server_id", "credentials", ["server_id"], unique=True)
    _table(
        "tools",
        _id(),
        _id("server_id"),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.Column("definition_hash", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        _when("first_seen_at"),
        _when("updated_at"),
        _fk("tools", "server_id", "servers"),
        sa.UniqueConstraint("server_id", "name", name="uq_tools_server_id_name"),
    )
    op.create_index("ix_tools_server_id", "tools", ["server_id"])
    _table(
        "policies",
        _id(),
        _id("tool_id"),
        sa.Column("policy", sa.String(16), nullable=False),
        sa.Column("reviewed_hash", sa.String(64), nullable=False),
        sa.Column("reviewed_definition", sa.JSON(), nullable=False),
        sa.Column("set_by", sa.String(32), nullable=True),
        _when("set_at"),
        _fk("policies", "tool_id", "tools"),
        sa.UniqueConstraint("tool_id", name="uq_policies_tool_id"),
    )
    _table(
        "approvals",
        _id(),
        _id("member_id"),
        _id("tool_id"),
        sa.Column("tool_name", sa.String(256), nullable=False),
        sa.Column("definition_hash", sa.String(64), nullable=False),
        sa.Column("conversation", sa.String(64), nullable=False),
        sa.Column("arguments", sa.JSON(), nullable=False),
        sa.Column("arguments_preview", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("decided_by", sa.String(32), nullable=True),
        _when("decided_at", nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        _when("created_at"),
        _fk("approvals", "member_id", "members"),
        _fk("approvals", "tool_id", "tools"),
    )
    op.create_index("ix_approvals_org_status", "approvals", ["org_id", "status"])
    _table(
        "calls",
        _id(),
        sa.Column("member_id", sa.String(32), nullable=True),
        sa.Column("conversation", sa.String(64), nullable=False),
        sa.Column("server_id", sa.String(32), nullable=True),
        sa.Column("tool", sa.String(256), nullable=False),
        sa.Column("arguments", sa.JSON(), nullable=False),
        sa.Column("decision", sa.String(16), nullable=True),
        sa.Column("why", sa.Text(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("error_code", sa.String(64), nullable=True),
        sa.Column("duration_ms", sa.Double(), nullable=False),
        sa.Column("result_bytes", sa.Integer(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("approval_id", sa.String(32), nullable=True),
        _when("started_at"),
    )
    op.create_index("ix_calls_org_at", "calls", ["org_id", "started_at"])
    _table(
        "results",
        sa.Column("handle", sa.String(64), nullable=False),
        sa.Column("conversation", sa.String(64), nullable=False),
        sa.Column("server", sa.String(64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        _when("created_at"),
    )
    _table(
        "audit_events",
        _id(),
        _when("at"),
        sa.Column("actor", sa.String(320), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("old", sa.JSON(), nullable=True),
        sa.Column("new", sa.JSON(), nullable=True),
    )
    op.create_index("ix_audit_org_at", "audit_events", ["org_id", "at"])
    _table(
        "alerts",
        _id(),
        sa.Column("server_id", sa.String(32), nullable=True),
        sa.Column("assistant_id", sa.String(32), nullable=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        _when("raised_at"),
        _when("cleared_at", nullable=True),
    )
    op.create_index("ix_alerts_org_open", "alerts", ["org_id", "cleared_at"])


def downgrade() -> None:
    # Dependents first; indexes go with their tables.
    for table in (
        "alerts",
        "audit_events",
        "results",
        "calls",
        "approvals",
        "policies",
        "tools",
        "credentials",
        "servers",
        "api_tokens",
        "members",
        "organizations",
    ):
        op.drop_table(table)
