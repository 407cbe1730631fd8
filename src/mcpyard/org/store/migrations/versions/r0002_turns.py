"""Turns: the organization's model, teammates and the servers they use, assistants and their publications,
conversations and turns; approvals and call records say which turn they belong to.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels = None
depends_on = None

# Self-contained on purpose, like 0001: the schema as it was at this revision.


def _id(name: str = "id") -> sa.Column[Any]:
    return sa.Column(name, sa.String(32), nullable=False)


def _when(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint([column], [f"{target}.id"], name=f"fk_{table}_{column}_{target}", ondelete="CASCADE")


def _table(name: str, *parts: Any) -> None:
    op.create_table(
        name,
        _id(),
        sa.Column("org_id", sa.String(32), nullable=False),
        *parts,
        _fk(name, "org_id", "organizations"),
        sa.PrimaryKeyConstraint("id", name=f"pk_{name}"),
    )


def upgrade() -> None:
    _table(
        "model_settings",
        sa.Column("base_url", sa.Text(), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("key_id", sa.String(32), nullable=True),
        sa.Column("sealed_key", sa.LargeBinary(), nullable=True),
        _when("updated_at"),
    )
    op.create_index("ix_model_settings_org_id", "model_settings", ["org_id"], unique=True)
    _table(
        "teammates",
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("instructions", sa.Text(), nullable=False),
        sa.Column("model", sa.String(200), nullable=True),
        _when("created_at"),
        sa.UniqueConstraint("org_id", "name", name="uq_teammates_org_id_name"),
    )
    op.create_index("ix_teammates_org_id", "teammates", ["org_id"])
    _table(
        "teammate_servers",
        _id("teammate_id"),
        _id("server_id"),
        _fk("teammate_servers", "teammate_id", "teammates"),
        _fk("teammate_servers", "server_id", "servers"),
        sa.UniqueConstraint("teammate_id", "server_id", name="uq_teammate_servers_teammate_id_server_id"),
    )
    op.create_index("ix_teammate_servers_org_id", "teammate_servers", ["org_id"])
    op.create_index("ix_teammate_servers_teammate_id", "teammate_servers", ["teammate_id"])
    _table(
        "assistants",
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("slug", sa.String(64), nullable=False),
        sa.Column("instructions", sa.Text(), nullable=False),
        sa.Column("tool_ids", sa.JSON(), nullable=False),
        sa.Column("needs_review", sa.Boolean(), nullable=False),
        sa.Column("review_reason", sa.Text(), nullable=False),
        _when("created_at"),
        sa.UniqueConstraint("slug", name="uq_assistants_slug"),
    )
    op.create_index("ix_assistants_org_id", "assistants", ["org_id"])
    _table(
        "publications",
        _id("assistant_id"),
        sa.Column("tools", sa.JSON(), nullable=False),
        sa.Column("published_by", sa.String(320), nullable=False),
        _when("published_at"),
        _fk("publications", "assistant_id", "assistants"),
    )
    op.create_index("ix_publications_org_id", "publications", ["org_id"])
    op.create_index("ix_publications_assistant_at", "publications", ["assistant_id", "published_at"])
    _table(
        "conversations",
        sa.Column("teammate_id", sa.String(32), nullable=True),
        sa.Column("assistant_id", sa.String(32), nullable=True),
        sa.Column("member_id", sa.String(32), nullable=True),
        sa.Column("messages", sa.JSON(), nullable=False),
        _when("created_at"),
        _fk("conversations", "teammate_id", "teammates"),
        _fk("conversations", "assistant_id", "assistants"),
    )
    op.create_index("ix_conversations_org_id", "conversations", ["org_id"])
    op.create_index("ix_conversations_teammate_id", "conversations", ["teammate_id"])
    op.create_index("ix_conversations_assistant_id", "conversations", ["assistant_id"])
    _table(
        "turns",
        _id("conversation_id"),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("reply", sa.Text(), nullable=False),
        sa.Column("calls", sa.JSON(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        _when("created_at"),
        _when("finished_at", nullable=True),
        _fk("turns", "conversation_id", "conversations"),
    )
    op.create_index("ix_turns_org_id", "turns", ["org_id"])
    op.create_index("ix_turns_conversation_id", "turns", ["conversation_id"])
    op.add_column("approvals", sa.Column("turn_id", sa.String(32), nullable=True))
    op.add_column("approvals", sa.Column("tool_call_id", sa.String(64), nullable=True))
    op.create_index("ix_approvals_turn_id", "approvals", ["turn_id"])
    op.add_column("calls", sa.Column("turn_id", sa.String(32), nullable=True))
    op.create_index("ix_calls_turn_id", "calls", ["turn_id"])


def downgrade() -> None:
    op.drop_index("ix_calls_turn_id", "calls")
    op.drop_index("ix_approvals_turn_id", "approvals")
    with op.batch_alter_table("calls") as calls:
        calls.drop_column("turn_id")
    with op.batch_alter_table("approvals") as approvals:
        approvals.drop_column("tool_call_id")
        approvals.drop_column("turn_id")
    for table in ("turns", "conversations", "publications", "assistants", "teammate_servers", "teammates"):
        op.drop_table(table)
    op.drop_table("model_settings")
