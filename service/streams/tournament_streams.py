"""``GET /tournaments/{id}/stream``: a tournament's standings live, on the race streams' machinery.

A tournament stream holds one slot of the stream hub (``service.streams.hub``), keyed by the
tournament's id: a join, the end of its preparation, each game dealt, each game ended and the
finish bump its version and notify ``<tournament id>:<version>``. Woken, it reads the tournament
again (``Tournaments.current``, which also finishes one that is due) and sends the view when it
differs from the last one sent. Without a wake-up it reads again at the keep-alive interval and
at the tournament's start and end, so a tournament whose time is up ends on the stream too.
Moves inside a game do not wake it (a thousand entrants' moves would): the standings change when
a game ends, and that notifies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import AsyncIterator

from ..store.connections import DATABASE_DOWN_ERRORS
from ..tournaments.tournaments import Board, Tournaments
from ..tournaments.views import tournament_view
from .hub import KEEPALIVE, SHUTDOWN, StreamHub, Subscription, message

log = logging.getLogger("canfield")

DESCRIPTION = """\
Server-Sent Events (`text/event-stream`), in this order:

* `event: tournament`, `id: <n>`, `data: <the tournament view>`: as `GET /tournaments/{id}`;
* `event: tournament` again after each change (a join, the deals proven, its start, a game dealt, a
  game ended), from any server process; `id` grows with every change;
* `: keep-alive` comment lines when nothing else was sent for a while (15 s by default);
* `event: end`, `data: <the final view>` once the tournament has finished (its time is up, or every
  entrant has finished every deal: the standings replay-verified and the places final); then the
  server closes the stream;
* `event: shutdown`, `retry: 1000`, `data: {"detail": "..."}` (no `id`) when the server stops.

Like the view, the stream shows figures only, never a card. A bearer token is optional; open
streams are capped per player (per client address without a token), shared with game streams.
"""


def tournament_messages(hub: StreamHub, subscription: Subscription, tournaments: Tournaments,
                        board: Board) -> AsyncIterator[bytes]:
    """The SSE body of a tournament stream (``board`` read after ``subscription`` was taken)."""
    body = _messages(hub, subscription, tournaments, board)
    weakref.finalize(body, subscription.close)
    return body


def _timeout(hub: StreamHub, tournaments: Tournaments, board: Board) -> float:
    """Until the next read: the keep-alive interval, or sooner the tournament's start or end."""
    now = tournaments.clock()
    timeout = hub.keepalive
    for moment in (board.tournament.starts_at, board.tournament.ends_at):
        if moment > now:
            timeout = min(timeout, max(0.05, (moment - now).total_seconds() + 0.05))
    return timeout


async def _messages(hub: StreamHub, subscription: Subscription, tournaments: Tournaments,
                    board: Board) -> AsyncIterator[bytes]:
    try:
        sent = tournament_view(board, tournaments.clock())
        yield message("tournament", board.revision, sent)
        last_sent = time.monotonic()
        while not subscription.closing:
            if board.tournament.finished_at is not None:
                yield message("end", board.revision, sent)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(subscription.wake.wait(), _timeout(hub, tournaments, board))
            if subscription.closing:
                break
            subscription.wake.clear()  # before reading: a notification from now on wakes us again
            board = await tournaments.current(board.tournament.id)
            view = tournament_view(board, tournaments.clock())
            if view != sent:
                sent = view
                if board.tournament.finished_at is None:
                    yield message("tournament", board.revision, view)
                last_sent = time.monotonic()
            elif time.monotonic() - last_sent >= hub.keepalive:
                yield KEEPALIVE
                last_sent = time.monotonic()
        yield SHUTDOWN
    except DATABASE_DOWN_ERRORS as error:
        log.warning("stream of tournament %s ended: database unavailable (%s)", board.tournament.id,
                    type(error).__name__)
    finally:
        subscription.close()
