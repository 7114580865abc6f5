"""Indexes for the reads that grow with history, built online.

Each list the API pages through is read in the order of an index, from the page's cursor on, so
a page costs the same with a thousand games stored as with ten million (docs/scaling.md,
"History at scale"):

- a player's games, newest first, and their export, oldest first: ``games (player_id,
  started_at, id)``, and the games in progress alone (``?status=playing``) by a partial index;
  these replace the index on ``player_id`` alone, which every query it served can use them for;
- whether a player dealt a practice game of a daily deal (read when their entry ends):
  ``games (player_id, deal->>'daily')`` for daily games;
- the daily leaderboard: its ranked entries in rank order and its unranked ones as they finished,
  a partial index each (the ranked one replaces ``(day, moves, seconds)``), and a player's own
  entries for their export;
- the open-races lobby, newest first: the open races alone, by ``(created_at, id)``;
- a player's race entries (their stats and export) in the order they joined (replaces the index
  on ``player_id`` alone);
- the longest streaks of ``GET /stats``: ``player_stats`` by ruleset and streak;
- the games in progress by their last move, oldest first: the idle ones the abandon job ends
  (service.games.abandon).

``CREATE INDEX CONCURRENTLY`` builds an index without blocking writes; it cannot run in a
transaction, so each runs in an autocommit block. A build that failed halfway leaves an invalid
index behind, so each is dropped first (``IF EXISTS``) and the migration can simply be run again.

Revision ID: 0010
Revises: 0009
"""

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

NEW_INDEXES = {
    "games_player_started": "games (player_id, started_at, id)",
    "games_player_playing": "games (player_id, started_at, id) WHERE finished_at IS NULL",
    "games_player_daily": "games (player_id, (deal->>'daily')) WHERE deal->>'source' = 'daily'",
    "daily_leaderboard_ranked": "daily_leaderboard (day, moves, seconds, finished_at, game_id) WHERE unranked IS NULL",
    "daily_leaderboard_unranked": "daily_leaderboard (day, finished_at, game_id) WHERE unranked IS NOT NULL",
    "daily_leaderboard_player": "daily_leaderboard (player_id, day)",
    "races_open": "races (created_at, id) WHERE status = 'open'",
    "race_entrants_player": "race_entrants (player_id, joined_at, race_id)",
    "player_stats_current_streak": "player_stats (ruleset_id, current_streak)",
    "player_stats_best_streak": "player_stats (ruleset_id, best_streak)",
    "games_idle": "games (updated_at) WHERE finished_at IS NULL",
}
"""The indexes this migration adds: name -> what it indexes."""

REPLACED_INDEXES = {
    "ix_games_player_id": "games (player_id)",
    "ix_daily_leaderboard_rank": "daily_leaderboard (day, moves, seconds)",
    "ix_race_entrants_player_id": "race_entrants (player_id)",
}
"""The indexes the new ones make redundant: dropped by the upgrade, made again by the downgrade."""


def _build(indexes: dict[str, str]) -> None:
    for name, definition in indexes.items():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        op.execute(f"CREATE INDEX CONCURRENTLY {name} ON {definition}")


def _drop(indexes: dict[str, str]) -> None:
    for name in indexes:
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")


def upgrade() -> None:
    with op.get_context().autocommit_block():
        _build(NEW_INDEXES)
        _drop(REPLACED_INDEXES)


def downgrade() -> None:
    with op.get_context().autocommit_block():
        _build(REPLACED_INDEXES)
        _drop(NEW_INDEXES)
