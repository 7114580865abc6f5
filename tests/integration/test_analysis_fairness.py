"""The analysis queue against PostgreSQL: the caps counted under concurrent requests, the claim order
(round robin across requesters: a victim's job is taken before the flooders' backlogs), two workers
never taking the same job, jobs of the previous release's statements and of this one's taken by
either, the verdict cache's rules, and a job's budget running out with a real solver."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest
from alembic import command
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from domain import Draw, Event, Resign, apply, deal, event_data, event_type, get_ruleset, initial_state, shuffled_deck
from domain.analysis import LOST, UNKNOWN, positions
from service.analysis.queue import AnalysisQueue, Caps, Claimed, QueueFull
from service.analysis.runner import AnalysisRunner
from service.analysis.verdicts import VerdictCache
from service.deals.solver_workers import SolverWorkers
from service.settings import Settings
from service.store.connections import PoolOptions, open_pool
from service.store.event_store import EventStore
from service.store.migrations import alembic_config

from .test_snapshot_migration import scratch_url  # noqa: F401 (a fixture)

HARD_DEAL = 7  # open-runs seed 7: the solver does not decide its deal within a second
LEASE = 30.0


@pytest.fixture
def clean_database(scratch_url: str) -> str:  # noqa: F811
    """A database of this test's own at the schema's head: the queue's order is the test's, with no
    analysis worker of another test's server (on the shared test database) claiming a job."""
    command.upgrade(alembic_config(scratch_url), "head")
    return scratch_url


@pytest.fixture
async def pool(clean_database: str) -> AsyncIterator[AsyncConnectionPool]:
    pool = open_pool(clean_database, PoolOptions(1, 8, 5000))
    await pool.open()
    try:
        yield pool
    finally:
        await pool.close()


def _events(seed: int, draws: int) -> list[Event]:
    dealt = deal(get_ruleset("open-runs"), shuffled_deck(seed), {"source": "seed", "seed": seed})
    state = initial_state(dealt)
    events: list[Event] = [dealt]
    for move in [*[Draw()] * draws, Resign()]:
        state, new = apply(state, move)
        events += new
    return events


def _ended_game(url: str, events: list[Event] | None = None) -> uuid.UUID:
    """A resigned game stored as the service stores one, with ``events`` (none: a game row alone)."""
    game, player = uuid.uuid4(), uuid.uuid4()
    events = events or []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name) VALUES (%s, 'Ann')", (player,))
        conn.execute(
            "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version, finished_at)"
            " VALUES (%s, %s, 'open-runs', 1, '{}', 'resigned', %s, now())",
            (game, player, max(1, len(events))),
        )
        for version, event in enumerate(events, start=1):
            conn.execute("INSERT INTO events (game_id, version, type, data) VALUES (%s, %s, %s, %s)",
                         (game, version, event_type(event), Jsonb(event_data(event))))
    return game


async def _finish(queue: AnalysisQueue, job: Claimed) -> None:
    assert await queue.finish(job, {"positions": [], "turningPoint": None, "solved": 0}, job.total)


# ---------------------------------------------------------------- caps


async def test_a_requester_past_the_cap_is_refused_and_concurrent_requests_cannot_pass_it(
    pool: AsyncConnectionPool, clean_database: str
) -> None:
    queue = AnalysisQueue(pool)
    caps = Caps(per_player=3, per_address=0)
    games = [_ended_game(clean_database) for _ in range(8)]
    results = await asyncio.gather(
        *(queue.request(game, 1, "player:flooder", "10.0.0.1", caps) for game in games), return_exceptions=True
    )
    queued = [result for result in results if not isinstance(result, BaseException)]
    refused = [result for result in results if isinstance(result, BaseException)]
    assert len(queued) == 3
    assert len(refused) == 5
    assert all(isinstance(error, QueueFull) and (error.who, error.limit) == ("player", 3) for error in refused)
    async with pool.connection() as conn:
        count = await (await conn.execute("SELECT count(*) FROM analysis_jobs")).fetchone()
    assert count == (3,)  # nothing queued for the refused ones
    # asking about a job that is there is never refused; another player (another address) is not capped by these
    assert (await queue.request(queued[0].game_id, 1, "player:flooder", "10.0.0.1", caps)).status == "queued"
    assert (await queue.request(games[-1], 1, "player:other", "10.0.0.2", caps)).status == "queued"
    # one finished: a place again
    claimed = await queue.claim(LEASE, queued[0].game_id)
    assert claimed is not None
    await _finish(queue, claimed)
    free = next(game for game in games[:-1] if game not in {row.game_id for row in queued})
    assert (await queue.request(free, 1, "player:flooder", "10.0.0.1", caps)).status == "queued"


