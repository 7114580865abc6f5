"""service.streams.hub: the listening connection LISTENs only while the process has open streams,
and a stream opened meanwhile misses nothing."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest

from domain import Draw
from service.settings import Settings
from service.store.connections import PoolOptions, open_pool
from service.store.event_store import CHANNEL, GAMES_CHANNEL, EventStore
from service.streams.hub import StreamHub

from .conftest import new_game, register, server_process


@pytest.fixture
async def hub(clean_database: str) -> AsyncIterator[StreamHub]:
    pool = open_pool(clean_database, PoolOptions(1, 2, 5000))
    await pool.open()
    hub = StreamHub(clean_database, EventStore(pool), Settings(database_url=clean_database))
    hub.health_seconds = 0.2  # check (and stop listening) often
    await hub.start()
    try:
        yield hub
    finally:
        await hub.stop()
        await pool.close()


def notify(url: str, payload: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))


async def eventually(condition, timeout: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.02)
    return condition()


async def test_no_streams_no_listen_then_the_first_stream_listens_and_is_woken(
    hub: StreamHub, clean_database: str
) -> None:
    assert await eventually(hub.connected.is_set), "the hub's connection is up"
    await asyncio.sleep(0.5)  # a few health checks
    assert not hub.listening.is_set()

    game = uuid.uuid4()
    subscription = hub.subscribe(game, "ann")
    assert await eventually(hub.listening.is_set)
    assert subscription.wake.is_set(), "woken once LISTEN took effect, to read what came before"
    subscription.wake.clear()
    await asyncio.to_thread(notify, clean_database, f"{uuid.uuid4()}:2,{game}:7")
    assert await eventually(subscription.wake.is_set), "a batch payload naming the game wakes its stream"

    subscription.close()
    assert await eventually(lambda: not hub.listening.is_set()), "UNLISTEN after the last stream ended"
    again = hub.subscribe(game, "ann")
    assert await eventually(hub.listening.is_set)
    again.close()


async def test_a_batch_of_moves_wakes_the_stream_of_each_game_in_it(hub: StreamHub, clean_database: str) -> None:
    """End to end through group commit: the one NOTIFY of a batch names every game written."""
    async with server_process(clean_database, 4) as services:
        players = [await new_game(services, seed=seed) for seed in range(80, 92)]
        watched = [hub.subscribe(game_id, f"watcher {i}") for i, (_, game_id) in enumerate(players)]
        assert await eventually(hub.listening.is_set)
        for _ in range(3):
            for subscription in watched:
                subscription.wake.clear()
            await asyncio.gather(*(services.moves.play(game_id, token, Draw()) for token, game_id in players))
            assert await eventually(lambda: all(s.wake.is_set() for s in watched))
        assert services.batcher.batches > 0, "no batch was written: this test did not test batches"
        for subscription in watched:
            subscription.close()


async def test_a_new_game_wakes_the_watches_following_its_player_with_its_id(
    hub: StreamHub, clean_database: str
) -> None:
    """Every new game notifies canfield_games on commit: the watches that follow its player are
    woken with its id in ``changed``; a watch of another player is not; a payload that is not
    ``<player>:<game>`` is ignored."""
    async with server_process(clean_database, 4) as services:
        player = await register(services, "followed")
        other = await register(services, "other")
        player_id = await services.accounts.player_id(player["token"])
        watch = hub.subscribe(uuid.uuid4(), "a watch")
        hub.follow(watch, [player_id])
        elsewhere = hub.subscribe(uuid.uuid4(), "another watch")
        hub.follow(elsewhere, [await services.accounts.player_id(other["token"])])
        assert await eventually(hub.listening.is_set)
        await asyncio.to_thread(notify_games, clean_database, "not a payload")
        watch.changed = set()
        elsewhere.changed = set()
        watch.wake.clear()
        elsewhere.wake.clear()

        view = await services.games.create_game(player["token"], "classic", {"seed": 3})
        assert await eventually(watch.wake.is_set)
        assert watch.changed == {view.id}
        assert not elsewhere.wake.is_set()
        assert elsewhere.changed == set()
        watch.close()
        elsewhere.close()
        assert hub.by_player == {}, "a closed watch follows no one"


def notify_games(url: str, payload: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_notify(%s, %s)", (GAMES_CHANNEL, payload))
