"""The ratings service: rating a rated race as it finishes, and the API's reads (docs/ratings.md).

A rated race (``POST /races {"rated": true}``, a secret deal only) is rated in the transaction
that finishes it (``rate_race``: this service is the races' ``RaceRating``, and the tournaments'
``TournamentRating``, handed to them by service.bootstrap): among the entrants
whose places were replay-verified (``service.races.standings``; an entrant whose log fails the
check has no place and is not rated), when at least two remain. Ratings are per ruleset (its id:
every version of a ruleset shares one rating).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from domain.rulesets import ALL_RULESETS

from .. import cursors
from ..errors import BadRequest, NotFound
from ..races.rows import RaceRow, Result
from ..store.players import PlayerStore
from ..wire import PlayerRef, RulesetId
from .model import PROVISIONAL_DEVIATION, Skill
from .rating_store import Change, HistoryRow, ListRow, RatingStore, record_race
from .wire import PlayerRatings, RatingHistory, RatingList, RatingListEntry, RatingPoint, RatingView

RULESETS = frozenset(ruleset.id for ruleset in ALL_RULESETS)
_LIST = "ratings"
_HISTORY = "rating-history"
_LIST_REFUSAL = "'cursor' is not a cursor of this rating list: pass the 'next' of its previous page"
_HISTORY_REFUSAL = "'cursor' is not a cursor of this rating history: pass the 'next' of its previous page"


def placed_entrants(results: Sequence[Result]) -> list[tuple[uuid.UUID, int]]:
    """The entrants a finished race rates: those with a verified place, in their order."""
    return [(result.player_id, result.place) for result in results if result.place is not None]


def rating_view(ruleset_id: str, skill: Skill, races: int) -> RatingView:
    """A player's rating in a ruleset."""
    return RatingView(RulesetId(ruleset_id), skill.rating, skill.deviation, skill.provisional, races)


def history_point(row: HistoryRow) -> RatingPoint:
    return RatingPoint(
        race=row.race_id,
        rated_at=row.rated_at,
        place=row.place,
        entrants=row.entrants,
        rating_before=row.before.rating,
        rating_after=row.after.rating,
        deviation_after=row.after.deviation,
        tournament=row.tournament,
    )


def list_entry(row: ListRow) -> RatingListEntry:
    return RatingListEntry(
        player=PlayerRef(row.player_id, row.name, row.bot),
        rating=row.rating,
        deviation=row.deviation,
        provisional=row.deviation > PROVISIONAL_DEVIATION,
        races=row.races,
    )


class Ratings:
    def __init__(self, store: RatingStore, players: PlayerStore) -> None:
        self.store = store
        self.players = players

    async def rate_race(
        self, conn: AsyncConnection[Any], race: RaceRow, results: Sequence[Result], finished_at: datetime
    ) -> list[Change]:
        """Rate a rated race that is finishing, in its transaction (service.races.Races.settle: this
        service is the races' ``RaceRating``)."""
        return await record_race(conn, race.id, race.ruleset[0], placed_entrants(results), finished_at)

    async def rate_tournament(
        self, conn: AsyncConnection[Any], tournament_id: uuid.UUID, ruleset_id: str,
        placed: Sequence[tuple[uuid.UUID, int]], finished_at: datetime,
    ) -> list[Change]:
        """Rate a rated tournament that is finishing, from its final places (one per verified
        entrant), in its transaction (service.tournaments): in the same order as rated races."""
        return await record_race(conn, tournament_id, ruleset_id, placed, finished_at, tournament=True)

    async def of_player(self, player_id: uuid.UUID) -> PlayerRatings:
        """``GET /players/{id}/ratings``: the player's rating in every ruleset they were rated in."""
        await self._existing(player_id)
        rows = await self.store.ratings_of(player_id)
        return PlayerRatings([rating_view(row.ruleset_id, row.skill, row.races) for row in rows])

    async def history(self, player_id: uuid.UUID, ruleset_id: str, cursor: str | None, limit: int) -> RatingHistory:
        """``GET /players/{id}/ratings/{ruleset}/history``: one point per rated race, newest first."""
        _known(ruleset_id)
        before = None
        if cursor is not None:
            fields = cursors.decode(_HISTORY, cursor, _HISTORY_REFUSAL)
            if len(fields) != 3 or fields[:2] != [str(player_id), ruleset_id]:
                raise BadRequest(_HISTORY_REFUSAL)
            before = cursors.whole(fields[2], _HISTORY_REFUSAL)
        await self._existing(player_id)
        rows = await self.store.history(player_id, ruleset_id, before, limit + 1)
        page = rows[:limit]
        following = None
        if len(rows) > limit:
            following = cursors.encode(_HISTORY, player_id, ruleset_id, page[-1].sequence)
        return RatingHistory([history_point(row) for row in page], following)

    async def rating_list(self, ruleset_id: str, cursor: str | None, limit: int) -> RatingList:
        """``GET /ratings/{ruleset}``: the rated players, best first, a page at a time (keyset)."""
        _known(ruleset_id)
        after = None
        if cursor is not None:
            fields = cursors.decode(_LIST, cursor, _LIST_REFUSAL)
            if len(fields) != 3 or fields[0] != ruleset_id:
                raise BadRequest(_LIST_REFUSAL)
            after = (_rating(fields[1]), cursors.identifier(fields[2], _LIST_REFUSAL))
        rows = await self.store.rating_list(ruleset_id, after, limit + 1)
        page = rows[:limit]
        following = None
        if len(rows) > limit:
            following = cursors.encode(_LIST, ruleset_id, page[-1].rating, page[-1].player_id)
        return RatingList([list_entry(row) for row in page], following)

    async def _existing(self, player_id: uuid.UUID) -> None:
        found = await self.players.get_player(player_id)
        if found is None or found.deleted:
            raise NotFound(f"no player {player_id}")


def _known(ruleset_id: str) -> None:
    if ruleset_id not in RULESETS:
        raise NotFound(f"no ruleset {ruleset_id!r}: the rulesets are {', '.join(sorted(RULESETS))}")


def _rating(text: str) -> int:
    """A rating in a cursor: a whole number, possibly negative."""
    sign, digits = (-1, text[1:]) if text.startswith("-") else (1, text)
    return sign * cursors.whole(digits, _LIST_REFUSAL)
