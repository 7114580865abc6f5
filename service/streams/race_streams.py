"""``GET /races/{id}/stream``: a race's standings live, on the game streams' LISTEN/NOTIFY machinery.

A race stream holds one slot of the stream hub (``service.streams.hub``), keyed by the race's id
(joins, the start and the finish notify ``<race id>:<version>``) and, once the race has started,
by each entrant's game too (``StreamHub.watch``: every move notifies its game). Woken, it reads
the race again from the database (``Races.current``, which also finishes a race that is due) and
sends the view when it differs from the last one sent; so it works from any server process and
never misses a change. Without a wake-up it reads again at the keep-alive interval and at the
race's deadline, so a race whose time is up ends on the stream too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import AsyncIterator

from ..races.races import Races
from ..races.rows import FINISHED, RaceRow
from ..races.views import race_view, revision
from ..store.connections import DATABASE_DOWN_ERRORS
from .hub import KEEPALIVE, SHUTDOWN, StreamHub, Subscription, message

log = logging.getLogger("canfield")

DESCRIPTION = """\
Server-Sent Events (`text/event-stream`), in this order:

* `event: race`, `id: <n>`, `data: <the race view>`: the race as it is now (as `GET /races/{id}`);
* `event: race` again after each change of standings (a join, the start, any entrant's move, an
  entrant's game ending), from any server process; `id` grows with every change;
* `: keep-alive` comment lines when nothing else was sent for a while (15 s by default);
* `event: end`, `data: <the final view>` once the race has finished (every game ended, or the time
  limit passed: the standings are frozen and the places final), or was cancelled before its start
  (its creator cancelled it or left it, or deleted their account with nobody else entered: `status`
  `cancelled`, never started, `cancelledReason` set);
  then the server closes the stream;
* `event: shutdown`, `retry: 1000`, `data: {"detail": "..."}` (no `id`) when the server stops: the
  stream's last message.

Like the race view, the stream shows figures only, never a card. A bearer token is optional; open
streams are capped per player (per client address without a token), shared with game streams.
Reconnecting simply starts again with the current view.
"""


def race_messages(hub: StreamHub, subscription: Subscription, races: Races, race: RaceRow) -> AsyncIterator[bytes]:
    """The SSE body of a race stream (``race`` already loaded after ``subscription`` was taken)."""
    body = _messages(hub, subscription, races, race)
    weakref.finalize(body, subscription.close)  # even if the body is never iterated
    return body


async def _messages(hub: StreamHub, subscription: Subscription, races: Races, race: RaceRow) -> AsyncIterator[bytes]:
    try:
        sent = race_view(race)
        yield message("race", revision(race), sent)
        last_sent = time.monotonic()
        while not subscription.closing:
            if race.status == FINISHED:
                yield message("end", revision(race), sent)
                return
            hub.watch(subscription, [e.game_id for e in race.entrants if e.game_id is not None])
            timeout = hub.keepalive
            if race.ends_at is not None:  # wake at the deadline (a little after it, by the service's clock)
                timeout = min(timeout, max(0.05, (race.ends_at - races.clock()).total_seconds() + 0.05))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(subscription.wake.wait(), timeout)
            if subscription.closing:
                break
            subscription.wake.clear()  # before reading: a notification from now on wakes us again
            race = await races.current(race.id)
            view = race_view(race)
            if view != sent:
                sent = view
                if race.status != FINISHED:
                    yield message("race", revision(race), view)
                last_sent = time.monotonic()
            elif time.monotonic() - last_sent >= hub.keepalive:
                yield KEEPALIVE
                last_sent = time.monotonic()
        yield SHUTDOWN  # the server is stopping
    except DATABASE_DOWN_ERRORS as error:
        # The client reconnects (EventSource does so by itself) and starts again with the current view.
        log.warning("stream of race %s ended: database unavailable (%s)", race.id, type(error).__name__)
    finally:
        subscription.close()
