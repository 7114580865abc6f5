"""Tournaments, duplicate play (API.md, "Tournaments"): every entrant plays the same secret deals in
the same order, each in an ordinary game of their own.

A tournament is created ``preparing``: its deals are derived from the server's deal secret
(``tournament_candidate_seed``) and proven winnable by the solver's worker process after the
creation has answered (``prepare``, a task of this process; any process that reads a tournament
still preparing, with no task of its own on it, starts one: every process derives the same deals,
and the first stored stays). Then it is ``upcoming`` until ``startsAt``, ``running`` for its
``minutes``, and ``finished`` once its time is up or every entrant has finished every deal,
whichever comes first. ``POST /tournaments/{id}/games`` deals the caller their next deal; the
standings read the games (``service.tournaments.standings``). Any request that finds a
tournament due finishes it (``settle``: every log replayed through the rules, cut at the end,
places decided, a rated tournament rated), so no process has to watch the clock.

No leak between entrants: while the tournament runs, its games answer only to their players
(``guard``, called by ``GameAccess.readable`` as races' is) and keep their hidden cards withheld even
once ended (another entrant may not have played that deal yet); the view shows figures only.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from domain import deal, event_data, event_type, get_ruleset, initial_state, parse_deck
from domain.cards import codes
from domain.codec import state_to_snapshot
from domain.fingerprint import fingerprint
from domain.rulesets import DEFAULT_RULESET_ID

from .. import cursors
from ..deals.daily import Prover, secret_seed
from ..deals.deal_secret import DealSecret
from ..errors import BadRequest, Conflict, CursorInvalid, Forbidden, NotFound, TournamentOutOfRange
from ..players.accounts import Accounts
from ..players.tokens import Scope
from ..races.race_deals import proven_deal
from ..store import outbox
from ..store.game_records import GameRow, NewEvent
from .rows import (
    FINISHED,
    PREPARING,
    RUNNING,
    STATUSES,
    UPCOMING,
    DealtGame,
    EntrantRow,
    Final,
    GameFigures,
    Logs,
    NewTournamentRow,
    TournamentRating,
    TournamentRow,
    over,
)
from .standings import places, tournament_of, tournament_source, verified_tally
from .tournament_store import TournamentStore, TournamentWork

log = logging.getLogger("canfield")

DEALS = (2, 12)
MINUTES = (1, 1440)
START_GRACE = timedelta(minutes=1)  # a start this far in the past is taken (a client's clock, a slow request)
START_AHEAD = timedelta(days=30)

_LIST_CURSOR = "tournaments"
_LIST_REFUSAL = ("'cursor' is not a cursor of this list: pass the 'next' of the previous page, asked with the same "
                 "'status'")

@dataclass(frozen=True, slots=True)
class NewTournament:
    deals: int
    starts_at: datetime
    minutes: int
    ruleset: str | None = None
    rated: bool = False


def tournament_candidate_seed(secret: str, ruleset_id: str, tournament_id: uuid.UUID, number: int,
                              candidate: int) -> int:
    """The seed of candidate ``candidate`` of a tournament's deal ``number``: unknowable without the secret."""
    return secret_seed(secret, f"canfield-tournament:{ruleset_id}:{tournament_id}:{number}:{candidate}")


def status_of(tournament: TournamentRow, now: datetime) -> str:
    if tournament.finished_at is not None or now >= tournament.ends_at:
        return FINISHED
    if tournament.prepared_at is None:
        return PREPARING
    return UPCOMING if now < tournament.starts_at else RUNNING


def ending(tournament: TournamentRow, games: Sequence[GameFigures], entrants: int, now: datetime) -> datetime | None:
    """When the unfinished tournament ended, if it has: its time is up, or (running, someone entered)
    every entrant has finished every deal, at the last game's end."""
    if now >= tournament.ends_at:
        return tournament.ends_at
    if tournament.prepared_at is None or now < tournament.starts_at or entrants == 0:
        return None
    if len(games) < entrants * tournament.deal_count or any(game.finished_at is None for game in games):
        return None
    return max(game.finished_at for game in games if game.finished_at is not None)


