"""The fingerprints of shared decks: the solver refuses a copy of a deal in play.

``daily_deals.fingerprint`` and ``races.fingerprint`` hold the canonical fingerprint of each
deck (``domain.fingerprint``: the same for every relabelled copy of a deal). The deals in play
are the daily deals whose date is not over (a range of the primary key: today's and tomorrow's)
and the running races, found by ``races_live_fingerprint`` (partial: only running races are in
it; an open race has dealt no card to anyone, and a finished or cancelled one is over). Before
the solver answers on any game (a hint, an analysis) the service looks its deck's
fingerprint up there (``service.deals.live_decks``) and refuses with ``409 shared_deal``.

Both columns are nullable and nothing is backfilled here: the lookup computes the fingerprint of
a deal in play that has none yet and stores it, so rows written before this migration, and rows
the previous release writes while both run, are covered from their first lookup. The previous
release keeps working: it neither reads nor writes the new columns, and new nullable columns and
a new index change none of its statements. The index is built ``CONCURRENTLY`` (writes to races
go on meanwhile); a build that failed halfway is dropped and made again when the migration runs
again. The downgrade drops both columns and the index.

Revision ID: 0013
Revises: 0012
"""

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

INDEX = "races_live_fingerprint"


def upgrade() -> None:
    # IF NOT EXISTS: an upgrade whose index build failed (after the columns were committed) runs again
    op.execute("ALTER TABLE daily_deals ADD COLUMN IF NOT EXISTS fingerprint text")
    op.execute("ALTER TABLE races ADD COLUMN IF NOT EXISTS fingerprint text")
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")  # a build that failed halfway
        op.execute(f"CREATE INDEX CONCURRENTLY {INDEX} ON races (fingerprint) WHERE status = 'running'")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
    op.drop_column("races", "fingerprint")
    op.drop_column("daily_deals", "fingerprint")