async def test_the_address_cap_counts_every_player_asking_from_it(
    pool: AsyncConnectionPool, clean_database: str
) -> None:
    queue = AnalysisQueue(pool)
    caps = Caps(per_player=3, per_address=4)
    games = [_ended_game(clean_database) for _ in range(6)]
    for index, game in enumerate(games[:4]):
        await queue.request(game, 1, f"player:{index % 2}", "10.0.0.9", caps)
    with pytest.raises(QueueFull) as refused:
        await queue.request(games[4], 1, "player:new", "10.0.0.9", caps)
    assert (refused.value.who, refused.value.limit) == ("address", 4)
    assert (await queue.request(games[4], 1, "player:new", "10.0.0.10", caps)).status == "queued"


# ---------------------------------------------------------------- fair order


async def test_a_victims_job_is_claimed_before_the_flooders_backlogs(
    pool: AsyncConnectionPool, clean_database: str
) -> None:
    queue = AnalysisQueue(pool)
    flood = {name: [_ended_game(clean_database) for _ in range(3)] for name in ("player:a", "player:b")}
    for name, games in flood.items():  # each flooder fills their cap
        for game in games:
            await queue.request(game, 1, name, "10.0.0.1")
    owner = {game: name for name, games in flood.items() for game in games}

    order: list[uuid.UUID] = []
    for _ in range(2):  # one worker, one job at a time: a's first, then b's first
        job = await queue.claim(LEASE)
        assert job is not None
        order.append(job.game_id)
        await _finish(queue, job)
    assert [owner[game] for game in order] == ["player:a", "player:b"]

    victim = _ended_game(clean_database)
    await queue.request(victim, 1, "player:victim", "10.0.0.2")
    owner[victim] = "player:victim"
    while (job := await queue.claim(LEASE)) is not None:
        order.append(job.game_id)
        await _finish(queue, job)
    # the victim's job next, then the flooders in turn, each their oldest job first
    assert [owner[game] for game in order] == ["player:a", "player:b", "player:victim", "player:a", "player:b",
                                               "player:a", "player:b"]
    assert order[3:] == [flood["player:a"][1], flood["player:b"][1], flood["player:a"][2], flood["player:b"][2]]


async def test_a_requester_with_a_job_running_waits_behind_one_with_none(
    pool: AsyncConnectionPool, clean_database: str
) -> None:
    queue = AnalysisQueue(pool)
    mine = [_ended_game(clean_database) for _ in range(2)]
    for game in mine:
        await queue.request(game, 1, "player:a", None)
    first = await queue.claim(LEASE)  # still running
    assert first is not None
    assert first.game_id == mine[0]
    other = _ended_game(clean_database)
    await queue.request(other, 1, "player:b", None)
    second = await queue.claim(LEASE)
    assert second is not None
    assert second.game_id == other


async def test_concurrent_claims_never_take_the_same_job(pool: AsyncConnectionPool, clean_database: str) -> None:
    queue = AnalysisQueue(pool)
    games = [_ended_game(clean_database) for _ in range(6)]
    for index, game in enumerate(games):
        await queue.request(game, 1, f"player:{index % 3}", None)
    claims = await asyncio.gather(*(queue.claim(LEASE) for _ in range(8)))
    taken = [claim.game_id for claim in claims if claim is not None]
    assert len(taken) == len(set(taken))  # never one job twice
    # a claim that met only rows locked by the others at that instant found none (SKIP LOCKED):
    # what is left is claimed afterwards, each job once in all
    while (claim := await queue.claim(LEASE)) is not None:
        taken.append(claim.game_id)
    assert sorted(taken) == sorted(games)


# ---------------------------------------------------------------- the previous release on this schema

_OLD_REQUEST = """
WITH moves AS (SELECT count(*) FILTER (WHERE type = ANY(%(moves)s)) AS n FROM events WHERE game_id = %(id)s)
INSERT INTO analysis_jobs AS j (game_id, status, version, total)
SELECT %(id)s, 'queued', %(version)s, 1 + moves.n FROM moves
ON CONFLICT (game_id) DO UPDATE SET status = 'queued', error = NULL, lease_until = NULL,
    answers = '[]', done = 0, result = NULL, finished_at = NULL
    WHERE j.status = 'failed'
RETURNING game_id
"""
_OLD_CLAIM = """
UPDATE analysis_jobs j
SET status = 'running', attempt = j.attempt + 1, lease_until = now() + make_interval(secs => 30),
    started_at = coalesce(j.started_at, now())
FROM (
    SELECT game_id FROM analysis_jobs
    WHERE (status = 'queued' OR (status = 'running' AND lease_until < now()))
    ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED
) picked
WHERE j.game_id = picked.game_id
RETURNING j.game_id, j.attempt, j.version, j.total, j.answers
"""
"""The previous release's statements (before migration 0015), word for word."""


