"""A rated tournament's places decided again from its entrants' stored logs, for the ratings'
rebuild (``canfield projections``: service.ratings.rebuild takes this as its ``tournament_places``).

The same check and order as the finish (``service.tournaments.standings``): each game's log cut
where the tournament ended (at its time limit when it finished then), replayed through the rules;
an entrant with a log that does not replay is unplaced. Entrants in the finish's order
(``ENTRANT_ORDER``), so the ratings come out the same to the last bit.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from ..store.event_store import LOG_QUERY
from .standings import places, verified_tally
from .tournament_store import ENTRANT_ORDER


def tournament_places(conn: psycopg.Connection[Any], tournament_id: uuid.UUID) -> list[tuple[uuid.UUID, int]]:
    """The tournament's verified entrants and their places, in the finish's order."""
    found = conn.execute("SELECT ruleset_id, ruleset_version, ends_at, finished_at FROM tournaments WHERE id = %s",
                         (tournament_id,)).fetchone()
    if found is None:
        return []
    ruleset_id, version, ends_at, finished_at = found
    cutoff = ends_at if finished_at is not None and finished_at >= ends_at else None
    decks = dict(conn.execute("SELECT number, deck FROM tournament_deals WHERE tournament_id = %s",
                              (tournament_id,)).fetchall())
    players = [row[0] for row in conn.execute(ENTRANT_ORDER, (tournament_id,)).fetchall()]
    tallies = []
    for player in players:
        games = conn.execute("SELECT number, game_id FROM tournament_games WHERE tournament_id = %s AND player_id = %s"
                             " ORDER BY number", (tournament_id, player)).fetchall()
        logs = [(number, conn.execute(LOG_QUERY, {"game": game, "cutoff": cutoff}).fetchall())
                for number, game in games]
        tallies.append(verified_tally(logs, tournament_id, (ruleset_id, version), decks))
    ranked = places([tally if tally.verified else None for tally in tallies])
    return [(player, place) for player, place in zip(players, ranked, strict=True) if place is not None]
