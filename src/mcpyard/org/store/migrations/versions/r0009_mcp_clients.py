"""Calls and approvals name the MCP client that made them: `calls.client`, `approvals.client` (null otherwise).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision: str | None = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("calls", "approvals"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("client", sa.String(120), nullable=True))


def downgrade() -> None:
    for table in ("calls", "approvals"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("client")
