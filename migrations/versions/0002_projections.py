"""Projections: per-player, per-source, per-deal and per-day stats, and the daily leaderboard.

Kept in the transaction of the events that change them (service/stats/projections.py); rebuilt from
the event log alone by `canfield projections rebuild`.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "player_stats",
        sa.Column("player_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("ruleset_id", sa.Text(), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("won", sa.Integer(), nullable=False),
        sa.Column("current_streak", sa.Integer(), nullable=False),
        sa.Column("best_streak", sa.Integer(), nullable=False),
        sa.Column("fewest_moves", sa.Integer(), nullable=True),
        sa.Column("fastest_seconds", postgresql.DOUBLE_PRECISION(), nullable=True),
        sa.Column("undos", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", "ruleset_id", name="player_stats_pkey"),
    )
    op.create_table(
        "source_stats",
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("ruleset_id", sa.Text(), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("won", sa.Integer(), nullable=False),
        sa.Column("fewest_moves", sa.Integer(), nullable=True),
        sa.Column("fastest_seconds", postgresql.DOUBLE_PRECISION(), nullable=True),
        sa.Column("undos", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("source", "ruleset_id", name="source_stats_pkey"),
    )
    op.create_table(
        "deal_stats",
        sa.Column("ruleset_id", sa.Text(), nullable=False),
        sa.Column("pool_number", sa.Integer(), nullable=False),
        sa.Column("plays", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("ruleset_id", "pool_number", name="deal_stats_pkey"),
    )
    op.create_table(
        "daily_stats",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("plays", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("day", name="daily_stats_pkey"),
    )
    op.create_table(
        "daily_leaderboard",
        sa.Column("game_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("player_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("seconds", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("verified_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("game_id", name="daily_leaderboard_pkey"),
    )
    op.create_index("ix_daily_leaderboard_rank", "daily_leaderboard", ["day", "moves", "seconds"])


def downgrade() -> None:
    op.drop_index("ix_daily_leaderboard_rank", table_name="daily_leaderboard")
    op.drop_table("daily_leaderboard")
    op.drop_table("daily_stats")
    op.drop_table("deal_stats")
    op.drop_table("source_stats")
    op.drop_table("player_stats")
