"""Group commit: the moves of different games that are ready while a write is in flight are
written together, in one statement and one transaction.

Each move still goes to the database whole (its events and its game's new snapshot, only if the
game is still at the version the move was decided on) and is acknowledged only after that
transaction commits; what changes is that under load one round trip, one commit and one
notification carry many moves instead of one. A move that finds no write in flight and no other
move being decided is written at the event loop's next turn, together with the moves decided in
this one (the requests that arrived together): with one move at a time, that is a few
microseconds.

When no write is in flight but other moves of this process are still being decided (the game's
turn taken, the rules not yet through: ``Moves.play`` counts them with ``deciding``), a decided
move waits for them, at most ``max_wait`` seconds, and they go out together when the last one is
decided: one statement and one commit instead of a lone write and then a batch. That is the
moment the process would otherwise wait for the database with nothing else to do.

While a batch's statement is in flight the process has nothing else to do, so the work a move
needs only for its reply (its player's view and events) is done then: ``queue`` hands the move's
task a ``Queued``, whose ``sent`` is done once the database is busy with a statement the move
waits for. A move queued while a statement is in flight goes in the next one, so that is at once;
otherwise the writer marks its moves just before it sends their statement, and their tasks run
once it waits for the database. The task makes its reply, then waits for ``written``. A move's
reply is then ready when its commit is, instead of sixteen replies being built before the
statement can go out. The batcher only signals; it never runs a move's own work.

Only the common move goes this way: no ``Idempotency-Key`` (its stored response needs its own
insert) and not the move that ends the game (its stats projections run in its transaction). Those
and anything a batch could not write (an error other than the database being away) are written
one by one with ``EventStore.append``, which reports conflicts and races exactly (the first two
in a unit of work: service.store.unit_of_work).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque

from ..errors import Unavailable
from ..metrics import BATCH_SIZES
from ..store.connections import DATABASE_DOWN_ERRORS
from ..store.event_store import ConcurrencyConflict, EventStore
from ..store.game_records import Append
from ..tasks import cancel_and_wait

log = logging.getLogger("canfield")


MAX_BATCH = 128
"""A batch's NOTIFY payload lists ``id:version`` of each move (about 48 bytes); PostgreSQL takes
at most 8,000 bytes."""


class WriteAlone(Exception):
    """Inside the batcher: the batch this move was in failed for a reason of its own (or the
    batcher closed while it waited): the move is written by itself."""


class Deciding:
    """A move being decided, counted in its batcher's ``deciding`` until ``end`` (called once it
    goes to be written, or gives up; a second call does nothing)."""

    __slots__ = ("batcher",)

    def __init__(self, batcher: AppendBatcher) -> None:
        self.batcher: AppendBatcher | None = batcher
        batcher.deciding += 1

    def end(self) -> None:
        batcher = self.batcher
        if batcher is not None:
            self.batcher = None
            batcher.decided()

    def leave(self) -> None:
        """No longer counted, without starting a write (``AppendBatcher.queue`` queues the move first)."""
        if self.batcher is not None:
            self.batcher.deciding -= 1
            self.batcher = None


class Queued:
    """A move in the batcher's queue (``AppendBatcher.queue``). ``sent``, a future, is done once
    the database is busy with a statement the move waits for: the one in flight when it was queued
    (the move goes in the next), or its own, on its way (or the move is to be written alone). That
    is the time for the work its reply needs; a request cancelled while awaiting it is never
    written. ``written`` waits for the move's write."""

    __slots__ = ("_written", "batcher", "move", "sent")

    def __init__(self, batcher: AppendBatcher, move: Append) -> None:
        loop = asyncio.get_running_loop()
        self.batcher = batcher
        self.move = move
        self.sent: asyncio.Future[None] = loop.create_future()
        self._written: asyncio.Future[None] = loop.create_future()

    async def written(self) -> None:
        """Wait for the move's write: raises ``ConcurrencyConflict`` when its game had moved on
        (nothing written), the database's error when it is away. A move whose batch failed for a
        reason of its own, or that was waiting when the batcher closed, is written alone here."""
        try:
            await self._written
        except WriteAlone:
            await self.batcher.store.append(self.move)

    def going(self) -> None:
        """The database is busy with a statement it waits for (or it is to be written alone)."""
        if not self.sent.done():
            self.sent.set_result(None)

    def settle(self, exception: BaseException | None = None) -> None:
        """Its write's outcome: written (no ``exception``), or why not."""
        self.going()
        _settle(self._written, exception)

    def dropped(self) -> bool:
        """Its request went away before its turn: it is not written."""
        return self.sent.cancelled() or self._written.done()


