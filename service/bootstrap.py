"""The composition root: every service of the house built once, in one place, and its jobs.

``build_services`` builds each feature's use cases over the shared store and hands each what it
needs of the others through their small interfaces: the games feature asks the races and the
tournaments whether a game is private (``service.deals.contests``), a closing account lets each
feature that holds a player let go of them (``service.players.closing``). Nothing connects here:
the server opens its pool at startup, then ``start`` starts the background jobs, and ``stop``
stops them and closes what ``build_services`` made, in the reverse order.

The HTTP layer (service.http) takes its services from here by Litestar's dependency injection
(``service.http.dependencies``); the command line (service.commands) and the benchmarks build the
same ``Services`` over their own pool.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from .analysis.analyses import Analyses
from .analysis.runner import AnalysisRunner
from .challenges.challenges import Challenges
from .clock import utc_now
from .deals.daily_deals import DailyDeals
from .deals.deal_secret import DealSecret
from .deals.shared_deals import SharedDeals
from .deals.solver_workers import SolverWorkers, WorkerProver
from .following.delivery import Deliverer
from .following.sweeper import Sweeper, sweep_forever
from .following.webhooks import Webhooks
from .games.abandon import Abandoner, abandon_forever
from .games.access import GameAccess
from .games.batching import AppendBatcher
from .games.games import Games
from .games.hints import Hints
from .games.moves import GameRepository, Moves
from .games.resigning import resign
from .games.solver_limits import SolverLimits
from .players.accounts import Accounts
from .players.closing import AccountClosing, Leaver
from .players.export import AccountExport
from .players.tokens import TokenCache
from .races.leaving import Resigner, leave_races
from .races.race_deals import RaceDealQueue, SecretDealing
from .races.race_store import RaceStore
from .races.races import Races
from .ratings.rating_store import RatingStore
from .ratings.ratings import Ratings
from .settings import Settings
from .stats.queries import Stats
from .store.connections import libpq_url
from .store.event_store import EventStore
from .store.players import PlayerStore
from .store.request_keys import RequestKeys
from .streams.hub import StreamHub
from .tournaments.tournament_store import TournamentStore
from .tournaments.tournaments import Tournaments


@dataclass(slots=True)
class Players:
    """The players feature: accounts and tokens, an account's closing and its export."""

    tokens: TokenCache
    accounts: Accounts
    closing: AccountClosing
    export: AccountExport


@dataclass(slots=True)
class Competition:
    """Races, challenges, tournaments and the ratings they feed."""

    races: Races
    challenges: Challenges
    tournaments: Tournaments
    ratings: Ratings


@dataclass(slots=True)
class Following:
    """Following an account: webhooks, their delivery worker and the account events' periodic job."""

    webhooks: Webhooks
    deliverer: Deliverer
    sweeper: Sweeper
    retention_seconds: float


@dataclass(slots=True)
class Services:
    """Every service of one server process (or one command), built once by ``build_services``."""

    settings: Settings
    clock: Callable[[], datetime]
    store: EventStore
    players: Players
    games: Games
    moves: Moves
    hints: Hints
    batcher: AppendBatcher
    solver: SolverWorkers  # solver hints' worker
    daily: DailyDeals
    deal_secret: DealSecret
    shared_deals: SharedDeals
    competition: Competition
    stats: Stats
    analysis: AnalysisRunner
    analyses: Analyses
    following: Following
    streams: StreamHub
    request_keys: RequestKeys
    abandoner: Abandoner
    provers: list[WorkerProver] = field(default_factory=list)  # races' and tournaments' deal proofs

    # the names the HTTP layer's handlers take them by (service.http.dependencies)
    @property
    def accounts(self) -> Accounts:
        return self.players.accounts

    @property
    def races(self) -> Races:
        return self.competition.races

    @property
    def challenges(self) -> Challenges:
        return self.competition.challenges

    @property
    def tournaments(self) -> Tournaments:
        return self.competition.tournaments

    @property
    def ratings(self) -> Ratings:
        return self.competition.ratings


def _competition(store: EventStore, settings: Settings, clock: Callable[[], datetime], accounts: Accounts,
                 secret: DealSecret) -> tuple[Competition, WorkerProver]:
    prover = WorkerProver()  # proofs of races' and tournaments' secret deals, started when first needed
    ratings = Ratings(RatingStore(store.reads), PlayerStore(store.pool))  # rated races, rated as they finish
    dealing = SecretDealing(secret, prover, settings.race_deal_wait_seconds,
                            RaceDealQueue(settings.race_deal_queue_max, settings.race_deals_per_player))
    races = Races(RaceStore(store.pool, store.reads), clock, accounts, dealing, ratings)
    challenges = Challenges(store.pool, accounts, races, clock, settings.challenge_expiry_seconds,
                            settings.challenges_per_player)
    tournaments = Tournaments(TournamentStore(store.pool), clock, accounts, secret, prover, ratings)
    return Competition(races, challenges, tournaments, ratings), prover


