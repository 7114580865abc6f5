"""Fair analysis queue: who asked for each job, when it was last taken, and the verdict cache.

``analysis_jobs`` gains three nullable columns (service.analysis.queue):

- ``requester``: who asked for the job (``player:<uuid>``); the cap of queued-or-running jobs per
  player (``ANALYSIS_JOBS_PER_PLAYER``) counts them, and workers take jobs round robin across
  requesters rather than the oldest first overall;
- ``address``: the client address the request came from; the cap per address
  (``ANALYSIS_JOBS_PER_ADDRESS``) counts them;
- ``claimed_at``: when a worker last took the job; the round robin serves first the requester
  whose last job was taken longest ago.

with three indexes: the waiting jobs of a requester and of an address (the caps and the claim's
"how many running" read only those), and ``(requester, claimed_at)`` (the claim's "last taken",
one index probe per requester). They are built ``CONCURRENTLY`` (writes to ``analysis_jobs`` go
on meanwhile), each dropped first so a build that failed halfway can simply be run again.

``analysis_verdicts`` is new: the solver's verdict on a table (``domain.analysis.position_key``:
the ruleset, the base rank and the cards where they lie), kept across jobs so no table is searched
twice: ``won`` with its line (replayed through the rules before it is used again), ``lost``
(proven), or ``unknown`` with the solver time it had (``budget_ms``: reused only for a search
given no more time).

Why the previous release keeps working on this schema, in both directions:

- its ``POST`` inserts jobs without the new columns: they stay NULL, which the new release reads
  as "no requester" (no cap counts them; the claim treats all such jobs as one requester);
- its workers take jobs by ``created_at`` alone and never set ``claimed_at``: they claim and run
  jobs the new release wrote (the columns they read are unchanged), just not in fair order, and a
  job they take does not count as its requester's last turn;
- the new release's answers carry two more keys (``source``, ``ms``) that the old one ignores (it
  reads ``index``, ``result`` and ``line``), and the positions it gives up on when a job's budget
  is spent are stored as ordinary ``unknown`` answers, so an old worker resuming such a job reads
  them as the solver's; its ``result`` has more keys (``budgetSpent``, ``cached``), ignored too;
- nothing of the old release reads or writes ``analysis_verdicts``.

The downgrade drops the table, the indexes and the columns (the previous release never reads them).

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

COLUMNS = ("requester", "address", "claimed_at")
INDEXES = {
    "analysis_jobs_requester_waiting": "analysis_jobs (requester) WHERE status IN ('queued', 'running')",
    "analysis_jobs_address_waiting": "analysis_jobs (address) WHERE status IN ('queued', 'running')",
    "analysis_jobs_requester_claims": "analysis_jobs (requester, claimed_at)",
}


def upgrade() -> None:
    op.add_column("analysis_jobs", sa.Column("requester", sa.Text(), nullable=True))
    op.add_column("analysis_jobs", sa.Column("address", sa.Text(), nullable=True))
    op.add_column("analysis_jobs", sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "analysis_verdicts",
        sa.Column("position_key", sa.Text(), primary_key=True),
        sa.Column("rules", sa.Text(), primary_key=True),
        sa.Column("verdict", sa.Text(), nullable=False),
        sa.Column("line", sa.Text(), nullable=True),
        sa.Column("budget_ms", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.CheckConstraint("verdict IN ('won', 'lost', 'unknown')", name="analysis_verdicts_verdict_check"),
        sa.CheckConstraint("(verdict = 'won') = (line IS NOT NULL)", name="analysis_verdicts_line_check"),
        sa.CheckConstraint("(verdict = 'unknown') = (budget_ms IS NOT NULL)", name="analysis_verdicts_budget_check"),
    )
    with op.get_context().autocommit_block():
        for name, definition in INDEXES.items():
            op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
            op.execute(f"CREATE INDEX CONCURRENTLY {name} ON {definition}")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        for name in INDEXES:
            op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
    op.drop_table("analysis_verdicts")
    for column in reversed(COLUMNS):
        op.drop_column("analysis_jobs", column)

