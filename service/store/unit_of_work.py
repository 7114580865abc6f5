"""A write's unit of work: what one use case writes, recorded first and then committed at once.

A use case opens one (``EventStore.unit_of_work``) and records what its change writes: the game
it creates (``create``, a ``NewGame``) or the move it makes (``append``, an ``Append``: the events,
the figures, the snapshot and any idempotent reply in one record); the projection statements that
belong in the same transaction (``add``, ``Statement``s such as service.stats.projections makes);
the account events that tell of it (``tell``, service.store.outbox). Then it ``commit``s, and the
store writes everything recorded on one pooled connection, in one transaction: all of it or, when
any part fails, none of it.

Everything recorded is data. The store runs statements; it never calls back into the layer that
recorded them, and no connection is held while the use case decides.

A unit that records only its game's write (a move that does not end its game, a game no
projection counts) commits as that one statement, without an explicit transaction (the pool's
connections autocommit). The common move does not open one at all: group commit
(service.games.batching) writes many games' moves in one statement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from .game_records import Append, NewGame
from .outbox import AccountEvent


class Statement(NamedTuple):
    """One SQL statement and its parameters, to run in a unit of work's transaction."""

    sql: str
    params: Mapping[str, Any] | Sequence[Any]


class Committer(Protocol):
    """Who writes a unit of work (``EventStore``)."""

    async def commit(self, work: UnitOfWork) -> None: ...


class UnitOfWork:
    """What one change writes (see the module): its game's write, then its statements, then its
    account events, committed together by ``commit``."""

    __slots__ = ("committer", "statements", "told", "write")

    def __init__(self, committer: Committer) -> None:
        self.committer = committer
        self.write: NewGame | Append | None = None
        self.statements: list[Statement] = []
        self.told: list[AccountEvent] = []

    def create(self, game: NewGame) -> None:
        """Insert ``game`` (its row, snapshot and first events); a second daily entry of a player
        for one date makes the commit raise ``DailyEntryTaken``."""
        self._record(game)

    def append(self, move: Append) -> None:
        """Write ``move`` if its game is still at the version it was decided on (else the commit
        raises ``ConcurrencyConflict`` and writes nothing; ``IdempotencyRace`` when its key was
        stored first)."""
        self._record(move)

    def add(self, *statements: Statement | None) -> None:
        """Run ``statements`` after the game's write, in its transaction (a None is left out: a
        projection with nothing to count)."""
        self.statements.extend(statement for statement in statements if statement is not None)

    def tell(self, *events: AccountEvent) -> None:
        """Append ``events`` to their accounts' outboxes, last, in the same transaction."""
        self.told.extend(events)

    @property
    def alone(self) -> bool:
        """Whether the game's write is all there is: one statement, no explicit transaction."""
        return not self.statements and not self.told

    async def commit(self) -> None:
        """Write everything recorded, in one transaction; nothing when any part fails."""
        await self.committer.commit(self)

    def _record(self, write: NewGame | Append) -> None:
        if self.write is not None:
            raise ValueError("a unit of work writes one game: it already holds a write")
        self.write = write
