"""Webhook delivery: at-least-once, in order per hook, from the account outbox.

Each hook has a cursor, the last of its owner's events it has handled. A worker in each server
process claims hooks that have an event after their cursor and are due (``FOR UPDATE SKIP LOCKED``,
then a lease, so one hook is delivered by one worker at a time, in any number of processes), at most
``WEBHOOK_CONCURRENCY`` at once, and posts each one's next event:

- signed as the Standard Webhooks spec says, by its reference library (``standardwebhooks``):
  ``webhook-id`` (``evt_<account>_<number>``, the same on every attempt, so a receiver drops
  duplicates), ``webhook-timestamp``, ``webhook-signature: v1,<base64 HMAC-SHA256>``;
- to the address its host resolves to now, checked again (service.following.addresses), with
  ``WEBHOOK_TIMEOUT_SECONDS`` for the whole attempt, no redirect followed and no proxy;
- a 2xx answer moves the cursor on; anything else (another status, a timeout, a refused address)
  is tried again after an exponential backoff with jitter (``WEBHOOK_RETRY_FIRST_SECONDS``,
  doubling up to ``WEBHOOK_RETRY_MAX_SECONDS``, each delay drawn between half and all of it),
  until the hook has been failing for ``WEBHOOK_RETRY_SECONDS`` (24 h): then it is disabled, says
  why, and its owner's stream gets ``webhookDisabled``, in the same transaction.

A process that dies mid-delivery leaves a lease that runs out; the next worker posts the same
event again (same ``webhook-id``). A hook more than ``WEBHOOK_BACKLOG_MAX`` events behind skips
the oldest: its backlog is bounded and never slows the change that wrote the events. Every
attempt is logged (``webhook_deliveries``) for ``GET /players/me/webhooks/{id}/deliveries``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import msgspec
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool
from standardwebhooks.webhooks import Webhook

from ..metrics import WEBHOOK_ATTEMPTS, WEBHOOK_SECONDS
from ..settings import Settings
from ..store import outbox
from ..store.outbox import StoredAccountEvent
from .addresses import Target, WebhookRefused, resolve
from .feed import account_event

log = logging.getLogger("canfield")

USER_AGENT = "canfield-webhooks/1"
ERROR_LENGTH = 300

_CLAIM = """
WITH due AS (
    SELECT w.id, greatest(w.cursor_seq, p.event_seq - %(backlog)s) AS cursor_seq, p.event_seq
    FROM webhooks w JOIN players p ON p.id = w.player_id
    WHERE w.disabled_at IS NULL AND w.next_attempt_at <= now() AND p.event_seq > w.cursor_seq
      AND (w.lease_until IS NULL OR w.lease_until < now())
    ORDER BY w.next_attempt_at LIMIT %(limit)s
    FOR UPDATE OF w SKIP LOCKED
)
UPDATE webhooks w SET lease_until = now() + make_interval(secs => %(lease)s), cursor_seq = due.cursor_seq
FROM due WHERE w.id = due.id
RETURNING w.id, w.player_id, w.url, w.secret, w.events, w.api_version, w.cursor_seq, w.attempt, due.event_seq
"""
_DELIVERED = """
UPDATE webhooks SET cursor_seq = %(seq)s, attempt = 0, failing_since = NULL, next_attempt_at = now(),
    lease_until = NULL
WHERE id = %(id)s AND cursor_seq = %(cursor)s
"""
_FAILED = """
UPDATE webhooks SET attempt = attempt + 1, failing_since = coalesce(failing_since, now()), lease_until = NULL,
    next_attempt_at = now() + make_interval(secs => %(delay)s),
    disabled_at = CASE WHEN coalesce(failing_since, now()) <= now() - make_interval(secs => %(window)s)
                       THEN now() END
