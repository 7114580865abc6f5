"""Ratings in PostgreSQL (migration 0019): ``rated_races`` (the order rated races finished in),
``player_ratings`` (each player's current rating per ruleset) and ``rating_changes`` (each rated
entrant's rating before and after each rated race).

A race is rated in the transaction that finishes it (``record_race``), under a transaction-level
advisory lock of its ruleset: rated races of one ruleset are rated one at a time, each taking its
``sequence`` under the lock, so the order of the sequence is the order in which their updates
were applied and committed, and the rebuild (service.ratings.rebuild) replays them in it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import tuple_row

from ..store.players import DELETED_NAME
from ..store.replica import ReadPool
from .model import Skill, rate

LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"


def lock_name(ruleset_id: str) -> str:
    """The advisory lock that rates the races of ``ruleset_id`` one at a time."""
    return f"canfield-ratings:{ruleset_id}"


@dataclass(frozen=True, slots=True)
class Change:
    """One rated entrant's rating before and after a race."""

    player_id: uuid.UUID
    place: int
    before: Skill
    after: Skill


@dataclass(frozen=True, slots=True)
class RatingRow:
    ruleset_id: str
    skill: Skill
    races: int


@dataclass(frozen=True, slots=True)
class HistoryRow:
    sequence: int
    race_id: uuid.UUID
    rated_at: datetime
    place: int
    entrants: int
    before: Skill
    after: Skill
    tournament: bool = False  # race_id names a tournament


@dataclass(frozen=True, slots=True)
class ListRow:
    player_id: uuid.UUID
    name: str
    bot: bool
    rating: int
    deviation: int
    races: int


def changes_of(placed: Sequence[tuple[uuid.UUID, int]], current: dict[uuid.UUID, Skill]) -> list[Change]:
    """The rating changes of a race whose rated entrants finished in ``placed`` (player, place),
    from their ``current`` skills (a player without one is new); none with fewer than two."""
    if len(placed) < 2:
        return []
    before = [current.get(player, Skill()) for player, _ in placed]
    after = rate(before, [place for _, place in placed])
    return [Change(player, place, old, new) for (player, place), old, new in zip(placed, before, after, strict=True)]


async def record_race(
    conn: AsyncConnection[Any], race_id: uuid.UUID, ruleset_id: str, placed: Sequence[tuple[uuid.UUID, int]],
    now: datetime, tournament: bool = False,
) -> list[Change]:
    """Rate a finished race (``tournament``: a finished tournament, by its id) in the caller's
    transaction: its place in the order of rated races, then, with at least two rated entrants,
    their new ratings and the changes. Nothing if it was rated."""
    await conn.execute(LOCK, (lock_name(ruleset_id),))
    cursor = conn.cursor(row_factory=tuple_row)
    await cursor.execute(
        "INSERT INTO rated_races (race_id, ruleset_id, rated_at, tournament) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (race_id) DO NOTHING RETURNING sequence",
        (race_id, ruleset_id, now, tournament),
    )
    row = await cursor.fetchone()
    if row is None or len(placed) < 2:
        return []
    sequence = row[0]
    await cursor.execute(
        "SELECT player_id, mu, sigma FROM player_ratings WHERE ruleset_id = %s AND player_id = ANY(%s)",
        (ruleset_id, [player for player, _ in placed]),
    )
    current = {player: Skill(mu, sigma) for player, mu, sigma in await cursor.fetchall()}
    changes = changes_of(placed, current)
    await cursor.executemany(UPSERT_RATING, [rating_parameters(ruleset_id, change, now) for change in changes])
    await cursor.executemany(
        INSERT_CHANGE, [change_parameters(race_id, ruleset_id, sequence, len(changes), change, now)
                        for change in changes]
    )
    return changes


