"""States, policies, statuses and roles are checked by the database; a tool's `changed` state is no longer stored.

Whether a tool changed since it was reviewed is derived from its hashes (the reviewed one against the
one its server lists now): tools stored as `changed` become `active`, and going down stores `changed`
again for every listed tool whose policy was reviewed at another definition.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision: str | None = "0006"
branch_labels = None
depends_on = None

# Self-contained on purpose, like the others: the allowed values as they are at this revision.
CHECKS: dict[str, dict[str, tuple[str, ...]]] = {
    "tools": {"state": ("active", "removed")},
    "policies": {"policy": ("run_freely", "ask_first", "off")},
    "approvals": {"status": ("pending", "running", "done", "failed", "declined")},
    "turns": {
        "status": (
            "running",
            "waiting_for_approval",
            "waiting_for_answer",
            "done",
            "call_limit",
            "time_limit",
            "model_error",
        )
    },
    "questions": {"status": ("pending", "accepted", "declined", "cancelled", "expired")},
    "members": {"role": ("owner", "admin", "member")},
}


def upgrade() -> None:
    op.execute("UPDATE tools SET state = 'active' WHERE state = 'changed'")
    for table, columns in CHECKS.items():
        with op.batch_alter_table(table) as batch:
            for column, values in columns.items():
                allowed = ", ".join(f"'{value}'" for value in values)
                batch.create_check_constraint(op.f(f"ck_{table}_{column}"), f"{column} IN ({allowed})")


def downgrade() -> None:
    for table, columns in CHECKS.items():
        with op.batch_alter_table(table) as batch:
            for column in columns:
                batch.drop_constraint(op.f(f"ck_{table}_{column}"), type_="check")
    op.execute(
        "UPDATE tools SET state = 'changed' WHERE state = 'active' AND EXISTS (SELECT 1 FROM policies"
        " WHERE policies.tool_id = tools.id AND policies.reviewed_hash <> tools.definition_hash)"
    )
