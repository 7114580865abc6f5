"""Rebuild the stats projections offline, from the event log alone (``canfield projections rebuild``).

``rebuild_projections(url)`` empties the projection tables and recomputes them from the event
log (each game's events replayed with ``domain.replay``; the player is the stream's owner in
``games``), in one transaction, on a plain (synchronous) psycopg connection: it runs from the
command line, outside the server's event loop. It folds in Python what the incremental SQL of
``service.stats.projections`` upserts, so a test comparing the two checks one against the other;
the daily leaderboard rows are decided by the same ``leaderboard_entry``. The players per ruleset
(``ruleset_stats``) are counted by the triggers on ``player_stats`` (migration 0011) as the COPY
inserts its rows, as they are when a game-ending move inserts one.
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

from domain import replay
from domain.codec import event_from_data
from domain.events import GameDealt

from ..deals.daily import DailyDeal, daily_day_of, is_entry, public_source
from ..deals.daily_deals import read_all_deals
from ..store.connections import use_msgspec_for_json
from .projections import (
    ENTRY_COLUMNS,
    PROJECTION_TABLES,
    UNLISTED_SOURCES,
    Finish,
    counted,
    leaderboard_entry,
    pool_number_of,
)

log = logging.getLogger("canfield")


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
        self,
        game_id: uuid.UUID,
        player_id: uuid.UUID,
        deal: Mapping[str, Any],
        rows: list[tuple[int, int, str, Any, datetime]],
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
            if str(source.get("source", "seed")) not in UNLISTED_SOURCES:
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
            "player_stats (player_id, ruleset_id, played, won, current_streak, best_streak, fewest_moves, "
            "fastest_seconds, undos)",
            ((p, r, t.played, t.won, t.current_streak, t.best_streak, t.fewest_moves, t.fastest_seconds, t.undos)
             for (p, r), t in players.items()),
        )
        _copy(
            conn,
            "source_stats (source, ruleset_id, played, won, fewest_moves, fastest_seconds, undos)",
            ((s, r, t.played, t.won, t.fewest_moves, t.fastest_seconds, t.undos) for (s, r), t in sources.items()),
        )
        deals = ((r, n, p, w) for (r, n), (p, w) in self.deals.items())
        _copy(conn, "deal_stats (ruleset_id, pool_number, plays, wins)", deals)
        _copy(conn, "daily_stats (day, plays, wins)", ((d, p, w) for d, (p, w) in self.days.items()))
        _copy(conn, f"daily_leaderboard ({ENTRY_COLUMNS})", board)
        return {
            "games": self.games,
            "finished": len(self.finishes),
            "unreadable": self.unreadable,
            "player_stats": len(players),
            "ruleset_stats": len({ruleset_id for _, ruleset_id in players}),  # counted by player_stats' triggers
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
    use_msgspec_for_json()
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
