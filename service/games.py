"""The application functions: every write goes through ``play`` or ``create_game``; reads are queries.

``play``: load the snapshot row -> decide -> evolve -> append events and the new snapshot in one
statement (conditional on the version loaded). A conflict retries on the fresh state, unless the
client sent If-Match, which makes it a 412.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import random
import secrets
import uuid
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec

from domain import (
    MAX_SEED,
    Command,
    DomainError,
    Event,
    GameOver,
    GameState,
    Ruleset,
    UseSolverHint,
    command_to_api,
    deal,
    decide,
    event_data,
    event_type,
    evolve,
    game_view,
    get_ruleset,
    hints,
    initial_state,
    legal_moves,
    parse_deck,
    redact,
    replay,
    shuffled_deck,
)
from domain.codec import event_from_data, snapshot_to_state, state_to_snapshot
from domain.rulesets import DEFAULT_RULESET_ID

from . import projections
from .batching import AppendBatcher, WriteAlone
from .daily import daily_source, private_until, public_source, reveals_hidden_cards
from .daily_deals import DailyDeals
from .deals import parse_day, pool_number, pool_of, random_pool_number
from .errors import BadRequest, Forbidden, NotFound, Unauthorized, Unavailable, VersionConflict
from .pool import load_pool
from .schemas import NewGame
from .settings import Settings
from .solving import SolverPool
from .store import (
    ConcurrencyConflict,
    DailyEntryTaken,
    EventStore,
    GameRow,
    IdempotencyRace,
    NewEvent,
    PendingAppend,
    StoredEvent,
    token_hash,
)

JSON = dict[str, Any]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class _Current:
    """A game as a move sees it: who owns it, where it came from, its state; ``confirmed`` when
    just read from the database rather than from this process's cache."""

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
    def of(cls, row: GameRow, confirmed: bool) -> _Current:
        state = snapshot_to_state(row.snapshot)
        return cls(row.id, row.player_id, row.deal, row.started_at, row.finished_at, state, confirmed)

    def view(self, now: datetime) -> JSON:
        return view_of(self.id, self.player_id, self.deal, self.started_at, self.finished_at, self.state, now)


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
class Played:
    body: JSON  # {"game": view, "events": [...]}
    version: int
    replayed: bool  # True when an Idempotency-Key returned the first result again


def view_of(game_id: uuid.UUID | str, player_id: uuid.UUID | str, deal_source: JSON, started_at: Any,
            finished_at: Any, state: GameState, now: datetime) -> JSON:
    """The API's game view at ``now``: the domain's part plus who, where from and when."""
    domain_view = game_view(state, withhold=not reveals_hidden_cards(deal_source, not state.playing, now))
    return {
        "id": str(game_id),
        "player": str(player_id),
        "ruleset": domain_view["ruleset"],
        "deal": public_source(deal_source),
        "baseRank": domain_view["baseRank"],
        "status": domain_view["status"],
        "version": domain_view["version"],
        "moveCount": domain_view["moveCount"],
        "undoCount": domain_view["undoCount"],
        "assisted": domain_view["assisted"],
        "startedAt": started_at,
        "finishedAt": finished_at,
        "table": domain_view["table"],
    }


def cursor_of(started_at: datetime, game_id: uuid.UUID) -> str:
    """An opaque page cursor: the sort key of the last game on a page."""
    return base64.urlsafe_b64encode(f"{started_at.isoformat()}|{game_id}".encode()).decode().rstrip("=")


def parse_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        started, game_id = text.split("|")
        key = datetime.fromisoformat(started), uuid.UUID(game_id)
    except ValueError:  # also binascii.Error and UnicodeDecodeError
        raise BadRequest("'before' is not a cursor of this list: pass the 'nextBefore' of the previous page") from None
    if key[0].tzinfo is None:
        raise BadRequest("'before' is not a cursor of this list: pass the 'nextBefore' of the previous page")
    return key


