"""The move use case: load the game, let the rules decide, save the outcome.

``Moves.play`` is the one way a move (draw, recycle, card move, undo, resign, a solver hint's
mark) is made: it takes the game's turn in this process and opens the move's unit of work
(``GameRepository.begin``, a ``MoveWork``): the work gives it the game, the use case decides on
it with the domain's ``apply``, records the change and commits; then it settles a race the move
ended. Everything about *how* a game is read and written lives in the work and its repository:
this process's cache, the snapshot and the events after it, group commit, the idempotent reply,
the projections and account event of a game's end in the move's transaction, and the retry when
a cached copy turned out to be behind (the work gives the stored game next). Nothing below the
use case calls back into it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, NamedTuple, Protocol

import msgspec

from domain import (
    Command,
    DomainError,
    Event,
    GameState,
    UndoHistoryNeeded,
    apply,
    command_to_api,
    event_data,
    event_type,
)
from domain.codec import event_from_data, restore, state_to_snapshot

from ..context import PLAYER
from ..deals.contests import RACE, TOURNAMENT, contest_id
from ..errors import Forbidden, IdempotencyKeyReused, NotFound, Unauthorized, Unavailable, VersionConflict
from ..metrics import CONFLICTS_AT_IF_MATCH, CONFLICTS_AT_WRITE, MOVES_APPLIED, MOVES_ILLEGAL
from ..players.tokens import Credentials, Scope, TokenCache
from ..stats import projections
from ..store import outbox
from ..store.event_store import ConcurrencyConflict, EventStore, IdempotencyRace
from ..store.game_records import Append, Figures, GameRow, IdempotentReply, NewEvent, StoredEvent
from ..store.snapshots import snapshot_due
from ..store.unit_of_work import UnitOfWork
from .batching import AppendBatcher, Deciding
from .past_states import Checkpoints
from .views import move_result
from .wire import MoveResult

JSON = dict[str, Any]
log = logging.getLogger("canfield")


class Game(NamedTuple):
    """A game as a move sees it; ``confirmed`` when just read from the store rather than from
    this process's cache (a cached copy may be behind another process's moves). Immutable; a
    named tuple, like the other values a move makes here, because a move makes several and a
    frozen dataclass costs about three times as much to construct (docs/performance.md)."""

    id: uuid.UUID
    player_id: uuid.UUID
    deal: JSON
    started_at: Any
    finished_at: Any
    state: GameState
    confirmed: bool
    player_name: str = ""
    player_bot: bool = False

    @property
    def version(self) -> int:
        return self.state.version

    @classmethod
    def of(cls, row: GameRow) -> Game:
        state = restore(row.snapshot, row.tail, row.version)
        return cls(row.id, row.player_id, row.deal, row.started_at, row.finished_at, state, True, row.player_name,
                   row.player_bot)


def figures_of(state: GameState) -> Figures:
    """What the games list shows of ``state`` (the store keeps them as columns)."""
    return Figures(state.status.value, state.move_count, state.undo_count, state.assisted)


def pending_append(
    game_id: uuid.UUID, expected_version: int, events: list[NewEvent], state: GameState, now: datetime,
    token_id: uuid.UUID | None = None,
) -> Append:
    """A decided move (``events`` leading from ``expected_version`` to ``state``) as the store's
    batch takes it: the state's figures and, only when one is due (``snapshots.snapshot_due``),
    its snapshot; ``token_id``: the token it came with, which must still be live when it is written."""
    snapshot = state_to_snapshot(state) if snapshot_due(expected_version, events) else None
    return Append(game_id, expected_version, events, figures_of(state), snapshot, now, token_id)


class Change(NamedTuple):
    """A decided move: the game before and after it, and the events that lead there."""

    before: Game
    after: Game
    events: list[NewEvent]
    now: datetime
    token_id: uuid.UUID | None = None  # the token it came with (set by ``MoveWork.record``)

    def pending(self) -> Append:
        """The move as group commit writes it (no end, no idempotent reply; a snapshot when due)."""
        return pending_append(self.before.id, self.before.version, self.events, self.after.state, self.now,
                              self.token_id)

    def alone(self, reply: IdempotentReply | None) -> Append:
        """The move as it is written alone: always with its snapshot, its end time if it ends the
        game, and ``reply`` under its Idempotency-Key, if any."""
        after = self.after
        return Append(after.id, self.before.version, self.events, figures_of(after.state),
                      state_to_snapshot(after.state), self.now, self.token_id, after.finished_at, reply)

    def reply(self) -> MoveResult:
        """The move's reply: the new view and the events it appended, as its player sees them."""
        return move_result(self.after, self.events, self.now)

    def finish(self) -> projections.Finish | None:
        """What the stats learn when this move ends the game (lesson games teach them nothing)."""
        state, game = self.after.state, self.after
        if state.playing or not projections.counted(game.deal):
            return None
        return projections.Finish(game.id, game.player_id, state.ruleset.id, game.deal, state.status.value,
                                  state.move_count, state.undo_count, state.assisted, game.started_at,
                                  game.finished_at or self.now)

    def logged(self) -> list[StoredEvent]:
        """The move's events as its write stores them (recorded at ``now``)."""
        return [StoredEvent(e.version, e.type, e.data, self.now) for e in self.events]


