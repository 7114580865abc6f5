"""The Games facade: the one object the controllers call for players, games, stats and races.

It creates players and authenticates tokens (``store.players``), deals games (a seed, deck, pool,
daily or lesson deal), holds the move use case (``moves``, service.games.moves), asks the
solver's worker processes for hints, and answers reads (a game's view, its events, its state at
a version) after checking the reader may see them. ``stats``,
``daily`` and ``races`` are the services it holds for those parts of the API.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from domain import (
    MAX_SEED,
    GameOver,
    GameState,
    Ruleset,
    UseSolverHint,
    command_to_api,
    deal,
    event_data,
    event_type,
    get_ruleset,
    hints,
    initial_state,
    legal_moves,
    parse_deck,
    shuffled_deck,
)
from domain.codec import restore, state_to_snapshot
from domain.rulesets import DEFAULT_RULESET_ID

from ..challenges.challenges import Challenges
from ..deals.choice import deal_pool_of, parse_day, pool_number, random_pool_number
from ..deals.daily import (
    PROOF_MAX_SECONDS,
    PROOF_MAX_STATES,
    Proof,
    daily_source,
    private_until,
    prove,
    reveals_hidden_cards,
    shown_source,
)
from ..deals.daily_deals import DailyDeals
from ..deals.deal_pools import load_deal_pool
from ..deals.deal_secret import DealSecret
from ..deals.live_decks import DAILY, TOURNAMENT, LiveDeal, LiveDecks
from ..deals.solver_workers import SolverWorkers
from ..errors import BadRequest, Conflict, DailyAlreadyPlayed, Forbidden, NotFound, Unauthorized
from ..metrics import SHARED_DEAL_COPIES_DEALT, SHARED_DEAL_COPIES_REFUSED
from ..players.accounts import Accounts
from ..players.tokens import Scope, TokenCache
from ..races.race_deals import RaceDealQueue
from ..races.race_store import FINISHED, RaceStore
from ..races.races import Races, race_of
from ..ratings.rating_store import RatingStore
from ..ratings.ratings import Ratings
from ..settings import Settings
from ..stats import projections
from ..stats.queries import Stats
from ..store.event_store import DailyEntryTaken, EventStore
from ..store.game_records import GameRow, NewEvent
from ..store.players import PlayerRow, PlayerStore
from ..tournaments.standings import tournament_of
from ..tournaments.tournament_store import TournamentStore
from ..tournaments.tournaments import Tournaments
from .batching import AppendBatcher
from .leaving import leave_races
from .lessons import lesson_deal, lesson_ruleset_id
from .moves import Game, GameRepository, Moves
from .past_states import Checkpoints
from .solver_limits import SolverLimits
from .views import cursor_of, parse_cursor, player_of, public_event, view_of, withheld

JSON = dict[str, Any]
EXPORT_PAGE = 500
"""Events read per query while an export streams (keyset on the version)."""
EXPORT_GAMES_PAGE = 100
"""Games keyed per query while a player's games export streams (keyset on start time and id)."""

log = logging.getLogger("canfield")


def utc_now() -> datetime:
    return datetime.now(UTC)


