"""Game analysis jobs: one row per game whose analysis was asked for (service.analysis).

``analysis_jobs`` is the queue and the result in one: a worker takes a ``queued`` job, or a
``running`` one whose lease ran out (its process died), with ``SELECT ... FOR UPDATE SKIP LOCKED``,
sets ``running``, a new ``attempt`` and ``lease_until``, and renews the lease while it works. Every
write of a worker names its attempt, so a worker that lost its lease changes nothing. ``answers``
are the solver's answers so far (a job taken up again starts from them); ``result`` the positions'
verdicts and the turning point once ``done``.


Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "analysis_jobs",
        sa.Column("game_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("answers", postgresql.JSONB(), nullable=False, server_default=sa.text("'[]'::jsonb")),
        sa.Column("result", postgresql.JSONB(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("status IN ('queued', 'running', 'done', 'failed')", name="analysis_jobs_status_check"),
    )
    op.create_index(
        "analysis_jobs_waiting", "analysis_jobs", ["created_at"],
        postgresql_where=sa.text("status IN ('queued', 'running')"),
    )


def downgrade() -> None:
    op.drop_index("analysis_jobs_waiting", table_name="analysis_jobs")
    op.drop_table("analysis_jobs")