UPSERT_RATING = (
    "INSERT INTO player_ratings (player_id, ruleset_id, mu, sigma, rating, deviation, races, updated_at)"
    " VALUES (%s, %s, %s, %s, %s, %s, 1, %s) ON CONFLICT (player_id, ruleset_id) DO UPDATE SET mu = excluded.mu,"
    " sigma = excluded.sigma, rating = excluded.rating, deviation = excluded.deviation,"
    " races = player_ratings.races + 1, updated_at = excluded.updated_at"
)
INSERT_CHANGE = (
    "INSERT INTO rating_changes (race_id, player_id, ruleset_id, sequence, place, entrants, mu_before, sigma_before,"
    " mu_after, sigma_after, rated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def rating_parameters(ruleset_id: str, change: Change, now: datetime) -> tuple[Any, ...]:
    after = change.after
    return (change.player_id, ruleset_id, after.mu, after.sigma, after.rating, after.deviation, now)


def change_parameters(
    race_id: uuid.UUID, ruleset_id: str, sequence: int, entrants: int, change: Change, now: datetime
) -> tuple[Any, ...]:
    return (race_id, change.player_id, ruleset_id, sequence, change.place, entrants, change.before.mu,
            change.before.sigma, change.after.mu, change.after.sigma, now)


class RatingStore:
    """The ratings' reads (a replica may answer them: service.store.replica)."""

    def __init__(self, reads: ReadPool) -> None:
        self.reads = reads

    async def ratings_of(self, player_id: uuid.UUID) -> list[RatingRow]:
        async with self.reads.connection() as conn:
            cursor = await conn.execute(
                "SELECT ruleset_id, mu, sigma, races FROM player_ratings WHERE player_id = %s ORDER BY ruleset_id",
                (player_id,),
            )
            rows = await cursor.fetchall()
        return [RatingRow(ruleset, Skill(mu, sigma), races) for ruleset, mu, sigma, races in rows]

    async def history(
        self, player_id: uuid.UUID, ruleset_id: str, before: int | None, limit: int
    ) -> list[HistoryRow]:
        """The player's rated races in the ruleset, newest first, strictly before sequence ``before``."""
        async with self.reads.connection() as conn:
            cursor = await conn.execute(
                "SELECT sequence, race_id, rated_at, place, entrants, mu_before, sigma_before, mu_after, sigma_after,"
                " (SELECT rr.tournament FROM rated_races rr WHERE rr.sequence = rating_changes.sequence)"
                " FROM rating_changes WHERE player_id = %(player)s AND ruleset_id = %(ruleset)s"
                " AND (%(before)s::bigint IS NULL OR sequence < %(before)s::bigint)"
                " ORDER BY sequence DESC LIMIT %(limit)s",
                {"player": player_id, "ruleset": ruleset_id, "before": before, "limit": limit},
            )
            return [
                HistoryRow(sequence, race, at, place, entrants, Skill(mu0, sigma0), Skill(mu1, sigma1),
                           bool(tournament))
                for sequence, race, at, place, entrants, mu0, sigma0, mu1, sigma1, tournament
                in await cursor.fetchall()
            ]

    async def rating_list(
        self, ruleset_id: str, after: tuple[int, uuid.UUID] | None, limit: int
    ) -> list[ListRow]:
        """The ruleset's rated players, best first (then by id, descending), strictly after the key
        ``after`` (rating, player): a range of the index player_ratings_list. Deleted accounts are
        left out (they stay rated, for the races they were in)."""
        key = "" if after is None else " AND (r.rating, r.player_id) < (%(rating)s, %(player)s)"
        async with self.reads.connection() as conn:
            cursor = await conn.execute(
                "SELECT r.player_id, p.name, p.bot, r.rating, r.deviation, r.races FROM player_ratings r"
                " JOIN players p ON p.id = r.player_id"
                f" WHERE r.ruleset_id = %(ruleset)s AND p.name <> %(deleted)s{key}"
                " ORDER BY r.rating DESC, r.player_id DESC LIMIT %(limit)s",
                {"ruleset": ruleset_id, "deleted": DELETED_NAME, "limit": limit,
                 "rating": None if after is None else after[0], "player": None if after is None else after[1]},
            )
            return [ListRow(*row) for row in await cursor.fetchall()]
