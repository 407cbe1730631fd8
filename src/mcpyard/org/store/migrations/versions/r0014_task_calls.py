"""Long calls: the calls whose servers answered with a task, followed by one replica at a time.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision: str | None = "0013"
branch_labels = None
depends_on = None

# Self-contained on purpose, like the others: the schema as it is at this revision.


def upgrade() -> None:
    op.create_table(
        "task_calls",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("org_id", sa.String(32), nullable=False),
        sa.Column("member_id", sa.String(32), nullable=False),
        sa.Column("conversation", sa.String(64), nullable=False),
        sa.Column("turn_id", sa.String(32), nullable=True),
        sa.Column("face_task_id", sa.String(64), nullable=True),
        sa.Column("tool", sa.String(256), nullable=False),
        sa.Column("server", sa.String(64), nullable=False),
        sa.Column("target", sa.String(64), nullable=False),
        sa.Column("arguments", sa.JSON(), nullable=False),
        sa.Column("key_id", sa.String(32), nullable=False),
        sa.Column("sealed_task", sa.LargeBinary(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("held_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("holder", sa.String(32), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.CheckConstraint("status IN ('running', 'done', 'read')", name="ck_task_calls_status"),
        sa.ForeignKeyConstraint(
            ["org_id"], ["organizations.id"], name="fk_task_calls_org_id_organizations", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["member_id"], ["members.id"], name="fk_task_calls_member_id_members", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_task_calls"),
    )
    op.create_index("ix_task_calls_org_id", "task_calls", ["org_id"])
    op.create_index("ix_task_calls_turn_id", "task_calls", ["turn_id"])
    op.create_index("ix_task_calls_face_task_id", "task_calls", ["face_task_id"])
    op.create_index("ix_task_calls_status_held", "task_calls", ["status", "held_until"])


def downgrade() -> None:
    op.drop_index("ix_task_calls_status_held", table_name="task_calls")
    op.drop_index("ix_task_calls_face_task_id", table_name="task_calls")
    op.drop_index("ix_task_calls_turn_id", table_name="task_calls")
    op.drop_index("ix_task_calls_org_id", table_name="task_calls")
    op.drop_table("task_calls")
