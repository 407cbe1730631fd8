"""Questions: what a server asks during a member's call or a teammate's turn, parked for a person to answer.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels = None
depends_on = None

# Self-contained on purpose, like the others: the schema as it was at this revision.


def upgrade() -> None:
    op.create_table(
        "questions",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("org_id", sa.String(32), nullable=False),
        sa.Column("member_id", sa.String(32), nullable=False),
        sa.Column("server_id", sa.String(32), nullable=True),
        sa.Column("server", sa.String(64), nullable=False),
        sa.Column("tool", sa.String(256), nullable=True),
        sa.Column("turn_id", sa.String(32), nullable=True),
        sa.Column("call_id", sa.String(32), nullable=True),
        sa.Column("mode", sa.String(8), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("form", sa.JSON(), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("site", sa.String(255), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("why", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("held_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_by", sa.String(32), nullable=True),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("key_id", sa.String(32), nullable=True),
        sa.Column("sealed_answer", sa.LargeBinary(), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["org_id"], ["organizations.id"], name="fk_questions_org_id_organizations", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["member_id"], ["members.id"], name="fk_questions_member_id_members", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_questions"),
    )
    op.create_index("ix_questions_org_id", "questions", ["org_id"])
    op.create_index("ix_questions_org_status", "questions", ["org_id", "status"])
    op.create_index("ix_questions_turn_id", "questions", ["turn_id"])
    op.create_index("ix_questions_call_id", "questions", ["call_id"])


def downgrade() -> None:
    op.drop_table("questions")
