"""``GET /players/me/stream``: an account's events live, as Server-Sent Events or NDJSON.

The stream reads the account outbox (service.store.outbox) and nothing else: woken by the
account's notifications (service.streams.hub, ``canfield_account_events``), it reads the events
numbered after the last one it sent, so it neither misses nor repeats one whichever process wrote
it, whenever the notification arrives. Without ``Last-Event-ID`` it starts after the account's
newest event; with one, after that event, replaying what the client missed: within the retention
everything; past it, a first ``eventsDropped`` event saying so (the client resyncs from the lists),
then everything still kept and the live ones. An id the account never had is a 400
``unknown_event_id``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec
from psycopg_pool import AsyncConnectionPool

from ..errors import BadRequest
from ..store import outbox
from ..store.connections import DATABASE_DOWN_ERRORS
from ..store.outbox import StoredAccountEvent
from ..streams.hub import KEEPALIVE, SHUTDOWN, Subscription

log = logging.getLogger("canfield")

DROPPED = "eventsDropped"
"""The type of the first event of a stream resumed after events its retention removed."""
BATCH = 200
"""Events read per query while catching up."""
NDJSON_KEEPALIVE = b"\n"
_ID = re.compile(r"[ \t]*([0-9]{1,18})[ \t]*")

JSON = dict[str, Any]


class UnknownEventId(BadRequest):
    code = "unknown_event_id"
    title = "Unknown event id"


@dataclass(frozen=True, slots=True)
class Resume:
    """Where a stream starts: after event ``after``; ``dropped``, the id the client asked to resume
    after when events after it are gone (the stream's first event then says so)."""

    after: int
    dropped: int | None = None


def account_event(event: StoredAccountEvent) -> JSON:
    """An account event as streams and webhooks show it."""
    return {"id": event.seq, "type": event.type, "createdAt": event.created_at, "data": event.data}


def dropped_event(asked: int, resumed: int, retention_seconds: float) -> JSON:
    return {
        "id": resumed, "type": DROPPED, "createdAt": datetime.now(UTC),
        "data": {"after": asked, "resumedAfter": resumed, "retentionSeconds": retention_seconds},
    }


def parse_event_id(text: str) -> int:
    found = _ID.fullmatch(text)
    if found is None:
        raise UnknownEventId("Last-Event-ID must be the id of an event of this stream (a whole number)")
    return int(found.group(1))


async def resume_point(pool: AsyncConnectionPool, player_id: uuid.UUID, last_event_id: str | None) -> Resume:
    """Where the account's stream starts (read after its subscription was taken: nothing slips by)."""
    asked = None if last_event_id is None else parse_event_id(last_event_id)
    async with pool.connection() as conn:
        found = await outbox.position(conn, player_id)
    if found is None:
        raise BadRequest("the player behind this token no longer exists")
    if asked is None:
        return Resume(found.last)
    if asked > found.last:
        raise UnknownEventId(f"there is no event {asked} on this account's stream (its newest is {found.last}): "
                             "resume with the id of an event it sent, or without Last-Event-ID")
    if asked < found.last and (found.oldest is None or found.oldest > asked + 1):
        return Resume(found.last if found.oldest is None else found.oldest - 1, dropped=asked)
    return Resume(asked)


def sse(event: JSON) -> bytes:
    return b"event: %s\nid: %d\ndata: %s\n\n" % (event["type"].encode(), event["id"], msgspec.json.encode(event))


def ndjson(event: JSON) -> bytes:
    return msgspec.json.encode(event) + b"\n"


@dataclass(frozen=True, slots=True)
class Feed:
    """One account stream: whose, where it starts, how it is framed."""

    pool: AsyncConnectionPool
    subscription: Subscription
    player_id: uuid.UUID
    resume: Resume
    keepalive_seconds: float
    retention_seconds: float
    lines: bool  # NDJSON (one JSON object a line, an empty line to keep alive) rather than SSE


def feed_messages(feed: Feed) -> AsyncIterator[bytes]:
    """The body of an account stream; the subscription is given back when it ends."""
    body = _messages(feed)
    weakref.finalize(body, feed.subscription.close)  # even if the body is never iterated
    return body


async def _messages(feed: Feed) -> AsyncIterator[bytes]:
    frame = ndjson if feed.lines else sse
    subscription = feed.subscription
    after = feed.resume.after
    try:
        if feed.resume.dropped is not None:
            yield frame(dropped_event(feed.resume.dropped, after, feed.retention_seconds))
        last_sent = time.monotonic()
        while not subscription.closing:
            subscription.wake.clear()  # before reading: a notification from now on wakes us again
            while True:
                async with feed.pool.connection() as conn:
                    events = await outbox.events_after(conn, feed.player_id, after, BATCH)
                for event in events:
                    yield frame(account_event(event))
                    after = event.seq
                    last_sent = time.monotonic()
                if len(events) < BATCH:
                    break
            idle = time.monotonic() - last_sent
            try:
                await asyncio.wait_for(subscription.wake.wait(), max(0.0, feed.keepalive_seconds - idle))
            except TimeoutError:
                yield NDJSON_KEEPALIVE if feed.lines else KEEPALIVE
                last_sent = time.monotonic()
        if not feed.lines:
            yield SHUTDOWN  # the server is stopping: reconnect with Last-Event-ID
    except DATABASE_DOWN_ERRORS as error:
        log.warning("account stream of %s ended: database unavailable (%s)", feed.player_id, type(error).__name__)
    finally:
        subscription.close()