def judge(tournament: TournamentRow, logs: Logs, decks: dict[int, list[str]]) -> list[Final]:
    """Every entrant's tally from their stored logs, and the places of those whose logs all replayed."""
    players = list(logs)
    tallies = [verified_tally(logs[player], tournament.id, tournament.ruleset, decks) for player in players]
    for player, tally in zip(players, tallies, strict=True):
        if not tally.verified:
            log.warning("tournament %s: the games of %s are not ranked (a log does not replay)", tournament.id, player)
    ranked = places([tally if tally.verified else None for tally in tallies])
    return [Final(player, tally.to_json(), place)
            for player, tally, place in zip(players, tallies, ranked, strict=True)]


def list_key(cursor: str, status: str | None) -> tuple[datetime, uuid.UUID]:
    """The (created, id) key of a cursor of the tournament list asked with ``status``; a 400 for anything else."""
    fields = cursors.decode(_LIST_CURSOR, cursor, _LIST_REFUSAL)
    if len(fields) != 3 or fields[0] != (status or "all"):
        raise CursorInvalid(_LIST_REFUSAL)
    return cursors.instant(fields[1], _LIST_REFUSAL), cursors.identifier(fields[2], _LIST_REFUSAL)


@dataclass(frozen=True, slots=True)
class Board:
    """A tournament as read at one moment: its row, entrants and games (``views.tournament_view``)."""

    tournament: TournamentRow
    entrants: list[EntrantRow]
    games: list[GameFigures]

    @property
    def revision(self) -> int:
        return self.tournament.version


@dataclass(frozen=True, slots=True)
class TournamentPage:
    """A page of the tournament list as read at ``now``: each row with its number of entrants."""

    rows: list[tuple[TournamentRow, int]]
    now: datetime
    next: str | None  # the cursor of the next page; None: this is the last


