"""Races: players racing on one deck, each in an ordinary game of their own (API.md, Races).

A race is created open, with its creator as the first entrant; players join until it starts or is
full; the start deals every entrant a game of the race's deck at one moment, in one transaction
(``Races.start``). From then on each entrant's moves are ordinary moves on their own game
(``Moves.play``): the race only reads the games. When an entrant's game ends, its stored log is
checked through the rules at once (``game_ended``). A race finishes when every game has ended or
its time limit has passed, whichever comes first; any request that finds it due finishes it
(``settle``: every log checked again, cut at the deadline, and the places decided from them,
``service.races.standings``), so no server process has to be watching the clock.

No leak between entrants: the entrants share one deck, so while the race runs another entrant's
game answers only to its player (``guard``: 403 for anyone else), and the race view shows figures,
never a card. The deal source is shown without its seed or pool number (either would give the
deck away through the documented shuffle) until the race has finished and every game of it has
ended; until then an ended game keeps its hidden cards withheld too, even from its player.

A race created without a deal gets a secret deal (``service.races.race_deals``): a fresh deck
derived from the server's deal secret and proven winnable while ``POST /races`` waits, shown as
``{"source": "secret"}`` only, so nobody can look its deck or winning line up.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from domain import Ruleset, deal, event_data, event_type, get_ruleset, initial_state, parse_deck
from domain.cards import codes
from domain.codec import state_to_snapshot
from domain.fingerprint import fingerprint
from domain.rulesets import DEFAULT_RULESET_ID
from domain.verify import Unverified

from .. import cursors
from ..deals.contests import RACE, contest_id
from ..deals.sources import deal_from
from ..errors import Conflict, CursorInvalid, Forbidden, NotFound, NotRaceCreator, RatedRaceDeal, Unavailable
from ..players.accounts import Accounts
from ..players.tokens import Scope
from ..store import outbox
from ..store.game_records import GameRow, LogRow, NewEvent
from .race_deals import SECRET_SOURCE, SecretDealing, secret_deal
from .race_store import RaceStore, RaceWork
from .rows import (
    FINISHED,
    OPEN,
    RUNNING,
    DealtGame,
    Ending,
    EntrantRow,
    NewRaceRow,
    RaceRating,
    RaceRow,
    Result,
)
from .standings import Standing, claimed, places, verified_standing

JSON = dict[str, Any]
SOURCE = RACE
log = logging.getLogger("canfield")

LEFT_REASON = "its creator left before the start"
"""A race whose creator left it while open (``cancelledReason``): the race was theirs to hold, so it
ends with their leaving (an account deletion hands it on instead: service.races.leaving)."""
CANCELLED_REASON = "its creator cancelled it before the start"
"""A race its creator cancelled while open (``cancelledReason``)."""


@dataclass(frozen=True, slots=True)
class NewRace:
    """A race to create: its seats, ruleset (none: the default), deal source (as ``Games.create_game``
    takes one: ``{"seed": 7}``; empty: a secret deal, service.races.race_deals) and time limit."""

    max_entrants: int
    ruleset: str | None = None
    deal: Mapping[str, Any] | None = None
    time_limit_seconds: int | None = None
    rated: bool = False  # changes its entrants' ratings (service.ratings); needs a secret deal


@dataclass(frozen=True, slots=True)
class LobbyRace:
    """A race of the lobby: open to join."""

    id: uuid.UUID
    creator: uuid.UUID
    creator_name: str
    ruleset: tuple[str, int]  # (id, version)
    source: str  # the deal's source only: never a seed or pool number
    max_entrants: int
    entrants: int
    time_limit_seconds: int | None
    created_at: datetime
    rated: bool = False
    creator_bot: bool = False  # the creator is a bot account


@dataclass(frozen=True, slots=True)
class LobbyPage:
    races: list[LobbyRace]
    next_before: str | None  # the cursor of the next (older) page; None: this is the last


_LOBBY_CURSOR = "open-races"
_LOBBY_REFUSAL = "'cursor' is not a cursor of this list: pass the 'next' of the open races' previous page"


def lobby_key(cursor: str) -> tuple[datetime, uuid.UUID]:
    """The (created, id) key of a lobby cursor; a 400 for anything else."""
    fields = cursors.decode(_LOBBY_CURSOR, cursor, _LOBBY_REFUSAL)
    if len(fields) != 2:
        raise CursorInvalid(_LOBBY_REFUSAL)
    return cursors.instant(fields[0], _LOBBY_REFUSAL), cursors.identifier(fields[1], _LOBBY_REFUSAL)


@dataclass(frozen=True, slots=True)
class RaceTally:
    """A player's races: played (finished races they were dealt a game in) and won (place 1)."""

    played: int
    won: int


