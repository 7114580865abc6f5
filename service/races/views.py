"""A race as anyone may see it (``race_view``: figures per entrant, never a card) and the number
its stream's messages are identified by (``revision``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..store.players import player_reference
from .rows import CANCELLED, FINISHED, OPEN, RUNNING, RaceRow
from .standings import Standing, claimed, places

JSON = dict[str, Any]


def race_view(race: RaceRow) -> JSON:
    """The race as anyone may see it: figures per entrant, never a card, and the deal's seed or
    pool number only once the race has finished and every game of it has ended."""
    reveal = race.status == FINISHED and race.games_ended
    standings: list[Standing | None] = []
    for entrant in race.entrants:
        if entrant.standing is not None and (race.status == FINISHED or entrant.game_finished_at is not None):
            standings.append(Standing.from_json(entrant.standing))  # checked: frozen, or a game that has ended
        elif entrant.game_id is not None:
            standings.append(claimed(entrant))  # live, unchecked
        else:
            standings.append(None)
    if race.status == RUNNING:  # live and provisional; a game whose log failed its check ranks nowhere
        shown_places: Sequence[int | None] = places(
            [None if s is None or s.verified is False else s for s in standings]
        )
    elif race.status == FINISHED:
        shown_places = [e.place for e in race.entrants]
    else:
        shown_places = [None] * len(race.entrants)
    entrants = [
        {
            "player": player_reference(e.player_id, e.name, e.bot),
            "joinedAt": e.joined_at,
            "game": None if e.game_id is None else str(e.game_id),
            "status": None if s is None else s.status,
            "cardsOnFoundations": 0 if s is None else s.cards_on_foundations,
            "moveCount": 0 if s is None else s.move_count,
            "finishedAt": None if s is None else s.finished_at,
            "place": place,
            "assisted": False if s is None else s.assisted,
            "verified": None if s is None else s.verified,
            # a rated entrant's rating as shown (rounded as service.ratings.model.displayed rounds it)
            "ratingBefore": None if e.rating_before is None else round(e.rating_before),
            "ratingAfter": None if e.rating_after is None else round(e.rating_after),
        }
        for e, s, place in zip(race.entrants, standings, shown_places, strict=True)
    ]
    if race.status != OPEN:
        order = sorted(range(len(entrants)), key=lambda i: (shown_places[i] is None, shown_places[i] or 0, i))
        entrants = [entrants[i] for i in order]
    return {
        "id": str(race.id),
        "creator": player_reference(race.creator_id, race.creator_name, race.creator_bot),
        # stored as finished with its reason (which the previous release reads); shown as cancelled
        "status": CANCELLED if race.status == FINISHED and race.cancelled_reason is not None else race.status,
        "ruleset": {"id": race.ruleset[0], "version": race.ruleset[1]},
        "deal": dict(race.deal) if reveal else {"source": race.deal["source"]},
        "maxEntrants": race.max_entrants,
        "timeLimitSeconds": race.time_limit_seconds,
        "createdAt": race.created_at,
        "startedAt": race.started_at,
        "endsAt": race.ends_at,
        "finishedAt": race.finished_at,
        "entrants": entrants,
        "cancelledReason": race.cancelled_reason,  # a cancelled race's reason (service.races.leaving)
        "rated": race.rated,
    }


def revision(race: RaceRow) -> int:
    """A number that grows with every change of the race or a move in one of its games (SSE ids)."""
    return race.version + sum(e.game_version or 0 for e in race.entrants)
