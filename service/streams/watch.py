"""``GET /watch`` and ``POST /watch``: many games on one Server-Sent Events connection, woken by the
stream hub (service.streams.hub) like a game's own stream, in one slot.

A watch follows the games it names and the games of the players it names: their games in
progress when it opens (the newest ``PLAYER_GAMES_AT_OPEN`` of each) and every game they start
while it is open (the hub hears of a new game on ``canfield_games``; a check of the database at
every keep-alive interval finds any whose notification was missed, e.g. one dealt by a process of
the previous release, which does not notify). Woken, it reads only the games the hub said were
notified (``Subscription.changed``), all of them in two statements (service.store.many_games):
the events after the last version it sent of each, then their rows. So, like a game's stream, it
never misses or repeats an event.

A game its caller may not see (a daily game in its date, a race game while its race runs: only
their own player may) is left out and looks exactly like an id that is no game: both are listed as
``unavailable`` in the first message, and a private game found through a player is not mentioned
at all. It is checked again at every keep-alive interval and when its race changes, and followed
from the moment it becomes public (its view first).

Every message's ``id`` is ``<game id>:<version>``. A reconnect names the games again (EventSource
repeats the request) and sends ``Last-Event-ID``: that game resumes after that version; ``POST``
may also give ``after``, a version per game to resume each from. Every other game starts again
with its view, so nothing is missed (the view is the whole table), only the events before it are
not repeated. See ``DESCRIPTION``.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import msgspec

from ..errors import Forbidden, NotFound, Unauthorized
from ..games.games import Games
from ..games.views import public_event
from ..races.races import race_of
from ..store.connections import DATABASE_DOWN_ERRORS
from ..store.game_records import GameRow, StoredEvent
from ..store.many_games import load_games, players_games
from .game_streams import row_view, withholds
from .hub import KEEPALIVE, SHUTDOWN, StreamHub, Subscription

MAX_IDS = 300  # game and player ids in one watch, together
PLAYER_GAMES_AT_OPEN = 10  # the newest games in progress of each watched player followed from the start
PLAYER_GAMES_PER_CHECK = 50  # the newest games of each player a periodic check looks at
SINCE_MARGIN = timedelta(seconds=5)  # new games started this long before the watch opened count too (clock skew)
log = logging.getLogger("canfield")


@dataclass(frozen=True, slots=True)
class WatchRequest:
    """What to watch: game ids, player ids (distinct, ``MAX_IDS`` in all) and the versions to
    resume games after (``after``; ``Last-Event-ID`` already merged in)."""

    games: tuple[uuid.UUID, ...]
    players: tuple[uuid.UUID, ...]
    after: dict[uuid.UUID, int] = field(default_factory=dict)


@dataclass(slots=True)
class Followed:
    """A game on the watch: the last version sent, and whether its hidden cards stay hidden even
    once it has ended (``GameAccess.readable``)."""

    last: int
    withhold: bool


_MESSAGES: dict[tuple[str, uuid.UUID, int, bool], bytes] = {}
"""Recent messages of every watch in this process: a game's view at a version (its hidden cards
withheld or not) and its event at a version never change, and every watch of a game sends the
same ones, so each is made (restored, shaped, encoded) once, not once per watch."""
_MESSAGES_MAX = 8192


def watch_message(event: str, game_id: uuid.UUID, version: int, name: str, data: Any) -> bytes:
    """One SSE message of a watch: ``id`` is ``<game id>:<version>``; ``data`` is
    ``{"game": <id>, <name>: data}``."""
    return b"event: %s\nid: %s:%d\ndata: %s\n\n" % (
        event.encode(), str(game_id).encode(), version, msgspec.json.encode({"game": str(game_id), name: data})
    )


def _event(game_id: uuid.UUID, stored: StoredEvent, reveal: bool) -> bytes:
    event = public_event(stored.version, stored.type, stored.data, stored.recorded_at, reveal)
    return watch_message("game-event", game_id, stored.version, "event", event)


def _remembered(key: tuple[str, uuid.UUID, int, bool], make: Callable[[], bytes]) -> bytes:
    found = _MESSAGES.get(key)
    if found is None:
        if len(_MESSAGES) >= _MESSAGES_MAX:
            _MESSAGES.clear()
        found = _MESSAGES[key] = make()
    return found


@dataclass(eq=False)
class Watch:
    """One open watch: what it follows, what it waits for, and the stream hub's slot it holds."""

    hub: StreamHub
    subscription: Subscription
    games: Games
    token: str | None
    request: WatchRequest
    since: datetime  # the games of the watched players started from then on are new
    followed: dict[uuid.UUID, Followed] = field(default_factory=dict)
    pending: dict[uuid.UUID, uuid.UUID | None] = field(default_factory=dict)  # private games: their race, if any
    known: set[uuid.UUID] = field(default_factory=set)  # every game id met, so none is taken up twice
    unavailable: list[uuid.UUID] = field(default_factory=list)  # named ids that are no game the caller may see
    visible: list[uuid.UUID] = field(default_factory=list)  # the games it starts with that the caller may see
    first: list[bytes] = field(default_factory=list)  # the opening messages, after ``watching``
    checked: float = field(default_factory=time.monotonic)  # when private games and players were last checked

    @property
    def key(self) -> uuid.UUID:
        return self.subscription.game_id

    # ------------------------------------------------------------ opening

    async def open(self) -> None:
        """Read every game the watch starts with (the slot is taken already: nothing appended from
        now on goes unnoticed) and prepare the opening messages."""
        named = set(self.request.games)
        found = await players_games(
            self.hub.store.pool, list(self.request.players), self.since, True, PLAYER_GAMES_AT_OPEN
        )
        wanted = list(dict.fromkeys([*self.request.games, *found]))
        self.hub.watch(self.subscription, wanted)  # before reading them: no append slips between
        rows = await load_games(self.hub.store.pool, wanted)
        self.known.update(wanted)
        for game_id in wanted:
            row = rows.get(game_id)
            if row is not None and row.finished_at is not None and game_id not in named:
                continue  # a player's game that ended before the watch opened: known, not shown
            shown = row is not None and await self._take(row, self.request.after.get(game_id))
            if shown:
                self.visible.append(game_id)
            elif game_id in named:
                self.unavailable.append(game_id)

    def opening(self) -> bytes:
        """The first message: the games it starts with that the caller may see (an ended one sends
        its end, or nothing when resumed after it), and the named ids that are no such game."""
        return b"event: watching\ndata: %s\n\n" % msgspec.json.encode({
            "games": sorted(str(game_id) for game_id in self.visible),
            "players": [str(player) for player in self.request.players],
            "unavailable": [str(game_id) for game_id in self.unavailable],
        })

    async def _visible(self, row: GameRow) -> bool | None:
        """None when the caller may not see ``row`` now; else whether its hidden cards stay hidden
        even once it has ended."""
        try:
            return await self.games.access.readable(row, self.token)
        except (Unauthorized, Forbidden, NotFound):
            return None

    async def _take(self, row: GameRow, after: int | None = None) -> bool:
        """Follow ``row`` if the caller may see it (its first messages into ``first``), else wait
        for it to become public. False when it is private."""
        withhold = await self._visible(row)
        if withhold is None:
            race = race_of(row.deal)
            self.pending[row.id] = race
            self.hub.watch(self.subscription, [row.id] if race is None else [row.id, race])  # a race's end wakes it
            return False
        self.pending.pop(row.id, None)
        self.hub.watch(self.subscription, [row.id])
        if after is not None and after <= row.version:
            if row.finished_at is None or after < row.version:
                self.followed[row.id] = Followed(after, withhold)
                self._mark(row.id)  # its events after ``after`` are read at once
            return True  # a finished game resumed after its final version: nothing more to send
        if row.finished_at is not None:
            self.first.append(self._view("end", row, withhold))
            return True
        self.first.append(self._view("view", row, withhold))
        self.followed[row.id] = Followed(row.version, withhold)
        return True

    def _mark(self, game_id: uuid.UUID) -> None:
        if self.subscription.changed is not None:
            self.subscription.changed.add(game_id)
        self.subscription.wake.set()

    def _view(self, event: str, row: GameRow, withhold: bool) -> bytes:
        hidden = withholds(self.hub, row, withhold)
        return _remembered(
            (event, row.id, row.version, hidden),
            lambda: watch_message(event, row.id, row.version, "view", row_view(row, hidden)),
        )

    # ------------------------------------------------------------ following

    async def step(self) -> list[bytes]:
        """Read what the hub said changed (and, once per keep-alive interval, the private games
        and the watched players' new games): the messages to send."""
        changed = self.subscription.changed or set()
        self.subscription.changed = set()
        due = time.monotonic() - self.checked >= self.hub.keepalive or self.key in changed
        if due:
            self.checked = time.monotonic()
        out: list[bytes] = []
        await self._newcomers(changed, due)
        races = {race for race in self.pending.values() if race is not None}
        if self.pending and (due or races & changed):
            await self._recheck_private()
        out.extend(self.first)
        self.first.clear()
        out.extend(await self._read([game_id for game_id in changed if game_id in self.followed]))
        return out

    async def _newcomers(self, changed: set[uuid.UUID], due: bool) -> None:
        """Games of the watched players not met yet: notified by the hub, or found by a check."""
        if not self.request.players:
            return
        races = set(self.pending.values())
        candidates = [game_id for game_id in changed
                      if game_id not in self.known and game_id != self.key and game_id not in races]
        if due:
            found = await players_games(
                self.hub.store.pool, list(self.request.players), self.since, False, PLAYER_GAMES_PER_CHECK
            )
            candidates.extend(game_id for game_id in found if game_id not in self.known)
        candidates = [game_id for game_id in dict.fromkeys(candidates) if game_id not in self.pending]
        if not candidates:
            return
        self.hub.watch(self.subscription, candidates)  # before reading them: no append slips between
        players = set(self.request.players)
        for row in (await load_games(self.hub.store.pool, candidates)).values():
            if row.player_id in players and row.id not in self.known:
                self.known.add(row.id)
                await self._take(row)

    async def _recheck_private(self) -> None:
        rows = await load_games(self.hub.store.pool, list(self.pending))
        for game_id in list(self.pending):
            row = rows.get(game_id)
            if row is None:
                del self.pending[game_id]  # gone (its player's account was erased)
            else:
                await self._take(row)

    async def _read(self, ids: list[uuid.UUID]) -> list[bytes]:
        """The events of ``ids`` after the last version sent of each, then the view they lead to,
        or the end."""
        if not ids:
            return []
        events, rows = await self.hub.reads.changes({game_id: self.followed[game_id].last for game_id in ids})
        out: list[bytes] = []
        for game_id in ids:
            row = rows.get(game_id)
            if row is None:
                del self.followed[game_id]
                continue
            out.extend(self._caught_up(row, events.get(game_id, [])))
        return out

    def _caught_up(self, row: GameRow, events: list[StoredEvent]) -> Iterable[bytes]:
        game = self.followed[row.id]
        over = row.finished_at is not None
        reveal = over and not withholds(self.hub, row, game.withhold)
        for stored in events:
            yield _remembered(("game-event", row.id, stored.version, reveal), partial(_event, row.id, stored, reveal))
            game.last = stored.version
        if game.last < row.version:
            self._mark(row.id)  # more than a page, or appended meanwhile: read on
        elif over:
            del self.followed[row.id]
            yield self._view("end", row, game.withhold)
        elif events:
            yield self._view("view", row, game.withhold)


