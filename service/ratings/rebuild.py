"""Rebuild the ratings from the event log (``canfield projections rebuild``).

Ratings are a projection: ``player_ratings`` and ``rating_changes`` are emptied and recomputed
by replaying every rated race in the recorded order in which rated races finished
(``rated_races.sequence``). Each race's places are decided again from its entrants' stored event
logs, cut where the race ended, with the same check and ranking as the race's finish
(``service.races.standings``): an entrant whose log fails the check has no place and is not
rated, and a race with fewer than two placed entrants changes nothing. A deleted account is still
an entrant here (only the rating list leaves it out), so everyone else's numbers come out the same.
Floats are computed in the same order from the same inputs as when the races finished, so the
numbers are the same to the last bit (a test compares them).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import psycopg

from domain.verify import Unverified

from ..races.races import race_source
from ..races.standings import Standing, places, verified_standing
from ..store.connections import use_msgspec_for_json
from ..store.event_store import LOG_QUERY
from .model import Skill
from .rating_store import (
    INSERT_CHANGE,
    LOCK,
    UPSERT_RATING,
    change_parameters,
    changes_of,
    lock_name,
    rating_parameters,
)
from .ratings import RULESETS

_RATED = """
SELECT rr.sequence, rr.race_id, rr.tournament, rr.ruleset_id, r.ruleset_version, r.deck, r.ends_at, r.finished_at,
       rr.rated_at
FROM rated_races rr LEFT JOIN races r ON r.id = rr.race_id AND NOT rr.tournament ORDER BY rr.sequence
"""
TournamentPlaces = Callable[[psycopg.Connection[Any], uuid.UUID], list[tuple[uuid.UUID, int]]]
"""A rated tournament's verified entrants and places, decided again from their logs
(service.tournaments.rebuild.tournament_places: the ratings may not import the tournaments)."""


def cutoff_of(finished_at: datetime, ends_at: datetime | None) -> datetime | None:
    """Where a finished race cut its entrants' logs (service.races.races.ending): at its time limit
    when it finished then, else nowhere (every game had ended before)."""
    return ends_at if ends_at is not None and finished_at == ends_at else None


def placed_in(
    conn: psycopg.Connection[Any], race_id: uuid.UUID, ruleset: tuple[str, int], deck: Sequence[str],
    cutoff: datetime | None,
) -> list[tuple[uuid.UUID, int]]:
    """The race's entrants with a verified place, in seat order, decided again from their logs."""
    entrants = conn.execute(
        "SELECT player_id, game_id FROM race_entrants WHERE race_id = %s ORDER BY seat", (race_id,)
    ).fetchall()
    standings: list[Standing | None] = []
    for _, game_id in entrants:
        rows = [] if game_id is None else conn.execute(LOG_QUERY, {"game": game_id, "cutoff": cutoff}).fetchall()
        try:
            standings.append(verified_standing(rows, race_source(race_id), ruleset, deck))
        except Unverified:
            standings.append(None)
    ranked = places(standings)
    return [(player, place) for (player, _), place in zip(entrants, ranked, strict=True) if place is not None]


def rebuild_ratings(url: str, tournament_places: TournamentPlaces | None = None) -> dict[str, Any]:
    """Empty the ratings and recompute them from the rated races and tournaments (``tournament_places``
    decides a tournament's places; without it a rated tournament is left out), in one transaction
    (holding every ruleset's ratings lock, so a race finishing meanwhile is rated after the rebuild,
    on its numbers). Returns counts: ratedRaces (tournaments included), ratingChanges, ratedPlayers, seconds."""
    started = time.perf_counter()
    use_msgspec_for_json()
    skills: dict[tuple[str, uuid.UUID], tuple[Skill, int]] = {}
    rates: list[tuple[Any, ...]] = []
    changes: list[tuple[Any, ...]] = []
    with psycopg.connect(url) as conn:  # one transaction, committed when the block ends
        conn.execute("SET LOCAL lock_timeout = '60s'")
        for ruleset_id in sorted(RULESETS):
            conn.execute(LOCK, (lock_name(ruleset_id),))
        conn.execute("DELETE FROM rating_changes")
        conn.execute("DELETE FROM player_ratings")
        races = conn.execute(_RATED).fetchall()
        for sequence, race_id, tournament, ruleset_id, version, deck, ends_at, finished_at, rated_at in races:
            if tournament:
                placed = [] if tournament_places is None else tournament_places(conn, race_id)
            else:
                placed = placed_in(conn, race_id, (ruleset_id, version), deck, cutoff_of(finished_at, ends_at))
            current = {player: skills[ruleset_id, player][0] for player, _ in placed if (ruleset_id, player) in skills}
            rated = changes_of(placed, current)
            for change in rated:
                count = skills.get((ruleset_id, change.player_id), (change.before, 0))[1]
                skills[ruleset_id, change.player_id] = (change.after, count + 1)
                changes.append(change_parameters(race_id, ruleset_id, sequence, len(rated), change, rated_at))
                rates.append((ruleset_id, change, rated_at))
        with conn.cursor() as cursor:
            # the upsert counts the races as the live path does, one rated race at a time
            cursor.executemany(UPSERT_RATING, [rating_parameters(ruleset_id, change, at) for ruleset_id, change, at
                                               in rates])
            cursor.executemany(INSERT_CHANGE, changes)
    return {"ratedRaces": len(races), "ratingChanges": len(changes), "ratedPlayers": len(skills),
            "seconds": round(time.perf_counter() - started, 3)}