class Tournaments:
    """The tournament use cases. ``prover`` proves a candidate deal in the solver's worker process;
    ``rating``, what a rated tournament's finish also does (service.ratings), in its transaction."""

    def __init__(self, store: TournamentStore, clock: Callable[[], datetime], accounts: Accounts,
                 secret: DealSecret, prover: Prover, rating: TournamentRating | None = None) -> None:
        self.store = store
        self.clock = clock
        self.accounts = accounts
        self.secret = secret
        self.prover = prover
        self.rating = rating
        self.preparing: dict[uuid.UUID, asyncio.Task[None]] = {}

    async def _player(self, token: str | None, scope: Scope = Scope.PLAY) -> uuid.UUID:
        return (await self.accounts.authenticate(token, scope)).player_id

    async def create(self, token: str | None, request: NewTournament) -> Board:
        creator = await self._player(token)
        ruleset = get_ruleset(DEFAULT_RULESET_ID if request.ruleset is None else request.ruleset)
        now = self.clock()
        _check(request, now)
        tournament_id = uuid.uuid4()
        await self.store.create(NewTournamentRow(tournament_id, creator, (ruleset.id, ruleset.version), request.deals,
                                                 request.starts_at, request.minutes, request.rated, now))
        self._start_preparing(tournament_id)
        return await self.board(tournament_id)

    def _start_preparing(self, tournament_id: uuid.UUID) -> None:
        if tournament_id not in self.preparing:
            task = asyncio.create_task(self.prepare(tournament_id))
            self.preparing[tournament_id] = task
            task.add_done_callback(lambda _: self.preparing.pop(tournament_id, None))

    async def prepare(self, tournament_id: uuid.UUID) -> None:
        """Prove every deal of the tournament not stored yet, in order, store each, then mark it ready."""
        try:
            tournament = await self.store.load(tournament_id)
            if tournament is None or tournament.prepared_at is not None:
                return
            ruleset = get_ruleset(*tournament.ruleset)
            secret = await self.secret.value()
            stored = await self.store.stored_deals(tournament_id)
            for number in range(1, tournament.deal_count + 1):
                if number in stored:
                    continue
                seeds = partial(tournament_candidate_seed, secret, ruleset.id, tournament_id, number)
                found = await proven_deal(ruleset, seeds, self.prover, f"tournament {tournament_id} deal {number}")
                await self.store.store_deal(tournament_id, number, codes(list(found.deck)), fingerprint(found.deck),
                                            found.proof())
            await self.store.mark_prepared(tournament_id, self.clock())
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the next read of the tournament starts again where this stopped
            log.warning("tournament %s: its deals were not all proven (%r); the next read tries again",
                        tournament_id, error)

    async def close(self) -> None:
        """Stop the preparations of this process (another process's next read takes them up)."""
        tasks = list(self.preparing.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def board(self, tournament_id: uuid.UUID) -> Board:
        found = await self.store.board(tournament_id)
        if found is None:
            raise NotFound(f"no tournament {tournament_id}")
        return Board(*found)

    async def current(self, tournament_id: uuid.UUID) -> Board:
        """The tournament, finished first if it is due, its preparation taken up if nobody's is running."""
        board = await self.board(tournament_id)
        tournament = board.tournament
        if tournament.finished_at is None:
            due = ending(tournament, board.games, len(board.entrants), self.clock()) is not None
            if due and await self.settle(tournament_id):  # the lock only when the read says it is due
                board = await self.board(tournament_id)
            elif tournament.prepared_at is None:
                self._start_preparing(tournament_id)
        return board

    async def listing(self, status: str | None, cursor: str | None, limit: int) -> TournamentPage:
        """``GET /tournaments``: every tournament, or those of ``status`` now, newest first, a page at a
        time from ``cursor`` (the ``next`` of the page before, asked with the same ``status``)."""
        if status is not None and status not in STATUSES:
            raise BadRequest(f"'status' must be one of {', '.join(STATUSES)}, or left out for every tournament",
                             "unknown_tournament_status")
        before = None if cursor is None else list_key(cursor, status)
        now = self.clock()
        rows = await self.store.listing(status, now, before, limit + 1)
        page = rows[:limit]
        following = None
        if len(rows) > limit:
            last = page[-1][0]
            following = cursors.encode(_LIST_CURSOR, status or "all", last.created_at, last.id)
        return TournamentPage(page, now, following)

    async def join(self, tournament_id: uuid.UUID, token: str | None) -> Board:
        player = await self._player(token)
        await self.current(tournament_id)  # a tournament whose time is up finishes first
        await self.store.join(tournament_id, player, self.clock())
        return await self.board(tournament_id)

    async def next_game(self, tournament_id: uuid.UUID, token: str | None) -> uuid.UUID:
        """Deal the caller their next deal of the tournament (the one after their last), if it runs,
        they are in it and their last game has ended: the new game's id."""
        player = await self._player(token)
        await self.current(tournament_id)
        now = self.clock()
        async with self.store.locked(tournament_id) as found:
            work = _existing(found, tournament_id)
            tournament = work.tournament
            _check_running(tournament, now)
            if not await work.entered(player):
                raise Conflict("you have not entered this tournament: join it first (POST /tournaments/{id}/entries)",
                               "not_in_tournament")
            last = await work.last_game(player)
            if last is not None and last[1] is None:
                raise Conflict(f"your game of deal {last[0]} is still in play: finish it (win, or resign) first",
                               "tournament_game_in_play")
            number = 1 if last is None else last[0] + 1
            if number > tournament.deal_count:
                raise Conflict(f"you have played all {tournament.deal_count} deals of this tournament",
                               "tournament_deals_done")
            game = _deal_game(tournament, number, await work.deck(number))
            await work.deal(player, number, game, now)
            if number == 1:  # the account stream: the entrant's tournament has begun for them
                await work.tell([outbox.AccountEvent(player, outbox.TOURNAMENT_STARTED, {
                    "tournament": str(tournament_id), "game": str(game.game_id), "deals": tournament.deal_count,
                    "endsAt": tournament.ends_at.isoformat()})])
            await work.changed()
            return game.game_id

    async def settle(self, tournament_id: uuid.UUID) -> bool:
        """Finish the tournament if it is due; safe to call from any process at any time. Under its
        lock: every entrant's logs read cut at the end (at the time limit when that ended it), the
        tallies and places decided (``judge``) and written with the tournament finished, a rated
        one rated (``rating``) in the same transaction. True when this call finished it."""
        async with self.store.locked(tournament_id) as work:
            if work is None or work.tournament.finished_at is not None:
                return False
            tournament = work.tournament
            games = await work.games()
            players = await work.entrant_order()
            finished_at = ending(tournament, games, len(players), self.clock())
            if finished_at is None:
                return False
            cutoff = tournament.ends_at if finished_at >= tournament.ends_at else None
            logs = await work.logs(players, games, cutoff)
            finals = judge(tournament, logs, await work.decks())
            await work.record_finals(finals)
            if tournament.rated and self.rating is not None:
                placed = [(final.player_id, final.place) for final in finals if final.place is not None]
                await self.rating.rate_tournament(work.conn, tournament.id, tournament.ruleset[0], placed, finished_at)
            await work.tell([outbox.AccountEvent(final.player_id, outbox.TOURNAMENT_FINISHED, {
                "tournament": str(tournament_id), "place": final.place, "entrants": len(finals),
                "dealsWon": final.standing["dealsWon"], "rated": tournament.rated}) for final in finals])
            await work.changed(min(finished_at, tournament.ends_at))
            return True

    async def game_ended(self, tournament_id: uuid.UUID, game_id: uuid.UUID) -> None:
        """An entrant's game has ended: the standings changed, and the tournament may be over."""
        del game_id
        if not await self.settle(tournament_id):
            await self.store.touch(tournament_id)

    # ------------------------------------------------ as a contest on a shared deal (service.deals.contests)

    kind = "tournament"

    @staticmethod
    def contest_of(deal_source: Mapping[str, Any]) -> uuid.UUID | None:
        return tournament_of(deal_source)

    async def over(self, tournament_id: uuid.UUID) -> bool:
        return (await self.current(tournament_id)).tournament.finished_at is not None

    async def guard(self, game: GameRow, token: str | None) -> bool:
        """May the bearer of ``token`` see ``game`` (a tournament game)? Forbidden while its tournament
        has not finished and they are not its player. Returns whether its hidden cards stay hidden
        (until the tournament has finished: others play the same deal)."""
        tournament_id = tournament_of(game.deal)
        if tournament_id is None:
            return False
        board = await self.current(tournament_id)
        if board.tournament.finished_at is not None:
            return False
        reason = ("this game is in a tournament that is still running: only its player may look at it until the "
                  "tournament has finished")
        if token is None:
            raise Forbidden(f"{reason} (send their bearer token)")
        if await self._player(token, Scope.READ_PRIVATE) != game.player_id:
            raise Forbidden(reason)
        return True


def _check(request: NewTournament, now: datetime) -> None:
    """Refuse a tournament out of range, each with its own code (400)."""
    if not DEALS[0] <= request.deals <= DEALS[1]:
        raise TournamentOutOfRange(f"'deals' must be {DEALS[0]} to {DEALS[1]}, not {request.deals}",
                                   "tournament_deals_out_of_range")
    if not MINUTES[0] <= request.minutes <= MINUTES[1]:
        raise TournamentOutOfRange(f"'minutes' must be {MINUTES[0]} to {MINUTES[1]}, not {request.minutes}",
                                   "tournament_minutes_out_of_range")
    if request.starts_at.tzinfo is None:
        raise BadRequest("'startsAt' needs a UTC offset (2030-06-15T09:00:00Z)")
    if request.starts_at < now - START_GRACE:
        raise TournamentOutOfRange(f"'startsAt' has passed: it is {now.isoformat()} now",
                                   "tournament_start_passed")
    if request.starts_at > now + START_AHEAD:
        raise TournamentOutOfRange(f"'startsAt' is more than {START_AHEAD.days} days ahead",
                                   "tournament_start_too_far")


def _deal_game(tournament: TournamentRow, number: int, deck: list[str]) -> DealtGame:
    """The game of deal ``number`` for one entrant: an ordinary game of that deck."""
    source = tournament_source(tournament.id, number)
    first = deal(get_ruleset(*tournament.ruleset), parse_deck(deck), source)
    state = initial_state(first)
    return DealtGame(uuid.uuid4(), source, state.status.value, state_to_snapshot(state),
                     [NewEvent(1, event_type(first), event_data(first))])


def _existing(work: TournamentWork | None, tournament_id: uuid.UUID) -> TournamentWork:
    """The tournament's work, or 404."""
    if work is None:
        raise NotFound(f"no tournament {tournament_id}")
    return work


def _check_running(tournament: TournamentRow, now: datetime) -> None:
    if over(tournament, now):
        raise Conflict("the tournament is over: no more deals are dealt", "tournament_over")
    if tournament.prepared_at is None:
        raise Conflict("the tournament's deals are still being proven winnable: try again in a moment",
                       "tournament_preparing")
    if now < tournament.starts_at:
        raise Conflict(f"the tournament starts at {tournament.starts_at.isoformat()}", "tournament_not_started")
