"""The games feature's use cases besides the move: dealing a game and reading games.

``Games`` deals a game (a seed, deck, pool, daily or lesson deal) and answers reads (a game's
view, its legal moves, its events, its state at a version, a player's games and their export)
after ``GameAccess`` says the reader may see them. The move is ``Moves`` (service.games.moves), a
solver hint ``Hints`` (service.games.hints); the composition root (service.bootstrap) builds them
all once.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from datetime import datetime
from typing import Any

from domain import (
    GameState,
    Ruleset,
    deal,
    event_data,
    event_type,
    get_ruleset,
    initial_state,
    legal_moves,
)
from domain.codec import restore, state_to_snapshot
from domain.rulesets import DEFAULT_RULESET_ID

from ..deals.choice import parse_day
from ..deals.daily import daily_source, private_until
from ..deals.daily_deals import DailyDeals
from ..deals.lessons import lesson_ruleset_id
from ..deals.shared_deals import SharedDeals
from ..deals.sources import deal_from
from ..errors import BadRequest, DailyAlreadyPlayed, Forbidden, NotFound, Unauthorized
from ..players.tokens import Scope
from ..settings import Settings
from ..stats import projections
from ..store.event_store import DailyEntryTaken, EventStore
from ..store.game_records import GameRow, NewEvent, NewGame
from ..store.players import PlayerRow, PlayerStore
from .access import GameAccess
from .moves import Game, GameRepository
from .past_states import Checkpoints
from .views import cursor_of, game_list, parse_cursor, public_event, view_of, withheld
from .wire import EventPage, EventView, GameList, GameView, LegalMoves, move_request

JSON = dict[str, Any]
EXPORT_PAGE = 500
"""Events read per query while an export streams (keyset on the version)."""
EXPORT_GAMES_PAGE = 100
"""Games keyed per query while a player's games export streams (keyset on start time and id)."""


