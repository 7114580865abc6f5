"""Alembic migrations: the only way the schema is made."""