ABANDONED = "abandoned"
"""The ``reason`` of a ``gameEnded`` event whose game the service ended (``GameAbandoned``)."""


def game_ended(change: Change) -> JSON:
    """The ``gameEnded`` event's data: the game, its end status (won, stalled or resigned) and why
    (the status, or ``abandoned``), its move count and its race, if any. No card."""
    state, game = change.after.state, change.after
    abandoned = bool(change.events) and change.events[-1].type == "GameAbandoned"
    race = contest_id(game.deal, RACE)
    status = state.status.value
    return {"game": str(game.id), "status": status, "reason": ABANDONED if abandoned else status,
            "moveCount": state.move_count, "race": None if race is None else str(race)}


def change_of(game: Game, state: GameState, events: list[Event], now: datetime) -> Change:
    """The change the domain's ``events`` (leading to ``state``) make to ``game``, decided at ``now``."""
    if not events:
        return Change(game, game, [], now)
    new_events = [NewEvent(game.version + i + 1, event_type(e), event_data(e)) for i, e in enumerate(events)]
    finished_at = game.finished_at or (None if state.playing else now)
    after = Game(game.id, game.player_id, game.deal, game.started_at, finished_at, state, True, game.player_name,
                 game.player_bot)
    return Change(game, after, new_events, now)


@dataclass(frozen=True, slots=True)
class Idempotent:
    """A move sent with an Idempotency-Key: the key and the hash of the move it was sent with."""

    key: str
    request_hash: bytes

    @classmethod
    def of(cls, key: str | None, command: Command) -> Idempotent | None:
        if key is None:
            return None
        return cls(key, hashlib.sha256(msgspec.json.encode(command_to_api(command))).digest())


class Played(NamedTuple):
    """A move's outcome: its reply (the game's view and the events, typed), the game's version
    after it, whether an Idempotency-Key returned the first reply again, and the game after the
    move (None for a replayed reply)."""

    reply: MoveResult
    version: int
    replayed: bool
    game: Game | None = None


