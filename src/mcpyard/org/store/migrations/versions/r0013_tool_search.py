"""Tool search for teammates: the organization's setting, and the tools each conversation found.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision: str | None = "0012"
branch_labels = None
depends_on = None

# Self-contained on purpose, like the others: the schema as it is at this revision.


def upgrade() -> None:
    op.create_table(
        "org_tool_search",
        sa.Column("org_id", sa.String(32), nullable=False),
        sa.Column("mode", sa.String(8), nullable=False),
        sa.Column("max_tools", sa.Integer(), nullable=False),
        sa.Column("max_tokens", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("mode IN ('auto', 'always', 'off')", name="ck_org_tool_search_mode"),
        sa.ForeignKeyConstraint(
            ["org_id"], ["organizations.id"], name="fk_org_tool_search_org_id_organizations", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("org_id", name="pk_org_tool_search"),
    )
    with op.batch_alter_table("conversations") as batch:
        batch.add_column(sa.Column("found_tools", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("found_tools")
    op.drop_table("org_tool_search")
