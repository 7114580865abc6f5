"""The move use case: load the game, let the rules decide, save the outcome.

``Moves.play`` is the one way a move (draw, recycle, card move, undo, resign, a solver hint's
mark) is made: it takes the game's turn in this process, asks ``GameRepository.update`` to run
``decide`` (the domain's ``apply``) on the game and save what it decided, and settles a race the
move ended. Everything about *how* a game is read and written lives in the repository: this
process's cache, the snapshot and the events after it, group commit, the idempotent reply, and
the retry when a cached copy turned out to be behind.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
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
from ..errors import Forbidden, IdempotencyKeyReused, NotFound, Unauthorized, Unavailable, VersionConflict
from ..metrics import CONFLICTS_AT_IF_MATCH, CONFLICTS_AT_WRITE, MOVES_APPLIED, MOVES_ILLEGAL
from ..players.tokens import Credentials, Scope, TokenCache
from ..races.races import race_of
from ..stats import projections
from ..store import outbox
from ..store.event_store import ConcurrencyConflict, EventStore, IdempotencyRace, OnCommit
from ..store.game_records import Figures, GameRow, NewEvent, PendingAppend
from ..store.snapshots import snapshot_due
from ..tournaments.standings import tournament_of
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
) -> PendingAppend:
    """A decided move (``events`` leading from ``expected_version`` to ``state``) as the store's
    batch takes it: the state's figures and, only when one is due (``snapshots.snapshot_due``),
    its snapshot; ``token_id``: the token it came with, which must still be live when it is written."""
    snapshot = state_to_snapshot(state) if snapshot_due(expected_version, events) else None
    return PendingAppend(game_id, expected_version, events, figures_of(state), snapshot, now, token_id)


class Change(NamedTuple):
    """A decided move: the game before and after it, and the events that lead there."""

    before: Game
    after: Game
    events: list[NewEvent]
    now: datetime
    token_id: uuid.UUID | None = None  # the token it came with (set by ``GameRepository``)

    def pending(self) -> PendingAppend:
        return pending_append(self.before.id, self.before.version, self.events, self.after.state, self.now,
                              self.token_id)

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

    def on_end(self) -> OnCommit | None:
        """What the transaction of the move that ends the game also writes: the stats projections
        (``finish``) and the ``gameEnded`` event of the player's account (service.store.outbox)."""
        if self.after.state.playing:
            return None
        finish = self.finish()
        project = None if finish is None else projections.game_finished(finish)
        player, told = self.after.player_id, game_ended(self)

        async def run(conn: Any) -> None:
            if project is not None:
                await project(conn)
            await outbox.append(conn, player, outbox.GAME_ENDED, told)

        return run


ABANDONED = "abandoned"
"""The ``reason`` of a ``gameEnded`` event whose game the service ended (``GameAbandoned``)."""


def game_ended(change: Change) -> JSON:
    """The ``gameEnded`` event's data: the game, its end status (won, stalled or resigned) and why
    (the status, or ``abandoned``), its move count and its race, if any. No card."""
    state, game = change.after.state, change.after
    abandoned = bool(change.events) and change.events[-1].type == "GameAbandoned"
    race = race_of(game.deal)
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


Decide = Callable[[Game], Awaitable[Change]]
"""The rules' verdict on one game: the change a move makes (no events: nothing to record)."""