def race_source(race_id: uuid.UUID) -> JSON:
    """The deal source of an entrant's game: the race, never the seed or deck behind it."""
    return {"source": SOURCE, "race": str(race_id)}


def race_of(deal_source: Mapping[str, Any]) -> uuid.UUID | None:
    """The race a game was dealt for, if any."""
    return contest_id(deal_source, SOURCE)


def ending(race: RaceRow, now: datetime) -> Ending | None:
    """Whether the running race is over at ``now``: when it finished, and where its logs are cut."""
    last_end = max((e.game_finished_at for e in race.entrants if e.game_finished_at is not None), default=None)
    ended_in_time = race.games_ended and last_end is not None and (race.ends_at is None or last_end < race.ends_at)
    if ended_in_time:
        assert last_end is not None
        return Ending(last_end, None)
    if race.ends_at is not None and now >= race.ends_at:
        return Ending(race.ends_at, race.ends_at)
    return None


def judge(race: RaceRow, logs: dict[uuid.UUID, list[LogRow]]) -> list[Result]:
    """Each entrant's standing from their stored log (cut where the race ended), and the places."""
    standings = [
        _checked(race, entrant, logs.get(entrant.game_id, []) if entrant.game_id is not None else [])
        for entrant in race.entrants
    ]
    ranked = places([s if s.verified else None for s in standings])
    return [
        Result(e.player_id, s.to_json(), place) for e, s, place in zip(race.entrants, standings, ranked, strict=True)
    ]


def judge_one(race: RaceRow, entrant: EntrantRow, rows: list[LogRow]) -> Result:
    """The standing of an entrant whose game has ended, from their whole stored log (no place yet)."""
    return Result(entrant.player_id, _checked(race, entrant, rows).to_json(), None)


def _checked(race: RaceRow, entrant: EntrantRow, rows: list[LogRow]) -> Standing:
    """The standing the stored log proves; a log that does not replay through the rules keeps the
    figures its game shows, unverified (it ranks nowhere)."""
    try:
        return verified_standing(rows, race_source(race.id), race.ruleset, race.deck)
    except Unverified as refusal:
        log.warning("race %s: the game of %s is not ranked: %s", race.id, entrant.player_id, refusal.reason)
        return claimed(entrant, verified=False)