class MoveWork:
    """One move's unit of work (``GameRepository.begin``), opened by the use case with ``with``:
    ``next_game`` gives the game to decide on (None once the move is played), ``record`` takes the
    change decided on it and ``commit`` writes it; the outcome is ``played``.

    Inside: the first game is this process's cached copy when it has one (and the move has no
    Idempotency-Key), else the stored game, read with the token and any reply stored under the
    key (a stored reply ends the loop at once: ``played`` is it again). Whatever a stale copy
    could explain makes the loop give the stored game next, up to the repository's ``retries``:
    a refusal of a cached copy (``stale``), a change with no events on one, a conflict at the
    write (except with ``strict``, an If-Match: then ``VersionConflict``), or another request
    storing the same key first. While the work is open the move counts as being decided in the
    batcher (group commit waits for it)."""

    __slots__ = ("attempts", "caller", "change", "current", "deciding", "game", "game_id", "idempotent", "played",
                 "repository", "strict", "token")

    def __init__(
        self, repository: GameRepository, game_id: uuid.UUID, token: str, idempotent: Idempotent | None, strict: bool
    ) -> None:
        self.repository = repository
        self.game_id = game_id
        self.token = token
        self.idempotent = idempotent
        self.strict = strict
        # the token's credentials as this process knows them (read again after each load), and the
        # cached copy of the game, which a move with an Idempotency-Key never uses
        self.caller = None if idempotent is not None else repository.tokens.get(token)
        self.game = None if idempotent is not None else repository.cached(game_id, self.caller)  # may refuse it
        self.attempts = 0
        self.current: Game | None = None  # the game the loop gave last
        self.change: Change | None = None  # the change recorded on it
        self.played: Played | None = None
        self.deciding = Deciding(repository.batcher)  # last: ended by ``__exit__``

    def __enter__(self) -> MoveWork:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.deciding.end()  # a write in this process no longer waits for this move

    async def next_game(self) -> Game | None:
        """The game to decide on: the cached copy first, else the stored game; None once the move
        is played (written, or its reply stored under the Idempotency-Key found)."""
        if self.played is not None:
            return None
        game, self.game = self.game, None  # a copy is decided on once: the next attempt reads the stored game
        if self.attempts == self.repository.retries:
            raise Unavailable("the game is changing too fast to apply this move now; try again")
        if game is None:
            if self.attempts:
                await asyncio.sleep(random.uniform(0, 0.002 * self.attempts))  # spread racing retries apart
            game, self.played = await self.repository.load(self.game_id, self.token, self.idempotent)
            if self.played is not None:
                return None  # the reply stored under the Idempotency-Key, again
            self.caller = self.repository.tokens.get(self.token)  # as the load found it
        self.attempts += 1
        self.current, self.change = game, None
        return game

    def stale(self, refusal: DomainError | VersionConflict) -> bool:
        """Whether the rules' refusal may be a stale copy's (the cached game): then the loop decides
        again on the stored game. A refusal of the stored game is final (and counted)."""
        assert self.current is not None
        if not self.current.confirmed:
            return True
        (MOVES_ILLEGAL if isinstance(refusal, DomainError) else CONFLICTS_AT_IF_MATCH).inc()
        return False

    def record(self, change: Change) -> None:
        """The change decided on the game the loop gave (no events: nothing to write)."""
        caller = self.caller
        self.change = change._replace(token_id=None if caller is None else caller.token_id)

    async def commit(self) -> None:
        """Write the recorded change (``GameRepository.save``); ``played`` once it is written, else
        the loop gives the stored game to decide on again."""
        change = self.change
        assert change is not None
        game = change.before
        if not change.events:  # nothing to record (a solver hint on a game already assisted)
            if game.confirmed:
                self.played = Played(change.reply(), game.version, False)
            return
        try:
            reply = await self.repository.save(change, self.idempotent, self.deciding)
        except ConcurrencyConflict:
            CONFLICTS_AT_WRITE.inc()
            self.repository.tokens.drop(self.token)  # the token may have been revoked: the next load tells
            if self.strict:
                await self.repository.load(game.id, self.token, None)  # a revoked token is a 401, not a conflict
                raise VersionConflict(
                    f"the game moved on from version {game.version} while this move was made: reload and try again"
                ) from None
            return
        except IdempotencyRace:
            return  # the next load returns what the first request with this key stored
        MOVES_APPLIED.inc()
        self.played = Played(reply, change.after.version, False, change.after)