async def test_jobs_of_either_release_are_taken_by_the_workers_of_either(
    pool: AsyncConnectionPool, clean_database: str
) -> None:
    queue = AnalysisQueue(pool)
    old_job, new_job = _ended_game(clean_database), _ended_game(clean_database)
    with psycopg.connect(clean_database, autocommit=True) as conn:
        conn.execute(_OLD_REQUEST, {"id": old_job, "version": 1, "moves": ["StockDrawn"]})
    await queue.request(new_job, 1, "player:a", "10.0.0.1", Caps(3, 10))
    with psycopg.connect(clean_database, autocommit=True) as conn:
        taken_by_old = conn.execute(_OLD_CLAIM).fetchone()
    assert taken_by_old is not None
    assert taken_by_old[0] == old_job
    claimed = await queue.claim(LEASE)  # the new release takes the new one
    assert claimed is not None
    assert claimed.game_id == new_job
    await _finish(queue, claimed)
    with psycopg.connect(clean_database, autocommit=True) as conn:  # and the new one's job, queued, by the old
        conn.execute("UPDATE analysis_jobs SET status = 'queued', result = NULL WHERE game_id = %s", (new_job,))
        again = conn.execute(_OLD_CLAIM).fetchone()
    assert again is not None
    assert again[0] == new_job


# ---------------------------------------------------------------- the verdict cache


async def test_the_cache_keeps_proofs_and_reuses_unknown_only_for_no_more_time(pool: AsyncConnectionPool) -> None:
    cache = VerdictCache(pool)
    await cache.keep("k", UNKNOWN, None, 1.0)
    assert await cache.find("k", 1.0) == (UNKNOWN, None)
    assert await cache.find("k", 0.5) == (UNKNOWN, None)
    assert await cache.find("k", 2.0) is None  # a longer search might decide it
    await cache.keep("k", UNKNOWN, None, 0.5)  # a shorter search's unknown does not replace it
    assert await cache.find("k", 1.0) == (UNKNOWN, None)
    await cache.keep("k", LOST, None, 2.0)  # a proof replaces it
    assert await cache.find("k", 60.0) == (LOST, None)
    await cache.keep("k", UNKNOWN, None, 10.0)  # and is never replaced by unknown
    assert await cache.find("k", 60.0) == (LOST, None)
    assert await cache.find("other", 0.1) is None


# ---------------------------------------------------------------- a job's budget, with the real solver


async def test_a_job_whose_budget_runs_out_ends_with_the_positions_not_reached_unknown(clean_database: str) -> None:
    events = _events(HARD_DEAL, 4)  # the deal, four draws, the resignation: six positions
    game = _ended_game(clean_database, events)
    with psycopg.connect(clean_database, autocommit=True) as conn:  # running, a live lease: no other worker takes it
        conn.execute("INSERT INTO analysis_jobs (game_id, status, version, total, attempt, lease_until, requester)"
                     " VALUES (%s, 'running', %s, 6, 1, now() + interval '1 hour', 'player:a')", (game, len(events)))
    settings = Settings(database_url=clean_database, analysis_position_seconds=0.05, analysis_job_seconds=0.001)
    pool = open_pool(clean_database, PoolOptions(1, 4, 5000))
    await pool.open()
    workers = SolverWorkers()
    try:
        runner = AnalysisRunner(EventStore(pool), settings)
        assert await runner.run(Claimed(game, 1, len(events), 6, []), workers)
    finally:
        workers.close()
        await pool.close()
    assert workers.started == 1  # one search, then the budget was spent
    with psycopg.connect(clean_database) as conn:
        row = conn.execute("SELECT status, done, result, answers FROM analysis_jobs WHERE game_id = %s",
                           (game,)).fetchone()
    assert row is not None
    status, done, result, answers = row
    assert (status, done, result["budgetSpent"], result["solved"]) == ("done", 6, True, 1)
    assert len(positions(events)) == 6
    assert [p["verdict"] for p in result["positions"]] == [UNKNOWN] * 5 + [LOST]  # the resignation is lost anyway
    assert [a["source"] for a in answers] == ["solver", "budget", "budget", "budget", "budget"]
