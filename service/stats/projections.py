"""Stats and the daily leaderboard: projections of the event log.

Incremental: ``game_started`` and ``game_finished`` return the SQL a game's creation or its
game-ending move runs *in the same transaction* as its events (``EventStore.create_game`` /
``EventStore.append``). Only games that end change the stats, so a move that does not end its
game stays one statement; a pool or daily deal's ``plays`` go up when its game is created.

Rebuild: ``rebuild_projections(url)`` empties the projection tables and recomputes them from
the event log alone (each game's events replayed with ``domain.replay``; the player is the
stream's owner in ``games``), in one transaction. It folds in Python what the incremental SQL
upserts, so a test comparing the two checks one against the other.

The daily leaderboard has one row per player and date: their *entry* (the first game of that
date's deal, dealt on that date; service.deals.daily), once it has ended. It is ranked only if it is
an unassisted win whose *stored* event log has been replayed through the rules engine: every
move re-decided by ``domain.decide`` from the dealt table, and each decision must produce
exactly the stored events (type and data), ending in a win with no solver hint, on the deck
stored for that date in ``daily_deals``, won before the date was over. ``evolve`` alone would
accept any edited event as a fact; ``decide`` does not. Otherwise the row says why it is not
ranked (``UNRANKED``). Neither path needs ``DAILY_SECRET``: both read the stored daily deals.

Figures (see README "Stats and leaderboard"):

* ``played`` counts finished games (won, stalled, resigned); a game in progress is not played yet.
* ``current_streak`` / ``best_streak`` follow the order in which games finished.
* ``fewest_moves`` / ``fastest_seconds`` come from unassisted wins only (no solver hint);
  seconds run from the deal to the winning move. ``moves`` is the game's ``moveCount``.
* ``undos`` sums ``undoCount`` over finished games.
* ``deal_stats.plays`` counts games started on a pool deal, ``wins`` those won; ``daily_stats``
  the same per daily date (entries and practice games alike).
* A deal source is read as the API shows it (``daily.public_source``): the daily games of
  before migration 0003 were pool deals and count as such.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from domain import (
    Status,
    replay,
)
from domain.cards import codes
from domain.codec import event_from_data
from domain.events import (
    GameDealt,
)
from domain.verify import Unverified, redecide

from ..deals.daily import DailyDeal, daily_day_of, is_entry, is_over, public_source
from ..deals.daily_deals import read_all_deals, read_deal
from ..store.event_store import OnCommit

log = logging.getLogger("canfield")

JSON = dict[str, Any]

PROJECTION_TABLES = ("player_stats", "source_stats", "deal_stats", "daily_stats", "daily_leaderboard")
DEAL_SOURCES = ("seed", "deck", "pool", "daily", "race")  # race: the games of races (races branch)


# ---------------------------------------------------------------- what a finished game contributes


@dataclass(frozen=True, slots=True)
class Finish:
    """A game that has just ended, as the stats see it."""

    game_id: uuid.UUID
    player_id: uuid.UUID
    ruleset_id: str
    deal: Mapping[str, Any]  # the deal source: {"source": "seed", "seed": 7}, {"source": "daily", ...}
    status: str  # won, stalled or resigned
    moves: int
    undos: int
    assisted: bool
    started_at: datetime
    finished_at: datetime

    @property
    def won(self) -> bool:
        return self.status == Status.WON.value

    @property
    def seconds(self) -> float:
        return (self.finished_at - self.started_at).total_seconds()

    @property
    def record(self) -> bool:
        """Whether it may set a fewest-moves or fastest record: an unassisted win."""
        return self.won and not self.assisted


def counted(deal: Mapping[str, Any]) -> bool:
    """Whether a game counts in the stats at all: lesson games never do (API.md, Lessons)."""
    return deal.get("source") != "lesson"


def pool_number_of(deal: Mapping[str, Any]) -> int | None:
    """The pool deal a game was dealt from, if any (``deal`` as ``public_source`` shows it)."""
    if deal.get("source") == "pool" and isinstance(deal.get("pool"), int):
        number: int = deal["pool"]
        return number
    return None


# ---------------------------------------------------------------- incremental (in the events' transaction)

_STARTED = """
WITH deal AS (
    INSERT INTO deal_stats AS d (ruleset_id, pool_number, plays, wins)
    SELECT %(ruleset)s::text, %(pool)s::int, 1, 0 WHERE %(pool)s::int IS NOT NULL
    ON CONFLICT (ruleset_id, pool_number) DO UPDATE SET plays = d.plays + 1
)
INSERT INTO daily_stats AS y (day, plays, wins)
SELECT %(day)s::date, 1, 0 WHERE %(day)s::date IS NOT NULL
ON CONFLICT (day) DO UPDATE SET plays = y.plays + 1
"""

# LEAST ignores NULLs, so a record column stays NULL until an unassisted win sets it.
_FINISHED = """
WITH player AS (
    INSERT INTO player_stats AS s (player_id, ruleset_id, played, won, current_streak, best_streak,
                                   fewest_moves, fastest_seconds, undos)
    VALUES (%(player)s::uuid, %(ruleset)s::text, 1, %(won)s::int, %(won)s::int, %(won)s::int,
            %(moves)s::int, %(seconds)s::float8, %(undos)s::bigint)
    ON CONFLICT (player_id, ruleset_id) DO UPDATE SET
        played = s.played + 1,
        won = s.won + EXCLUDED.won,
        current_streak = CASE WHEN EXCLUDED.won = 1 THEN s.current_streak + 1 ELSE 0 END,
        best_streak = GREATEST(s.best_streak, CASE WHEN EXCLUDED.won = 1 THEN s.current_streak + 1 ELSE 0 END),
        fewest_moves = LEAST(s.fewest_moves, EXCLUDED.fewest_moves),
        fastest_seconds = LEAST(s.fastest_seconds, EXCLUDED.fastest_seconds),
        undos = s.undos + EXCLUDED.undos
), source AS (
    INSERT INTO source_stats AS s (source, ruleset_id, played, won, fewest_moves, fastest_seconds, undos)
    VALUES (%(source)s::text, %(ruleset)s::text, 1, %(won)s::int, %(moves)s::int, %(seconds)s::float8, %(undos)s::bigint)
    ON CONFLICT (source, ruleset_id) DO UPDATE SET
        played = s.played + 1,
        won = s.won + EXCLUDED.won,
        fewest_moves = LEAST(s.fewest_moves, EXCLUDED.fewest_moves),
        fastest_seconds = LEAST(s.fastest_seconds, EXCLUDED.fastest_seconds),
        undos = s.undos + EXCLUDED.undos
), deal AS (
    INSERT INTO deal_stats AS d (ruleset_id, pool_number, plays, wins)
    SELECT %(ruleset)s::text, %(pool)s::int, 0, 1 WHERE %(pool)s::int IS NOT NULL AND %(won)s::int = 1
    ON CONFLICT (ruleset_id, pool_number) DO UPDATE SET wins = d.wins + 1
)
INSERT INTO daily_stats AS y (day, plays, wins)
SELECT %(day)s::date, 0, 1 WHERE %(day)s::date IS NOT NULL AND %(won)s::int = 1
ON CONFLICT (day) DO UPDATE SET wins = y.wins + 1
"""

_STORED_LOG = "SELECT version, type, data, recorded_at FROM events WHERE game_id = %s ORDER BY version"

_ENTRY_COLUMNS = "game_id, day, player_id, moves, seconds, finished_at, status, assisted, unranked"
_LIST = f"""
INSERT INTO daily_leaderboard ({_ENTRY_COLUMNS})
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING
"""


def game_started(ruleset_id: str, deal: Mapping[str, Any]) -> OnCommit | None:
    """What a new game adds to the projections (pool and daily deals' plays), or None."""
    source = public_source(deal)
    number, day = pool_number_of(source), daily_day_of(source)
    if number is None and day is None:
        return None
    params = {"ruleset": ruleset_id, "pool": number, "day": day}

    async def run(conn: AsyncConnection[Any]) -> None:
        await conn.execute(_STARTED, params)

    return run


def _finish_params(finish: Finish) -> JSON:
    source = public_source(finish.deal)
    return {
        "player": finish.player_id,
        "ruleset": finish.ruleset_id,
        "source": str(source.get("source", "seed")),
        "won": int(finish.won),
        "moves": finish.moves if finish.record else None,
        "seconds": finish.seconds if finish.record else None,
        "undos": finish.undos,
        "pool": pool_number_of(source),
        "day": daily_day_of(source),
    }


def game_finished(finish: Finish) -> OnCommit:
    """What a game-ending move adds to the projections, run in the move's transaction: the
    stats, and for a player's daily entry its leaderboard row (``leaderboard_entry``)."""
    params = _finish_params(finish)
    day = daily_day_of(finish.deal) if is_entry(finish.deal) else None

    async def run(conn: AsyncConnection[Any]) -> None:
        entry: tuple[Any, ...] | None = None
        if day is not None:  # verified before the stats rows are locked: they stay locked briefly
            rows: list[Any] = []
            stored: DailyDeal | None = None
            practiced = False
            if finish.record:  # only a win that could be ranked needs its log replayed
                practice = await conn.execute(_PRACTICED, (finish.player_id, day.isoformat(), finish.finished_at))
                practiced = bool((await practice.fetchone() or (False,))[0])
                rows = await (await conn.execute(_STORED_LOG, (finish.game_id,))).fetchall()  # with this move's
                stored = await read_deal(conn, day)
            entry = leaderboard_entry(finish, day, rows, stored, practiced)
        await conn.execute(_FINISHED, params)
        if entry is not None:
            await conn.execute(_LIST, entry)

    return run


# Whether the player dealt a practice game of the date before their entry ended.
_PRACTICED = """
SELECT EXISTS (SELECT 1 FROM games WHERE player_id = %s AND deal->>'source' = 'daily' AND deal->>'daily' = %s
               AND deal->>'practice' = 'true' AND started_at < %s)
"""

UNRANKED = ("not-won", "assisted", "practiced", "unverified", "late")
"""Why an entry has no rank: not a win (stalled, resigned); a solver hint was used; the player
dealt a practice game of the deal before the entry ended (and could try the deck out there); its
stored log does not replay through the rules to a win on the stored deal of that date; won after
the date was over (its deck was public by then)."""


def leaderboard_entry(
    finish: Finish, day: date, rows: Sequence[Sequence[Any]], stored: DailyDeal | None, practiced: bool
) -> tuple[Any, ...]:
    """The leaderboard row of a player's finished daily entry (``_ENTRY_COLUMNS``); ``rows`` is
    its stored log ``[(version, type, data, recorded_at), ...]`` and ``stored`` the date's deal,
    both needed only for an unassisted win, as is ``practiced``. Both paths (incremental,
    rebuild) decide here."""
    unranked: str | None = None
    moves, seconds, finished_at = finish.moves, finish.seconds, finish.finished_at
    if not finish.won:
        unranked = "not-won"
    elif finish.assisted:
        unranked = "assisted"
    elif practiced:
        unranked = "practiced"
    else:
        try:
            win = verify_daily_win(rows, stored)
        except Unverified as refusal:
            log.warning("daily win of game %s is not ranked: %s", finish.game_id, refusal.reason)
            unranked = "unverified"
        else:
            moves, seconds, finished_at = win.moves, win.seconds, win.finished_at
            if is_over(day, win.finished_at):
                unranked = "late"
    return (finish.game_id, day, finish.player_id, moves, seconds, finished_at, finish.status, finish.assisted, unranked)


# ---------------------------------------------------------------- verification by the rules engine


@dataclass(frozen=True, slots=True)
class VerifiedWin:
    day: date
    moves: int
    seconds: float
    finished_at: datetime


def verify_daily_win(rows: Sequence[Sequence[Any]], stored: DailyDeal | None) -> VerifiedWin:
    """Check a daily entry's stored log ``[(version, type, data, recorded_at), ...]`` (in version
    order): versions 1..n, dealt as an entry the deck ``stored`` for its date under its ruleset,
    every move re-decided by the rules, won, never assisted. Moves and seconds come from the log.
    Raises ``Unverified``."""
    if not rows:
        raise Unverified("the log is empty")
    if [row[0] for row in rows] != list(range(1, len(rows) + 1)):
        raise Unverified("the versions are not 1..n")
    deal_data = rows[0][2].get("deal") if isinstance(rows[0][2], Mapping) else None
    day = daily_day_of(deal_data) if isinstance(deal_data, Mapping) else None
    if deal_data is None or day is None or not is_entry(deal_data):
        raise Unverified("not a daily entry")
    if stored is None or stored.day != day:
        raise Unverified(f"no daily deal is stored for {day}")
    dealt = rows[0][2]
    if (
        rows[0][1] != "GameDealt"
        or dict(deal_data) != {"source": "daily", "daily": day.isoformat(), "practice": False}
        or dealt.get("ruleset") != {"id": stored.ruleset.id, "version": stored.ruleset.version}
        or dealt.get("deck") != codes(stored.deck)
    ):
        raise Unverified(f"not the deal of {day}")
    state = redecide([(row[1], row[2]) for row in rows])
    if state.status is not Status.WON:
        raise Unverified(f"the log replays to {state.status.value}, not a win")
    if state.assisted:
        raise Unverified("the game used a solver hint")
    return VerifiedWin(day, state.move_count, (rows[-1][3] - rows[0][3]).total_seconds(), rows[-1][3])


# ---------------------------------------------------------------- rebuild from the event log


@dataclass(slots=True)
class _Totals:
    played: int = 0
    won: int = 0
    current_streak: int = 0
    best_streak: int = 0
    fewest_moves: int | None = None
    fastest_seconds: float | None = None
    undos: int = 0

    def add(self, finish: Finish) -> None:
        self.played += 1
        self.won += finish.won
        self.current_streak = self.current_streak + 1 if finish.won else 0
        self.best_streak = max(self.best_streak, self.current_streak)
        if finish.record:
            self.fewest_moves = _least(self.fewest_moves, finish.moves)
            self.fastest_seconds = _least(self.fastest_seconds, finish.seconds)
        self.undos += finish.undos


def _least(current: Any, new: Any) -> Any:
    return new if current is None or new < current else current


@dataclass(slots=True)
class _Rebuild:
    dailies: dict[date, DailyDeal]  # the stored daily deals, by date
    games: int = 0
    unreadable: int = 0
    finishes: list[tuple[datetime, int, Finish, list[tuple[int, str, Any, datetime]]]] = field(default_factory=list)
    deals: dict[tuple[str, int], list[int]] = field(default_factory=dict)  # [plays, wins]
    days: dict[date, list[int]] = field(default_factory=dict)
    practice_started: dict[tuple[uuid.UUID, date], datetime] = field(default_factory=dict)  # the first, per player

    def game(
        self, game_id: uuid.UUID, player_id: uuid.UUID, deal: Mapping[str, Any], rows: list[tuple[int, int, str, Any, datetime]]
    ) -> None:
        """One stream: its games row's player and deal source (as the incremental path reads
        them) and its events as (position, version, type, data, recorded_at) in version order."""
        self.games += 1
        try:
            state = replay(event_from_data(kind, data) for _, _, kind, data, _ in rows)
            dealt = event_from_data(rows[0][2], rows[0][3])
        except Exception:  # a stream that does not even replay (hand-edited beyond repair)
            self.unreadable += 1
            log.warning("game %s: its event log does not replay; left out of the projections", game_id)
            return
        assert isinstance(dealt, GameDealt)
        source = public_source(deal)
        if not counted(source):
            return
        number = pool_number_of(source)
        day = daily_day_of(source)
        if number is not None:
            self.deals.setdefault((dealt.ruleset_id, number), [0, 0])[0] += 1
        if day is not None:
            self.days.setdefault(day, [0, 0])[0] += 1
            if source.get("practice") is True:
                key = (player_id, day)
                self.practice_started[key] = min(rows[0][4], self.practice_started.get(key, rows[0][4]))
        if state.playing:
            return
        finish = Finish(
            game_id, player_id, dealt.ruleset_id, deal, state.status.value, state.move_count,
            state.undo_count, state.assisted, rows[0][4], rows[-1][4],
        )
        log_rows = [(version, kind, data, recorded_at) for _, version, kind, data, recorded_at in rows]
        self.finishes.append((finish.finished_at, rows[-1][0], finish, log_rows))

    def write(self, conn: psycopg.Connection[Any]) -> dict[str, int]:
        players: dict[tuple[uuid.UUID, str], _Totals] = {}
        sources: dict[tuple[str, str], _Totals] = {}
        board: list[tuple[Any, ...]] = []
        for _, _, finish, log_rows in sorted(self.finishes, key=lambda item: (item[0], item[1])):
            source = public_source(finish.deal)
            players.setdefault((finish.player_id, finish.ruleset_id), _Totals()).add(finish)
            sources.setdefault((str(source.get("source", "seed")), finish.ruleset_id), _Totals()).add(finish)
            number, day = pool_number_of(source), daily_day_of(source)
            if finish.won and number is not None:
                self.deals.setdefault((finish.ruleset_id, number), [0, 0])[1] += 1
            if finish.won and day is not None:
                self.days.setdefault(day, [0, 0])[1] += 1
            if day is not None and is_entry(source):
                first_practice = self.practice_started.get((finish.player_id, day))
                practiced = first_practice is not None and first_practice < finish.finished_at
                board.append(leaderboard_entry(finish, day, log_rows, self.dailies.get(day), practiced))
        _copy(
            conn,
            "player_stats (player_id, ruleset_id, played, won, current_streak, best_streak, fewest_moves, fastest_seconds, undos)",
            ((p, r, t.played, t.won, t.current_streak, t.best_streak, t.fewest_moves, t.fastest_seconds, t.undos)
             for (p, r), t in players.items()),
        )
        _copy(
            conn,
            "source_stats (source, ruleset_id, played, won, fewest_moves, fastest_seconds, undos)",
            ((s, r, t.played, t.won, t.fewest_moves, t.fastest_seconds, t.undos) for (s, r), t in sources.items()),
        )
        _copy(conn, "deal_stats (ruleset_id, pool_number, plays, wins)", ((r, n, p, w) for (r, n), (p, w) in self.deals.items()))
        _copy(conn, "daily_stats (day, plays, wins)", ((d, p, w) for d, (p, w) in self.days.items()))
        _copy(conn, f"daily_leaderboard ({_ENTRY_COLUMNS})", board)
        return {
            "games": self.games,
            "finished": len(self.finishes),
            "unreadable": self.unreadable,
            "player_stats": len(players),
            "source_stats": len(sources),
            "deal_stats": len(self.deals),
            "daily_stats": len(self.days),
            "leaderboard": len(board),
            "ranked": sum(1 for row in board if row[-1] is None),
            "refused": sum(1 for row in board if row[-1] == "unverified"),
        }


def _copy(conn: psycopg.Connection[Any], target: str, rows: Iterable[Sequence[Any]]) -> None:
    with conn.cursor() as cursor, cursor.copy(f"COPY {target} FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


_ALL_EVENTS = """
SELECT e.game_id, g.player_id, g.deal, e.position, e.version, e.type, e.data, e.recorded_at
FROM events e JOIN games g ON g.id = e.game_id
ORDER BY e.game_id, e.version
"""

Stream = tuple[uuid.UUID, uuid.UUID, Mapping[str, Any], list[tuple[int, int, str, Any, datetime]]]


def _streams(cursor: psycopg.Cursor[Any]) -> Iterator[Stream]:
    current: Stream | None = None
    for game_id, player_id, deal, position, version, kind, data, recorded_at in cursor:
        if current is None or game_id != current[0]:
            if current is not None:
                yield current
            current = (game_id, player_id, deal, [])
        current[3].append((position, version, kind, data, recorded_at))
    if current is not None:
        yield current


def rebuild_projections(url: str) -> dict[str, Any]:
    """Empty every projection table and recompute it from the event log alone, in one transaction.

    The TRUNCATE comes first, so games that end meanwhile wait for the rebuild to commit and then
    add themselves to the rebuilt tables. Daily entries are checked against the stored daily
    deals (``daily_deals``, not a projection): no secret is needed.
    Returns counts: games, finished, unreadable (logs that do not replay), rows per table,
    leaderboard (entries), ranked, refused (unassisted daily wins whose log failed verification),
    seconds.
    """
    started = time.perf_counter()
    with psycopg.connect(url) as conn:  # one transaction, committed when the block ends
        conn.execute("SET LOCAL lock_timeout = '60s'")
        conn.execute(f"TRUNCATE {', '.join(PROJECTION_TABLES)}")
        rebuild = _Rebuild(read_all_deals(conn))
        with conn.cursor(name="canfield_projection_rebuild") as cursor:
            cursor.itersize = 10_000
            cursor.execute(_ALL_EVENTS)
            for game_id, player_id, deal, rows in _streams(cursor):
                rebuild.game(game_id, player_id, deal, rows)
        counts: dict[str, Any] = rebuild.write(conn)
    counts["seconds"] = round(time.perf_counter() - started, 3)
    return counts


# ---------------------------------------------------------------- reads for the API


def _rate(played: int, won: int) -> float | None:
    return round(won / played, 4) if played else None


async def player_stats(pool: AsyncConnectionPool, player_id: uuid.UUID, ruleset_ids: Sequence[str]) -> list[JSON] | None:
    """Per ruleset (every one in ``ruleset_ids``, zeros where none finished); None: no such player."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT p.id, s.ruleset_id, s.played, s.won, s.current_streak, s.best_streak, s.fewest_moves,"
            " s.fastest_seconds, s.undos FROM players p LEFT JOIN player_stats s ON s.player_id = p.id WHERE p.id = %s",
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
    return result


_OVERALL = """
SELECT source, ruleset_id, sum(played)::int, sum(won)::int, min(fewest_moves), min(fastest_seconds), sum(undos)::bigint
FROM source_stats GROUP BY GROUPING SETS ((ruleset_id), (source))
"""
_PLAYERS = """
SELECT ruleset_id, count(*)::int, max(current_streak), max(best_streak) FROM player_stats GROUP BY ruleset_id
"""


async def overall_stats(pool: AsyncConnectionPool, ruleset_ids: Sequence[str]) -> JSON:
    async with pool.connection() as conn:
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
    return {"rulesets": rulesets, "sources": sources}


async def deal_figures(pool: AsyncConnectionPool, ruleset_id: str, number: int) -> tuple[int, int]:
    """(plays, wins) of a pool deal, over pool and daily games."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT plays, wins FROM deal_stats WHERE ruleset_id = %s AND pool_number = %s", (ruleset_id, number)
        )
        row = await cursor.fetchone()
    return (row[0], row[1]) if row else (0, 0)


async def daily_figures(pool: AsyncConnectionPool, day: date) -> tuple[int, int]:
    """(plays, wins) of the daily games of that date."""
    async with pool.connection() as conn:
        cursor = await conn.execute("SELECT plays, wins FROM daily_stats WHERE day = %s", (day,))
        row = await cursor.fetchone()
    return (row[0], row[1]) if row else (0, 0)


_BOARD = """
SELECT l.player_id, p.name, l.game_id, l.status, l.assisted, l.unranked, l.moves, l.seconds, l.finished_at
FROM daily_leaderboard l JOIN players p ON p.id = l.player_id
WHERE l.day = %s
ORDER BY l.unranked IS NOT NULL,
         CASE WHEN l.unranked IS NULL THEN l.moves END, CASE WHEN l.unranked IS NULL THEN l.seconds END,
         l.finished_at, l.game_id
LIMIT %s
"""


async def leaderboard(pool: AsyncConnectionPool, day: date, limit: int) -> list[JSON]:
    """One entry per player (their first game of the date's deal, once ended): the ranked ones
    by moves, then seconds, then who finished first; then the unranked ones, as they finished."""
    async with pool.connection() as conn:
        rows = await (await conn.execute(_BOARD, (day, limit))).fetchall()
    ranks = iter(range(1, len(rows) + 1))
    return [
        {"rank": None if unranked else next(ranks), "player": str(player), "name": name, "game": str(game),
         "status": status, "assisted": assisted, "unranked": unranked, "moves": moves, "seconds": seconds,
         "finishedAt": finished_at}
        for player, name, game, status, assisted, unranked, moves, seconds, finished_at in rows
    ]
