"""Replicas act as one service: a change counter per organization, stored results any replica reads (bounded, least
recently used out), and leases on running approvals and turns so a dead replica's work ends `failed`.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision: str | None = "0007"
branch_labels = None
depends_on = None

# Self-contained on purpose, like the others: the turn statuses as they are at this revision and the one before.
TURNS_BEFORE = (
    "running",
    "waiting_for_approval",
    "waiting_for_answer",
    "done",
    "call_limit",
    "time_limit",
    "model_error",
)
TURNS = (*TURNS_BEFORE, "interrupted")


def _turn_check(values: tuple[str, ...]) -> None:
    allowed = ", ".join(f"'{value}'" for value in values)
    with op.batch_alter_table("turns") as batch:
        batch.drop_constraint(op.f("ck_turns_status"), type_="check")
        batch.create_check_constraint(op.f("ck_turns_status"), f"status IN ({allowed})")


def upgrade() -> None:
    with op.batch_alter_table("organizations") as batch:
        batch.add_column(sa.Column("revision", sa.BigInteger(), nullable=False, server_default="0"))
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("size", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True))
    postgres = op.get_bind().dialect.name == "postgresql"
    size = "octet_length(text)" if postgres else "length(CAST(text AS BLOB))"
    op.execute(f"UPDATE results SET last_used_at = created_at, size = {size}")
    with op.batch_alter_table("results") as batch:
        batch.alter_column("last_used_at", existing_type=sa.DateTime(timezone=True), nullable=False)
        batch.create_index("ix_results_org_used", ["org_id", "last_used_at"])
    with op.batch_alter_table("approvals") as batch:
        batch.add_column(sa.Column("held_until", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("turns") as batch:
        batch.add_column(sa.Column("held_until", sa.DateTime(timezone=True), nullable=True))
    _turn_check(TURNS)


def downgrade() -> None:
    op.execute("UPDATE turns SET status = 'model_error' WHERE status = 'interrupted'")
    _turn_check(TURNS_BEFORE)
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("held_until")
    with op.batch_alter_table("approvals") as batch:
        batch.drop_column("held_until")
    with op.batch_alter_table("results") as batch:
        batch.drop_index("ix_results_org_used")
        batch.drop_column("last_used_at")
        batch.drop_column("size")
    with op.batch_alter_table("organizations") as batch:
        batch.drop_column("revision")