class Games:
    def __init__(self, store: EventStore, settings: Settings, access: GameAccess, daily: DailyDeals,
                 shared: SharedDeals, repository: GameRepository) -> None:
        self.store = store
        self.players = PlayerStore(store.pool)
        self.daily_past_days = settings.daily_past_days
        self.access = access
        self.clock = access.clock
        self.daily = daily
        self.shared = shared
        self.repository = repository  # a new game is remembered for its first move
        self.checkpoints = Checkpoints(store)  # past states fold from the nearest stored checkpoint

    # ------------------------------------------------------------ dealing

    async def create_game(self, token: str | None, ruleset_id: str | None, given: Mapping[str, Any]) -> GameView:
        """A new game of the token's player: ``ruleset_id`` (None: the default, or a lesson's own)
        and ``given``, the deal's source (``{"seed": 7}``, ``{"daily": "today"}``...; empty: the
        ruleset's default deal)."""
        player_id = await self.access.player(token, Scope.PLAY)
        requested = ruleset_id
        if ruleset_id is None:  # a lesson is played under its own ruleset (classic)
            ruleset_id = lesson_ruleset_id(given.get("lesson")) or DEFAULT_RULESET_ID
        ruleset = get_ruleset(ruleset_id)  # "" is unknown
        if len(given) > 1:
            sources = " and ".join(sorted(given))
            raise BadRequest(f"a deal names one source: seed, deck, pool, daily or lesson, not {sources}")
        if "daily" not in given:
            deck, source = deal_from(ruleset, given)
            created = await self._create(player_id, ruleset, deck, source, self.clock())
            if "deck" in given:
                await self.shared.note_a_copy(player_id, str(created.id), deck)
            return created
        now = self.clock()
        day = parse_day(given["daily"], now.date(), self.daily_past_days)
        daily = await self.daily.deal(day)
        if requested is not None and ruleset.id != daily.ruleset.id:
            raise BadRequest(f"the daily deal is played under {daily.ruleset.id}, not {ruleset.id}")
        if private_until(daily_source(day, practice=False), now) is None:
            # Practice: a game of a date that is over (its deck is public now), as many as wanted.
            return await self._create(player_id, daily.ruleset, daily.deck, daily_source(day, practice=True), now)
        try:  # the player's entry for the date: their one game of it while the date is on
            return await self._create(player_id, daily.ruleset, daily.deck, daily_source(day, practice=False), now)
        except DailyEntryTaken:  # the unique index games_daily_entry_key: one entry, however many ask at once
            raise DailyAlreadyPlayed(day, await self.daily.entry_of(player_id, day)) from None

    async def _create(
        self, player_id: uuid.UUID, ruleset: Ruleset, deck: tuple[int, ...], source: JSON, now: datetime
    ) -> GameView:
        first = deal(ruleset, deck, source)
        state = initial_state(first)
        game_id = uuid.uuid4()
        work = self.store.unit_of_work()
        work.create(NewGame(game_id, player_id, (ruleset.id, ruleset.version), source, state.status.value,
                            state_to_snapshot(state), [NewEvent(1, event_type(first), event_data(first))], now))
        work.add(projections.game_started(ruleset.id, source))
        await work.commit()
        player = await self.players.get_player(player_id)
        game = Game(game_id, player_id, source, now, None, state, True, *_name_and_bot(player))
        self.repository.remember(game)
        return view_of(game, state, withheld(source, now))

    # ------------------------------------------------------------ reads

    async def stored_game(self, game_id: uuid.UUID, ended_from_replica: bool = False) -> GameRow:
        """The game's stored row (its snapshot and the events after it, version and times), or
        ``NotFound``; ``ended_from_replica``: an ended game may come from the replica."""
        game = await self.store.load_game(game_id, ended_from_replica)
        if game is None:
            raise NotFound(f"no game {game_id}")
        return game

    async def game_and_state(self, game_id: uuid.UUID, ended_from_replica: bool = False) -> tuple[GameRow, GameState]:
        game = await self.stored_game(game_id, ended_from_replica)
        return game, restore(game.snapshot, game.tail, game.version)

    async def view(self, game_id: uuid.UUID, token: str | None = None) -> GameView:
        game, state = await self.game_and_state(game_id, ended_from_replica=True)
        withhold = await self.access.readable(game, token)
        return view_of(game, state, withhold)

    async def legal_moves(self, game_id: uuid.UUID, token: str | None = None) -> LegalMoves:
        game, state = await self.game_and_state(game_id)
        await self.access.readable(game, token)
        return LegalMoves(version=state.version, moves=[move_request(m) for m in legal_moves(state)])

    async def events(self, game_id: uuid.UUID, after: int, limit: int, token: str | None = None) -> EventPage:
        game = await self.stored_game(game_id)
        withhold = await self.access.readable(game, token)  # first: it may refuse
        reveal = game.finished_at is not None and not withhold
        rows = await self.store.read_events(game_id, after, limit)
        last = rows[-1].version if rows else after
        events = [public_event(r.version, r.type, r.data, r.recorded_at, reveal) for r in rows]
        return EventPage(items=events, next=str(last) if last < game.version else None)

    async def event_export(
        self, game_id: uuid.UUID, after: int, token: str | None = None
    ) -> AsyncIterator[list[EventView]]:
        """Every event after ``after`` up to the game's version now, read in pages by version (keyset)
        so a long log is never held whole. The reader is checked here, before the first page."""
        game = await self.stored_game(game_id)
        withhold = await self.access.readable(game, token)
        reveal = game.finished_at is not None and not withhold
        return self._event_pages(game_id, after, game.version, reveal)

    async def _event_pages(
        self, game_id: uuid.UUID, after: int, upto: int, reveal: bool
    ) -> AsyncIterator[list[EventView]]:
        while after < upto:
            rows = await self.store.read_events(game_id, after, min(EXPORT_PAGE, upto - after))
            if not rows:
                return
            after = rows[-1].version
            yield [public_event(r.version, r.type, r.data, r.recorded_at, reveal) for r in rows]

    async def games_export(
        self, player_id: uuid.UUID, since: datetime | None, until: datetime | None,
        after: tuple[datetime, uuid.UUID] | None, most: int | None,
    ) -> AsyncIterator[dict[str, Any]]:
        """A player's public games, oldest first, each with its whole event log, as public reads
        show them (a daily game before its date is over and a race game while its race runs are
        left out); after ``most`` games, a last ``next`` line names where the rest begins."""
        if await self.players.get_player(player_id) is None:
            raise NotFound(f"no player {player_id}")
        return self._public_games(player_id, since, until, after, most)

    async def _public_games(
        self, player_id: uuid.UUID, since: datetime | None, until: datetime | None,
        after: tuple[datetime, uuid.UUID] | None, most: int | None,
    ) -> AsyncIterator[dict[str, Any]]:
        async for line in self._game_lines(player_id, since, until, after, most, owner=False):
            yield line

    async def _game_lines(
        self, player_id: uuid.UUID, since: datetime | None, until: datetime | None,
        after: tuple[datetime, uuid.UUID] | None, most: int | None, *, owner: bool,
    ) -> AsyncIterator[dict[str, Any]]:
        """The player's games, keyset-paged, each with its log as its reader may see it: the public
        (games not yet public left out) or the ``owner`` (every game; a deck withheld as the owner's
        own reads withhold it)."""
        sent = 0
        while True:
            keys = await self.store.player_game_keys(player_id, since, until, after, EXPORT_GAMES_PAGE)
            for key in keys:
                game, state = await self.game_and_state(key[1])
                try:
                    withhold = await (self.access.owner_withholds(game) if owner else self.access.readable(game, None))
                except (Unauthorized, Forbidden):
                    continue  # not public yet
                if most is not None and sent == most:
                    yield {"type": "next", "after": cursor_of(*after) if after else None}
                    return
                view = view_of(game, state, withhold)
                reveal = game.finished_at is not None and not withhold
                rows = await self.store.read_events(game.id, 0, game.version)
                events = [public_event(r.version, r.type, r.data, r.recorded_at, reveal) for r in rows]
                yield {"type": "game", "game": view, "events": events}
                sent += 1
                after = key
            if len(keys) < EXPORT_GAMES_PAGE:
                return

    def owner_game_lines(self, player_id: uuid.UUID) -> AsyncIterator[JSON]:
        """Every game of the player with its whole log, as its owner may see it (the account export)."""
        return self._game_lines(player_id, None, None, None, None, owner=True)

    async def state_at(self, game_id: uuid.UUID, version: int, token: str | None = None) -> GameView:
        """The game's view after ``version`` events. A state at or after the stored snapshot
        starts from it (no further query); an older one folds the events after the nearest
        checkpoint at or below ``version`` (service.games.past_states), fewer than 500."""
        game = await self.stored_game(game_id)
        withhold = await self.access.readable(game, token)
        if not 1 <= version <= game.version:
            raise NotFound(f"game {game_id} has versions 1 to {game.version}, not {version}")
        taken_at = game.version - len(game.tail)  # the stored snapshot's version
        if version >= taken_at:  # from the snapshot, with the events after it up to ``version``
            state = restore(game.snapshot, game.tail[: version - taken_at], version)
        else:  # before the snapshot: from the nearest checkpoint
            state = await self.checkpoints.state_at(game_id, version)
        return view_of(game, state, withhold)

    async def player_games(
        self, player_id: uuid.UUID, status: str | None, cursor: str | None, limit: int
    ) -> GameList:
        """A player's games, newest first, a page at a time: ``next`` is the ``cursor`` of the next page."""
        after_key = None if cursor is None else parse_cursor(cursor)
        if await self.players.get_player(player_id) is None:
            raise NotFound(f"no player {player_id}")
        ended = None if status is None else status == "ended"
        return game_list(await self.store.player_games(player_id, ended, after_key, limit + 1), limit)


def _name_and_bot(player: PlayerRow | None) -> tuple[str, bool]:
    return ("", False) if player is None else (player.name, player.bot)
