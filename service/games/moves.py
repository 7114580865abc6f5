"""The move use case: load the game, let the rules decide, save the outcome.

``Moves.play`` is the one way a move (draw, recycle, card move, undo, resign, a solver hint's
mark) is made. ``GameRepository`` hides how a game is read (this process's cache first, the
store when it must) and how a decided move is written (``save``: group commit, alone, or with
its idempotent reply, whichever fits). A conflict is an exception all the way up.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple

import msgspec

from domain import Command, DomainError, GameState, UndoHistoryNeeded, apply, command_to_api, event_data, event_type
from domain.codec import event_from_data, restore, state_to_snapshot

from ..errors import BadRequest, Forbidden, NotFound, Unauthorized, Unavailable, VersionConflict
from ..stats import projections
from ..store.event_store import (
    ConcurrencyConflict,
    EventStore,
    Figures,
    GameRow,
    IdempotencyRace,
    NewEvent,
    PendingAppend,
    snapshot_due,
)
from ..store.players import token_hash
from .batching import AppendBatcher, Deciding

JSON = dict[str, Any]
View = Callable[["Game", datetime], JSON]  # a game's view at a moment (who may see what is the caller's rule)
Event = Callable[[NewEvent, datetime, bool], JSON]  # a new event as a client sees it (reveal or not)


class Game(NamedTuple):
    """A game as a move sees it; ``confirmed`` when just read from the store rather than from
    this process's cache (a cached copy may be behind another process's moves). Immutable; a
    named tuple, like the other values a move makes here (``Change``, ``Played``, the store's
    ``NewEvent`` and ``PendingAppend``): a move makes several, and a frozen dataclass costs about
    three times as much to construct (service CPU per move, README "Performance")."""

    id: uuid.UUID
    player_id: uuid.UUID
    deal: JSON
    started_at: Any
    finished_at: Any
    state: GameState
    confirmed: bool

    @property
    def version(self) -> int:
        return self.state.version

    @classmethod
    def of(cls, row: GameRow) -> Game:
        state = restore(row.snapshot, row.tail, row.version)
        return cls(row.id, row.player_id, row.deal, row.started_at, row.finished_at, state, True)


def figures_of(state: GameState) -> Figures:
    """What the games list shows of ``state`` (the store keeps them as columns)."""
    return Figures(state.status.value, state.move_count, state.undo_count, state.assisted)


def pending_append(
    game_id: uuid.UUID, expected_version: int, events: list[NewEvent], state: GameState, now: datetime
) -> PendingAppend:
    """A decided move (``events`` leading from ``expected_version`` to ``state``) as the store's
    batch takes it: the state's figures and, only when one is due (``event_store.snapshot_due``),
    its snapshot."""
    snapshot = state_to_snapshot(state) if snapshot_due(expected_version, events) else None
    return PendingAppend(game_id, expected_version, events, figures_of(state), snapshot, now)


class Change(NamedTuple):
    """A decided move: the game before and after it, and the events that lead there."""

    before: Game
    after: Game
    events: list[NewEvent]
    now: datetime

    def pending(self) -> PendingAppend:
        return pending_append(self.before.id, self.before.version, self.events, self.after.state, self.now)

    def finish(self) -> projections.Finish | None:
        """What the stats learn when this move ends the game (lesson games teach them nothing)."""
        state, game = self.after.state, self.after
        if state.playing or not projections.counted(game.deal):
            return None
        return projections.Finish(game.id, game.player_id, state.ruleset.id, game.deal, state.status.value,
                                  state.move_count, state.undo_count, state.assisted, game.started_at,
                                  game.finished_at or self.now)


@dataclass(frozen=True, slots=True)
class Idempotent:
    """A move sent with an Idempotency-Key: the key and the hash of the move it was sent with."""

    key: str
    request_hash: bytes


class Played(NamedTuple):
    body: JSON  # {"game": view, "events": [...]}
    version: int
    replayed: bool  # True when an Idempotency-Key returned the first result again


class TokenCache:
    """Bearer token hash -> player, for tokens this process has seen (tokens never change owner)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.players: dict[bytes, uuid.UUID] = {}

    def player(self, token: str) -> uuid.UUID | None:
        return self.players.get(token_hash(token))

    def remember(self, token: str, player_id: uuid.UUID) -> None:
        self.players[token_hash(token)] = player_id
        if len(self.players) > self.size:
            del self.players[next(iter(self.players))]


