"""OAuth 2.1 for members' own MCP clients: clients, authorization requests, grants, codes and tokens (hashes only).

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision: str | None = "0009"
branch_labels = None
depends_on = None

# Self-contained on purpose, like the others: the schema as it is at this revision.


def _when(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _grant(table: str) -> list[Any]:
    return [
        sa.Column("grant_id", sa.String(32), nullable=False),
        sa.ForeignKeyConstraint(
            ["grant_id"], ["oauth_grants.id"], name=f"fk_{table}_grant_id_oauth_grants", ondelete="CASCADE"
        ),
    ]


def upgrade() -> None:
    op.create_table(
        "oauth_clients",
        sa.Column("client_id", sa.String(2048), nullable=False),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("key_id", sa.String(32), nullable=True),
        sa.Column("sealed_secret", sa.LargeBinary(), nullable=True),
        _when("created_at"),
        _when("fetched_at", nullable=True),
        sa.CheckConstraint("kind IN ('registered', 'metadata_document')", name="ck_oauth_clients_kind"),
        sa.PrimaryKeyConstraint("client_id", name="pk_oauth_clients"),
    )
    op.create_table(
        "oauth_requests",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("client_id", sa.String(2048), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        _when("created_at"),
        _when("expires_at"),
        sa.PrimaryKeyConstraint("id", name="pk_oauth_requests"),
    )
    op.create_table(
        "oauth_grants",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("org_id", sa.String(32), nullable=False),
        sa.Column("member_id", sa.String(32), nullable=False),
        sa.Column("client_id", sa.String(2048), nullable=False),
        sa.Column("client_name", sa.String(200), nullable=False),
        sa.Column("resource", sa.Text(), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        _when("created_at"),
        _when("last_used_at", nullable=True),
        _when("revoked_at", nullable=True),
        sa.ForeignKeyConstraint(
            ["org_id"], ["organizations.id"], name="fk_oauth_grants_org_id_organizations", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["member_id"], ["members.id"], name="fk_oauth_grants_member_id_members", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_oauth_grants"),
    )
    op.create_index("ix_oauth_grants_org_id", "oauth_grants", ["org_id"])
    op.create_index("ix_oauth_grants_member", "oauth_grants", ["org_id", "member_id"])
    op.create_table(
        "oauth_codes",
        sa.Column("code_hash", sa.String(64), nullable=False),
        *_grant("oauth_codes"),
        sa.Column("code_challenge", sa.String(128), nullable=False),
        sa.Column("redirect_uri", sa.Text(), nullable=False),
        sa.Column("redirect_uri_provided_explicitly", sa.Boolean(), nullable=False),
        _when("expires_at"),
        _when("used_at", nullable=True),
        sa.PrimaryKeyConstraint("code_hash", name="pk_oauth_codes"),
    )
    op.create_index("ix_oauth_codes_grant_id", "oauth_codes", ["grant_id"])
    op.create_table(
        "oauth_tokens",
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        *_grant("oauth_tokens"),
        _when("created_at"),
        _when("expires_at"),
        _when("revoked_at", nullable=True),
        sa.CheckConstraint("kind IN ('access', 'refresh')", name="ck_oauth_tokens_kind"),
        sa.PrimaryKeyConstraint("token_hash", name="pk_oauth_tokens"),
    )
    op.create_index("ix_oauth_tokens_grant_id", "oauth_tokens", ["grant_id"])


def downgrade() -> None:
    for table in ("oauth_tokens", "oauth_codes", "oauth_grants", "oauth_requests", "oauth_clients"):
        op.drop_table(table)