def _players(accounts: Accounts, tokens: TokenCache, games: Games, moves: Moves,
             competition: Competition) -> Players:
    resigner = partial(resign, moves=moves, clock=games.clock)
    leavers: list[Leaver] = [partial(_leave_races, competition.races, resigner),
                             competition.challenges.withdraw_all]
    return Players(tokens, accounts, AccountClosing(accounts, leavers), AccountExport(accounts, games.owner_game_lines))


async def _leave_races(races: Races, resigner: Resigner, player_id: uuid.UUID) -> None:
    """The races feature's ``Leaver``: out of open races, their games in running ones resigned."""
    await leave_races(player_id, races, resigner)



def build_services(store: EventStore, settings: Settings, clock: Callable[[], datetime] = utc_now) -> Services:
    """Every service, over ``store`` (whose pool need not be open yet)."""
    tokens = TokenCache(settings.game_cache_size, clock)
    accounts = Accounts(PlayerStore(store.pool), tokens, clock, settings.tokens_per_player)
    secret = DealSecret(store.pool, settings.daily_secret)
    daily = DailyDeals(store.pool, secret, settings.daily_wait_seconds, clock,
                       preparing_max=settings.daily_preparing_max)
    competition, prover = _competition(store, settings, clock, accounts, secret)
    contests = (competition.races, competition.tournaments)
    shared = SharedDeals(store, clock, contests)
    batcher = AppendBatcher(store, settings.move_batch_max)
    repository = GameRepository(store, batcher, tokens, settings.game_cache_size, settings.move_retries)
    games = Games(store, settings, GameAccess(accounts, clock, contests), daily, shared, repository)
    moves = Moves(repository, clock, competition.races, games.checkpoints, competition.tournaments)
    solver = SolverWorkers(max_waiting=settings.solver_queue_max)
    runner = AnalysisRunner(store, settings)  # jobs off the request path (service.analysis)
    return Services(
        settings=settings, clock=clock, store=store,
        players=_players(accounts, tokens, games, moves, competition),
        games=games, moves=moves,
        hints=Hints(games, moves, shared, solver, SolverLimits(settings), settings.solver_hint_seconds),
        batcher=batcher, solver=solver, daily=daily, deal_secret=secret, shared_deals=shared,
        competition=competition, stats=Stats(store.reads),  # leaderboards and stats tolerate a replica
        analysis=runner, analyses=Analyses(games, shared, runner.queue, settings, runner.wake),
        following=_following(store, settings, competition),
        streams=StreamHub(libpq_url(settings.database_url or ""), store, settings, clock=clock),
        request_keys=RequestKeys(store.pool),  # service.http.idempotency
        abandoner=Abandoner(moves, clock, settings.abandon_after_days),
        provers=[prover],
    )


def _following(store: EventStore, settings: Settings, competition: Competition) -> Following:
    webhooks = Webhooks(store.pool, settings.webhooks_per_player, settings.webhooks_allow_private)
    sweeper = Sweeper(store.pool, competition.races, competition.challenges, settings.account_events_retention_seconds)
    return Following(webhooks, Deliverer(store.pool, settings), sweeper, settings.account_events_retention_seconds)


async def start(services: Services) -> list[asyncio.Task[None]]:
    """Start what runs beside the requests (the pool is open): the streams' listener, the daily
    deals ahead of time, the analysis runner, and the periodic jobs; the jobs' tasks."""
    settings = services.settings
    services.streams.tokens = services.players.tokens  # revocations reach this process's token cache
    await services.streams.start()
    services.daily.start()  # today's and tomorrow's daily deals, solved ahead of the first request
    services.analysis.start()
    jobs = [asyncio.create_task(sweep_forever(services.following.sweeper, settings.account_events_sweep_seconds))]
    if settings.abandon_after_days:
        jobs.append(asyncio.create_task(abandon_forever(services.abandoner, settings.abandon_check_seconds)))
    if settings.webhook_concurrency > 0:
        jobs.append(asyncio.create_task(services.following.deliverer.run_forever()))
    return jobs


async def stop(services: Services, jobs: list[asyncio.Task[None]]) -> None:
    """Stop the jobs, then close what ``build_services`` made, the last made first (the pool is
    closed by its owner after)."""
    for job in jobs:
        job.cancel()
    await asyncio.gather(*jobs, return_exceptions=True)
    await services.following.deliverer.close()
    await services.analysis.stop()  # its jobs go back to the queue
    await services.streams.stop()
    await close(services)


async def close(services: Services) -> None:
    """Close the services themselves: what a command or a test built (no jobs started)."""
    await services.daily.close()
    await services.competition.tournaments.close()
    await services.batcher.close()
    services.solver.close()
    for prover in services.provers:
        prover.close()