@dataclass(frozen=True, slots=True)
class Loaded:
    """What a move needs from the store: the game, and the reply an Idempotency-Key stored."""

    game: Game
    stored_request: bytes | None
    stored_reply: JSON | None


class GameRepository:
    """Games for moves: ``get`` from this process's cache (unconfirmed) or ``load`` from the
    store; ``save`` writes a decided move, conditional on the version it was decided on, and
    raises ``ConcurrencyConflict`` when the game had moved on (``IdempotencyRace`` when another
    request stored the same key first)."""

    def __init__(self, store: EventStore, batcher: AppendBatcher, tokens: TokenCache, cache_size: int) -> None:
        self.store = store
        self.batcher = batcher
        self.tokens = tokens
        self.cache_size = cache_size
        self.cache: dict[uuid.UUID, Game] = {}  # games this process wrote last, by id, oldest first

    def cached(self, game_id: uuid.UUID, token: str) -> Game | None:
        """This process's last copy of the game, when it also knows the token's player."""
        caller = self.tokens.player(token)
        game = self.cache.get(game_id)
        if caller is None or game is None:
            return None
        if caller != game.player_id:  # neither a game's player nor a token's owner ever changes
            raise Forbidden("this game belongs to another player")
        return Game(game.id, game.player_id, game.deal, game.started_at, game.finished_at, game.state, False)

    async def load(self, game_id: uuid.UUID, token: str, key: str | None) -> Loaded:
        """The stored game, checked to be the token's player's, with what ``key`` stored."""
        loaded = await self.store.load(game_id, token, key)
        if loaded.caller is None:
            raise Unauthorized("the bearer token is not valid")
        if loaded.game is None:
            raise NotFound(f"no game {game_id}")
        self.tokens.remember(token, loaded.caller)
        if loaded.caller != loaded.game.player_id:
            raise Forbidden("this game belongs to another player")
        return Loaded(Game.of(loaded.game), loaded.stored_request, loaded.stored_response)

    async def history(self, game: Game) -> list[Any]:
        """The game's stored events, for an undo below the state's undo window."""
        rows = await self.store.read_events_upto(game.id, game.version)
        return [event_from_data(row.type, row.data) for row in rows]

    async def save(
        self, change: Change, reply: Callable[[], JSON], idempotent: Idempotent | None = None,
        deciding: Deciding | None = None,
    ) -> JSON:
        """Write the move: with group commit when nothing else must go in its transaction, else
        alone (its idempotent reply, or the stats of the game it ends, in the same transaction).
        ``reply`` makes the move's reply, returned: called once, while a batch carrying the move
        is in flight where it can be (``AppendBatcher.append``), else before the write.
        ``deciding``: the move's count in the batcher, ended here (it is decided)."""
        finish = change.finish()
        try:
            if idempotent is None and change.after.state.playing:
                content: JSON = await self.batcher.append(change.pending(), deciding, reply)
            else:
                if deciding is not None:
                    deciding.end()
                content = reply()
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
                    response=content if idempotent is not None else None,
                    on_finish=None if finish is None else projections.game_finished(finish),
                )
        except ConcurrencyConflict:
            self.cache.pop(change.before.id, None)
            raise
        self.remember(change.after)
        return content

    def remember(self, game: Game) -> None:
        self.cache.pop(game.id, None)
        self.cache[game.id] = game
        if len(self.cache) > self.cache_size:
            del self.cache[next(iter(self.cache))]  # the least recently written game


