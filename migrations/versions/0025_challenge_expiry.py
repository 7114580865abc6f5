"""A pending challenge past its time is marked expired, and both players are told (service/challenges).

The account events' periodic job (service.following.sweeper) finds the pending challenges whose
``expires_at`` has passed, stores them as ``expired`` (``ended_at`` = ``expires_at``) and writes
their ``challenge`` event with the action ``expired`` in the same transaction.

- ``challenges_status_check`` admits ``expired``: the old constraint dropped, the wider one added
  ``NOT VALID`` and validated, in the migration's transaction, so writes to ``challenges`` wait for
  its commit: the time to read the table once (a row per challenge).
- ``challenges_pending_expiry``: a partial index of the pending challenges by ``expires_at``, the
  job's lookup; built ``CONCURRENTLY``.

Why the previous release keeps working: it shows a pending challenge past its time as expired
already (its status is computed), and it shows a stored status as it is, so an ``expired`` row
reads the same in both releases; it refuses to accept, decline or cancel one (``409
challenge_expired`` either way), and it never writes the new value. The downgrade stores expired
rows as pending again (their ``expires_at`` has passed, so they still read as expired), restores
the narrower check and drops the index.

Revision ID: 0025
Revises: 0024
"""

from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

INDEX = "challenges_pending_expiry"
OLD = "'pending', 'accepted', 'declined', 'cancelled'"


def _check(values: str) -> None:
    op.execute("ALTER TABLE challenges DROP CONSTRAINT IF EXISTS challenges_status_check")
    op.execute(f"ALTER TABLE challenges ADD CONSTRAINT challenges_status_check CHECK (status IN ({values})) NOT VALID")
    op.execute("ALTER TABLE challenges VALIDATE CONSTRAINT challenges_status_check")


def upgrade() -> None:
    _check(OLD + ", 'expired'")
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")  # a build that failed halfway
        op.execute(f"CREATE INDEX CONCURRENTLY {INDEX} ON challenges (expires_at) WHERE status = 'pending'")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
    op.execute("UPDATE challenges SET status = 'pending', ended_at = NULL WHERE status = 'expired'")
    _check(OLD)