class Games:
    def __init__(self, store: EventStore, settings: Settings, clock: Callable[[], datetime] = utc_now) -> None:
        self.store = store
        self.players = PlayerStore(store.pool)
        self.stats = Stats(store.reads)  # leaderboards and stats tolerate a replica
        self.settings = settings
        self.clock = clock
        self.tokens = TokenCache(settings.game_cache_size, clock)
        self.accounts = Accounts(self.players, self.tokens, clock, settings.tokens_per_player)
        self.solver = SolverWorkers(max_waiting=settings.solver_queue_max)
        self.race_solver = SolverWorkers()  # proofs of races' secret deals, started when first needed
        self.solver_limits = SolverLimits(settings)
        self.batcher = AppendBatcher(store, settings.move_batch_max)
        self.repository = GameRepository(store, self.batcher, self.tokens, settings.game_cache_size,
                                         settings.move_retries)
        self.deal_secret = DealSecret(store.pool, settings.daily_secret)
        self.daily = DailyDeals(store.pool, self.deal_secret, settings.daily_wait_seconds, clock,
                                preparing_max=settings.daily_preparing_max)
        self.live_decks = LiveDecks(store.pool)  # the shared decks in play: the solver refuses their copies
        self.ratings = Ratings(RatingStore(store.reads), self.players)  # rated races, rated as they finish
        self.races = Races(RaceStore(store.pool, store.reads), clock, self.accounts, self._deal, self.deal_secret,
                           self._prove_deal, settings.race_deal_wait_seconds,
                           RaceDealQueue(settings.race_deal_queue_max, settings.race_deals_per_player),
                           self.ratings.rate_race)
        self.challenges = Challenges(store.pool, self.accounts, self.races, clock, settings.challenge_expiry_seconds,
                                     settings.challenges_per_player)
        self.tournaments = Tournaments(TournamentStore(store.pool), clock, self.accounts, self.deal_secret,
                                       self._prove_deal, self.ratings.rate_tournament)
        self.checkpoints = Checkpoints(store)  # past states fold from the nearest stored checkpoint
        self.moves = Moves(self.repository, clock, self.races, self.checkpoints, self.tournaments)

    # ------------------------------------------------------------ players

    async def create_player(self, name: str, token_name: str | None = None, bot: bool = False) -> JSON:
        """The new player (``bot``: a bot account) and their first token's secret (shown only in this reply)."""
        player, token = await self.accounts.create_player(name, token_name, bot)
        return {"id": player.id, "name": player.name, "token": token.secret, "createdAt": player.created_at,
                "bot": player.bot}

    async def delete_player(self, token: str | None) -> None:
        """``DELETE /players/me``: the player leaves their races first (service.games.leaving: out of
        open ones, their games in running ones resigned), then the account is erased."""
        credentials = await self.accounts.authenticate(token, Scope.ACCOUNT)
        await leave_races(credentials.player_id, self.races.store, self.moves, self.clock)
        await self.challenges.withdraw_all(credentials.player_id)
        await self.accounts.delete(token)

    async def player(self, player_id: uuid.UUID) -> PlayerRow:
        """A player's profile; a deleted account has none (404), though its games remain."""
        found = await self.players.get_player(player_id)
        if found is None or found.deleted:
            raise NotFound(f"no player {player_id}")
        return found

    async def player_games(self, player_id: uuid.UUID, status: str | None, cursor: str | None, limit: int) -> JSON:
        """A player's games, newest first, a page at a time: ``next`` is the ``cursor`` of the next page."""
        after_key = None if cursor is None else parse_cursor(cursor)
        if await self.players.get_player(player_id) is None:
            raise NotFound(f"no player {player_id}")
        ended = None if status is None else status == "ended"
        rows = await self.store.player_games(player_id, ended, after_key, limit + 1)
        page = rows[:limit]
        return {
            "items": [
                {
                    "id": str(row.id),
                    "ruleset": {"id": row.ruleset_id, "version": row.ruleset_version},
                    "deal": shown_source(row.deal),
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
            "next": cursor_of(page[-1].started_at, page[-1].id) if len(rows) > limit else None,
        }

    async def ping(self) -> None:
        """Returns once the database has answered a query (``GET /health``)."""
        await self.store.ping()

    async def authenticate(self, token: str | None, scope: Scope | None = None) -> uuid.UUID:
        """The player of a live token that has ``scope`` (``Accounts.authenticate``)."""
        return (await self.accounts.authenticate(token, scope)).player_id

    # ------------------------------------------------------------ games

    async def create_game(self, token: str | None, ruleset_id: str | None, given: Mapping[str, Any]) -> JSON:
        """A new game of the token's player: ``ruleset_id`` (None: the default, or a lesson's own)
        and ``given``, the deal's source (``{"seed": 7}``, ``{"daily": "today"}``...; empty: the
        ruleset's default deal)."""
        player_id = await self.authenticate(token, Scope.PLAY)
        requested = ruleset_id
        if ruleset_id is None:  # a lesson is played under its own ruleset (classic)
            ruleset_id = lesson_ruleset_id(given.get("lesson")) or DEFAULT_RULESET_ID
        ruleset = get_ruleset(ruleset_id)  # "" is unknown
        if len(given) > 1:
            sources = " and ".join(sorted(given))
            raise BadRequest(f"a deal names one source: seed, deck, pool, daily or lesson, not {sources}")
        if "daily" not in given:
            deck, source = self._deal(ruleset, given)
            created = await self._create(player_id, ruleset, deck, source, self.clock())
            if "deck" in given:
                await self._note_a_copy_of_a_live_deck(player_id, created["id"], deck)
            return created
        now = self.clock()
        day = parse_day(given["daily"], now.date(), self.settings.daily_past_days)
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
        player = await self.players.get_player(player_id)
        game = Game(game_id, player_id, source, now, None, state, True, *_name_and_bot(player))
        self.repository.remember(game)
        return view_of(game_id, player_of(game), source, now, None, state, withheld(source, now))

    def _deal(self, ruleset: Ruleset, given: Mapping[str, Any]) -> tuple[tuple[int, ...], JSON]:
        """The deck and deal source of a seed, deck, pool or lesson deal (or the ruleset's default)."""
        if "lesson" in given:
            return lesson_deal(ruleset, given["lesson"])
        if "deck" in given:
            return parse_deck(given["deck"]), {"source": "deck"}
        if "pool" in given or ("seed" not in given and ruleset.default_deal == "pool" and load_deal_pool(ruleset.id)):
            number = pool_number(ruleset, given["pool"]) if "pool" in given else random_pool_number(ruleset)
            return shuffled_deck(deal_pool_of(ruleset).deal(number).seed), {"source": "pool", "pool": number}
        seed = given.get("seed")
        if seed is None:
            seed = secrets.randbelow(MAX_SEED + 1)
        return shuffled_deck(seed), {"source": "seed", "seed": seed}

    async def _prove_deal(self, ruleset: Ruleset, seed: int) -> Proof:
        """Solve a candidate race deal in a worker of its own (a test may replace it): races being
        created never hold up the daily deal's proof, nor it theirs."""
        return await self.race_solver.run(prove, ruleset.id, ruleset.version, seed, PROOF_MAX_STATES,
                                          PROOF_MAX_SECONDS)

    async def stored_game(self, game_id: uuid.UUID, ended_from_replica: bool = False) -> GameRow:
        """The game's stored row (its snapshot and the events after it, version and times), or
        ``NotFound``; ``ended_from_replica``: an ended game may come from the replica."""
        game = await self.store.load_game(game_id, ended_from_replica)
        if game is None:
            raise NotFound(f"no game {game_id}")
        return game

    async def _game(self, game_id: uuid.UUID, ended_from_replica: bool = False) -> tuple[GameRow, GameState]:
        game = await self.stored_game(game_id, ended_from_replica)
        return game, restore(game.snapshot, game.tail, game.version)

    async def readable(self, game: GameRow, token: str | None) -> bool:
        """Refuse a read its reader may not make; then whether the game's hidden cards stay hidden
        even if it has ended. A daily game answers only to its player until its date is over (its
        cards would tell anyone else the day's deck); a race game only to its player while the race
        runs (``Races.guard``, which also says whether its deck is still withheld)."""
        now = self.clock()
        day = private_until(game.deal, now)
        if day is not None:
            reason = f"a daily game answers only to its player until its date ({day}, UTC) is over"
            if token is None:
                raise Unauthorized(f"{reason}: send the player's bearer token")
            if await self.authenticate(token, Scope.READ_PRIVATE) != game.player_id:
                raise Forbidden(reason)
        if race_of(game.deal) is not None:
            return await self.races.guard(game, token)
        if tournament_of(game.deal) is not None:
            return await self.tournaments.guard(game, token)
        return not reveals_hidden_cards(game.deal, True, now)

    async def view(self, game_id: uuid.UUID, token: str | None = None) -> JSON:
        game, state = await self._game(game_id, ended_from_replica=True)
        withhold = await self.readable(game, token)
        return view_of(game.id, player_of(game), game.deal, game.started_at, game.finished_at, state, withhold)

    async def legal_moves(self, game_id: uuid.UUID, token: str | None = None) -> JSON:
        game, state = await self._game(game_id)
        await self.readable(game, token)
        return {"version": state.version, "moves": [command_to_api(m) for m in legal_moves(state)]}

    async def hints(
        self, game_id: uuid.UUID, solver: bool = False, token: str | None = None, address: str = "?"
    ) -> JSON:
        """Ranked heuristic hints; with ``solver`` also the next move of a winning line, which
        marks the game assisted (an event), so only the game's player may ask for it. Solver hints
        are limited per player and per client ``address`` (429) and by the worker's queue (503);
        a refused or abandoned one records nothing."""
        game, state = await self._game(game_id)
        await self.readable(game, token)  # a race game: its player only, while the race runs
        ranked = [{"move": command_to_api(h.move), "reason": h.reason} for h in hints(state)]
        if not solver:
            return {"version": state.version, "hints": ranked}
        if token is None:
            raise Unauthorized("solver hints mark the game assisted: they need the player's bearer token")
        if await self.authenticate(token, Scope.PLAY) != game.player_id:
            raise Forbidden("this game belongs to another player")
        if not state.playing:
            raise GameOver(f"the game is over ({state.status.value})")
        await self.no_solver_on_a_shared_deal(game)
        self.solver_limits.take(game.player_id, address)  # per player, whatever the token
        result, move = await self.solver.next_move(state_to_snapshot(state), self.settings.solver_hint_seconds)
        played = await self.moves.play(game_id, token, UseSolverHint())
        return {"version": played.version, "hints": ranked, "solver": {"result": result, "move": move}}

    async def no_solver_on_a_shared_deal(self, game: GameRow, what: str = "solver hints are") -> None:
        """Refuse the solver (a hint, an analysis: ``what``) on a deal that others play for a place:
        a daily deal until its date is over, a race's until the race has finished, and any copy of
        either however it was dealt (``service.deals.live_decks``: a relabelled copy too). The
        solver sees the hidden cards, so its line, asked for on one account, could be played on
        another."""
        now = self.clock()
        day = private_until(game.deal, now)
        if day is not None:
            raise Conflict(f"{what} off on the daily deal until its date ({day}, UTC) is over: the solver "
                           "sees the hidden cards, and everyone plays this deal for a place", "shared_deal")
        race_id = race_of(game.deal)
        if race_id is not None and (await self.races.current(race_id)).status != FINISHED:
            raise Conflict(f"{what} off in a race until it has finished: the solver sees the hidden cards, "
                           "which every entrant shares", "shared_deal")
        tournament_id = tournament_of(game.deal)
        if tournament_id is not None and (await self.tournaments.current(tournament_id)).tournament.finished_at is None:
            raise Conflict(f"{what} off in a tournament until it has finished: the solver sees the hidden cards, "
                           "which every entrant shares", "shared_deal")
        live = await self._live_deal_of(await self._deck_of(game.id), now)
        if live is not None:
            SHARED_DEAL_COPIES_REFUSED.inc()
            log.warning("the solver refused game %s of player %s: its deck is a copy of %s", game.id, game.player_id,
                        _named(live))
            until = {DAILY: f"its date ({live.day}, UTC) is over", TOURNAMENT: "the tournament has finished"}.get(
                live.kind, "the race has finished")
            raise Conflict(f"{what} off on this deck until {until}: it is a copy of a deal in play now "
                           f"({_shared(live)}), perhaps with its ranks rotated, its suits swapped by colour or its "
                           "columns reordered, and the solver would tell what its hidden cards allow", "shared_deal")

    async def _live_deal_of(self, deck: tuple[int, ...], now: datetime) -> LiveDeal | None:
        """The shared deal in play that ``deck`` is a copy of, if any (a race due to finish is
        finished first, and then no longer counts)."""
        for live in await self.live_decks.holders(deck, now.astimezone(UTC).date()):
            if live.tournament_id is not None:
                if (await self.tournaments.current(live.tournament_id)).tournament.finished_at is None:
                    return live
            elif live.race_id is None or (await self.races.current(live.race_id)).status != FINISHED:
                return live
        return None

    async def _deck_of(self, game_id: uuid.UUID) -> tuple[int, ...]:
        """The deck a game was dealt (its first event's)."""
        first = await self.store.read_events_upto(game_id, 1)
        return parse_deck(first[0].data["deck"])

    async def _note_a_copy_of_a_live_deck(self, player_id: uuid.UUID, game_id: str, deck: tuple[int, ...]) -> None:
        """Dealing a copy of a deal in play is allowed; it is logged and counted for the operator
        (docs/security.md), never refused or shown to the player."""
        live = await self._live_deal_of(deck, self.clock())
        if live is not None:
            SHARED_DEAL_COPIES_DEALT.inc()
            log.warning("player %s dealt game %s from a deck that is a copy of %s", player_id, game_id, _named(live))

    async def events(self, game_id: uuid.UUID, after: int, limit: int, token: str | None = None) -> JSON:
        game = await self.stored_game(game_id)
        withhold = await self.readable(game, token)  # first: it may refuse
        reveal = game.finished_at is not None and not withhold
        rows = await self.store.read_events(game_id, after, limit)
        last = rows[-1].version if rows else after
        events = [public_event(r.version, r.type, r.data, r.recorded_at, reveal) for r in rows]
        return {"items": events, "next": str(last) if last < game.version else None}

    async def event_export(
        self, game_id: uuid.UUID, after: int, token: str | None = None
    ) -> AsyncIterator[list[JSON]]:
        """Every event after ``after`` up to the game's version now, read in pages by version (keyset)
        so a long log is never held whole. The reader is checked here, before the first page."""
        game = await self.stored_game(game_id)
        withhold = await self.readable(game, token)
        reveal = game.finished_at is not None and not withhold
        return self._event_pages(game_id, after, game.version, reveal)

    async def _event_pages(
        self, game_id: uuid.UUID, after: int, upto: int, reveal: bool
    ) -> AsyncIterator[list[JSON]]:
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
                game, state = await self._game(key[1])
                try:
                    withhold = await (self._owner_withholds(game) if owner else self.readable(game, None))
                except (Unauthorized, Forbidden):
                    continue  # not public yet
                if most is not None and sent == most:
                    yield {"type": "next", "after": cursor_of(*after) if after else None}
                    return
                view = view_of(game.id, player_of(game), game.deal, game.started_at, game.finished_at, state, withhold)
                reveal = game.finished_at is not None and not withhold
                rows = await self.store.read_events(game.id, 0, game.version)
                events = [public_event(r.version, r.type, r.data, r.recorded_at, reveal) for r in rows]
                yield {"type": "game", "game": view, "events": events}
                sent += 1
                after = key
            if len(keys) < EXPORT_GAMES_PAGE:
                return

    async def _owner_withholds(self, game: GameRow) -> bool:
        """Whether the player's own read of their game withholds its face-down cards: a daily deck
        until its date is over, a race's or a tournament's deck until it has finished."""
        try:
            shared_withholds = await self.races.guard(game, None) or await self.tournaments.guard(game, None)
        except Forbidden:  # the race or tournament still runs
            return True
        return shared_withholds or not reveals_hidden_cards(game.deal, True, self.clock())

    async def account_export(self, token: str | None) -> AsyncIterator[dict[str, Any]]:
        """Everything stored about the player behind the token (scope ``account``), line by line."""
        credentials = await self.accounts.authenticate(token, Scope.ACCOUNT)
        return self._account_lines(credentials.player_id)

    async def _account_lines(self, player_id: uuid.UUID) -> AsyncIterator[dict[str, Any]]:
        player = await self.players.get_player(player_id)
        if player is None:
            return
        yield {"type": "player", "id": player.id, "name": player.name, "createdAt": player.created_at,
               "bot": player.bot, "acceptChallengesFrom": player.accept_challenges}
        for token in await self.players.every_token(player_id):
            yield {"type": "token", **token}
        async for line in self._game_lines(player_id, None, None, None, None, owner=True):
            yield line
        for kind, row in await self.players.personal_rows(player_id):
            yield {"type": kind, **row}

    async def state_at(self, game_id: uuid.UUID, version: int, token: str | None = None) -> JSON:
        """The game's view after ``version`` events. A state at or after the stored snapshot
        starts from it (no further query); an older one folds the events after the nearest
        checkpoint at or below ``version`` (service.games.past_states), fewer than 500."""
        game = await self.stored_game(game_id)
        withhold = await self.readable(game, token)
        if not 1 <= version <= game.version:
            raise NotFound(f"game {game_id} has versions 1 to {game.version}, not {version}")
        taken_at = game.version - len(game.tail)  # the stored snapshot's version
        if version >= taken_at:  # from the snapshot, with the events after it up to ``version``
            state = restore(game.snapshot, game.tail[: version - taken_at], version)
        else:  # before the snapshot: from the nearest checkpoint
            state = await self.checkpoints.state_at(game_id, version)
        finished_at = game.finished_at if not state.playing else None
        return view_of(game.id, player_of(game), game.deal, game.started_at, finished_at, state, withhold)


def _shared(live: LiveDeal) -> str:
    """A deal in play as its copy's player is told it (a race or tournament by kind only: not which)."""
    if live.kind == DAILY:
        return f"the daily deal of {live.day}"
    return "a tournament still running" if live.kind == TOURNAMENT else "a race still running"


def _named(live: LiveDeal) -> str:
    """A deal in play as the operator's log names it."""
    if live.kind == DAILY:
        return f"the daily deal of {live.day}"
    return f"tournament {live.tournament_id}" if live.kind == TOURNAMENT else f"race {live.race_id}"


def _name_and_bot(player: PlayerRow | None) -> tuple[str, bool]:
    return ("", False) if player is None else (player.name, player.bot)