class GameRepository:
    """Games for moves: this process's cache of the games it wrote last, a move's reads (``load``,
    ``history``) and its write (``save``). ``begin`` opens a move's unit of work (``MoveWork``),
    which decides again on the stored game whatever a stale cached copy could explain, up to
    ``retries`` times."""

    def __init__(
        self, store: EventStore, batcher: AppendBatcher, tokens: TokenCache, cache_size: int, retries: int = 12
    ) -> None:
        self.store = store
        self.batcher = batcher
        self.tokens = tokens
        self.cache_size = cache_size
        self.retries = retries
        self.cache: dict[uuid.UUID, Game] = {}  # games this process wrote last, by id, oldest first

    def begin(
        self, game_id: uuid.UUID, token: str, idempotent: Idempotent | None = None, strict: bool = False
    ) -> MoveWork:
        """The unit of work of one move on ``game_id`` by ``token``'s player; ``strict`` (an
        If-Match) turns a conflict at the write into ``VersionConflict`` instead of deciding again."""
        return MoveWork(self, game_id, token, idempotent, strict)

    def cached(self, game_id: uuid.UUID, caller: Credentials | None) -> Game | None:
        """This process's last copy of the game, when it also knows the token (``caller``, from
        this process's token cache) may play."""
        game = self.cache.get(game_id)
        if caller is None or game is None or Scope.PLAY not in caller.scopes:
            return None
        PLAYER.set(caller.player_id)
        if caller.player_id != game.player_id:  # neither a game's player nor a token's owner ever changes
            raise Forbidden("this game belongs to another player")
        return Game(game.id, game.player_id, game.deal, game.started_at, game.finished_at, game.state, False,
                    game.player_name, game.player_bot)

    async def load(
        self, game_id: uuid.UUID, token: str, idempotent: Idempotent | None
    ) -> tuple[Game, Played | None]:
        """The stored game, checked to be the token's player's, and the reply its idempotency
        key stored, if any (a key used with another move is refused)."""
        loaded = await self.store.load(
            game_id, token, None if idempotent is None else idempotent.key, self.tokens.clock()
        )
        if loaded.caller is None:
            self.tokens.drop(token)
            raise Unauthorized("the bearer token is not valid (unknown, revoked or expired)")
        caller = Credentials.of(loaded.caller)
        self.tokens.remember(token, caller)
        PLAYER.set(caller.player_id)
        if Scope.PLAY not in caller.scopes:
            raise Forbidden("this token may not play: it lacks the 'play' scope")
        if loaded.game is None:
            raise NotFound(f"no game {game_id}")
        if caller.player_id != loaded.game.player_id:
            raise Forbidden("this game belongs to another player")
        game = Game.of(loaded.game)
        stored = loaded.stored_response
        if stored is None or idempotent is None:
            return game, None
        if loaded.stored_request != idempotent.request_hash:
            raise IdempotencyKeyReused("this Idempotency-Key was already used for a different move in this game")
        return game, Played(msgspec.convert(stored, MoveResult), stored["game"]["version"], True)

    async def history(self, game: Game) -> list[Any]:
        """The game's stored events, for an undo below the state's undo window."""
        rows = await self.store.read_events_upto(game.id, game.version)
        return [event_from_data(row.type, row.data) for row in rows]

    async def save(
        self, change: Change, idempotent: Idempotent | None, deciding: Deciding | None = None
    ) -> MoveResult:
        """Write the move and return its reply. With group commit when nothing else must go in
        its transaction (the reply is made while the batch's statement is in flight), else in a
        unit of work of its own: the idempotent reply in the move's statement, and for the move
        that ends the game the stats projections and the player's ``gameEnded`` event in its
        transaction. ``deciding``: the move's count in the batcher, ended here (it is decided)."""
        try:
            if idempotent is None and change.after.state.playing:
                queued = self.batcher.queue(change.pending(), deciding)
                await queued.sent  # the database is busy with what this move waits for: make its reply now
                try:
                    reply = change.reply()
                finally:
                    await queued.written()  # the move's outcome, which a failing reply does not change
            else:
                if deciding is not None:
                    deciding.end()
                reply = change.reply()
                await self._commit_alone(change, idempotent, reply)
        except ConcurrencyConflict:
            self.cache.pop(change.before.id, None)
            raise
        self.remember(change.after)
        return reply

    async def _commit_alone(self, change: Change, idempotent: Idempotent | None, reply: MoveResult) -> None:
        work = self.store.unit_of_work()
        keyed = None
        if idempotent is not None:
            keyed = IdempotentReply(idempotent.key, idempotent.request_hash, msgspec.to_builtins(reply))
        work.append(change.alone(keyed))
        if not change.after.state.playing:
            await self._record_end(work, change)
        await work.commit()

    async def _record_end(self, work: UnitOfWork, change: Change) -> None:
        """What the move that ends the game adds to its transaction: the stats projections
        (``Change.finish``) and the ``gameEnded`` event of the player's account."""
        finish = change.finish()
        if finish is not None:
            work.add(*await projections.game_finished(finish, change.logged(), self.store.pool))
        work.tell(outbox.AccountEvent(change.after.player_id, outbox.GAME_ENDED, game_ended(change)))

    def remember(self, game: Game) -> None:
        self.cache.pop(game.id, None)
        self.cache[game.id] = game
        if len(self.cache) > self.cache_size:
            del self.cache[next(iter(self.cache))]  # the least recently written game


