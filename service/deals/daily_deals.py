"""Daily deals in PostgreSQL: prepared once per date (solved in a worker process), then read.

A date's deal is stored in ``daily_deals`` by the first server process that proves one
(``INSERT ... ON CONFLICT DO NOTHING``, then read back), so every process, and every process
after a restart, serves the row that was stored, whatever it would have derived itself. Each
process prepares today's and tomorrow's deal when it starts and checks again every few minutes,
so a date's deal is normally stored a day before it is needed. A request for a date whose deal
is not stored yet starts (or joins) its preparation and waits for it up to
``Settings.daily_wait_seconds``, then gets ``503`` with ``Retry-After``. A process prepares at
most ``DAILY_PREPARING_MAX`` dates at once (each is one proof at a time in its solver process;
the requests for one date all wait for the same preparation): a request for one more date is
``503 daily_deals_busy`` with ``Retry-After``, and starts nothing.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from domain import CODES, Ruleset, get_ruleset, parse_deck, shuffled_deck
from domain.fingerprint import fingerprint

from ..errors import DailyDealsBusy, Unavailable
from .daily import (
    DAILY_RULESET_ID,
    MAX_CANDIDATES,
    PROOF_MAX_SECONDS,
    PROOF_MAX_STATES,
    DailyDeal,
    Proof,
    Prover,
    candidate_seed,
    line_wins,
    prove,
)
from .deal_secret import DealSecret
from .solver_workers import SolverWorkers

log = logging.getLogger("canfield")

MAX_PREPARING = 4  # dates being prepared at once per process (DAILY_PREPARING_MAX); more is a 503
AHEAD_INTERVAL_SECONDS = 600.0
RETRY_AFTER_SECONDS = 2

_COLUMNS = "day, ruleset_id, ruleset_version, candidate, seed, deck, line, line_length, solver_states, verified_at"
_READ = f"SELECT {_COLUMNS} FROM daily_deals WHERE day = %s"
_READ_ALL = f"SELECT {_COLUMNS} FROM daily_deals"
_STORE = f"""
INSERT INTO daily_deals ({_COLUMNS}, fingerprint)
VALUES (%(day)s, %(ruleset_id)s, %(ruleset_version)s, %(candidate)s, %(seed)s, %(deck)s, %(line)s,
        %(line_length)s, %(solver_states)s, %(verified_at)s, %(fingerprint)s)