class AppendBatcher:
    def __init__(self, store: EventStore, max_batch: int = 64, max_wait: float = 0.002) -> None:
        self.store = store
        self.max_batch = max(1, min(max_batch, MAX_BATCH))
        self.max_wait = max_wait
        self.deciding = 0  # moves of this process being decided (``Deciding``): a write waits for them
        self._timer: asyncio.TimerHandle | None = None
        self._soon: asyncio.Handle | None = None
        self._queue: deque[Queued] = deque()
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._busy = False  # the writer task is writing
        self._closed = False
        self.batches = 0  # statements that wrote more than one move, and how many moves they held
        self.batched_moves = 0

    def queue(self, move: Append, deciding: Deciding | None = None) -> Queued:
        """Take the move to be written (``deciding``: its count, left now); its task then awaits
        ``Queued.sent``, does the work for its reply, and awaits ``Queued.written``.

        The writer task writes: with no write in flight, at the loop's next turn (or once the
        moves being decided are, at most ``max_wait`` later); moves that arrive while a write is
        in flight wait, and go together in the next statement once it is done. A move whose
        batch failed for a reason of its own, or that was waiting when the batcher closed, is
        written alone."""
        if deciding is not None:
            deciding.leave()
        entry = Queued(self, move)
        if self._closed:
            entry.settle(WriteAlone())
            return entry
        self._queue.append(entry)
        if self._busy:
            entry.going()  # the statement in flight is the database's work this move waits for
        else:
            if len(self._queue) >= self.max_batch:
                self._start()
            elif self.deciding:  # others are being decided: wait for them, not for ever
                if self._timer is None:
                    self._timer = asyncio.get_running_loop().call_later(self.max_wait, self._start)
            elif self._soon is None:  # at the loop's next turn, with the moves decided in this one
                self._soon = asyncio.get_running_loop().call_soon(self._start)
        return entry

    async def append(self, move: Append, deciding: Deciding | None = None) -> None:
        """Write the move (``queue``, then ``Queued.written``)."""
        await self.queue(move, deciding).written()

    def _start(self) -> None:
        """The writer task writes what is queued (and what queues while it writes)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._soon is not None:
            self._soon.cancel()
            self._soon = None
        if not self._queue or self._closed:
            return
        self._busy = True
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._run(), name="canfield-append-batcher")
        self._wake.set()

    def decided(self) -> None:
        """One of the ``deciding`` moves is decided (or gave up): the last one starts the write
        of the moves that waited for it."""
        self.deciding -= 1
        if not self.deciding and self._queue and not self._busy:
            self._start()

    async def close(self, timeout: float = 10.0) -> None:
        """Stop taking moves into batches. A batch in flight is let finish (its moves may already
        have committed: cancelling it would leave them unknown); moves still waiting are handed
        back to be written alone, as are moves that come later."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._soon is not None:
            self._soon.cancel()
            self._soon = None
        self._wake.set()
        if self._writer is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._writer), timeout)
            except TimeoutError:
                await cancel_and_wait(self._writer)
            self._writer = None
        while self._queue:
            self._queue.popleft().settle(WriteAlone())
        self._busy = False

    async def _run(self) -> None:
        while not self._closed or self._queue:
            await self._wake.wait()
            self._wake.clear()
            try:
                while self._queue:
                    await self._write(self._next_batch())
            finally:
                self._busy = False

    def _next_batch(self) -> list[Queued]:
        """Up to ``max_batch`` waiting moves in arrival order, one per game (a later move of a
        game already in the batch waits for the next one)."""
        batch: list[Queued] = []
        games: set[uuid.UUID] = set()
        later: deque[Queued] = deque()
        while self._queue and len(batch) < self.max_batch:
            entry = self._queue.popleft()
            if entry.dropped():  # the request was cancelled (client gone) before its turn
                continue
            if entry.move.game_id in games:
                later.append(entry)
            else:
                games.add(entry.move.game_id)
                batch.append(entry)
        self._queue.extendleft(reversed(later))
        return batch

    async def _write(self, batch: list[Queued]) -> None:
        if not batch:
            return
        BATCH_SIZES.observe(len(batch))
        # the moves' tasks make their replies while the statement is in flight: they wake at the
        # loop's next turn, after this task has sent the statement and waits for its result
        for entry in batch:
            if not entry.sent.done():
                entry.sent.set_result(None)
        if len(batch) == 1:  # the one-move statement is cheaper, and reports its own errors exactly
            entry = batch[0]
            try:
                await self.store.append(entry.move)
            except asyncio.CancelledError:
                entry.settle(_outcome_unknown())
                raise
            except Exception as error:  # ConcurrencyConflict included: the move's own outcome
                entry.settle(error)
            else:
                entry.settle()
            return
        failure: BaseException | None = None
        written: set[uuid.UUID] = set()
        self.batches += 1
        self.batched_moves += len(batch)
        try:
            written = await self.store.append_many([entry.move for entry in batch])
        except DATABASE_DOWN_ERRORS as error:
            # rolled back for a reason of the batch's own (a deadlock with another process's
            # batch, one locked game holding the statement past its timeout): write each alone;
            # the database being away fails them all
            failure = WriteAlone() if _rolled_back(error) else error
        except asyncio.CancelledError:
            for entry in batch:
                entry.settle(_outcome_unknown())
            raise
        except Exception as error:  # anything else the statement ran into: each move alone reports its own
            log.info("a batch of %d moves failed (%s); writing them one by one", len(batch), type(error).__name__)
            failure = WriteAlone()
        for entry in batch:
            if failure is None and entry.move.game_id not in written:
                failure_of_move: BaseException | None = ConcurrencyConflict()  # its game had moved on
            else:
                failure_of_move = failure
            entry.settle(failure_of_move)


def _rolled_back(error: Exception) -> bool:
    """A deadlock or serialization failure (SQLSTATE class 40) or a statement timeout (57014):
    nothing was written, and the moves alone may well succeed."""
    sqlstate = getattr(error, "sqlstate", None) or ""
    return sqlstate.startswith("40") or sqlstate == "57014"


def _outcome_unknown() -> Unavailable:
    return Unavailable("the server stopped while this move was being written; reload the game to see whether it was")


def _settle(future: asyncio.Future[None], exception: BaseException | None = None) -> None:
    if future.done():  # its request was cancelled (the client went away); the write stands
        return
    if exception is not None:
        future.set_exception(exception)
    else:
        future.set_result(None)
