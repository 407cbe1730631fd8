"""The organization service's Alembic migrations: one history for SQLite and PostgreSQL (ORG-9).

Run them with `mcpyard org migrate` (or `mcpyard.org.migrate`); there is no alembic.ini.
"""
