"""The stats and the daily leaderboard as the API reads them (from the projection tables that
``service.stats.projections`` keeps): ``Stats``, the service the controllers call."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from psycopg import AsyncCursor
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from .. import cursors
from ..errors import CursorInvalid
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
    bot: bool = False


_OVERALL = """
SELECT source, ruleset_id, sum(played)::int, sum(won)::int, min(fewest_moves), min(fastest_seconds), sum(undos)::bigint
FROM source_stats GROUP BY GROUPING SETS ((ruleset_id), (source))
"""
# Per ruleset with finished games: its players, counted as they come (ruleset_stats, migration
# 0011), and its longest streaks, each the last entry of a streak index (migration 0010): a row per
# ruleset and an index descent per maximum, whatever the number of players.
_PLAYERS = """
SELECT r.ruleset_id, r.players,
       (SELECT max(s.current_streak) FROM player_stats s WHERE s.ruleset_id = r.ruleset_id),
       (SELECT max(s.best_streak) FROM player_stats s WHERE s.ruleset_id = r.ruleset_id)
FROM ruleset_stats r
"""


_BOARD_COLUMNS = (
    "l.player_id, p.name, l.game_id, l.status, l.assisted, l.unranked, l.moves, l.seconds, l.finished_at, p.bot"
)
_RANK_KEY = "(l.moves, l.seconds, l.finished_at, l.game_id)"
_FINISH_KEY = "(l.finished_at, l.game_id)"
# The board's two parts, each read in the order of its partial index (migration 0010) from the
# cursor on: the ranked entries by moves, seconds, who finished first (then the game id, so the
# order is total), then the unranked ones as they finished. The ranked rows come with the date's
# daily wins (one row of daily_stats), read in the same statement, so in the same snapshot.
_RANKED = f"""
SELECT {_BOARD_COLUMNS}, coalesce((SELECT y.wins FROM daily_stats y WHERE y.day = %(day)s), 0){{before}}
FROM daily_leaderboard l JOIN players p ON p.id = l.player_id
WHERE l.day = %(day)s AND l.unranked IS NULL{{after}}
ORDER BY l.moves, l.seconds, l.finished_at, l.game_id LIMIT %(limit)s
"""
_UNRANKED = f"""
SELECT {_BOARD_COLUMNS}
FROM daily_leaderboard l JOIN players p ON p.id = l.player_id
WHERE l.day = %(day)s AND l.unranked IS NOT NULL{{after}}
ORDER BY l.finished_at, l.game_id LIMIT %(limit)s
"""
# A ranked entry's rank is one more than the count of the entries better than it: the ranked ones
# before it in that order (counted in the ranked index, never read). A later page counts them only
# when its cursor carries no rank that still stands (``BoardKey``).
_BETTER = (
    ", (SELECT count(*) FROM daily_leaderboard b WHERE b.day = %(day)s AND b.unranked IS NULL"
    " AND (b.moves, b.seconds, b.finished_at, b.game_id) <= (%(moves)s, %(seconds)s, %(finished)s, %(game)s))::int"
)
_BOARD_CURSOR = "leaderboard"
_BOARD_REFUSAL = "'cursor' is not a cursor of this list: pass the 'next' of this leaderboard's previous page"


@dataclass(frozen=True, slots=True)
class BoardKey:
    """Where a leaderboard page ends: the last entry's sort key (``moves`` and ``seconds`` None
    for an unranked entry), on the board of ``day``; for a ranked entry also its ``rank`` as read
    when the date's daily wins (``daily_stats``) were ``wins``. A ranked entry is only ever added
    by a win, in the transaction that counts it, so while that count is the same, so is every rank
    up to this one, and the next page's ranks run on from it; once it has changed, they are counted
    again, as they are after a key without a rank (a cursor of the key alone)."""

    day: date
    moves: int | None
    seconds: float | None
    finished_at: datetime
    game: uuid.UUID
    rank: int | None = None
    wins: int | None = None

    @property
    def ranked(self) -> bool:
        return self.moves is not None

    def cursor(self, secret: str) -> str:
        """The ``nextAfter`` of this key. One with a rank is signed with ``secret`` (the deal
        secret), so no client can make the next page show other ranks; should it not fit the
        cursor's length, the rank is left out and counted."""
        if self.moves is None:
            return cursors.encode(_BOARD_CURSOR, self.day, "u", self.finished_at, self.game)
        key = (self.day, "r", self.moves, self.seconds, self.finished_at, self.game)
        plain = cursors.encode(_BOARD_CURSOR, *key)
        if self.rank is None or self.wins is None:
            return plain
        signed = cursors.encode(_BOARD_CURSOR, *key, self.rank, self.wins, secret=secret)
        return signed if len(signed) <= cursors.LENGTH else plain


