"""``GET /tournaments`` reads the newest first from an index (service/tournaments).

- ``tournaments_created``: every tournament by ``(created_at, id)``, the list's order, so a page is
  an index range however many tournaments there are;
- ``tournaments_unfinished_created``: the same order over the tournaments not finished yet (partial:
  ``finished_at IS NULL``), so a page of those preparing, upcoming or running does not walk past
  every finished one.

Both are built ``CONCURRENTLY`` (tournaments are made meanwhile); a build that failed halfway is
dropped and made again when the migration runs again. The previous release neither knows nor needs
them: new indexes change none of its statements. The downgrade drops them.

Revision ID: 0026
Revises: 0025
"""

from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None

INDEXES = {
    "tournaments_created": "ON tournaments (created_at, id)",
    "tournaments_unfinished_created": "ON tournaments (created_at, id) WHERE finished_at IS NULL",
}


def upgrade() -> None:
    with op.get_context().autocommit_block():
        for name, definition in INDEXES.items():
            op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")  # a build that failed halfway
            op.execute(f"CREATE INDEX CONCURRENTLY {name} {definition}")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        for name in INDEXES:
            op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
