"""Limits on calls per member, API token and teammate, set per organization, and their windows' counts.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision: str | None = "0011"
branch_labels = None
depends_on = None

# Self-contained on purpose, like the others: the schema as it is at this revision.

LIMITS = (
    "member_per_minute",
    "member_per_day",
    "token_per_minute",
    "token_per_day",
    "teammate_per_minute",
    "teammate_per_day",
)


def upgrade() -> None:
    op.create_table(
        "org_limits",
        sa.Column("org_id", sa.String(32), nullable=False),
        *(sa.Column(name, sa.Integer(), nullable=True) for name in LIMITS),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"], ["organizations.id"], name="fk_org_limits_org_id_organizations", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("org_id", name="pk_org_limits"),
    )
    op.create_table(
        "limit_counts",
        sa.Column("key", sa.String(96), nullable=False),
        sa.Column("org_id", sa.String(32), nullable=False),
        sa.Column("window_end", sa.BigInteger(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"], ["organizations.id"], name="fk_limit_counts_org_id_organizations", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("key", name="pk_limit_counts"),
    )
    op.create_index("ix_limit_counts_org_id", "limit_counts", ["org_id"])
    op.create_index("ix_limit_counts_org_ends", "limit_counts", ["org_id", "window_end"])


def downgrade() -> None:
    op.drop_table("limit_counts")
    op.drop_table("org_limits")
