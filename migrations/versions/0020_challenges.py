"""Challenges: one player invites another to a two-entrant race (service/challenges).

- ``players.accept_challenges``: whom the player accepts challenges from, ``everyone`` (the
  default for every existing player), ``humans`` (no bots) or ``nobody``.
- ``challenges``: who challenged whom, the race asked for (ruleset, rated, time limit), its status
  (``pending``, then ``accepted`` with the race it started, ``declined`` or ``cancelled``; a
  pending challenge past ``expires_at`` is expired, whatever its stored status says), and times.
  The race an accepted challenge starts has the challenge's id. Two partial indexes serve the
  pending challenges of a player, each way, newest first.

Why the previous release keeps working: it never reads the new column or table, and the column
has a default.

Revision ID: 0020
Revises: 0019
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("players", sa.Column("accept_challenges", sa.Text(), nullable=False, server_default="everyone"))
    op.create_check_constraint("players_accept_challenges_check", "players",
                               "accept_challenges IN ('everyone', 'humans', 'nobody')")
    op.create_table(
        "challenges",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column("from_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("to_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("ruleset_id", sa.Text(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("time_limit_seconds", sa.Integer(), nullable=True),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("race_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("races.id"), nullable=True),
        sa.CheckConstraint("status IN ('pending', 'accepted', 'declined', 'cancelled')",
                           name="challenges_status_check"),
        sa.CheckConstraint("from_id <> to_id", name="challenges_not_oneself_check"),
    )
    op.create_index("challenges_pending_from", "challenges", ["from_id", "created_at", "id"],
                    postgresql_where=sa.text("status = 'pending'"))
    op.create_index("challenges_pending_to", "challenges", ["to_id", "created_at", "id"],
                    postgresql_where=sa.text("status = 'pending'"))


def downgrade() -> None:
    op.drop_index("challenges_pending_to", table_name="challenges")
    op.drop_index("challenges_pending_from", table_name="challenges")
    op.drop_table("challenges")
    op.drop_constraint("players_accept_challenges_check", "players")
    op.drop_column("players", "accept_challenges")