class GameRepository:
    """Games for moves. ``update`` reads a game (this process's cache first, else the store),
    runs a decision on it and saves the change, conditional on the version it was decided on;
    whatever a stale cached copy could explain (a refusal, an If-Match mismatch, a conflict) is
    decided again on the stored game, up to ``retries`` times."""

    def __init__(
        self, store: EventStore, batcher: AppendBatcher, tokens: TokenCache, cache_size: int, retries: int = 12
    ) -> None:
        self.store = store
        self.batcher = batcher
        self.tokens = tokens
        self.cache_size = cache_size
        self.retries = retries
        self.cache: dict[uuid.UUID, Game] = {}  # games this process wrote last, by id, oldest first

    async def update(
        self, game_id: uuid.UUID, token: str, decide: Decide, idempotent: Idempotent | None = None,
        strict: bool = False,
    ) -> Played:
        """Decide on the game and save the change; ``strict`` (an If-Match) turns a conflict
        at the save into ``VersionConflict`` instead of deciding again."""
        deciding = Deciding(self.batcher)  # a write in this process waits for it (batching)
        try:
            game = None if idempotent is not None else self.cached(game_id, token)
            for attempt in range(self.retries):
                if game is None:
                    if attempt:
                        await asyncio.sleep(random.uniform(0, 0.002 * attempt))  # spread racing retries apart
                    game, stored = await self.load(game_id, token, idempotent)
                    if stored is not None:
                        return stored
                played = await self._attempt(game, token, decide, idempotent, strict, deciding)
                if played is not None:
                    return played
                game = None  # the copy was behind, or another request took the key: the stored game
        finally:
            deciding.end()
        raise Unavailable("the game is changing too fast to apply this move now; try again")

    async def _attempt(
        self, game: Game, token: str, decide: Decide, idempotent: Idempotent | None, strict: bool,
        deciding: Deciding,
    ) -> Played | None:
        """One decision and save on ``game``; None when it must be tried again on the stored game."""
        try:
            change = await decide(game)
        except (DomainError, VersionConflict) as refusal:
            if game.confirmed:
                (MOVES_ILLEGAL if isinstance(refusal, DomainError) else CONFLICTS_AT_IF_MATCH).inc()
                raise
            return None
        if not change.events:  # nothing to record (a solver hint on a game already assisted)
            return Played(change.reply(), game.version, False) if game.confirmed else None
        caller = self.tokens.get(token)
        try:
            reply = await self.save(change._replace(token_id=None if caller is None else caller.token_id),
                                    idempotent, deciding)
        except ConcurrencyConflict:
            CONFLICTS_AT_WRITE.inc()
            self.tokens.drop(token)  # the token may have been revoked: the next load tells
            if strict:
                await self.load(game.id, token, None)  # a revoked token is a 401, not a conflict
                raise VersionConflict(
                    f"the game moved on from version {change.before.version} while this move was made: "
                    "reload and try again"
                ) from None
            return None
        except IdempotencyRace:
            return None  # the next load returns what the first request with this key stored
        MOVES_APPLIED.inc()
        return Played(reply, change.after.version, False, change.after)

    def cached(self, game_id: uuid.UUID, token: str) -> Game | None:
        """This process's last copy of the game, when it also knows the token may play."""
        caller = self.tokens.get(token)
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
        its transaction (the reply is made while the batch's statement is in flight), else alone,
        with its idempotent reply or the stats of the game it ends in the same transaction.
        ``deciding``: the move's count in the batcher, ended here (it is decided)."""
        try:
            if idempotent is None and change.after.state.playing:
                reply: MoveResult = await self.batcher.append(change.pending(), deciding, change.reply)
            else:
                if deciding is not None:
                    deciding.end()
                reply = change.reply()
                await self._append_alone(change, idempotent, reply)
        except ConcurrencyConflict:
            self.cache.pop(change.before.id, None)
            raise
        self.remember(change.after)
        return reply

    async def _append_alone(self, change: Change, idempotent: Idempotent | None, reply: MoveResult) -> None:
        after = change.after
        await self.store.append(
            after.id,
            change.before.version,
            change.events,
            figures=figures_of(after.state),
            snapshot=state_to_snapshot(after.state),  # the slow path always writes it
            finished_at=after.finished_at,
            now=change.now,
            idempotency_key=None if idempotent is None else idempotent.key,
            request_hash=None if idempotent is None else idempotent.request_hash,
            response=msgspec.to_builtins(reply) if idempotent is not None else None,
            on_finish=change.on_end(),
            token_id=change.token_id,
        )

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
        """One move. The moves of one game in this process take turns (first come, first served):
        without that, two clients of one game starve each other, since a move decided on the
        cached game needs one round trip and a retry after a conflict two. Between processes the
        conditional save decides."""
        if token is None:
            raise Unauthorized("a move needs 'Authorization: Bearer <token>' of the game's player")
        decide = partial(self._decide, command, if_match)
        idempotent = Idempotent.of(idempotency_key, command)
        turns = self._turns.get(game_id)
        if turns is None:
            turns = self._turns[game_id] = _Turns()
        turns.users += 1
        try:
            async with turns.lock:
                played = await self.games.update(game_id, token, decide, idempotent, strict=if_match is not None)
        finally:
            turns.users -= 1
            if not turns.users:
                del self._turns[game_id]
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
        tournament_id = tournament_of(game.deal)
        if tournament_id is not None and self.tournaments is not None:
            try:
                await self.tournaments.game_ended(tournament_id, game.id)
            except Exception as error:
                log.warning("tournament %s: not settled after its game ended (%r); the next request will",
                            tournament_id, error)
        race_id = race_of(game.deal)
        if race_id is None or self.races is None:
            return
        try:
            await self.races.game_ended(race_id, game.id)
        except Exception as error:
            log.warning("race %s: not settled after its game ended (%r); the next request will", race_id, error)
