"""Alembic's entry point: runs the migrations on the connection `mcpyard.org` hands over (no alembic.ini)."""

from __future__ import annotations

from alembic import context

from mcpyard.org.store._models import Base

connection = context.config.attributes.get("connection")
if context.is_offline_mode() or connection is None:
    raise RuntimeError("mcpyard's migrations run through `mcpyard org migrate`, on a live connection")

# render_as_batch: SQLite alters a table by copying it; Alembic's batch mode does that for it.
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True, compare_type=True)
with context.begin_transaction():
    context.run_migrations()
