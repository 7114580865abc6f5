"""What a client sees of races, as the race feature's wire Structs (service.races.wire): a race's
view (the deal as far as it may be shown, each entrant's figures and place), the lobby's page of
open races and a player's record; and the number a race stream's messages are identified by
(``revision``). The one place a race's rows are turned into what the API shows of them; the
controllers and the race stream encode what is built here as it is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from ..wire import PlayerRef, ruleset_ref
from .races import LobbyPage, RaceTally
from .rows import CANCELLED, FINISHED, OPEN, RUNNING, RaceRow
from .standings import Standing, claimed, places
from .wire import (
    OpenRace,
    OpenRaces,
    RaceDeal,
    RaceDeckDeal,
    RaceEntrant,
    RacePoolDeal,
    RaceRecord,
    RaceSecretDeal,
    RaceSeedDeal,
    RaceView,
)

Status = Literal["playing", "won", "stalled", "resigned"]


def deal_view(deal: Mapping[str, Any], reveal: bool) -> RaceDeal:
    """A race's deal source; its seed or pool number only when ``reveal``."""
    source = deal["source"]
    if source == "seed":
        return RaceSeedDeal(deal["seed"]) if reveal else RaceSeedDeal()
    if source == "pool":
        return RacePoolDeal(deal["pool"]) if reveal else RacePoolDeal()
    if source == "deck":
        return RaceDeckDeal()
    if source == "secret":
        return RaceSecretDeal()
    raise ValueError(f"a race's deal has no source {source!r}")


def race_view(race: RaceRow) -> RaceView:
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
        RaceEntrant(
            player=PlayerRef(e.player_id, e.name, e.bot),
            joined_at=e.joined_at,
            game=e.game_id,
            status=None if s is None else cast(Status, s.status),
            cards_on_foundations=0 if s is None else s.cards_on_foundations,
            move_count=0 if s is None else s.move_count,
            finished_at=None if s is None else s.finished_at,
            place=place,
            assisted=False if s is None else s.assisted,
            verified=None if s is None else s.verified,
            # a rated entrant's rating as shown (rounded as service.ratings.model.displayed rounds it)
            rating_before=None if e.rating_before is None else round(e.rating_before),
            rating_after=None if e.rating_after is None else round(e.rating_after),
        )
        for e, s, place in zip(race.entrants, standings, shown_places, strict=True)
    ]
    if race.status != OPEN:
        order = sorted(range(len(entrants)), key=lambda i: (shown_places[i] is None, shown_places[i] or 0, i))
        entrants = [entrants[i] for i in order]
    # stored as finished with its reason (which the previous release reads); shown as cancelled
    status = CANCELLED if race.status == FINISHED and race.cancelled_reason is not None else race.status
    return RaceView(
        id=race.id,
        creator=PlayerRef(race.creator_id, race.creator_name, race.creator_bot),
        status=cast(Literal["open", "running", "finished", "cancelled"], status),
        ruleset=ruleset_ref(*race.ruleset),
        deal=deal_view(race.deal, reveal),
        max_entrants=race.max_entrants,
        time_limit_seconds=race.time_limit_seconds,
        created_at=race.created_at,
        started_at=race.started_at,
        ends_at=race.ends_at,
        finished_at=race.finished_at,
        entrants=entrants,
        cancelled_reason=race.cancelled_reason,  # a cancelled race's reason (service.races.leaving)
        rated=race.rated,
    )


def lobby_view(page: LobbyPage) -> OpenRaces:
    """A page of the lobby: each open race's deal by its source only, never a seed or pool number."""
    return OpenRaces(
        items=[
            OpenRace(
                id=race.id, creator=PlayerRef(race.creator, race.creator_name, race.creator_bot),
                ruleset=ruleset_ref(*race.ruleset), deal=deal_view({"source": race.source}, reveal=False),
                max_entrants=race.max_entrants, entrants=race.entrants, time_limit_seconds=race.time_limit_seconds,
                created_at=race.created_at, rated=race.rated,
            )
            for race in page.races
        ],
        next=page.next_before,
    )


def revision(race: RaceRow) -> int:
    """A number that grows with every change of the race or a move in one of its games (SSE ids)."""
    return race.version + sum(e.game_version or 0 for e in race.entrants)


def record_view(tally: RaceTally) -> RaceRecord:
    """A player's races: played and won."""
    return RaceRecord(played=tally.played, won=tally.won)
