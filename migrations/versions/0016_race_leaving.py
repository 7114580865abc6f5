"""Races whose players leave, and stored points of long games to replay past states from.

- ``races.status`` may also be ``cancelled`` (an open race whose creator deleted their account and
  that nobody else had entered), with the reason in the new nullable ``races.cancelled_reason``.
  The CHECK constraint is widened: a new constraint allowing the four values is added ``NOT VALID``
  and validated (every existing row already satisfies it), then the old, narrower one is dropped.
  All of it runs in the migration's transaction, so writes to ``races`` wait for its commit: the
  time to read the table once (a row per race).
- ``game_checkpoints``: a game's state and whole undo stack at every multiple of
  ``service.store.checkpoints.CHECKPOINT_EVERY`` versions (``domain.codec.checkpoint_of``), so
  ``GET /games/{id}/states/{v}`` folds at most that many events instead of replaying from the deal.
  A state at a version is the fold of the events up to it, which never change, so a checkpoint is
  never rewritten. Existing games get theirs when a past state of them is first read.

Why the previous release keeps working: it never writes ``cancelled`` and never reads the new column
or table. A race cancelled by the new release is one its creator left by deleting their account with
nobody else entered; an old process still serving during the rollout shows it with its status as
stored. The downgrade drops the table and the column and narrows the constraint again after turning
cancelled races into finished ones (the old release's word for a race that is over).

Revision ID: 0016
Revises: 0015
"""

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE races ADD COLUMN IF NOT EXISTS cancelled_reason text")
    op.execute(
        "ALTER TABLE races ADD CONSTRAINT races_status_check_0016 "
        "CHECK (status IN ('open', 'running', 'finished', 'cancelled')) NOT VALID"
    )
    op.execute("ALTER TABLE races VALIDATE CONSTRAINT races_status_check_0016")
    op.execute("ALTER TABLE races DROP CONSTRAINT races_status_check")
    op.execute("ALTER TABLE races RENAME CONSTRAINT races_status_check_0016 TO races_status_check")
    op.execute(
        """
        CREATE TABLE game_checkpoints (
            game_id uuid NOT NULL REFERENCES games (id),
            version integer NOT NULL,
            checkpoint json NOT NULL,
            CONSTRAINT game_checkpoints_pkey PRIMARY KEY (game_id, version)
        )
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE game_checkpoints")
    op.execute("UPDATE races SET status = 'finished', finished_at = coalesce(finished_at, created_at) "
               "WHERE status = 'cancelled'")
    op.execute("ALTER TABLE races DROP CONSTRAINT races_status_check")
    op.execute("ALTER TABLE races ADD CONSTRAINT races_status_check CHECK (status IN ('open', 'running', 'finished'))")
    op.execute("ALTER TABLE races DROP COLUMN cancelled_reason")