def public_event(version: int, kind: str, data: JSON, recorded_at: Any, reveal: bool) -> JSON:
    """A stored event as a client sees it; ``reveal`` (``daily.reveals_hidden_cards``) lets it
    show face-down cards (the first event's ``deck``)."""
    shown = data if reveal else redact(kind, data)
    if kind == "GameDealt" and isinstance(shown.get("deal"), Mapping):
        shown = {**shown, "deal": public_source(shown["deal"])}
    return {"version": version, "type": kind, "data": shown, "recordedAt": recorded_at}


class Games:
    def __init__(self, store: EventStore, settings: Settings, clock: Callable[[], datetime] = utc_now) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self.cache: dict[uuid.UUID, _Current] = {}  # games this process wrote last, by id
        self.tokens = TokenCache(settings.game_cache_size)
        self.solver = SolverPool()
        self.batcher = AppendBatcher(store, settings.move_batch_max)
        self.daily = DailyDeals(store.pool, settings.daily_secret, settings.daily_wait_seconds, clock)
        # one lock per game being written to in this process (gone when nobody holds or awaits it)
        self._writing: weakref.WeakValueDictionary[uuid.UUID, asyncio.Lock] = weakref.WeakValueDictionary()

    # ------------------------------------------------------------ players

    async def create_player(self, name: str) -> JSON:
        clean = " ".join(name.split())
        if not clean or not clean.isprintable():
            raise BadRequest("a player name needs at least one visible character and no control characters")
        player_id = uuid.uuid4()
        token = secrets.token_urlsafe(32)
        created_at = await self.store.create_player(player_id, clean, token)
        return {"id": str(player_id), "name": clean, "token": token, "createdAt": created_at}

    async def player(self, player_id: uuid.UUID) -> JSON:
        found = await self.store.get_player(player_id)
        if found is None:
            raise NotFound(f"no player {player_id}")
        return {"id": str(found[0]), "name": found[1], "createdAt": found[2]}

    async def player_games(self, player_id: uuid.UUID, status: str | None, before: str | None, limit: int) -> JSON:
        """A player's games, newest first, a page at a time: ``nextBefore`` is the ``before`` of the next page."""
        after_key = None if before is None else parse_cursor(before)
        if await self.store.get_player(player_id) is None:
            raise NotFound(f"no player {player_id}")
        ended = None if status is None else status == "ended"
        rows = await self.store.player_games(player_id, ended, after_key, limit + 1)
        page = rows[:limit]
        return {
            "games": [
                {
                    "id": str(row.id),
                    "ruleset": {"id": row.ruleset_id, "version": row.ruleset_version},
                    "deal": public_source(row.deal),
                    "status": row.status,
                    "version": row.version,
                    "moveCount": row.move_count,
                    "undoCount": row.undo_count,
                    "assisted": row.assisted,
                    "startedAt": row.started_at,
                    "finishedAt": row.finished_at,
                }
                for row in page
            ],
            "nextBefore": cursor_of(page[-1].started_at, page[-1].id) if len(rows) > limit else None,
        }

    async def authenticate(self, token: str | None) -> uuid.UUID:
        if token is None:
            raise Unauthorized("this request needs 'Authorization: Bearer <token>' (POST /players gives a token)")
        player_id = self.tokens.player(token) or await self.store.player_for_token(token)
        if player_id is None:
            raise Unauthorized("the bearer token is not valid")
        self.tokens.remember(token, player_id)
        return player_id

    # ------------------------------------------------------------ games

    async def create_game(self, token: str | None, request: NewGame) -> JSON:
        player_id = await self.authenticate(token)
        ruleset = get_ruleset(DEFAULT_RULESET_ID if request.ruleset is None else request.ruleset)  # "" is unknown
        given = {} if request.deal is None else {
            name: value for name, value in msgspec.structs.asdict(request.deal).items() if value is not None
        }
        if len(given) > 1:
            raise BadRequest(f"a deal names one source: seed, deck, pool or daily, not {' and '.join(sorted(given))}")
        if "daily" not in given:
            deck, source = self._deal(ruleset, given)
            return await self._create(player_id, ruleset, deck, source, self.clock())
        now = self.clock()
        day = parse_day(given["daily"], now.date(), self.settings.daily_past_days)
        daily = await self.daily.deal(day)
        if request.ruleset is not None and ruleset.id != daily.ruleset.id:
            raise BadRequest(f"the daily deal is played under {daily.ruleset.id}, not {ruleset.id}")
        if day == now.date():  # the player's entry for the date, unless they have one already
            try:
                return await self._create(player_id, daily.ruleset, daily.deck, daily_source(day, practice=False), now)
            except DailyEntryTaken:
                pass
        # Practice: a later game of the date's deal, or one dealt after the date (its deck is public).
        return await self._create(player_id, daily.ruleset, daily.deck, daily_source(day, practice=True), now)

    async def _create(
        self, player_id: uuid.UUID, ruleset: Ruleset, deck: tuple[int, ...], source: JSON, now: datetime
    ) -> JSON:
        first = deal(ruleset, deck, source)
        state = initial_state(first)
        game_id = uuid.uuid4()
        await self.store.create_game(
            game_id,
            player_id,
            (ruleset.id, ruleset.version),
            source,
            state.status.value,
            state_to_snapshot(state),
            [NewEvent(1, event_type(first), event_data(first))],
            now,
            on_create=projections.game_started(ruleset.id, source),
        )
        game = _Current(game_id, player_id, source, now, None, state, True)
        self._remember(game)
        return game.view(now)

    def _deal(self, ruleset: Ruleset, given: Mapping[str, Any]) -> tuple[tuple[int, ...], JSON]:
        """The deck and deal source of a seed, deck or pool deal (or the ruleset's default)."""
        if "deck" in given:
            return parse_deck(given["deck"]), {"source": "deck"}
        if "pool" in given or ("seed" not in given and ruleset.default_deal == "pool" and load_pool(ruleset.id)):
            number = pool_number(ruleset, given["pool"]) if "pool" in given else random_pool_number(ruleset)
            return shuffled_deck(pool_of(ruleset).deal(number).seed), {"source": "pool", "pool": number}
        seed = given.get("seed")
        if seed is None:
            seed = secrets.randbelow(MAX_SEED + 1)
        return shuffled_deck(seed), {"source": "seed", "seed": seed}

    async def _game(self, game_id: uuid.UUID) -> tuple[GameRow, GameState]:
        game = await self.store.load_game(game_id)
        if game is None:
            raise NotFound(f"no game {game_id}")
        return game, snapshot_to_state(game.snapshot)

    async def readable(self, game: GameRow, token: str | None) -> None:
        """Refuse a read of a game its reader may not see: a daily game answers only to its
        player until its date is over (its cards would tell anyone else the day's deck)."""
        day = private_until(game.deal, self.clock())
        if day is None:
            return
        reason = f"a daily game answers only to its player until its date ({day}, UTC) is over"
        if token is None:
            raise Unauthorized(f"{reason}: send the player's bearer token")
        if await self.authenticate(token) != game.player_id:
            raise Forbidden(reason)

    async def _readable_game(self, game_id: uuid.UUID, token: str | None) -> tuple[GameRow, GameState]:
        game, state = await self._game(game_id)
        await self.readable(game, token)
        return game, state

    async def view(self, game_id: uuid.UUID, token: str | None = None) -> JSON:
        game, state = await self._readable_game(game_id, token)
        return view_of(game.id, game.player_id, game.deal, game.started_at, game.finished_at, state, self.clock())

    async def play(
        self,
        game_id: uuid.UUID,
        token: str | None,
        command: Command,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> Played:
        """``_play`` with the moves on one game in this process taking turns (first come, first
        served). Without that, two clients of one game starve each other: a move decided on the
        cached game needs one round trip, a retry after a conflict two, so the retrier keeps
        losing to the other's next move until its retries run out (a 503). Between processes the
        conditional append still decides, as before."""
        lock = self._writing.get(game_id)
        if lock is None:
            lock = self._writing[game_id] = asyncio.Lock()
        async with lock:
            return await self._play(game_id, token, command, if_match, idempotency_key)

    async def _play(
        self,
        game_id: uuid.UUID,
        token: str | None,
        command: Command,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> Played:
        """Decide and append one move. The first try may use this process's cached copy of the
        game (one round trip); anything it cannot be sure of (a conflict, an If-Match or a refusal
        that a stale copy could explain) is tried again on the stored game."""
        if token is None:
            raise Unauthorized("a move needs 'Authorization: Bearer <token>' of the game's player")
        request_hash = hashlib.sha256(msgspec.json.encode(command_to_api(command))).digest() if idempotency_key else None
        caller = self.tokens.player(token)  # known to this process, or None (then the load below asks)
        current = None if idempotency_key or caller is None else self._cached(game_id)
        for attempt in range(self.settings.move_retries):
            if current is None:
                if attempt:
                    await asyncio.sleep(random.uniform(0, 0.002 * attempt))  # spread racing retries apart
                loaded = await self.store.load(game_id, token, idempotency_key)
                if loaded.caller is None:
                    raise Unauthorized("the bearer token is not valid")
                if loaded.game is None:
                    raise NotFound(f"no game {game_id}")
                self.tokens.remember(token, loaded.caller)
                if loaded.caller != loaded.game.player_id:
                    raise Forbidden("this game belongs to another player")
                if loaded.stored_response is not None:
                    if loaded.stored_request != request_hash:
                        raise BadRequest("this Idempotency-Key was already used for a different move in this game")
                    return Played(loaded.stored_response, loaded.stored_response["game"]["version"], True)
                current = _Current.of(loaded.game, confirmed=True)
            elif caller != current.player_id:
                raise Forbidden("this game belongs to another player")
            game, current = current, None
            if if_match is not None and if_match != game.version:
                if game.confirmed:
                    raise VersionConflict(f"the game is at version {game.version}, not {if_match}: reload and try again")
                continue  # the cached copy may be behind: ask the database
            try:
                events = decide(game.state, command)
            except DomainError:
                if game.confirmed:
                    raise
                continue
            if not events:  # nothing to record (a solver hint on a game already assisted)
                if not game.confirmed:
                    continue
                return Played({"game": game.view(self.clock()), "events": []}, game.version, False)
            state = game.state
            for event in events:
                state = evolve(state, event)
            now = self.clock()
            finished_at = game.finished_at or (None if state.playing else now)
            new_events = [
                NewEvent(game.version + index + 1, event_type(event), event_data(event))
                for index, event in enumerate(events)
            ]
            after = _Current(game.id, game.player_id, game.deal, game.started_at, finished_at, state, True)
            reveal = reveals_hidden_cards(game.deal, not state.playing, now)
            body = {
                "game": after.view(now),
                "events": [public_event(e.version, e.type, e.data, now, reveal) for e in new_events],
            }
            try:
                if idempotency_key is None and state.playing:
                    await self._append_batched(PendingAppend(game.id, game.version, new_events, state.status.value,
                                                             state_to_snapshot(state), now))
                else:
                    await self.store.append(
                        game.id,
                        game.version,
                        new_events,
                        status=state.status.value,
                        snapshot=state_to_snapshot(state),
                        finished_at=finished_at,
                        now=now,
                        idempotency_key=idempotency_key,
                        request_hash=request_hash,
                        response=body if idempotency_key else None,
                        on_finish=None if state.playing else projections.game_finished(
                            projections.Finish(
                                game.id, game.player_id, state.ruleset.id, game.deal, state.status.value,
                                state.move_count, state.undo_count, state.assisted, game.started_at, finished_at or now,
                            ),
                        ),
                    )
            except ConcurrencyConflict:
                self.cache.pop(game.id, None)
                if if_match is not None:
                    raise VersionConflict(
                        f"the game moved on from version {if_match} while this move was made: reload and try again"
                    ) from None
                continue
            except IdempotencyRace:
                continue  # the next load returns what the first request with this key stored
            self._remember(after)
            return Played(body, state.version, False)
        raise Unavailable("the game is changing too fast to apply this move now; try again")

    async def _append_batched(self, move: PendingAppend) -> None:
        """Group commit (service.batching); a move its batch could not write is written alone."""
        try:
            written = await self.batcher.append(move)
        except WriteAlone:
            await self.store.append_pending(move)
            return
        if not written:
            raise ConcurrencyConflict()

    def _cached(self, game_id: uuid.UUID) -> _Current | None:
        game = self.cache.get(game_id)
        return None if game is None else dataclasses.replace(game, confirmed=False)

    def _remember(self, game: _Current) -> None:
        self.cache.pop(game.id, None)
        self.cache[game.id] = game
        if len(self.cache) > self.settings.game_cache_size:
            del self.cache[next(iter(self.cache))]  # the least recently written game

    async def legal_moves(self, game_id: uuid.UUID, token: str | None = None) -> JSON:
        _, state = await self._readable_game(game_id, token)
        return {"version": state.version, "moves": [command_to_api(m) for m in legal_moves(state)]}

    async def hints(self, game_id: uuid.UUID, solver: bool = False, token: str | None = None) -> JSON:
        """Ranked heuristic hints; with ``solver`` also the next move of a winning line, which
        marks the game assisted (an event), so only the game's player may ask for it."""
        if not solver:
            _, state = await self._readable_game(game_id, token)
            return {"version": state.version, "hints": [{"move": command_to_api(h.move), "reason": h.reason} for h in hints(state)]}
        if token is None:
            raise Unauthorized("solver hints mark the game assisted: they need the player's bearer token")
        game, state = await self._game(game_id)
        if await self.authenticate(token) != game.player_id:
            raise Forbidden("this game belongs to another player")
        if not state.playing:
            raise GameOver(f"the game is over ({state.status.value})")
        result, move = await self.solver.next_move(state_to_snapshot(state), self.settings.solver_hint_seconds)
        played = await self.play(game_id, token, UseSolverHint())
        return {
            "version": played.version,
            "hints": [{"move": command_to_api(h.move), "reason": h.reason} for h in hints(state)],
            "solver": {"result": result, "move": move},
        }

    async def events(self, game_id: uuid.UUID, after: int, limit: int, token: str | None = None) -> JSON:
        game = await self.store.load_game(game_id)
        if game is None:
            raise NotFound(f"no game {game_id}")
        await self.readable(game, token)
        reveal = reveals_hidden_cards(game.deal, game.finished_at is not None, self.clock())
        rows = await self.store.read_events(game_id, after, limit)
        last = rows[-1].version if rows else after
        return {
            "events": [public_event(r.version, r.type, r.data, r.recorded_at, reveal) for r in rows],
            "nextAfter": last if last < game.version else None,
        }

    async def state_at(self, game_id: uuid.UUID, version: int, token: str | None = None) -> JSON:
        game = await self.store.load_game(game_id)
        if game is None:
            raise NotFound(f"no game {game_id}")
        await self.readable(game, token)
        if not 1 <= version <= game.version:
            raise NotFound(f"game {game_id} has versions 1 to {game.version}, not {version}")
        rows = await self.store.read_events_upto(game_id, version)
        state = replay(_decoded(rows))
        finished_at = game.finished_at if not state.playing else None
        return view_of(game.id, game.player_id, game.deal, game.started_at, finished_at, state, self.clock())


def _decoded(rows: list[StoredEvent]) -> list[Event]:
    return [event_from_data(row.type, row.data) for row in rows]
