"""``GET /games/{id}/stream``: a game live, as Server-Sent Events, woken by the stream hub
(service.streams.hub): the view, then each event as it is appended, keep-alives, and the end once
the game is over (or a ``shutdown`` message when the server stops). Woken, a stream reads the
events after the last version it sent from the database, so it neither misses nor repeats one."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator

from domain.codec import restore

from ..analysis.analyses import progress_view
from ..analysis.queue import DONE, FAILED, AnalysisQueue
from ..deals.daily import reveals_hidden_cards
from ..games.views import public_event, view_of
from ..games.wire import GameView
from ..store.connections import DATABASE_DOWN_ERRORS
from ..store.game_records import GameRow
from .hub import KEEPALIVE, SHUTDOWN, StreamHub, Subscription, message

PAGE = 500  # events read per query while catching up
log = logging.getLogger("canfield")


def row_view(game: GameRow, withhold: bool) -> GameView:
    """The API view of a stored games row (``withhold``: its hidden cards stay hidden)."""
    return view_of(game, restore(game.snapshot, game.tail, game.version), withhold)


def withholds(hub: StreamHub, game: GameRow, withhold: bool) -> bool:
    """Whether hidden cards stay hidden even if the game has ended: ``withhold`` (a race still
    on, as ``GameAccess.readable`` said when the stream opened), or a daily game whose date is not
    over yet (asked at every message: a stream can outlive a date)."""
    return withhold or not reveals_hidden_cards(game.deal, True, hub.clock())


def game_messages(
    hub: StreamHub, subscription: Subscription, game: GameRow, after: int | None, withhold: bool = False
) -> AsyncIterator[bytes]:
    """The SSE body of a stream of ``game`` (already loaded): the view unless resuming after
    a version, then each event after it, keep-alives, and the end once the game is over.
    ``withhold``: never show its hidden cards, even once it has ended (a race still on)."""
    body = _messages(hub, subscription, game, after, withhold)
    weakref.finalize(body, subscription.close)  # even if the body is never iterated
    return body


async def _messages(
    hub: StreamHub, subscription: Subscription, game: GameRow, after: int | None, withhold: bool
) -> AsyncIterator[bytes]:
    game_id = game.id
    try:
        if after is None:
            yield message("view", game.version, row_view(game, withholds(hub, game, withhold)))
            last = game.version
        else:
            last = after
        if game.finished_at is not None and last >= game.version:
            async for chunk in _ending(hub, subscription, game, withhold):
                yield chunk
            return
        while not subscription.closing:
            subscription.wake.clear()  # before reading: a notification from now on wakes us again
            rows = await hub.store.read_events(game_id, last, PAGE)
            found = await hub.store.load_game(game_id)  # after the events: never older than them
            if found is None:
                return
            game = found
            over = game.finished_at is not None
            reveal = over and not withholds(hub, game, withhold)
            for row in rows:
                event = public_event(row.version, row.type, row.data, row.recorded_at, reveal)
                yield message("game-event", row.version, event)
                last = row.version
            if over and last >= game.version:
                async for chunk in _ending(hub, subscription, game, withhold):
                    yield chunk
                return
            if last < game.version:
                continue  # more was appended (or a full page was read): read on
            if rows:
                # Caught up after a change: the table as it is now, so a client can keep its
                # table from the stream alone (an undone draw's event does not say what the
                # waste shows now).
                yield message("view", game.version, row_view(game, withholds(hub, game, withhold)))
            try:
                await asyncio.wait_for(subscription.wake.wait(), hub.keepalive)
            except TimeoutError:
                yield KEEPALIVE
        yield SHUTDOWN  # the server is stopping
    except DATABASE_DOWN_ERRORS as error:
        # The client reconnects (EventSource does so by itself) with Last-Event-ID and resumes.
        log.warning("stream of game %s ended: database unavailable (%s)", game_id, type(error).__name__)
    finally:
        subscription.close()


async def _ending(hub: StreamHub, subscription: Subscription, game: GameRow, withhold: bool) -> AsyncIterator[bytes]:
    """The end of a finished game's stream: its analysis, if one was asked for, as it progresses
    (``analysis`` messages, until it is done or failed), then ``end``."""
    queue = AnalysisQueue(hub.store.pool)
    shown = None
    while not subscription.closing:
        subscription.wake.clear()  # before reading: progress from now on wakes us again
        job = await queue.get(game.id)
        if job is None:
            break
        progress = progress_view(job)
        if progress != shown:
            yield message("analysis", game.version, progress)
            shown = progress
        if job.status in (DONE, FAILED):
            break
        try:
            await asyncio.wait_for(subscription.wake.wait(), hub.keepalive)
        except TimeoutError:
            yield KEEPALIVE
    if not subscription.closing:  # the server is stopping: the client reconnects and hears the rest
        yield message("end", game.version, row_view(game, withholds(hub, game, withhold)))
