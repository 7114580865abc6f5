"""The account outbox's periodic job: what no request does.

Every ``ACCOUNT_EVENTS_SWEEP_SECONDS`` each server process tries a round; a round runs only in the
process that takes a PostgreSQL advisory lock (``pg_try_advisory_lock``), as game abandonment does
(service.games.abandon). A round

- finishes the running races whose time limit has passed that no request has looked at
  (``Races.settle_due``), so their entrants hear ``raceFinished`` when the time is up;
- stores the pending challenges past their time as expired (``Challenges.expire_due``), so both
  players hear ``challenge`` with the action ``expired``;
- removes account events older than ``ACCOUNT_EVENTS_RETENTION_SECONDS`` and the delivery log
  rows of webhooks as old, ``BATCH`` rows a statement.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from psycopg_pool import AsyncConnectionPool

from ..challenges.challenges import Challenges
from ..races.races import Races
from ..store import outbox

log = logging.getLogger("canfield")

BATCH = 5000
MAX_BATCHES = 20
LOCK_KEY = 0x43414E46_41434556 & 0x7FFF_FFFF_FFFF_FFFF
"""The advisory lock one round holds (any process; the others skip their round)."""


@dataclass(frozen=True, slots=True)
class Swept:
    races: int
    challenges: int
    events: int
    deliveries: int


class Sweeper:
    def __init__(self, pool: AsyncConnectionPool, races: Races, challenges: Challenges,
                 retention_seconds: float) -> None:
        self.pool = pool
        self.races = races
        self.challenges = challenges
        self.retention_seconds = retention_seconds

    async def run_once(self) -> Swept | None:
        """One round; None when another process holds the round."""
        async with self.pool.connection() as conn:
            locked = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (LOCK_KEY,))).fetchone()
            if locked is None or not locked[0]:
                return None
            try:
                races = await self.races.settle_due()
                challenges = await self.challenges.expire_due()
                events = deliveries = 0
                for _ in range(MAX_BATCHES):
                    removed = await outbox.remove_older(conn, self.retention_seconds, BATCH)
                    events += removed
                    if removed < BATCH:
                        break
                for _ in range(MAX_BATCHES):
                    cursor = await conn.execute(
                        "DELETE FROM webhook_deliveries WHERE id = ANY(ARRAY(SELECT id FROM webhook_deliveries"
                        " WHERE attempted_at < now() - make_interval(secs => %s) LIMIT %s))",
                        (self.retention_seconds, BATCH),
                    )
                    deliveries += cursor.rowcount
                    if cursor.rowcount < BATCH:
                        break
                return Swept(races, challenges, events, deliveries)
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))


async def sweep_forever(sweeper: Sweeper, every_seconds: float) -> None:
    """``run_once`` every ``every_seconds`` until cancelled (the app's lifespan)."""
    while True:
        await asyncio.sleep(every_seconds)
        try:
            swept = await sweeper.run_once()
        except Exception as error:  # the database may be down for a while: the next round tries again
            log.warning("the account events' round failed: %r", error)
        else:
            if swept is not None and any((swept.races, swept.challenges, swept.events, swept.deliveries)):
                log.info("account events: %d race(s) finished by time, %d challenge(s) expired, %d event(s) and %d "
                         "delivery log row(s) past the retention removed", swept.races, swept.challenges,
                         swept.events, swept.deliveries)
