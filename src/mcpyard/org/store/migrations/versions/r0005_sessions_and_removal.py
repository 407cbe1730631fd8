"""Browser sessions kept in the database (signing out ends every copy of the cookie), and members removed softly.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels = None
depends_on = None

# Self-contained on purpose, like the others: the schema as it was at this revision.


def upgrade() -> None:
    op.create_table(
        "browser_sessions",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("org_id", sa.String(32), nullable=False),
        sa.Column("member_id", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["org_id"], ["organizations.id"], name="fk_browser_sessions_org_id_organizations", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["member_id"], ["members.id"], name="fk_browser_sessions_member_id_members", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_browser_sessions"),
    )
    op.create_index("ix_browser_sessions_org_id", "browser_sessions", ["org_id"])
    op.create_index("ix_browser_sessions_member_id", "browser_sessions", ["member_id"])
    with op.batch_alter_table("members") as members:
        members.add_column(sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("members") as members:
        members.drop_column("removed_at")
    op.drop_table("browser_sessions")
