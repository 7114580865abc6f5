"""Races: players racing on one deck (service/races/races.py).

``races`` holds a race (its deck, who made it, its status and timing) and ``race_entrants`` who
entered it, the game each was dealt at the start, and the standing frozen when the race finished.
Revision 0004 follows 0002 for now: another branch adds 0003, and the two are chained on merge.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "races",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column("creator_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("ruleset_id", sa.Text(), nullable=False),
        sa.Column("ruleset_version", sa.Integer(), nullable=False),
        sa.Column("deal", postgresql.JSONB(), nullable=False),
        sa.Column("deck", postgresql.JSONB(), nullable=False),
        sa.Column("max_entrants", sa.Integer(), nullable=False),
        sa.Column("time_limit_seconds", sa.Integer(), nullable=True),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("status IN ('open', 'running', 'finished')", name="races_status_check"),
        sa.CheckConstraint("max_entrants BETWEEN 2 AND 8", name="races_max_entrants_check"),
    )
    op.create_table(
        "race_entrants",
        sa.Column("race_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("races.id"), nullable=False),
        sa.Column("player_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("game_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("games.id"), nullable=True),
        sa.Column("standing", postgresql.JSONB(), nullable=True),
        sa.Column("place", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("race_id", "player_id", name="race_entrants_pkey"),
        sa.UniqueConstraint("race_id", "seat", name="race_entrants_race_id_seat_key"),
        sa.UniqueConstraint("game_id", name="race_entrants_game_id_key"),
    )
    op.create_index("ix_race_entrants_player_id", "race_entrants", ["player_id"])


def downgrade() -> None:
    op.drop_index("ix_race_entrants_player_id", table_name="race_entrants")
    op.drop_table("race_entrants")
    op.drop_table("races")
