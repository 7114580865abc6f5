"""Group commit: the moves of different games that are ready while a write is in flight are
written together, in one statement and one transaction.

Each move still goes to the database whole (its events and its game's new snapshot, only if the
game is still at the version the move was decided on) and is acknowledged only after that
transaction commits; what changes is that under load one round trip, one commit and one
notification carry many moves instead of one. With one move at a time nothing waits: a move that
finds no write in flight is written at once.

Only the common move goes this way: no ``Idempotency-Key`` (its stored response needs its own
insert) and not the move that ends the game (its stats projections run in its transaction). Those
and anything a batch could not write (an error other than the database being away) are written
one by one with ``EventStore.append``, which reports conflicts and races exactly.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque

from .store import ConcurrencyConflict, DatabaseDown, EventStore, PendingAppend

log = logging.getLogger("canfield")


class WriteAlone(Exception):
    """The batch this move was in failed for a reason of its own: write this move by itself."""


class AppendBatcher:
    def __init__(self, store: EventStore, max_batch: int = 64) -> None:
        self.store = store
        self.max_batch = max_batch
        self._queue: deque[tuple[PendingAppend, asyncio.Future[bool]]] = deque()
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._busy = False  # a write is in flight (by a move's own task or by the writer task)
        self.batches = 0  # statements that wrote more than one move, and how many moves they held
        self.batched_moves = 0

    async def append(self, move: PendingAppend) -> bool:
        """True when the move was written; False when its game had moved on (nothing written).
        Raises the database's error when it is away, ``WriteAlone`` when its batch failed otherwise.

        With no write in flight the move is written at once, by itself, in this task; moves that
        arrive meanwhile wait, and are written together by the writer task once it is done."""
        if not self._busy:
            self._busy = True
            try:
                return await self._write_alone(move)
            finally:
                self._hand_over()
        written: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._queue.append((move, written))
        return await written

    async def _write_alone(self, move: PendingAppend) -> bool:
        try:
            await self.store.append(move.game_id, move.expected_version, move.events, status=move.status,
                                    snapshot=move.snapshot, finished_at=None, now=move.now)
        except ConcurrencyConflict:
            return False
        return True

    def _hand_over(self) -> None:
        """The write in flight is done: the writer task takes the moves that queued up meanwhile."""
        if not self._queue:
            self._busy = False
            return
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._run(), name="canfield-append-batcher")
        self._wake.set()

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            try:
                await self._writer
            except asyncio.CancelledError:
                pass
            self._writer = None
        while self._queue:
            _, written = self._queue.popleft()
            if not written.done():
                written.set_exception(WriteAlone())

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                while self._queue:
                    await self._write(self._next_batch())
            finally:
                self._busy = False

    def _next_batch(self) -> list[tuple[PendingAppend, asyncio.Future[bool]]]:
        """Up to ``max_batch`` waiting moves in arrival order, one per game (a later move of a
        game already in the batch waits for the next one)."""
        batch: list[tuple[PendingAppend, asyncio.Future[bool]]] = []
        games: set[uuid.UUID] = set()
        later: deque[tuple[PendingAppend, asyncio.Future[bool]]] = deque()
        while self._queue and len(batch) < self.max_batch:
            entry = self._queue.popleft()
            if entry[1].done():  # the request was cancelled (client gone) before its turn
                continue
            if entry[0].game_id in games:
                later.append(entry)
            else:
                games.add(entry[0].game_id)
                batch.append(entry)
        self._queue.extendleft(reversed(later))
        return batch

    async def _write(self, batch: list[tuple[PendingAppend, asyncio.Future[bool]]]) -> None:
        if not batch:
            return
        if len(batch) == 1:  # the one-move statement is cheaper, and reports its own errors exactly
            move, future = batch[0]
            try:
                ok = await self._write_alone(move)
            except asyncio.CancelledError:
                _settle(future, exception=WriteAlone())
                raise
            except Exception as error:
                _settle(future, exception=error)
            else:
                _settle(future, result=ok)
            return
        failure: BaseException | None = None
        written: set[uuid.UUID] = set()
        self.batches += 1
        self.batched_moves += len(batch)
        try:
            written = await self.store.append_many([move for move, _ in batch])
        except DatabaseDown as error:
            # a deadlock with another process's batch is the batch's own trouble; the rest (the
            # database away, a statement timeout) would fail each move alone too
            failure = WriteAlone() if _rolled_back(error) else error
        except asyncio.CancelledError:
            for _, future in batch:
                _settle(future, exception=WriteAlone())
            raise
        except Exception as error:  # a deadlock between processes, a statement timeout, ...
            log.info("a batch of %d moves failed (%s); writing them one by one", len(batch), type(error).__name__)
            failure = WriteAlone()
        for move, future in batch:
            if failure is not None:
                _settle(future, exception=failure)
            else:
                _settle(future, result=move.game_id in written)


def _rolled_back(error: Exception) -> bool:
    """A deadlock or serialization failure (SQLSTATE class 40): worth trying again."""
    return (getattr(error, "sqlstate", None) or "").startswith("40")


def _settle(future: asyncio.Future[bool], result: bool = False, exception: BaseException | None = None) -> None:
    if future.done():  # its request was cancelled (the client went away); the write stands
        return
    if exception is not None:
        future.set_exception(exception)
    else:
        future.set_result(result)
