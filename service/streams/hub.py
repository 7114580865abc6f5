"""The stream hub: one LISTEN connection per server process that wakes the live streams
(``GET /games/{id}/stream``: service.streams.game_streams; ``GET /races/{id}/stream``:
service.streams.race_streams), the slots they hold, and Server-Sent Events framing.

Every successful append notifies the channel ``canfield_events`` with ``<game id>:<new version>``
(``event_store._APPEND``). PostgreSQL delivers a notification when (and only if) the transaction
commits, to every listening session, so a move made through any server process reaches every
other process, and never before it is visible to readers.

One ``StreamHub`` per server process holds one dedicated connection (autocommit; ``LISTEN
canfield_events`` while the process has open streams) read by a background task, started and
stopped by the app's lifespan. It wakes the streams subscribed to the game named in a notification. The payload is
only a hint: a woken stream reads the events after the last version it sent from the database,
so it neither misses nor repeats an event when notifications coalesce, arrive late or out of
order. If the listening connection breaks, the task reconnects with backoff and then wakes every
stream, which catches up on what was appended meanwhile.

While it listens there it also listens on ``canfield_games``: every new game notifies
``<player id>:<game id>`` (``event_store._CREATE``), and the watches that follow that player
(``GET /watch``: service.streams.watch) are woken with the game's id in their ``changed`` set.
A watch keeps one slot however many games it follows, keyed by an id of its own; the hub tells it
which of its games were notified (``changed``), so it reads only those.

Account streams (``GET /players/me/stream``: service.following.feed) subscribe by their player's
id and are woken the same way by ``canfield_account_events`` (``<player id>:<event number>``,
service.store.outbox), listened to alongside the games' channels.

The same connection always listens on ``canfield_tokens``: a revoked token's player is named
there, and this process forgets that player's cached tokens (``TokenCache.forget``); after a
reconnection it forgets every cached token, since a revocation may have gone by unheard.

Each stream takes a slot of its owner (the bearer token's player, else the client address)
until it ends, and a slot of its client address; at most ``settings.streams_per_player`` slots
per owner and ``settings.streams_per_address`` per address in this process.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec
import psycopg

from ..clock import utc_now
from ..errors import RateLimited, Unavailable
from ..metrics import REFUSED_STREAMS, STREAMS_OPEN
from ..players.tokens import TokenCache
from ..settings import Settings
from ..store.connections import connect_timeout, primary_of
from ..store.event_store import CHANNEL, GAMES_CHANNEL, EventStore
from ..store.outbox import ACCOUNT_CHANNEL
from ..store.players import TOKENS_CHANNEL
from ..tasks import cancel_and_wait
from .shared_reads import SharedReads

MEDIA_TYPE = "text/event-stream"
RECONNECT_FIRST_SECONDS = 0.2  # the listener's first retry after a loss; then doubling up to reconnect_max_seconds
KEEPALIVE = b": keep-alive\n\n"
SHUTDOWN_RETRY_MS = 1000
SHUTDOWN = b"event: shutdown\nretry: %d\ndata: %s\n\n" % (
    SHUTDOWN_RETRY_MS,
    msgspec.json.encode({"detail": "this server is shutting down; reconnect (with Last-Event-ID) to go on"}),
)
"""A stream's last message when the server stops (``StreamHub.close_all``): no ``id``, so a client's
Last-Event-ID stays the last message's; ``retry`` asks EventSource to reconnect after a second."""
log = logging.getLogger("canfield")


def message(event: str, version: int, data: Any) -> bytes:
    """One SSE message. JSON never contains a raw line break, so ``data`` is one line."""
    return b"event: %s\nid: %d\ndata: %s\n\n" % (event.encode(), version, msgspec.json.encode(data))


@dataclass(eq=False)
class Subscription:
    """One open stream: its game, whose slot it holds, and the event that wakes it."""

    hub: StreamHub
    game_id: uuid.UUID
    owner: str
    address: str | None = None  # the client address, whose slots every stream from it takes too
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    closing: bool = False  # the server is shutting down: end the stream
    released: bool = False
    also: set[uuid.UUID] = field(default_factory=set)  # more streams it wakes for (a race's games: StreamHub.watch)
    changed: set[uuid.UUID] | None = None  # a watch: the ids notified since it last looked (StreamHub.track)
    players: set[uuid.UUID] = field(default_factory=set)  # a watch: whose new games wake it (StreamHub.follow)

    def close(self) -> None:
        """Give back the slot and stop being woken (idempotent)."""
        if not self.released:
            self.released = True
            self.hub._release(self)


