"""Webhooks: where waiting approvals, questions and alerts are sent (the secret sealed), and their deliveries.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision: str | None = "0010"
branch_labels = None
depends_on = None

# Self-contained on purpose, like the others: the schema as it is at this revision.


def _when(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _org(table: str) -> list[Any]:
    return [
        sa.Column("org_id", sa.String(32), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"], ["organizations.id"], name=f"fk_{table}_org_id_organizations", ondelete="CASCADE"
        ),
    ]


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", sa.String(32), nullable=False),
        *_org("webhooks"),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("include_arguments", sa.Boolean(), nullable=False),
        sa.Column("console_url", sa.Text(), nullable=False),
        sa.Column("key_id", sa.String(32), nullable=False),
        sa.Column("sealed_secret", sa.LargeBinary(), nullable=False),
        sa.Column("created_by", sa.String(320), nullable=False),
        _when("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_webhooks"),
    )
    op.create_index("ix_webhooks_org_id", "webhooks", ["org_id"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(32), nullable=False),
        *_org("webhook_deliveries"),
        sa.Column("webhook_id", sa.String(32), nullable=False),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("tries", sa.JSON(), nullable=False),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        _when("created_at"),
        _when("next_at"),
        _when("held_until", nullable=True),
        _when("finished_at", nullable=True),
        sa.ForeignKeyConstraint(
            ["webhook_id"], ["webhooks.id"], name="fk_webhook_deliveries_webhook_id_webhooks", ondelete="CASCADE"
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'sending', 'delivered', 'failed')", name="ck_webhook_deliveries_status"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_deliveries"),
    )
    op.create_index("ix_webhook_deliveries_org_id", "webhook_deliveries", ["org_id"])
    op.create_index("ix_webhook_deliveries_due", "webhook_deliveries", ["status", "next_at"])
    op.create_index("ix_webhook_deliveries_webhook", "webhook_deliveries", ["webhook_id", "created_at"])


def downgrade() -> None:
    for table in ("webhook_deliveries", "webhooks"):
        op.drop_table(table)
