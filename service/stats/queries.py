"""The stats and the daily leaderboard as the API reads them (from the projection tables that
``service.stats.projections`` keeps): ``Stats``, the service the controllers call."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from psycopg_pool import AsyncConnectionPool

from ..store.replica import ReadPool

DEAL_SOURCES = ("seed", "deck", "pool", "daily", "race")  # race: the games of races (races branch)


def _rate(played: int, won: int) -> float | None:
    return round(won / played, 4) if played else None


@dataclass(frozen=True, slots=True)
class Figures:
    """Finished games and how they went: played, won, the win rate (won / played, 4 places; None
    before the first), the fewest moves and fastest seconds of an unassisted win, and undos."""

    played: int
    won: int
    win_rate: float | None
    fewest_moves: int | None
    fastest_seconds: float | None
    undos: int


def _figures(row: Sequence[Any] | None) -> tuple[int, int, float | None, int | None, float | None, int]:
    """``Figures``' fields from (played, won, fewest moves, fastest seconds, undos); none: no finished game."""
    played, won, fewest, fastest, undos = row if row else (0, 0, None, None, 0)
    return played, won, _rate(played, won), fewest, fastest, undos


@dataclass(frozen=True, slots=True)
class RulesetFigures(Figures):
    """A player's figures under one ruleset (all its versions), with their winning streaks."""

    ruleset: str
    current_streak: int
    best_streak: int


@dataclass(frozen=True, slots=True)
class RulesetTotal(Figures):
    """Every player's figures under one ruleset: how many players, and the longest streaks."""

    ruleset: str
    players: int
    current_streak: int
    best_streak: int


@dataclass(frozen=True, slots=True)
class SourceTotal(Figures):
    """Every player's figures over the games of one deal source, all rulesets together."""

    source: str


@dataclass(frozen=True, slots=True)
class Totals:
    rulesets: list[RulesetTotal]
    sources: list[SourceTotal]


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """A player's entry of a daily leaderboard: their first game of the date's deal, once ended."""

    rank: int | None
    player: uuid.UUID
    name: str
    game: uuid.UUID
    status: str
    assisted: bool
    unranked: str | None
    moves: int
    seconds: float
    finished_at: datetime


_OVERALL = """
SELECT source, ruleset_id, sum(played)::int, sum(won)::int, min(fewest_moves), min(fastest_seconds), sum(undos)::bigint
FROM source_stats GROUP BY GROUPING SETS ((ruleset_id), (source))
"""
_PLAYERS = """
SELECT ruleset_id, count(*)::int, max(current_streak), max(best_streak) FROM player_stats GROUP BY ruleset_id
"""


_BOARD = """
SELECT l.player_id, p.name, l.game_id, l.status, l.assisted, l.unranked, l.moves, l.seconds, l.finished_at
FROM daily_leaderboard l JOIN players p ON p.id = l.player_id
WHERE l.day = %s
ORDER BY l.unranked IS NOT NULL,
         CASE WHEN l.unranked IS NULL THEN l.moves END, CASE WHEN l.unranked IS NULL THEN l.seconds END,
         l.finished_at, l.game_id
LIMIT %s
"""


class Stats:
    """Reads of the stats projections, on the service's connection pool."""

    def __init__(self, pool: AsyncConnectionPool | ReadPool) -> None:
        self.pool = pool

    async def player_stats(self, player_id: uuid.UUID, ruleset_ids: Sequence[str]) -> list[RulesetFigures] | None:
        """Per ruleset (every one in ``ruleset_ids``, zeros where none finished); None: no such player."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT p.id, s.ruleset_id, s.played, s.won, s.fewest_moves, s.fastest_seconds, s.undos,"
                " s.current_streak, s.best_streak FROM players p LEFT JOIN player_stats s ON s.player_id = p.id"
                " WHERE p.id = %s",
                (player_id,),
            )
            rows = await cursor.fetchall()
        if not rows:
            return None
        found = {row[1]: row for row in rows if row[1] is not None}
        result = []
        for ruleset_id in list(ruleset_ids) + sorted(set(found) - set(ruleset_ids)):
            row = found.get(ruleset_id)
            current, best = row[7:] if row else (0, 0)
            figures = _figures(row[2:7] if row else None)
            result.append(RulesetFigures(*figures, ruleset=ruleset_id, current_streak=current, best_streak=best))
        return result

    async def overall_stats(self, ruleset_ids: Sequence[str]) -> Totals:
        async with self.pool.connection() as conn:
            totals = await (await conn.execute(_OVERALL)).fetchall()
            per_player = await (await conn.execute(_PLAYERS)).fetchall()
        by_ruleset = {row[1]: row[2:] for row in totals if row[1] is not None}
        by_source = {row[0]: row[2:] for row in totals if row[0] is not None}
        streaks = {row[0]: row[1:] for row in per_player}
        rulesets = []
        for ruleset_id in list(ruleset_ids) + sorted(set(by_ruleset) - set(ruleset_ids)):
            players, current, best = streaks.get(ruleset_id, (0, 0, 0))
            figures = _figures(by_ruleset.get(ruleset_id))
            rulesets.append(
                RulesetTotal(*figures, ruleset=ruleset_id, players=players, current_streak=current, best_streak=best)
            )
        sources = [SourceTotal(*_figures(by_source.get(name)), source=name) for name in DEAL_SOURCES]
        return Totals(rulesets, sources)

    async def deal_figures(self, ruleset_id: str, number: int) -> tuple[int, int]:
        """(plays, wins) of a pool deal, over pool and daily games."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT plays, wins FROM deal_stats WHERE ruleset_id = %s AND pool_number = %s", (ruleset_id, number)
            )
            row = await cursor.fetchone()
        return (row[0], row[1]) if row else (0, 0)

    async def daily_figures(self, day: date) -> tuple[int, int]:
        """(plays, wins) of the daily games of that date."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT plays, wins FROM daily_stats WHERE day = %s", (day,))
            row = await cursor.fetchone()
        return (row[0], row[1]) if row else (0, 0)

    async def leaderboard(self, day: date, limit: int) -> list[BoardEntry]:
        """One entry per player (their first game of the date's deal, once ended): the ranked ones
        by moves, then seconds, then who finished first; then the unranked ones, as they finished."""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(_BOARD, (day, limit))).fetchall()
        ranks = iter(range(1, len(rows) + 1))
        return [
            BoardEntry(None if unranked else next(ranks), player, name, game, status, assisted, unranked, moves,
                       seconds, finished_at)
            for player, name, game, status, assisted, unranked, moves, seconds, finished_at in rows
        ]