class Races:
    """The race use cases. ``accounts`` checks tokens; ``clock`` is the service's clock. A named
    deal is dealt as a game's is (``service.deals.sources``); a race without one gets a secret
    deal (``dealing``: proven by its prover, its creation waiting in its queue)."""

    def __init__(
        self, store: RaceStore, clock: Callable[[], datetime], accounts: Accounts, dealing: SecretDealing,
        rating: RaceRating | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.accounts = accounts
        self.secret = dealing.secret
        self.prover = dealing.prover  # a test may replace it
        self.deal_wait_seconds = dealing.wait_seconds
        self.deal_queue = dealing.queue
        self.rating = rating  # what a rated race's finish does too (service.ratings), in its transaction

    async def _player(self, token: str | None, scope: Scope) -> uuid.UUID:
        return (await self.accounts.authenticate(token, scope)).player_id

    async def create(self, token: str | None, request: NewRace) -> RaceRow:
        creator = await self._player(token, Scope.PLAY)
        ruleset = get_ruleset(DEFAULT_RULESET_ID if request.ruleset is None else request.ruleset)
        race_id = uuid.uuid4()
        proof: JSON | None = None
        if request.rated and request.deal:
            raise RatedRaceDeal(
                "a rated race needs a secret deal, one nobody can look up or solve in advance: leave 'deal' out "
                "(a seed, pool deal or deck can be solved before the race)"
            )
        if request.deal:
            deck, source = deal_from(ruleset, request.deal)
        else:
            deck, proof = await self._secret_deal(ruleset, race_id, creator)
            source = {"source": SECRET_SOURCE}
        await self.store.create(NewRaceRow(
            race_id, creator, (ruleset.id, ruleset.version), source, codes(list(deck)), request.max_entrants,
            request.time_limit_seconds, self.clock(), proof,
            fingerprint(deck),  # the solver refuses its copies until the race has finished
            request.rated,
        ))
        return await self._load(race_id)

    async def _secret_deal(
        self, ruleset: Ruleset, race_id: uuid.UUID, creator: uuid.UUID
    ) -> tuple[tuple[int, ...], JSON]:
        """A deck nobody can look up, proven winnable (in the solver's worker process, off the event
        loop), and its proof; 503 if none was proven within ``deal_wait_seconds``, and refused at
        once when the deal queue is full or the creator has their share of it (``RaceDealQueue``)."""
        with self.deal_queue.entry(creator):
            secret = await self.secret.value()
            try:
                found = await asyncio.wait_for(secret_deal(secret, ruleset, race_id, self.prover),
                                               self.deal_wait_seconds)
            except TimeoutError:
                raise Unavailable("the race's deal is being proven winnable by the solver and took too long: "
                                  "try again in a moment", retry_after=5) from None
        return found.deck, found.proof()

    async def secret_deck(
        self, ruleset_id: str, race_id: uuid.UUID, creator: uuid.UUID
    ) -> tuple[Ruleset, tuple[int, ...], JSON]:
        """The ruleset, and the secret deal race ``race_id`` gets (the same in every process: it is
        derived from the race's id) with its proof, for a race made by other means than ``create``."""
        ruleset = get_ruleset(ruleset_id)
        deck, proof = await self._secret_deal(ruleset, race_id, creator)
        return ruleset, deck, proof

    async def start_pair(
        self, conn: AsyncConnection[Any], race_id: uuid.UUID, players: tuple[uuid.UUID, uuid.UUID],
        dealt: tuple[Ruleset, tuple[int, ...], JSON], time_limit_seconds: int | None, rated: bool,
    ) -> None:
        """A race of ``players`` (its creator first) on the secret deal ``dealt`` (``secret_deck``),
        made and started at once in the caller's transaction: an accepted challenge's race."""
        ruleset, deck, proof = dealt
        row = NewRaceRow(race_id, players[0], (ruleset.id, ruleset.version), {"source": SECRET_SOURCE},
                         codes(list(deck)), 2, time_limit_seconds, self.clock(), proof, fingerprint(deck), rated)
        await _run(await self.store.open_pair(conn, row, players[1]), row.now)

    async def race(self, race_id: uuid.UUID) -> RaceRow:
        """The race as stored (``current`` finishes it first if due)."""
        return await self._load(race_id)

    async def join(self, race_id: uuid.UUID, token: str | None) -> RaceRow:
        """A new entrant, if the race is open, has a free seat and does not have them yet."""
        player = await self._player(token, Scope.PLAY)
        now = self.clock()
        async with self.store.locked(race_id) as found:
            work = _existing(found, race_id)
            _joinable(work.race, player)
            await work.enter(player, len(work.race.entrants) + 1, now)
            await work.changed()
        return await self._load(race_id)

    async def start(self, race_id: uuid.UUID, token: str | None) -> RaceRow:
        """Deal every entrant their game, all at once, and set the race running: one transaction."""
        caller = await self._player(token, Scope.PLAY)
        now = self.clock()
        async with self.store.locked(race_id) as found:
            work = _existing(found, race_id)
            if caller != work.race.creator_id:
                raise Forbidden("only the player who created the race can start it")
            if work.race.status != OPEN:
                raise Conflict(f"the race has already {'started' if work.race.status == RUNNING else 'finished'}",
                               "race_not_open")
            await _run(work, now)
        return await self._load(race_id)

    async def leave(self, race_id: uuid.UUID, token: str | None) -> RaceRow:
        """``DELETE /races/{id}/entries/me``: the caller leaves the open race; its creator leaving
        cancels it (``LEFT_REASON``), and every entrant's race stream ends with that view. Refused,
        changing nothing, for a race they are not in (409 not_in_race) or one that has started
        (409 race_not_open)."""
        player = await self._player(token, Scope.PLAY)
        now = self.clock()
        async with self.store.locked(race_id) as found:
            work = _existing(found, race_id)
            if all(e.player_id != player for e in work.race.entrants):
                raise Conflict("you are not an entrant of this race: there is no entry of yours to take back",
                               "not_in_race")
            _still_open(work.race, "left")
            await work.remove(player)
            if work.race.creator_id != player:
                await work.changed()
            else:
                await work.cancel(now, LEFT_REASON)
        return await self._load(race_id)

    async def cancel(self, race_id: uuid.UUID, token: str | None) -> RaceRow:
        """``POST /races/{id}/cancel``: the creator cancels the open race (``CANCELLED_REASON``): it
        ends, never started. Refused, changing nothing, for anyone else (403 not_race_creator) and
        once it has started (409 race_not_open)."""
        caller = await self._player(token, Scope.PLAY)
        now = self.clock()
        async with self.store.locked(race_id) as found:
            work = _existing(found, race_id)
            if caller != work.race.creator_id:
                raise NotRaceCreator("only the player who created the race can cancel it")
            _still_open(work.race, "cancelled")
            await work.cancel(now, CANCELLED_REASON)
        return await self._load(race_id)

    async def entries(self, player_id: uuid.UUID) -> list[tuple[uuid.UUID, str, uuid.UUID | None]]:
        """(race, its status, the player's game) of every open or running race ``player_id`` is in."""
        return await self.store.entries_of(player_id)

    async def leave_open(self, race_id: uuid.UUID, player_id: uuid.UUID, reason: str) -> str | None:
        """Take ``player_id`` out of the race if it is still open (an account closing:
        service.races.leaving). A creator who leaves hands the race to the entrant who joined first
        after them; with nobody left it is cancelled with ``reason``. What happened: "left",
        "handed" or "cancelled" (None: not open, or not in it)."""
        now = self.clock()
        async with self.store.locked(race_id) as work:
            if work is None or work.race.status != OPEN or all(e.player_id != player_id for e in work.race.entrants):
                return None
            race = work.race
            await work.remove(player_id)
            if race.creator_id != player_id:
                await work.changed()
                return "left"
            others = sorted((e for e in race.entrants if e.player_id != player_id), key=lambda e: (e.joined_at, e.seat))
            if others:
                await work.changed(others[0].player_id)
                return "handed"
            await work.cancel(now, reason)
            return "cancelled"

    async def current(self, race_id: uuid.UUID) -> RaceRow:
        """The race, finished first if it is due (the last game ended, or its time is up)."""
        race = await self._load(race_id)
        if race.status == RUNNING and ending(race, self.clock()) is not None:
            await self.settle(race_id)
            race = await self._load(race_id)
        return race

    async def game_ended(self, race_id: uuid.UUID, game_id: uuid.UUID) -> None:
        """An entrant's game has ended: check its whole stored log now and keep its standing (its place
        counts from then on; the finish decides again, over every log), under a shared lock of the
        running race, so a finish in progress is waited for and never overwritten. Then finish the
        race if that was the last game."""
        async with self.store.shared(race_id) as work:
            entrant = None if work is None else next((e for e in work.race.entrants if e.game_id == game_id), None)
            if work is not None and entrant is not None:
                logs = await work.logs([game_id], None)
                await work.keep_standing(game_id, judge_one(work.race, entrant, logs[game_id]))
        await self.settle(race_id)

    async def settle(self, race_id: uuid.UUID) -> bool:
        """Finish the race if it is due; safe to call from any process at any time. Under the race's
        lock: each entrant's stored log read up to the ending's cutoff, the standings and places
        decided from them (``judge``) and written with the race finished; a rated race rated
        (``rating``) in the same transaction. True when this call finished the race."""
        async with self.store.locked(race_id) as work:
            if work is None or work.race.status != RUNNING:
                return False
            race = work.race
            end = ending(race, self.clock())
            if end is None:
                return False
            results = judge(race, await work.logs([e.game_id for e in race.entrants if e.game_id is not None],
                                                  end.cutoff))
            await work.record_results(results)
            if race.rated and self.rating is not None:
                await self.rating.rate_race(work.conn, race, results, end.finished_at)
            await work.finish(end.finished_at)
            await work.tell([_race_finished(race, result, end) for result in results])
            return True

    async def settle_due(self, limit: int = 50) -> int:
        """Finish the running races whose time is up that no request has looked at (the periodic job
        of service.following.sweeper): their entrants hear ``raceFinished`` without asking. How many."""
        finished = 0
        for race_id in await self.store.due(self.clock(), limit):
            finished += await self.settle(race_id)
        return finished

    # ------------------------------------------------ as a contest on a shared deal (service.deals.contests)

    kind = SOURCE

    @staticmethod
    def contest_of(deal_source: Mapping[str, Any]) -> uuid.UUID | None:
        return race_of(deal_source)

    async def over(self, race_id: uuid.UUID) -> bool:
        return (await self.current(race_id)).status == FINISHED

    async def guard(self, game: GameRow, token: str | None) -> bool:
        """May the bearer of ``token`` see ``game`` (a race game)? Raises Forbidden while its race has
        not finished and they are not its player. Returns whether its hidden cards must stay hidden
        even if it has ended (until every game of the race has ended)."""
        race_id = race_of(game.deal)
        if race_id is None:
            return False
        race = await self.current(race_id)
        if race.status != FINISHED:
            if token is None:
                raise Forbidden("this game is in a race that is still running: only its player may look at it "
                                "(send their bearer token) until the race has finished")
            if await self._player(token, Scope.READ_PRIVATE) != game.player_id:
                raise Forbidden("this game is in a race that is still running: only its player may look at it "
                                "until the race has finished")
        return not race.games_ended

    async def lobby(self, limit: int, cursor: str | None = None) -> LobbyPage:
        """Open races to join, newest first (a summary each; join one by its id), a page at a time
        from the ``cursor`` (the ``next`` of the previous page)."""
        key = None if cursor is None else lobby_key(cursor)
        rows = await self.store.open_races(limit + 1, key)
        races = [
            LobbyRace(race_id, creator, name, (ruleset_id, version), source, seats, entrants, time_limit, created_at,
                      rated, bot)
            for race_id, creator, name, ruleset_id, version, source, seats, time_limit, created_at, entrants, rated, bot
            in rows
        ]
        page = races[:limit]
        following = cursors.encode(_LOBBY_CURSOR, page[-1].created_at, page[-1].id) if len(races) > limit else None
        return LobbyPage(page, following)

    async def record(self, player_id: uuid.UUID) -> RaceTally:
        """Races played (finished races the player was dealt a game in) and won (place 1)."""
        for race_id in await self.store.unsettled(player_id):
            await self.current(race_id)  # a race whose time is up counts now, not at its next view
        played, won = await self.store.record(player_id)
        return RaceTally(played, won)

    async def _load(self, race_id: uuid.UUID) -> RaceRow:
        race = await self.store.load(race_id)
        if race is None:
            raise NotFound(f"no race {race_id}")
        return race


def _deal_games(race: RaceRow) -> list[DealtGame]:
    """One game per entrant, all of the race's deck, in the order they entered."""
    first = deal(get_ruleset(*race.ruleset), parse_deck(race.deck), race_source(race.id))
    state = initial_state(first)
    events = [NewEvent(1, event_type(first), event_data(first))]
    snapshot = state_to_snapshot(state)
    return [
        DealtGame(uuid.uuid4(), entrant.player_id, race_source(race.id), state.status.value, snapshot, events)
        for entrant in race.entrants
    ]


async def _run(work: RaceWork, now: datetime) -> None:
    """Deal every entrant their game, all at ``now``, and set the race running (its row locked); each
    entrant's account hears of it, with their own game (``raceStarted``)."""
    race = work.race
    dealt = _deal_games(race)
    await work.run(dealt, now)
    await work.tell([
        outbox.AccountEvent(game.player_id, outbox.RACE_STARTED, {
            "race": str(race.id), "game": str(game.game_id), "entrants": len(dealt),
            "timeLimitSeconds": race.time_limit_seconds,
        })
        for game in dealt
    ])


def _race_finished(race: RaceRow, result: Result, end: Ending) -> outbox.AccountEvent:
    """The ``raceFinished`` event of one entrant: their place (None: unranked) among how many, and
    whether the time limit ended the race."""
    game = next((e.game_id for e in race.entrants if e.player_id == result.player_id), None)
    return outbox.AccountEvent(result.player_id, outbox.RACE_FINISHED, {
        "race": str(race.id), "game": None if game is None else str(game), "place": result.place,
        "entrants": len(race.entrants), "timeUp": end.cutoff is not None, "rated": race.rated,
    })


def _existing(work: RaceWork | None, race_id: uuid.UUID) -> RaceWork:
    """The race's work, or 404."""
    if work is None:
        raise NotFound(f"no race {race_id}")
    return work


def _joinable(race: RaceRow, player_id: uuid.UUID) -> None:
    """Refuse (409) a join of a race that is not open, that has the player already, or is full."""
    if race.status != OPEN:
        raise Conflict(f"the race has {'started' if race.status == RUNNING else 'finished'}: "
                       "entries are closed", "race_not_open")
    if any(e.player_id == player_id for e in race.entrants):
        raise Conflict("you have already entered this race", "already_entered")
    if len(race.entrants) >= race.max_entrants:
        raise Conflict(f"the race is full: all {race.max_entrants} places are taken", "race_full")


def _still_open(race: RaceRow, what: str) -> None:
    """Refuse (409 race_not_open) to change a race that is no longer open."""
    if race.status == RUNNING:
        raise Conflict(f"the race has started: it can no longer be {what}", "race_not_open")
    if race.status != OPEN:
        ended = "was cancelled" if race.cancelled_reason is not None else "has finished"
        raise Conflict(f"the race {ended}: it can no longer be {what}", "race_not_open")
