"""The account outbox on PostgreSQL: numbers follow commit order, so a reader that has seen event n
never later finds a lower number it missed, however the writers' transactions interleave."""

from __future__ import annotations

import asyncio
import uuid

import psycopg

from service.store import outbox


async def _kept(url: str, player: uuid.UUID) -> list[tuple[int, str]]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as reader:
        found = await outbox.events_after(reader, player, 0, 100)
    return [(event.seq, event.type) for event in found]


async def test_a_writer_that_commits_late_never_leaves_a_lower_number_behind(clean_database: str) -> None:
    url, player = clean_database, uuid.uuid4()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as setup:
        await setup.execute("INSERT INTO players (id, name) VALUES (%s, 'Robo')", (player,))
    first = await psycopg.AsyncConnection.connect(url)
    second = await psycopg.AsyncConnection.connect(url)
    try:
        assert await outbox.append(first, player, "gameEnded", {"n": 1}) == 1
        waiting = asyncio.create_task(outbox.append(second, player, "raceFinished", {"n": 2}))
        await asyncio.sleep(0.2)
        assert not waiting.done()  # held by the account's row lock until the first commits
        assert await _kept(url, player) == []
        await first.commit()
        assert await asyncio.wait_for(waiting, 5) == 2
        assert await _kept(url, player) == [(1, "gameEnded")]
        await second.commit()
        assert await _kept(url, player) == [(1, "gameEnded"), (2, "raceFinished")]
    finally:
        await first.close()
        await second.close()


async def test_a_rolled_back_change_leaves_no_event_and_no_gap(clean_database: str) -> None:
    url, player = clean_database, uuid.uuid4()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as setup:
        await setup.execute("INSERT INTO players (id, name) VALUES (%s, 'Robo')", (player,))
    async with await psycopg.AsyncConnection.connect(url) as conn:
        await outbox.append(conn, player, "gameEnded", {})
        await conn.rollback()
        assert await outbox.append(conn, player, "analysisDone", {}) == 1
        await conn.commit()
    assert await _kept(url, player) == [(1, "analysisDone")]
