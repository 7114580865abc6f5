"""The account outbox's numbering, against a fake connection that plays the players' row locks:
accounts locked in id order, each account's events numbered on from its last, in order, with one
notification naming the account and its newest number."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from service.store import outbox
from service.store.outbox import AccountEvent


class FakeConnection:
    """A transaction's view of ``players.event_seq``: the bump takes the row's lock (held until
    ``commit``), inserts and notifications are recorded."""

    def __init__(self, seqs: dict[uuid.UUID, int], locks: dict[uuid.UUID, asyncio.Lock]) -> None:
        self.seqs, self.locks = seqs, locks
        self.held: list[uuid.UUID] = []
        self.rows: list[tuple[uuid.UUID, int, str]] = []
        self.notified: list[str] = []
        self._row: tuple[int] | None = None

    async def execute(self, statement: str, params: tuple[Any, ...]) -> FakeConnection:
        if statement.startswith("UPDATE players"):
            count, player = params
            await self.locks.setdefault(player, asyncio.Lock()).acquire()
            self.held.append(player)
            self.seqs[player] = self.seqs.get(player, 0) + count
            self._row = (self.seqs[player],)
        elif statement.startswith("INSERT INTO account_events"):
            player, numbers, types, _ = params
            self.rows.extend((player, n, t) for n, t in zip(numbers, types, strict=True))
        else:
            self.notified.append(params[0])
        return self

    async def fetchone(self) -> tuple[int] | None:
        return self._row

    def commit(self) -> None:
        for player in self.held:
            self.locks[player].release()
        self.held.clear()


def test_accounts_are_locked_in_id_order_and_numbered_on_in_order() -> None:
    a, b = sorted([uuid.uuid4(), uuid.uuid4()])
    conn = FakeConnection({a: 4, b: 0}, {})
    events = [AccountEvent(b, "raceStarted", {}), AccountEvent(a, "raceStarted", {}), AccountEvent(b, "gameEnded", {})]
    last = asyncio.run(outbox.append_all(conn, events))  # type: ignore[arg-type]
    assert conn.held == [a, b]  # whatever order the events came in: no two transactions deadlock
    assert conn.rows == [(a, 5, "raceStarted"), (b, 1, "raceStarted"), (b, 2, "gameEnded")]
    assert last == {a: 5, b: 2}
    assert conn.notified == [f"{a}:5", f"{b}:2"]  # the payload the stream hub parses: <id>:<number>


def test_a_second_writer_numbers_after_the_first_commits() -> None:
    player = uuid.uuid4()

    async def run() -> list[tuple[uuid.UUID, int, str]]:
        seqs: dict[uuid.UUID, int] = {}
        locks: dict[uuid.UUID, asyncio.Lock] = {}
        first, second = FakeConnection(seqs, locks), FakeConnection(seqs, locks)
        await outbox.append(first, player, "gameEnded", {})  # type: ignore[arg-type]
        waiting = asyncio.create_task(outbox.append(second, player, "analysisDone", {}))  # type: ignore[arg-type]
        await asyncio.sleep(0.01)
        assert not waiting.done()  # the row lock: it waits for the first transaction
        first.commit()
        assert await waiting == 2
        second.commit()
        return first.rows + second.rows

    assert asyncio.run(run()) == [(player, 1, "gameEnded"), (player, 2, "analysisDone")]


def test_an_unknown_type_is_refused_before_anything_is_written() -> None:
    conn = FakeConnection({}, {})
    with pytest.raises(ValueError, match="unknown account event type"):
        asyncio.run(outbox.append_all(conn, [AccountEvent(uuid.uuid4(), "moveMade", {})]))  # type: ignore[arg-type]
    assert conn.rows == []
    assert conn.held == []