def board_key(cursor: str, day: date, secret: str) -> BoardKey:
    """The key a leaderboard cursor holds; a 400 for anything but a cursor of ``day``'s board, or
    a signed one (with a rank) that ``secret`` did not sign as it is."""
    fields = cursors.decode(_BOARD_CURSOR, cursor, _BOARD_REFUSAL)
    if len(fields) == 9:  # a key with its rank and the wins then: signed
        fields = cursors.signed(secret, _BOARD_CURSOR, fields, _BOARD_REFUSAL)
    elif len(fields) not in (4, 6):
        raise CursorInvalid(_BOARD_REFUSAL)
    if fields[1] != ("u" if len(fields) == 4 else "r"):
        raise CursorInvalid(_BOARD_REFUSAL)
    if fields[0] != day.isoformat():
        raise CursorInvalid(
            "'cursor' is not a cursor of this list but of another date's leaderboard: pass the 'next' of this"
            " date's previous page"
        )
    if len(fields) == 4:
        return BoardKey(day, None, None, cursors.instant(fields[2], _BOARD_REFUSAL),
                        cursors.identifier(fields[3], _BOARD_REFUSAL))
    moves, seconds = cursors.whole(fields[2], _BOARD_REFUSAL), cursors.real(fields[3], _BOARD_REFUSAL)
    finished = cursors.instant(fields[4], _BOARD_REFUSAL)
    game = cursors.identifier(fields[5], _BOARD_REFUSAL)
    if len(fields) == 6:
        return BoardKey(day, moves, seconds, finished, game)
    rank, wins = (cursors.whole(text, _BOARD_REFUSAL) for text in fields[6:])
    return BoardKey(day, moves, seconds, finished, game, rank, wins)


@dataclass(frozen=True, slots=True)
class BoardPage:
    entries: list[BoardEntry]
    next: BoardKey | None  # where the next page starts; None: this is the last


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
        streaks = {row[0]: row[1:] for row in per_player if row[1]}
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

    async def leaderboard(self, day: date, limit: int, after: BoardKey | None = None) -> BoardPage:
        """A page of the board: one entry per player (their first game of the date's deal, once
        ended), after ``after``: the ranked ones by moves, then seconds, then who finished first;
        then the unranked ones, as they finished. Each rank is one more than the count of the
        entries better than it, so a rank is the same on every page: a later page's ranks run on
        from the rank its cursor carries while that still stands (``BoardKey``), else from a count
        of the better entries."""
        async with self.pool.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            rows: list[tuple[Any, ...]] = []
            better, wins = 0, 0
            if after is None or after.ranked:
                counted = after is not None and after.rank is None  # a cursor without a rank: count
                rows = await _ranked_rows(cursor, day, limit + 1, after, counted)
                if after is not None and not counted and rows and rows[0][10] != after.wins:
                    counted = True  # the board has changed since the cursor's rank was read: count
                    rows = await _ranked_rows(cursor, day, limit + 1, after, counted)
                if rows:
                    wins = rows[0][10]
                    if after is not None:
                        better = rows[0][11] if counted else after.rank or 0
                    rows = [row[:10] for row in rows]
            if len(rows) <= limit:
                unranked_after = after if after is not None and not after.ranked else None
                await cursor.execute(_board_query(_UNRANKED, unranked_after),
                                     _board_parameters(day, limit + 1 - len(rows), unranked_after))
                rows += await cursor.fetchall()
        ranks = iter(range(better + 1, better + len(rows) + 1))
        entries = [
            BoardEntry(None if unranked else next(ranks), player, name, game, status, assisted, unranked, moves,
                       seconds, finished_at, bot)
            for player, name, game, status, assisted, unranked, moves, seconds, finished_at, bot in rows[:limit]
        ]
        return BoardPage(entries, _key_of(day, entries[-1], wins) if len(rows) > limit else None)


async def _ranked_rows(
    cursor: AsyncCursor[tuple[Any, ...]], day: date, limit: int, after: BoardKey | None, counted: bool
) -> list[tuple[Any, ...]]:
    """The ranked part of a page: each row the entry's columns, the date's daily wins and, if
    ``counted``, the count of the entries better than ``after``'s."""
    await cursor.execute(_board_query(_RANKED, after, better=counted), _board_parameters(day, limit, after))
    return list(await cursor.fetchall())


def _board_query(template: str, after: BoardKey | None, better: bool = False) -> str:
    if after is None:
        return template.format(after="", before="")
    key = f" AND {_RANK_KEY} > (%(moves)s, %(seconds)s, %(finished)s, %(game)s)" if after.ranked else (
        f" AND {_FINISH_KEY} > (%(finished)s, %(game)s)"
    )
    return template.format(after=key, before=_BETTER if better else "")


def _board_parameters(day: date, limit: int, after: BoardKey | None) -> dict[str, Any]:
    parameters: dict[str, Any] = {"day": day, "limit": limit}
    if after is not None:
        parameters |= {"moves": after.moves, "seconds": after.seconds, "finished": after.finished_at,
                       "game": after.game}
    return parameters


def _key_of(day: date, entry: BoardEntry, wins: int) -> BoardKey:
    if entry.unranked is not None:
        return BoardKey(day, None, None, entry.finished_at, entry.game)
    return BoardKey(day, entry.moves, entry.seconds, entry.finished_at, entry.game, entry.rank, wins)