class _Turns:
    """The moves on one game waiting in this process, and the lock they take turns on."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0  # holding or waiting for the lock


class Moves:
    """The move use case. ``view`` shapes a game's view for its player's reply, ``event`` a new
    event; ``ended`` hears of every game a move ended (after the commit)."""

    def __init__(
        self,
        games: GameRepository,
        clock: Callable[[], datetime],
        view: View,
        event: Event,
        withheld: Callable[[Mapping[str, Any], datetime], bool],
        ended: Callable[[Game], Awaitable[None]],
        retries: int,
    ) -> None:
        self.games = games
        self.clock = clock
        self.view = view
        self.event = event
        self.withheld = withheld
        self.ended = ended
        self.retries = retries
        self._turns: dict[uuid.UUID, _Turns] = {}

    async def play(
        self, game_id: uuid.UUID, token: str | None, command: Command, if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> Played:
        """One move, the moves of one game in this process taking turns (first come, first
        served). Without that, two clients of one game starve each other: a move decided on the
        cached game needs one round trip, a retry after a conflict two, so the retrier keeps
        losing to the other's next move until its retries run out. Between processes the
        conditional save still decides."""
        if token is None:
            raise Unauthorized("a move needs 'Authorization: Bearer <token>' of the game's player")
        turns = self._turns.get(game_id)
        if turns is None:
            turns = self._turns[game_id] = _Turns()
        turns.users += 1
        try:
            async with turns.lock:
                deciding = Deciding(self.games.batcher)  # a write in this process waits for it (batching)
                try:
                    return await self._play(game_id, token, command, if_match, idempotency_key, deciding)
                finally:
                    deciding.end()
        finally:
            turns.users -= 1
            if not turns.users:
                del self._turns[game_id]

    async def _play(
        self, game_id: uuid.UUID, token: str, command: Command, if_match: int | None, key: str | None,
        deciding: Deciding,
    ) -> Played:
        """Decide on the cached copy if there is one (one round trip); whatever a stale copy could
        explain (an If-Match mismatch, a refusal, a conflict) is decided again on the stored game."""
        idempotent = None if key is None else Idempotent(key, _request_hash(command))
        game = None if idempotent is not None else self.games.cached(game_id, token)
        for attempt in range(self.retries):
            if game is None:
                if attempt:
                    await asyncio.sleep(random.uniform(0, 0.002 * attempt))  # spread racing retries apart
                loaded = await self.games.load(game_id, token, key)
                if loaded.stored_reply is not None and idempotent is not None:
                    if loaded.stored_request != idempotent.request_hash:
                        raise BadRequest("this Idempotency-Key was already used for a different move in this game")
                    return Played(loaded.stored_reply, loaded.stored_reply["game"]["version"], True)
                game = loaded.game
            try:
                change = await self._decide(game, command, if_match)
            except (DomainError, VersionConflict):
                if game.confirmed:
                    raise
                game = None  # the cached copy may be behind: decide on the stored game
                continue
            if change is None:  # nothing to record (a solver hint on a game already assisted)
                if game.confirmed:
                    return Played({"game": self.view(game, self.clock()), "events": []}, game.version, False)
                game = None
                continue
            try:
                reply = await self.games.save(change, partial(self._reply, change), idempotent, deciding)
            except ConcurrencyConflict:
                if if_match is not None:
                    raise VersionConflict(
                        f"the game moved on from version {if_match} while this move was made: reload and try again"
                    ) from None
                game = None
                continue
            except IdempotencyRace:
                game = None  # the next load returns what the first request with this key stored
                continue
            if not change.after.state.playing:
                await self.ended(change.after)
            return Played(reply, change.after.version, False)
        raise Unavailable("the game is changing too fast to apply this move now; try again")

    async def _decide(self, game: Game, command: Command, if_match: int | None) -> Change | None:
        """The rules' verdict on ``command`` (raises ``IllegalMove`` or ``GameOver``); None when
        it records nothing."""
        if if_match is not None and if_match != game.version:
            raise VersionConflict(f"the game is at version {game.version}, not {if_match}: reload and try again")
        try:
            state, events = apply(game.state, command)
        except UndoHistoryNeeded:  # an undo below the state's undo window: its older moves are in the log
            state, events = apply(game.state, command, await self.games.history(game))
        if not events:
            return None
        now = self.clock()
        new_events = [NewEvent(game.version + i + 1, event_type(e), event_data(e)) for i, e in enumerate(events)]
        finished_at = game.finished_at or (None if state.playing else now)
        after = Game(game.id, game.player_id, game.deal, game.started_at, finished_at, state, True)
        return Change(game, after, new_events, now)

    def _reply(self, change: Change) -> JSON:
        """The reply to the move: the new view and the events it appended, as its player sees them."""
        reveal = not change.after.state.playing and not self.withheld(change.after.deal, change.now)
        return {
            "game": self.view(change.after, change.now),
            "events": [self.event(event, change.now, reveal) for event in change.events],
        }


def _request_hash(command: Command) -> bytes:
    return hashlib.sha256(msgspec.json.encode(command_to_api(command))).digest()
