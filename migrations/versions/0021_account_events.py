"""The account outbox: each account's events, numbered per account (service.following.outbox).

- ``players.event_seq``: the number of the account's last event. A transaction that writes an
  event bumps it (``UPDATE ... RETURNING``), which takes the account's row lock until it commits,
  so the account's events are numbered in commit order with no gap.
- ``account_events``: one row per event of an account (``raceStarted``, ``raceFinished``,
  ``gameEnded``, ``analysisDone``, ...; never one per move), written in the transaction of the
  change it tells of, kept for ``ACCOUNT_EVENTS_RETENTION_SECONDS`` and then removed by a job.
- ``races_running_ends_at``: running races by deadline, for the job that finishes a race whose
  time is up (and tells its entrants) when no request has looked at it; built ``CONCURRENTLY``
  (writes to races go on meanwhile; a build that failed halfway is made again).

Why the previous release keeps working: it never reads the new column or table, the column has a
default (a new player made by it starts at 0, as one made by this release does), and it never
writes to the table. Its stream notifications go on the channel it always used; this release's
account notifications go on a channel of their own (``canfield_account_events``), which the
previous release does not listen to. The downgrade drops both.

Revision ID: 0021
Revises: 0020
"""

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE players ADD COLUMN IF NOT EXISTS event_seq bigint NOT NULL DEFAULT 0")
    op.execute(
        """
        CREATE TABLE account_events (
            player_id uuid NOT NULL REFERENCES players (id) ON DELETE CASCADE,
            seq bigint NOT NULL,
            type text NOT NULL,
            data jsonb NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT account_events_pkey PRIMARY KEY (player_id, seq)
        )
        """
    )
    op.execute("CREATE INDEX account_events_created_at ON account_events (created_at)")
    with op.get_context().autocommit_block():  # writes to races go on while it builds
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS races_running_ends_at")  # a build that failed halfway
        op.execute("CREATE INDEX CONCURRENTLY races_running_ends_at ON races (ends_at) WHERE status = 'running'")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS races_running_ends_at")
    op.execute("DROP TABLE account_events")
    op.execute("ALTER TABLE players DROP COLUMN event_seq")