class RaceReferee(Protocol):
    """Who hears of a race game that a move ended (``service.races.races.Races``)."""

    async def game_ended(self, race_id: uuid.UUID, game_id: uuid.UUID) -> None: ...


class TournamentReferee(Protocol):
    """Who hears of a tournament game that a move ended (``service.tournaments.tournaments.Tournaments``)."""

    async def game_ended(self, tournament_id: uuid.UUID, game_id: uuid.UUID) -> None: ...


class _Turns:
    """The moves on one game waiting in this process, and the lock they take turns on."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0  # holding or waiting for the lock


class Moves:
    """The move use case: ``play`` one move on a game of the token's player."""

    def __init__(
        self, games: GameRepository, clock: Callable[[], datetime], races: RaceReferee | None = None,
        checkpoints: Checkpoints | None = None, tournaments: TournamentReferee | None = None,
    ) -> None:
        self.games = games
        self.clock = clock
        self.races = races
        self.tournaments = tournaments
        self.checkpoints = checkpoints
        self._turns: dict[uuid.UUID, _Turns] = {}

    async def play(
        self, game_id: uuid.UUID, token: str | None, command: Command, if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> Played:
        """One move, in its unit of work (``GameRepository.begin``). The moves of one game in this
        process take turns (first come, first served): without that, two clients of one game
        starve each other, since a move decided on the cached game needs one round trip and a
        retry after a conflict two. Between processes the conditional write decides."""
        if token is None:
            raise Unauthorized("a move needs 'Authorization: Bearer <token>' of the game's player")
        idempotent = Idempotent.of(idempotency_key, command)
        turns = self._turns.get(game_id)
        if turns is None:
            turns = self._turns[game_id] = _Turns()
        turns.users += 1
        try:
            async with turns.lock:
                # the move's unit of work: decide on the game it gives, record the change, commit; it
                # gives the stored game to decide on again when the one decided on was a stale copy
                with self.games.begin(game_id, token, idempotent, strict=if_match is not None) as work:
                    while (game := await work.next_game()) is not None:
                        try:
                            change = await self._decide(command, if_match, game)
                        except (DomainError, VersionConflict) as refusal:
                            if work.stale(refusal):
                                continue
                            raise
                        work.record(change)
                        await work.commit()
        finally:
            turns.users -= 1
            if not turns.users:
                del self._turns[game_id]
        played = work.played
        assert played is not None  # the loop ends once the move is played (or raises)
        if played.game is not None and self.checkpoints is not None:  # a checkpoint every 500 versions
            self.checkpoints.after_move(game_id, played.version, len(played.reply.events))
        if played.game is not None and not played.game.state.playing:
            await self.settle(played.game)
        return played

    async def _decide(self, command: Command, if_match: int | None, game: Game) -> Change:
        """The rules' verdict on ``command`` (raises ``IllegalMove``, ``GameOver`` or
        ``VersionConflict``)."""
        if if_match is not None and if_match != game.version:
            if if_match < 0:
                raise VersionConflict('a weak ETag (W/"...") never matches If-Match, which compares tags strongly: '
                                      f'send the game\'s ETag as it came, "{game.version}"')
            raise VersionConflict(f"the game is at version {game.version}, not {if_match}: reload and try again")
        try:
            state, events = apply(game.state, command)
        except UndoHistoryNeeded:  # an undo below the state's undo window: its older moves are in the log
            state, events = apply(game.state, command, await self.games.history(game))
        return change_of(game, state, events, self.clock())

    async def settle(self, game: Game) -> None:
        """A race game has ended: its race may be over now. The move is already committed, so a
        failure here is only logged: the race's finish checks every log again, and the next look
        at the race settles it."""
        tournament_id = contest_id(game.deal, TOURNAMENT)
        if tournament_id is not None and self.tournaments is not None:
            try:
                await self.tournaments.game_ended(tournament_id, game.id)
            except Exception as error:
                log.warning("tournament %s: not settled after its game ended (%r); the next request will",
                            tournament_id, error)
        race_id = contest_id(game.deal, RACE)
        if race_id is None or self.races is None:
            return
        try:
            await self.races.game_ended(race_id, game.id)
        except Exception as error:
            log.warning("race %s: not settled after its game ended (%r); the next request will", race_id, error)
