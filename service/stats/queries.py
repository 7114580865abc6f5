"""The stats and the daily leaderboard as the API reads them (from the projection tables that
``service.stats.projections`` keeps): ``Stats``, the service the controllers call."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import date
from typing import Any

import msgspec
from psycopg_pool import AsyncConnectionPool

from ..http.schemas import GlobalStats, LeaderboardEntry, RulesetStats

JSON = dict[str, Any]

DEAL_SOURCES = ("seed", "deck", "pool", "daily", "race")  # race: the games of races (races branch)


def _rate(played: int, won: int) -> float | None:
    return round(won / played, 4) if played else None


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

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def player_stats(self, player_id: uuid.UUID, ruleset_ids: Sequence[str]) -> list[RulesetStats] | None:
        """Per ruleset (every one in ``ruleset_ids``, zeros where none finished); None: no such player."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT p.id, s.ruleset_id, s.played, s.won, s.current_streak, s.best_streak, s.fewest_moves,"
                " s.fastest_seconds, s.undos FROM players p LEFT JOIN player_stats s ON s.player_id = p.id"
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
            played, won, current, best, fewest, fastest, undos = row[2:] if row else (0, 0, 0, 0, None, None, 0)
            result.append({
                "ruleset": ruleset_id, "played": played, "won": won, "winRate": _rate(played, won),
                "currentStreak": current, "bestStreak": best, "fewestMoves": fewest, "fastestSeconds": fastest,
                "undos": undos,
            })
        return msgspec.convert(result, list[RulesetStats])

    async def overall_stats(self, ruleset_ids: Sequence[str]) -> GlobalStats:
        async with self.pool.connection() as conn:
            totals = await (await conn.execute(_OVERALL)).fetchall()
            per_player = await (await conn.execute(_PLAYERS)).fetchall()
        by_ruleset = {row[1]: row for row in totals if row[1] is not None}
        by_source = {row[0]: row for row in totals if row[0] is not None}
        streaks = {row[0]: row[1:] for row in per_player}

        def figures(row: Sequence[Any] | None) -> JSON:
            played, won, fewest, fastest, undos = row[2:] if row else (0, 0, None, None, 0)
            return {"played": played, "won": won, "winRate": _rate(played, won), "fewestMoves": fewest,
                    "fastestSeconds": fastest, "undos": undos}

        rulesets = []
        for ruleset_id in list(ruleset_ids) + sorted(set(by_ruleset) - set(ruleset_ids)):
            players, current, best = streaks.get(ruleset_id, (0, 0, 0))
            rulesets.append({"ruleset": ruleset_id, "players": players, **figures(by_ruleset.get(ruleset_id)),
                             "currentStreak": current, "bestStreak": best})
        sources = [{"source": name, **figures(by_source.get(name))} for name in DEAL_SOURCES]
        return msgspec.convert({"rulesets": rulesets, "sources": sources}, GlobalStats)

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

    async def leaderboard(self, day: date, limit: int) -> list[LeaderboardEntry]:
        """One entry per player (their first game of the date's deal, once ended): the ranked ones
        by moves, then seconds, then who finished first; then the unranked ones, as they finished."""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(_BOARD, (day, limit))).fetchall()
        ranks = iter(range(1, len(rows) + 1))
        entries = [
            {"rank": None if unranked else next(ranks), "player": str(player), "name": name, "game": str(game),
             "status": status, "assisted": assisted, "unranked": unranked, "moves": moves, "seconds": seconds,
             "finishedAt": finished_at}
            for player, name, game, status, assisted, unranked, moves, seconds, finished_at in rows
        ]
        return msgspec.convert(entries, list[LeaderboardEntry])
