"""Teammates can be deleted and keep their records: `teammates.deleted_at` (null while the teammate is in use).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels = None
depends_on = None

# Self-contained on purpose, like the others: the schema as it was at this revision.


def upgrade() -> None:
    with op.batch_alter_table("teammates") as batch:
        batch.add_column(sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("teammates") as batch:
        batch.drop_column("deleted_at")