async def open_watch(hub: StreamHub, subscription: Subscription, games: Games, token: str | None,
                     request: WatchRequest) -> Watch:
    """A watch on ``subscription`` (a slot the caller took, keyed by a fresh id), its games read."""
    hub.follow(subscription, request.players)
    hub.track(subscription)
    watch = Watch(hub, subscription, games, token, request, hub.clock() - SINCE_MARGIN)
    await watch.open()
    return watch


def watch_messages(watch: Watch) -> AsyncIterator[bytes]:
    """The SSE body of an open watch."""
    body = _messages(watch)
    weakref.finalize(body, watch.subscription.close)  # even if the body is never iterated
    return body


async def _messages(watch: Watch) -> AsyncIterator[bytes]:
    hub, subscription = watch.hub, watch.subscription
    try:
        yield watch.opening()
        sent = time.monotonic()
        while not subscription.closing:
            subscription.wake.clear()  # before reading: a notification from now on wakes us again
            chunks = await watch.step()
            if chunks:
                yield b"".join(chunks)
                sent = time.monotonic()
            if subscription.wake.is_set():
                continue
            wait = max(0.0, hub.keepalive - (time.monotonic() - sent))
            try:
                await asyncio.wait_for(subscription.wake.wait(), wait)
            except TimeoutError:
                yield KEEPALIVE
                sent = time.monotonic()
        yield SHUTDOWN  # the server is stopping
    except DATABASE_DOWN_ERRORS as error:
        # The client reconnects (EventSource does so by itself) with Last-Event-ID and resumes.
        log.warning("watch ended: database unavailable (%s)", type(error).__name__)
    finally:
        subscription.close()