class StreamHub:
    def __init__(
        self, url: str, store: EventStore, settings: Settings, *, reconnect_max_seconds: float = 1.0,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.url = url
        self.store = store
        self.clock = clock  # the service's clock (Games.clock): when a daily deck may be shown
        self.keepalive = settings.stream_keepalive_seconds
        self.per_owner = settings.streams_per_player
        self.per_address = settings.streams_per_address
        self.reconnect_max_seconds = reconnect_max_seconds
        self.connect_timeout: dict[str, Any] = connect_timeout(url, settings.connect_timeout_seconds)
        self.health_seconds = 30.0  # a query on the listening connection this often finds it dead
        self.by_game: dict[uuid.UUID, set[Subscription]] = {}
        self.by_player: dict[uuid.UUID, set[Subscription]] = {}  # the watches that follow a player's new games
        self.by_owner: dict[str, int] = {}
        self.by_address: dict[str, int] = {}
        self.connected = asyncio.Event()  # set while the hub's connection to the database is up
        self.listening = asyncio.Event()  # set while LISTEN is active (only while streams are open)
        self._kick: asyncio.Future[None] | None = None
        self.closing = False
        self._task: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._pool_checks: set[asyncio.Task[None]] = set()
        self._restore_signals: Callable[[], None] = lambda: None
        self.tokens: TokenCache | None = None  # this process's token cache, told of revocations
        self.reads = SharedReads(store.pool)  # the watches' reads of games, shared (service.streams.watch)

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start listening in the background (never waits for the database)."""
        self.closing = False
        self.loop = asyncio.get_running_loop()  # close_all from another thread: loop.call_soon_threadsafe
        self._task = asyncio.create_task(self._listen(), name="canfield-stream-listener")
        self._restore_signals = _close_on_signals(self, self.loop)

    async def stop(self) -> None:
        self._restore_signals()
        self.close_all()
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    def close_all(self) -> None:
        """End every open stream (their clients reconnect, with Last-Event-ID, to a live server)
        and refuse new ones: uvicorn waits for open responses before it shuts down."""
        self.closing = True
        for subscriptions in list(self.by_game.values()):
            for subscription in list(subscriptions):
                subscription.closing = True
                subscription.wake.set()

    # ------------------------------------------------------------ subscriptions

    def subscribe(self, game_id: uuid.UUID, owner: str, address: str | None = None) -> Subscription:
        """A slot for a new stream of ``game_id``; 429 when ``owner`` holds all of theirs, or the
        client ``address`` does (fresh accounts cannot buy one address more streams)."""
        if self.closing:
            raise Unavailable("the server is shutting down; reconnect shortly")
        if self.by_owner.get(owner, 0) >= self.per_owner:
            REFUSED_STREAMS.inc()
            raise RateLimited(
                f"at most {self.per_owner} open streams per player (or per client address without a token); "
                "close one first",
                retry_after=max(1, round(self.keepalive)),
            )
        if address is not None and self.by_address.get(address, 0) >= self.per_address:
            REFUSED_STREAMS.inc()
            raise RateLimited(
                f"at most {self.per_address} open streams per client address; close one first",
                retry_after=max(1, round(self.keepalive)),
            )
        subscription = Subscription(self, game_id, owner, address)
        self.by_owner[owner] = self.by_owner.get(owner, 0) + 1
        if address is not None:
            self.by_address[address] = self.by_address.get(address, 0) + 1
        self.by_game.setdefault(game_id, set()).add(subscription)
        STREAMS_OPEN.inc()
        if not self.listening.is_set() and self._kick is not None and not self._kick.done():
            self._kick.set_result(None)  # the listener task LISTENs, then wakes this stream
        return subscription

    def watch(self, subscription: Subscription, ids: Iterable[uuid.UUID]) -> None:
        """Wake ``subscription`` for appends to these streams too (a race stream: its games), in
        the same slot."""
        if subscription.released:
            return
        for key in set(ids) - subscription.also - {subscription.game_id}:
            subscription.also.add(key)
            self.by_game.setdefault(key, set()).add(subscription)

    def track(self, subscription: Subscription) -> None:
        """Have the hub note in ``subscription.changed`` which of its ids each wake-up is for (a watch
        following many games reads only those)."""
        if subscription.changed is None:
            subscription.changed = set()

    def follow(self, subscription: Subscription, players: Iterable[uuid.UUID]) -> None:
        """Wake ``subscription`` (tracked) with the id of each new game of these players."""
        if subscription.released:
            return
        self.track(subscription)
        for player in set(players) - subscription.players:
            subscription.players.add(player)
            self.by_player.setdefault(player, set()).add(subscription)

    def _release(self, subscription: Subscription) -> None:
        STREAMS_OPEN.dec()
        _count_down(self.by_owner, subscription.owner)
        if subscription.address is not None:
            _count_down(self.by_address, subscription.address)
        for key in (subscription.game_id, *subscription.also):
            subscriptions = self.by_game.get(key)
            if subscriptions is not None:
                subscriptions.discard(subscription)
                if not subscriptions:
                    del self.by_game[key]
        for player in subscription.players:
            followers = self.by_player.get(player)
            if followers is not None:
                followers.discard(subscription)
                if not followers:
                    del self.by_player[player]

    def open_streams(self) -> int:
        return sum(self.by_owner.values())

    def _dispatch(self, payload: str) -> None:
        """A payload is ``game:version``, or several joined by commas (a batch of moves)."""
        if not self.by_game:
            return
        for entry in payload.split(","):
            game, _, _version = entry.partition(":")
            try:
                game_id = uuid.UUID(game)
            except ValueError:
                continue
            for subscription in self.by_game.get(game_id, ()):
                if subscription.changed is not None:
                    subscription.changed.add(game_id)
                subscription.wake.set()

    def _started(self, payload: str) -> None:
        """A new game: ``<player id>:<game id>``; the watches following that player hear of it."""
        player, _, game = payload.partition(":")
        try:
            player_id, game_id = uuid.UUID(player), uuid.UUID(game)
        except ValueError:
            return
        for subscription in self.by_player.get(player_id, ()):
            if subscription.changed is not None:
                subscription.changed.add(game_id)
            subscription.wake.set()

    def _wake_all(self) -> None:
        """Every stream reads again (after LISTEN took effect, or a reconnection): a watch as if
        each of its ids had been notified."""
        for key, subscriptions in self.by_game.items():
            for subscription in subscriptions:
                if subscription.changed is not None:
                    subscription.changed.add(key)
                subscription.wake.set()

    # ------------------------------------------------------------ the listening connection

    async def _listen(self) -> None:
        """Keep the listening connection up: after a loss, attempts 0.2 s apart at first, then
        at most ``reconnect_max_seconds`` (1 s) apart, so a promoted primary is heard about a
        second after it answers (``/readyz`` waits for it)."""
        delay = RECONNECT_FIRST_SECONDS
        failures = 0
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(
                    self.url,
                    autocommit=True,
                    application_name="canfield-streams",
                    **self.connect_timeout,
                    keepalives=1,
                    keepalives_idle=30,
                    keepalives_interval=10,
                    keepalives_count=3,
                )
                async with conn:
                    if (primary := primary_of(self.store.pool)) is not None:
                        await primary.check(conn)  # a standby or an old primary: PrimaryUnavailable, retried
                    if failures:
                        log.info("stream listener: connected again after %d failed attempt(s)", failures)
                        self._check_pool()  # anything still idle from before the outage is dead
                    delay, failures = RECONNECT_FIRST_SECONDS, 0
                    await self._receive(conn)
            except (psycopg.Error, OSError) as error:
                if failures == 0:
                    log.warning("stream listener: database connection lost (%s); reconnecting", type(error).__name__)
                    self._check_pool()
                failures += 1
            except Exception:
                log.exception("stream listener failed; restarting")
                failures += 1
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.reconnect_max_seconds)

    async def _receive(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """LISTEN while this process has streams, deliver notifications, until the connection
        breaks (raises).

        Every move notifies, and PostgreSQL sends each notification to every listening session:
        so a process without open streams does not listen (it keeps the connection, as its watch
        on the database), and a listening one reads notifications in a reader callback on the
        connection's socket (read what arrived, dispatch) rather than a task woken per
        notification. The first stream makes it LISTEN at once, then wake every stream to read
        what was appended before LISTEN took effect; it stops listening at the first check after
        the last stream ended. Every ``health_seconds`` a query runs on the connection, which
        finds it dead if the database went away quietly; notifications that arrive during a
        query reach the notify handler."""
        loop = asyncio.get_running_loop()
        pgconn = conn.pgconn
        conn.add_notify_handler(lambda notify: self._notified(notify.channel, notify.payload))
        await conn.execute(f"LISTEN {TOKENS_CHANNEL}")  # always: a revoked token is refused at once
        if self.tokens is not None:
            self.tokens.clear()  # revocations made while this process was not listening
        self.connected.set()
        try:
            while True:
                if self.by_game and not self.listening.is_set():
                    await conn.execute(f"LISTEN {CHANNEL}; LISTEN {GAMES_CHANNEL}; LISTEN {ACCOUNT_CHANNEL}")
                    self.listening.set()
                    self._wake_all()  # catch up on anything appended before LISTEN took effect
                kick: asyncio.Future[None] = loop.create_future()  # a stream wants LISTEN, or the connection broke
                self._kick = kick
                fd = pgconn.socket

                def readable(kick: asyncio.Future[None] = kick, fd: int = fd) -> None:
                    try:
                        pgconn.consume_input()
                        self._drain(pgconn)
                    except Exception as error:  # the connection broke: _listen reconnects
                        loop.remove_reader(fd)
                        if not kick.done():
                            kick.set_exception(psycopg.OperationalError(f"listening connection lost: {error}"))

                self._drain(pgconn)  # anything read during the last query
                loop.add_reader(fd, readable)
                try:
                    await asyncio.wait_for(asyncio.shield(kick), self.health_seconds)
                except TimeoutError:
                    pass
                finally:
                    self._kick = None
                    loop.remove_reader(fd)
                if kick.done():
                    kick.result()  # raises if the connection broke
                    continue  # a stream opened: LISTEN
                if self.listening.is_set() and not self.by_game:
                    await conn.execute(f"UNLISTEN {CHANNEL}; UNLISTEN {GAMES_CHANNEL}; UNLISTEN {ACCOUNT_CHANNEL}")
                    self.listening.clear()
                await conn.execute("SELECT 1")  # a dead connection raises here
        finally:
            self._kick = None
            self.listening.clear()
            self.connected.clear()

    def _drain(self, pgconn: Any) -> None:
        while (notify := pgconn.notifies()) is not None:
            self._notified(notify.relname.decode(), notify.extra.decode())

    def _notified(self, channel: str, payload: str) -> None:
        if channel == TOKENS_CHANNEL:
            self._revoked(payload)
        elif channel == GAMES_CHANNEL:
            self._started(payload)
        else:
            self._dispatch(payload)

    def _revoked(self, payload: str) -> None:
        """A token of the player named in ``payload`` was revoked: forget that player's tokens."""
        if self.tokens is None:
            return
        try:
            self.tokens.forget(uuid.UUID(payload))
        except ValueError:
            self.tokens.clear()

    def _check_pool(self) -> None:
        """The listening connection is the process's watch on the database: when it breaks (or
        comes back after breaking), test the request pool's idle connections and replace the dead
        ones, so that after a database restart with no traffic meanwhile the first requests do
        not each draw a dead connection and fail."""
        task = asyncio.create_task(self.store.check_connections(), name="canfield-pool-check")
        self._pool_checks.add(task)
        task.add_done_callback(self._pool_checks.discard)


def _close_on_signals(hub: StreamHub, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Chain SIGINT/SIGTERM so that open streams end when the server is asked to stop.

    uvicorn (which installs its handlers before the app starts) waits for every open response
    before it runs the lifespan shutdown, so without this an open stream would hold a stopping
    server forever. Only in the main thread (signals cannot be set elsewhere, e.g. in tests that
    run the server in a thread); the previous handlers are called as before and put back at
    shutdown.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    installed: dict[int, tuple[Any, Any]] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)
        if not callable(previous):
            continue

        def handler(number: int, frame: Any, previous: Any = previous) -> None:
            loop.call_soon_threadsafe(hub.close_all)
            previous(number, frame)

        signal.signal(signum, handler)
        installed[signum] = (handler, previous)

    def restore() -> None:
        for number, (handler, previous) in installed.items():
            if signal.getsignal(number) is handler:
                signal.signal(number, previous)

    return restore


def _count_down(counts: dict[str, int], key: str) -> None:
    count = counts.get(key, 0) - 1
    if count > 0:
        counts[key] = count
    else:
        counts.pop(key, None)
