"""Stats and the daily leaderboard: projections of the event log, kept as games start and end.

Incremental: ``game_started`` and ``game_finished`` make the statements (``Statement``: SQL and
its parameters, data) that a game's creation or its game-ending move adds to its unit of work
(service.store.unit_of_work), to run *in the same transaction* as its events. Only games that
end change the stats, so a move that does not end its game stays one statement; a pool or daily
deal's ``plays`` go up when its game is created.

The offline rebuild from the event log is ``service.stats.rebuild``; the reads for the API are
``service.stats.queries``.

The daily leaderboard has one row per player and date: their *entry* (the first game of that
date's deal, dealt on that date; service.deals.daily), once it has ended. It is ranked only if it is
an unassisted win whose *stored* event log has been replayed through the rules engine: every
move re-decided by ``domain.decide`` from the dealt table, and each decision must produce
exactly the stored events (type and data), ending in a win with no solver hint, on the deck
stored for that date in ``daily_deals``, won before the date was over. ``evolve`` alone would
accept any edited event as a fact; ``decide`` does not. Otherwise the row says why it is not
ranked (``UNRANKED``). Neither path needs ``DAILY_SECRET``: both read the stored daily deals.

Figures (see docs/api.md, "Stats and leaderboard"):

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
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from domain import Status
from domain.cards import codes
from domain.verify import Unverified, redecide

from ..deals.daily import DailyDeal, daily_day_of, is_entry, is_over, public_source
from ..deals.daily_deals import read_deal
from ..store.game_records import StoredEvent
from ..store.unit_of_work import Statement

log = logging.getLogger("canfield")

JSON = dict[str, Any]

PROJECTION_TABLES = ("player_stats", "ruleset_stats", "source_stats", "deal_stats", "daily_stats", "daily_leaderboard")
"""Every projection table. ``ruleset_stats`` (players per ruleset) is counted by triggers on
``player_stats`` (migration 0011) as its rows are inserted: by ``_FINISHED`` below, by the rebuild's
COPY, and by any other writer."""


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


UNLISTED_SOURCES = frozenset({"tournament"})
"""Deal sources whose games count for their players but get no ``source_stats`` row: the release
before tournaments reads every row of that table into ``GET /stats``, whose sources it lists by name."""


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
    SELECT %(source)s::text, %(ruleset)s::text, 1, %(won)s::int, %(moves)s::int, %(seconds)s::float8,
           %(undos)s::bigint WHERE %(listed)s::bool
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

_STORED_LOG = (
    "SELECT version, type, data, recorded_at FROM events WHERE game_id = %s AND version < %s ORDER BY version"
)

ENTRY_COLUMNS = "game_id, day, player_id, moves, seconds, finished_at, status, assisted, unranked"
_LIST = f"""
INSERT INTO daily_leaderboard ({ENTRY_COLUMNS})
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING
"""


def game_started(ruleset_id: str, deal: Mapping[str, Any]) -> Statement | None:
    """What a new game adds to the projections (pool and daily deals' plays), or None."""
    source = public_source(deal)
    number, day = pool_number_of(source), daily_day_of(source)
    if number is None and day is None:
        return None
    return Statement(_STARTED, {"ruleset": ruleset_id, "pool": number, "day": day})


def _finish_params(finish: Finish) -> JSON:
    source = public_source(finish.deal)
    return {
        "player": finish.player_id,
        "ruleset": finish.ruleset_id,
        "source": str(source.get("source", "seed")),
        "listed": str(source.get("source", "seed")) not in UNLISTED_SOURCES,
        "won": int(finish.won),
        "moves": finish.moves if finish.record else None,
        "seconds": finish.seconds if finish.record else None,
        "undos": finish.undos,
        "pool": pool_number_of(source),
        "day": daily_day_of(source),
    }


async def game_finished(finish: Finish, ending: Sequence[StoredEvent], pool: AsyncConnectionPool) -> list[Statement]:
    """What a game-ending move adds to its transaction: the stats, and for a player's daily entry
    its leaderboard row (``leaderboard_entry``). An entry that may be ranked is verified here,
    before the move's transaction, so that no row is locked meanwhile: its stored log before the
    move, read on ``pool`` and followed by the move's own events (``ending``: what the move
    writes; the move's write is conditional on the version it follows, so if it commits, that is
    the log it commits), whether the player practiced, and the date's deal."""
    statements = [Statement(_FINISHED, _finish_params(finish))]
    day = daily_day_of(finish.deal) if is_entry(finish.deal) else None
    if day is None:
        return statements
    rows: list[Any] = []
    stored: DailyDeal | None = None
    practiced = False
    if finish.record:  # only a win that could be ranked needs its log replayed
        async with pool.connection() as conn:
            practiced, rows, stored = await _entry_facts(conn, finish, day, ending[0].version)
        rows += [(e.version, e.type, e.data, e.recorded_at) for e in ending]
    statements.append(Statement(_LIST, leaderboard_entry(finish, day, rows, stored, practiced)))
    return statements


async def _entry_facts(
    conn: AsyncConnection[Any], finish: Finish, day: date, before: int
) -> tuple[bool, list[Any], DailyDeal | None]:
    """Whether the player practiced the date's deal before their entry ended, the entry's stored
    log below version ``before`` and the date's stored deal."""
    practice = await conn.execute(_PRACTICED, (finish.player_id, day.isoformat(), finish.finished_at))
    practiced = bool((await practice.fetchone() or (False,))[0])
    rows = await (await conn.execute(_STORED_LOG, (finish.game_id, before))).fetchall()
    return practiced, rows, await read_deal(conn, day)


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
    """The leaderboard row of a player's finished daily entry (``ENTRY_COLUMNS``); ``rows`` is
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
    return (
        finish.game_id, day, finish.player_id, moves, seconds, finished_at, finish.status, finish.assisted, unranked
    )


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