WHERE id = %(id)s AND cursor_seq = %(cursor)s
RETURNING disabled_at IS NOT NULL, url
"""
_LOG = """
INSERT INTO webhook_deliveries (webhook_id, message_id, event_type, attempt, status, latency_ms, error)
VALUES (%s, %s, %s, %s, %s, %s, %s)
"""


@dataclass(frozen=True, slots=True)
class Claimed:
    id: uuid.UUID
    player_id: uuid.UUID
    url: str
    secret: str
    events: list[str]
    api_version: str
    cursor: int
    attempt: int
    newest: int


@dataclass(frozen=True, slots=True)
class Outcome:
    status: int | None
    latency_ms: float
    error: str | None

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def message_id(player_id: uuid.UUID, seq: int) -> str:
    """The ``webhook-id`` of an account event: the same on every attempt and for every hook."""
    return f"evt_{player_id.hex}_{seq}"


def payload(event: StoredAccountEvent, api_version: str) -> bytes:
    """The body of a delivery, in the shapes of ``api_version`` (one version is served: the newest
    shapes are every version's)."""
    del api_version
    shown = account_event(event)
    return msgspec.json.encode({"type": event.type, "timestamp": event.created_at, "data": shown})


def backoff(attempt: int, first: float, most: float) -> float:
    """The wait before attempt ``attempt + 1``: ``first`` doubling per attempt up to ``most``, drawn
    between half and all of it (jitter: hooks that failed together do not retry together)."""
    ceiling = min(most, first * 2.0 ** max(0, attempt - 1))
    return float(ceiling * (0.5 + random.random() / 2))


class Deliverer:
    """The delivery worker of one server process (``run_forever``, started by the app's lifespan)."""

    def __init__(self, pool: AsyncConnectionPool, settings: Settings) -> None:
        self.pool = pool
        self.concurrency = settings.webhook_concurrency
        self.timeout = settings.webhook_timeout_seconds
        self.poll = settings.webhook_poll_seconds
        self.window = settings.webhook_retry_seconds
        self.first, self.most = settings.webhook_retry_first_seconds, settings.webhook_retry_max_seconds
        self.backlog = settings.webhook_backlog_max
        self.allow_private = settings.webhooks_allow_private
        self.wake = asyncio.Event()
        self.http = httpx.AsyncClient(
            follow_redirects=False, trust_env=False, timeout=self.timeout,
            limits=httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency),
            headers={"User-Agent": USER_AGENT},
        )

    async def close(self) -> None:
        await self.http.aclose()

    async def run_forever(self) -> None:
        """Keep up to ``concurrency`` deliveries in flight: claim as many hooks as there are free
        places, again as soon as one attempt ends, else every ``poll`` seconds."""
        in_flight: dict[asyncio.Task[None], uuid.UUID] = {}

        def done(task: asyncio.Task[None]) -> None:
            in_flight.pop(task, None)
            self.wake.set()

        try:
            while True:
                self.wake.clear()
                free = self.concurrency - len(in_flight)
                claimed: list[Claimed] = []
                if free > 0:
                    try:
                        claimed = await self.claim(free)
                    except Exception as error:  # the database may be down for a while: the next round tries again
                        log.warning("webhook deliveries failed: %r", error)
                for hook in claimed:
                    task = asyncio.create_task(self._handle(hook), name="canfield-webhook-delivery")
                    in_flight[task] = hook.id
                    task.add_done_callback(done)
                if not claimed or len(in_flight) >= self.concurrency:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.wake.wait(), self.poll)
        finally:
            await self._give_back(in_flight)

    async def _give_back(self, in_flight: dict[asyncio.Task[None], uuid.UUID]) -> None:
        """The process is stopping: cancel the attempts in flight and end their leases, so another
        process takes the hooks up at once (an attempt cut short is made again: at least once)."""
        hooks = list(in_flight.values())
        for task in list(in_flight):
            task.cancel()
        await asyncio.gather(*in_flight, return_exceptions=True)
        if hooks:
            try:
                async with self.pool.connection() as conn:
                    await conn.execute("UPDATE webhooks SET lease_until = NULL WHERE id = ANY(%s)", (hooks,))
            except Exception as error:  # their leases run out instead
                log.warning("webhook leases not given back: %r", error)

    async def round(self) -> int:
        """Claim the due hooks (at most ``concurrency``) and deliver each one's next event; how many."""
        claimed = await self.claim(self.concurrency)
        await asyncio.gather(*(self._handle(hook) for hook in claimed))
        return len(claimed)

    async def claim(self, limit: int) -> list[Claimed]:
        lease = self.timeout * 2 + 5
        async with self.pool.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(_CLAIM, {"backlog": self.backlog, "limit": limit, "lease": lease})
            return [Claimed(*row) for row in await cursor.fetchall()]

    async def _handle(self, hook: Claimed) -> None:
        try:
            await self._deliver(hook)
        except Exception as error:  # its lease runs out and another attempt is made
            log.warning("webhook %s: delivery not recorded (%r)", hook.id, error)

    async def _deliver(self, hook: Claimed) -> None:
        async with self.pool.connection() as conn:
            found = await outbox.events_after(conn, hook.player_id, hook.cursor, 1, hook.events)
        if not found:  # nothing of its types (or removed by the retention) up to the newest: pass over
            async with self.pool.connection() as conn:
                await conn.execute(_DELIVERED, {"id": hook.id, "seq": hook.newest, "cursor": hook.cursor})
            return
        event = found[0]
        outcome = await self.post(hook, event)
        await self._record(hook, event, outcome)

    async def post(self, hook: Claimed, event: StoredAccountEvent) -> Outcome:
        """One attempt: resolve and check the address, sign, post; never raises."""
        started = time.monotonic()
        try:
            target = await resolve(hook.url, self.allow_private)
        except WebhookRefused as refusal:
            return Outcome(None, (time.monotonic() - started) * 1000, refusal.detail[:ERROR_LENGTH])
        body = payload(event, hook.api_version)
        msg_id = message_id(hook.player_id, event.seq)
        now = datetime.now(UTC)
        headers = {
            "Host": target.host_header,
            "Content-Type": "application/json",
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": Webhook(hook.secret).sign(msg_id, now, body),
        }
        try:
            status = await asyncio.wait_for(self._post_to(target, body, headers), self.timeout)
        except (httpx.HTTPError, TimeoutError, OSError) as error:
            said = f"{type(error).__name__}: {error}"
            return Outcome(None, (time.monotonic() - started) * 1000, said[:ERROR_LENGTH])
        return Outcome(status, (time.monotonic() - started) * 1000, None)

    async def _post_to(self, target: Target, body: bytes, headers: dict[str, str]) -> int:
        """Post to the checked addresses in the resolver's order until one takes the connection
        (``localhost`` may resolve to ::1 first while the receiver listens on 127.0.0.1 only)."""
        extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
        for address in target.addresses[:-1]:
            try:
                response = await self.http.post(target.address_url(address), content=body, headers=headers,
                                                extensions=extensions)
            except (httpx.ConnectError, httpx.ConnectTimeout):  # nothing was sent: the next address may answer
                continue
            return response.status_code
        response = await self.http.post(target.address_url(target.addresses[-1]), content=body, headers=headers,
                                        extensions=extensions)
        return response.status_code

    async def _record(self, hook: Claimed, event: StoredAccountEvent, outcome: Outcome) -> None:
        attempt = hook.attempt + 1
        WEBHOOK_SECONDS.observe(outcome.latency_ms / 1000)
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(_LOG, (hook.id, message_id(hook.player_id, event.seq), event.type, attempt,
                                      outcome.status, outcome.latency_ms, outcome.error))
            if outcome.delivered:
                await conn.execute(_DELIVERED, {"id": hook.id, "seq": event.seq, "cursor": hook.cursor})
                WEBHOOK_ATTEMPTS.labels("delivered").inc()
                return
            row = await (await conn.execute(_FAILED, {
                "id": hook.id, "cursor": hook.cursor, "window": self.window,
                "delay": backoff(attempt, self.first, self.most),
            })).fetchone()
            disabled = row is not None and bool(row[0])
            if disabled:
                await self._disable(conn, hook, outcome)
        WEBHOOK_ATTEMPTS.labels("disabled" if disabled else "failed").inc()

    async def _disable(self, conn: Any, hook: Claimed, outcome: Outcome) -> None:
        reason = (f"deliveries kept failing for {self.window:g} seconds (the last: "
                  f"{outcome.status if outcome.status is not None else outcome.error})")[:ERROR_LENGTH]
        await conn.execute("UPDATE webhooks SET disabled_reason = %s WHERE id = %s", (reason, hook.id))
        await outbox.append(conn, hook.player_id, outbox.WEBHOOK_DISABLED,
                            {"webhook": str(hook.id), "url": hook.url, "reason": reason})
        log.info("webhook %s of %s disabled: %s", hook.id, hook.player_id, reason)