ON CONFLICT (day) DO NOTHING
"""

_ENTRY = """
SELECT id FROM games
WHERE player_id = %s AND deal->>'source' = 'daily' AND deal->>'practice' = 'false' AND deal->>'daily' = %s
"""  # games_daily_entry_key


def _deal_of(row: tuple[Any, ...]) -> DailyDeal:
    day, ruleset_id, version, candidate, seed, deck, line, length, states, verified_at = row
    return DailyDeal(day, get_ruleset(ruleset_id, version), candidate, seed, parse_deck(deck), line, length, states,
                     verified_at)


async def read_deal(conn: AsyncConnection[Any], day: date) -> DailyDeal | None:
    """The stored deal of ``day`` (on the caller's connection: inside its transaction), or None."""
    row = await (await conn.execute(_READ, (day,))).fetchone()
    return None if row is None else _deal_of(row)


def read_all_deals(conn: psycopg.Connection[Any]) -> dict[date, DailyDeal]:
    """Every stored daily deal, by date (for ``canfield projections rebuild``)."""
    return {deal.day: deal for deal in map(_deal_of, conn.execute(_READ_ALL).fetchall())}


class DailyDeals:
    """One server process's access to the daily deals: read, or prepare and store."""

    def __init__(
        self, pool: AsyncConnectionPool, secret: DealSecret, wait_seconds: float, clock: Callable[[], datetime],
        prover: Prover | None = None,
        preparing_max: int = MAX_PREPARING,
    ) -> None:
        self.pool = pool
        self.secret = secret
        self.wait_seconds = wait_seconds
        self.clock = clock
        self.solver = SolverWorkers()
        self.prover: Prover = prover or self._prove_in_worker
        self.preparing_max = preparing_max
        self._preparing: dict[date, asyncio.Task[DailyDeal]] = {}
        self._ahead: asyncio.Task[None] | None = None

    @property
    def preparing(self) -> frozenset[date]:
        """The dates being prepared in this process now."""
        return frozenset(self._preparing)

    async def stored(self, day: date) -> DailyDeal | None:
        async with self.pool.connection() as conn:
            return await read_deal(conn, day)

    async def entry_of(self, player_id: uuid.UUID, day: date) -> uuid.UUID | None:
        """The player's entry for ``day`` (their first game of its deal, dealt on the date), if any."""
        async with self.pool.connection() as conn:
            row = await (await conn.execute(_ENTRY, (player_id, day.isoformat()))).fetchone()
        return None if row is None else row[0]

    async def deal(self, day: date) -> DailyDeal:
        """The deal of ``day``: stored, or prepared now (waited for up to ``wait_seconds``)."""
        found = await self.stored(day)
        if found is not None:
            return found
        try:
            return await asyncio.wait_for(asyncio.shield(self.preparation(day)), self.wait_seconds)
        except TimeoutError:
            raise Unavailable(
                f"the daily deal of {day} is being prepared (proven winnable by the solver): try again in a moment",
                retry_after=RETRY_AFTER_SECONDS,
            ) from None

    def preparation(self, day: date) -> asyncio.Task[DailyDeal]:
        """The preparation of ``day`` in this process: the one running, or a new one."""
        task = self._preparing.get(day)
        if task is not None:
            return task
        if len(self._preparing) >= self.preparing_max:
            raise DailyDealsBusy(
                f"{len(self._preparing)} daily deals are being prepared (proven winnable by the solver): "
                "try again in a moment",
                retry_after=RETRY_AFTER_SECONDS,
            )
        task = asyncio.create_task(self._prepare(day), name=f"canfield-daily-{day}")
        self._preparing[day] = task
        task.add_done_callback(lambda done: self._finished(day, done))
        return task

    def _finished(self, day: date, task: asyncio.Task[DailyDeal]) -> None:
        if self._preparing.get(day) is task:
            del self._preparing[day]
        if not task.cancelled() and task.exception() is not None:  # retrieved: a later request tries again
            log.warning("daily deal of %s not prepared: %r", day, task.exception())

    async def _prepare(self, day: date) -> DailyDeal:
        """Try the date's candidates in order; store the first one proven winnable."""
        ruleset = get_ruleset(DAILY_RULESET_ID)
        secret = await self.secret.value()
        for candidate in range(MAX_CANDIDATES):
            seed = candidate_seed(secret, ruleset.id, day, candidate)
            proof = await self.prover(ruleset, seed)
            found = await self.stored(day)  # another process may have been quicker
            if found is not None:
                return found
            if proof.result != "won" or proof.line is None:
                continue
            deck = shuffled_deck(seed)
            if not line_wins(ruleset, deck, proof.line):  # a verdict is a proof: never store an unchecked one
                log.error("daily deal of %s: the solver's line for candidate %d does not replay to a win",
                          day, candidate)
                continue
            async with self.pool.connection() as conn:
                await conn.execute(_STORE, {
                    "day": day, "ruleset_id": ruleset.id, "ruleset_version": ruleset.version, "candidate": candidate,
                    "seed": seed, "deck": Jsonb([CODES[card] for card in deck]), "line": proof.line,
                    "line_length": len(proof.line.split()), "solver_states": proof.states, "verified_at": self.clock(),
                    "fingerprint": fingerprint(deck),  # the solver refuses its copies (service.deals.live_decks)
                })
            stored = await self.stored(day)  # ours, or the one another process stored first
            assert stored is not None
            return stored
        raise Unavailable(f"no winnable daily deal was found for {day}; try again later", retry_after=60)

    async def _prove_in_worker(self, ruleset: Ruleset, seed: int) -> Proof:
        return await self.solver.run(prove, ruleset.id, ruleset.version, seed, PROOF_MAX_STATES, PROOF_MAX_SECONDS)

    # ------------------------------------------------------------ ahead of time

    def start(self) -> None:
        """Prepare today's and tomorrow's deals now and keep doing so in the background."""
        if self._ahead is None:
            self._ahead = asyncio.create_task(self._keep_ready(), name="canfield-daily-ahead")

    async def _keep_ready(self) -> None:
        while True:
            await self.prepare_ahead()
            await asyncio.sleep(AHEAD_INTERVAL_SECONDS)

    async def prepare_ahead(self) -> list[date]:
        """Prepare today's and tomorrow's deals if they are not stored yet; the dates stored now."""
        today = self.clock().date()
        ready = []
        for day in (today, today + timedelta(days=1)):
            try:
                if await self.stored(day) is None:
                    await self.preparation(day)
                ready.append(day)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the database is away, say: the next round tries again
                log.warning("daily deal of %s not prepared ahead: %r", day, error)
        return ready

    async def close(self) -> None:
        tasks = [task for task in (self._ahead, *self._preparing.values()) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._ahead = None
        self.solver.close()
