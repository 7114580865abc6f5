"""Daily deals derived from the date and the server's secret, stored; one leaderboard entry per player.

* ``daily_deals``: a date's deal, stored by the first server process that proved it winnable (its
  ruleset and version, which HMAC candidate it was, the secret-derived seed, the deck, the
  solver's winning line and its length, when it was verified). Never shown but for the date,
  the ruleset, the line length and the time.
* ``games_daily_entry_key``: at most one entry (a daily game that is not practice) per player and
  date: two first games created at once cannot both be first.
* ``daily_leaderboard`` becomes one row per player's entry (won or not, ranked or not, and why
  not). Its rows and ``daily_stats`` are emptied: they counted the daily games of before, which
  were pool deals (the API now shows them as such); ``source_stats`` moves their figures from
  ``daily`` to ``pool`` for the same reason. ``canfield projections rebuild`` computes the same.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_DAILY_ENTRY = "deal->>'source' = 'daily' AND deal->>'practice' = 'false'"


def upgrade() -> None:
    op.create_table(
        "daily_deals",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("ruleset_id", sa.Text(), nullable=False),
        sa.Column("ruleset_version", sa.Integer(), nullable=False),
        sa.Column("candidate", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("deck", postgresql.JSONB(), nullable=False),
        sa.Column("line", sa.Text(), nullable=False),
        sa.Column("line_length", sa.Integer(), nullable=False),
        sa.Column("solver_states", sa.Integer(), nullable=False),
        sa.Column("verified_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("day", name="daily_deals_pkey"),
    )
    op.create_index(
        "games_daily_entry_key", "games", ["player_id", sa.text("(deal->>'daily')")], unique=True,
        postgresql_where=sa.text(_DAILY_ENTRY),
    )
    op.execute("DELETE FROM daily_leaderboard")
    op.execute("DELETE FROM daily_stats")
    op.execute(
        """
        INSERT INTO source_stats AS s (source, ruleset_id, played, won, fewest_moves, fastest_seconds, undos)
        SELECT 'pool', ruleset_id, played, won, fewest_moves, fastest_seconds, undos
        FROM source_stats WHERE source = 'daily'
        ON CONFLICT (source, ruleset_id) DO UPDATE SET
            played = s.played + EXCLUDED.played,
            won = s.won + EXCLUDED.won,
            fewest_moves = LEAST(s.fewest_moves, EXCLUDED.fewest_moves),
            fastest_seconds = LEAST(s.fastest_seconds, EXCLUDED.fastest_seconds),
            undos = s.undos + EXCLUDED.undos
        """
    )
    op.execute("DELETE FROM source_stats WHERE source = 'daily'")
    op.add_column("daily_leaderboard", sa.Column("status", sa.Text(), nullable=False))
    op.add_column("daily_leaderboard", sa.Column("assisted", sa.Boolean(), nullable=False))
    op.add_column("daily_leaderboard", sa.Column("unranked", sa.Text(), nullable=True))
    op.create_unique_constraint("daily_leaderboard_day_player_key", "daily_leaderboard", ["day", "player_id"])


def downgrade() -> None:
    op.drop_constraint("daily_leaderboard_day_player_key", "daily_leaderboard", type_="unique")
    op.execute("DELETE FROM daily_leaderboard")  # entries of games the old code cannot verify
    op.drop_column("daily_leaderboard", "unranked")
    op.drop_column("daily_leaderboard", "assisted")
    op.drop_column("daily_leaderboard", "status")
    op.drop_index("games_daily_entry_key", table_name="games")
    op.drop_table("daily_deals")
