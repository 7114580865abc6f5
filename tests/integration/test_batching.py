"""Group commit (service.games.batching) against real PostgreSQL: moves of different games that are
ready together share one statement, each still all-or-nothing and conditional on its version."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import psycopg
import pytest

from domain import Draw, Recycle, replay
from domain.codec import event_from_data
from service.bootstrap import Services
from service.games import moves
from service.games.batching import AppendBatcher, Deciding
from service.games.moves import pending_append
from service.store import event_store
from service.store.event_store import ConcurrencyConflict
from service.store.game_records import Append, NewEvent
from service.store.snapshots import SNAPSHOT_EVERY
from tests.live import stored

from .conftest import new_game, server_process

DRAW, RECYCLE = Draw(), Recycle()


def log_and_snapshot(url: str, game_id: uuid.UUID) -> tuple[list[tuple[int, str, Any]], Any, int]:
    """The game's events, its state as stored (its snapshot and the events after it) and its version."""
    log = stored(url, [str(game_id)])[str(game_id)]
    return log.events, log.state(), log.version


def drawn(services: Services, url: str, game_id: uuid.UUID) -> Append:
    """The move 'draw' on the stored game, ready to append."""
    _, state, version = log_and_snapshot(url, game_id)
    from domain import decide, event_data, event_type, evolve

    events = decide(state, DRAW)
    after = state
    for event in events:
        after = evolve(after, event)
    new = [NewEvent(version + i + 1, event_type(e), event_data(e)) for i, e in enumerate(events)]
    return pending_append(game_id, version, new, after, services.clock())


async def test_moves_of_many_games_at_once_share_statements_and_every_log_stays_whole(
    services: Services, clean_database: str
) -> None:
    players = [await new_game(services, seed=seed) for seed in range(1, 25)]
    rounds = 8
    for _ in range(rounds):
        await asyncio.gather(*(services.moves.play(game_id, token, DRAW) for token, game_id in players))
    assert services.batcher.batches > 0, "no statement carried more than one move"
    assert services.batcher.batched_moves > services.batcher.batches
    for _, game_id in players:
        rows, state, version = log_and_snapshot(clean_database, game_id)
        assert [r[0] for r in rows] == list(range(1, rounds + 2))
        assert version == rounds + 1
        assert state == replay(event_from_data(t, d) for _, t, d in rows)


async def test_a_batch_writes_a_games_snapshot_only_at_a_multiple_of_snapshot_every(
    services: Services, clean_database: str
) -> None:
    players = [await new_game(services, seed=seed) for seed in range(1, 9)]
    for version in range(2, SNAPSHOT_EVERY + 3):
        states = {game_id: log_and_snapshot(clean_database, game_id)[1] for _, game_id in players}
        await asyncio.gather(*(
            services.moves.play(game_id, token, DRAW if states[game_id].stock else RECYCLE)
            for token, game_id in players
        ))
        for _, game_id in players:
            log = stored(clean_database, [str(game_id)])[str(game_id)]
            assert log.version == version
            assert log.snapshot_version == (1 if version < SNAPSHOT_EVERY else SNAPSHOT_EVERY)
            assert log.state() == replay(event_from_data(t, d) for _, t, d in log.events)
    assert services.batcher.batched_moves > services.batcher.batches > 0, "the moves went in shared statements"


async def test_a_stale_move_due_to_write_a_snapshot_leaves_the_stored_one_alone(
    services: Services, clean_database: str
) -> None:
    token, game_id = await new_game(services, seed=3)
    while (state := log_and_snapshot(clean_database, game_id)[1]).version < SNAPSHOT_EVERY - 1:
        await services.moves.play(game_id, token, DRAW if state.stock else RECYCLE)
    stale = drawn(services, clean_database, game_id)  # from 15 to 16: due to write the snapshot
    assert stale.snapshot is not None
    stale = stale._replace(snapshot={**stale.snapshot, "undoCount": 99})  # told apart if it were written
    await services.moves.play(game_id, token, DRAW)  # the game moves on first (and writes its snapshot at 16)
    before = stored(clean_database, [str(game_id)])[str(game_id)]
    assert before.snapshot_version == SNAPSHOT_EVERY

    assert await services.store.append_many([stale]) == set()
    with pytest.raises(ConcurrencyConflict):
        await services.store.append(stale)  # the one-move statement, the same
    after = stored(clean_database, [str(game_id)])[str(game_id)]
    assert (after.snapshot, after.snapshot_version, after.events) == (before.snapshot, before.snapshot_version,
                                                                      before.events)


def _scanned_tables(plan: dict[str, Any]) -> set[str]:
    """The tables a plan (EXPLAIN's JSON) reads whole."""
    found = {plan["Relation Name"]} if plan.get("Node Type") == "Seq Scan" else set()
    for child in plan.get("Plans", []):
        found |= _scanned_tables(child)
    return found


@pytest.mark.parametrize("plan_mode", ["force_custom_plan", "force_generic_plan"])
async def test_a_batch_finds_its_games_by_index_however_many_games_are_stored(
    services: Services, clean_database: str, plan_mode: str
) -> None:
    players = [await new_game(services, seed=seed) for seed in range(1, 9)]
    moves = [drawn(services, clean_database, game_id) for _, game_id in players]
    with psycopg.connect(clean_database, autocommit=True) as conn:
        conn.execute(  # a table with history: thousands of games that do not move
            "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version)"
            " SELECT gen_random_uuid(), player_id, ruleset_id, ruleset_version, deal, status, 1"
            " FROM games, generate_series(1, 500)"
        )
        conn.execute("INSERT INTO game_snapshots (game_id, version, snapshot)"
                     " SELECT id, 1, '{}' FROM games WHERE id NOT IN (SELECT game_id FROM game_snapshots)")
        conn.execute("ANALYZE games, game_snapshots")
        conn.execute(f"SET plan_cache_mode = {plan_mode}")
        with conn.transaction(force_rollback=True):
            (plan,) = conn.execute(
                "EXPLAIN (ANALYZE, FORMAT JSON) " + event_store._APPEND_MANY,
                event_store.batch_params(moves),  # as append_many sends them
            ).fetchone()
    assert plan[0]["Plan"]["Actual Rows"] == len(moves), "every move written"
    assert not _scanned_tables(plan[0]["Plan"]) & {"games", "game_snapshots"}, "a scan of every stored game"


async def test_a_batch_writes_the_games_still_at_their_version_and_leaves_the_others_untouched(
    services: Services, clean_database: str
) -> None:
    (token_a, game_a), (_, game_b) = await new_game(services, seed=3), await new_game(services, seed=4)
    stale = drawn(services, clean_database, game_a)
    await services.moves.play(game_a, token_a, DRAW)  # game a moves on: the prepared move is stale now
    before = log_and_snapshot(clean_database, game_a)
    fresh = drawn(services, clean_database, game_b)
    written = await services.store.append_many([stale, fresh])
    assert written == {game_b}
    assert log_and_snapshot(clean_database, game_a) == before
    rows, _, version = log_and_snapshot(clean_database, game_b)
    assert version == 2
    assert [r[:2] for r in rows] == [(1, "GameDealt"), (2, "StockDrawn")]


async def test_two_moves_of_one_game_queued_together_go_in_separate_batches(
    services: Services, clean_database: str
) -> None:
    """The per-game lock keeps this from happening through Moves.play; the batcher holds on its own."""
    (_, game_a), (_, game_b), (_, game_c) = [await new_game(services, seed=s) for s in (5, 6, 7)]
    batcher = AppendBatcher(services.store)
    first = drawn(services, clean_database, game_c)
    a1, a2, b = (drawn(services, clean_database, g) for g in (game_a, game_a, game_b))
    results = await asyncio.gather(*(batcher.append(m) for m in (first, a1, a2, b)), return_exceptions=True)
    await batcher.close()
    assert results[:2] == [None, None]
    assert results[3] is None
    assert isinstance(results[2], ConcurrencyConflict)  # a2 was decided on the same version as a1
    assert batcher.batches == 1  # first, a1 and b together; a2 by itself after them
    assert batcher.batched_moves == 3
    rows, _, version = log_and_snapshot(clean_database, game_a)
    assert version == 2
    assert [r[0] for r in rows] == [1, 2]


async def test_a_decided_move_waits_for_the_moves_still_being_decided_and_they_share_one_statement(
    services: Services, clean_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No write in flight, but others being decided: the decided move waits for them (not for a
    lone write of its own), and the last one to be decided starts one statement for all."""
    (_, game_a), (_, game_b) = await new_game(services, seed=8), await new_game(services, seed=9)
    alone: list[uuid.UUID] = []
    real_append = services.store.append

    async def counted(move: Append) -> None:
        alone.append(move.game_id)
        await real_append(move)

    monkeypatch.setattr(services.store, "append", counted)
    batcher = AppendBatcher(services.store, max_wait=30.0)  # here only the deciders end the wait
    a_deciding, b_deciding, c_deciding = Deciding(batcher), Deciding(batcher), Deciding(batcher)
    assert batcher.deciding == 3
    a = asyncio.ensure_future(batcher.append(drawn(services, clean_database, game_a), a_deciding))
    await asyncio.sleep(0.05)
    assert not a.done(), "a move was written while others were still being decided"
    assert log_and_snapshot(clean_database, game_a)[2] == 1
    b = asyncio.ensure_future(batcher.append(drawn(services, clean_database, game_b), b_deciding))
    await asyncio.sleep(0.05)
    assert not a.done()
    assert not b.done()
    c_deciding.end()  # the third gives up (a refused move, say): nobody is being decided now
    c_deciding.end()  # a second end counts nothing
    await asyncio.wait_for(asyncio.gather(a, b), 10)
    await batcher.close()
    assert batcher.deciding == 0
    assert alone == []
    assert (batcher.batches, batcher.batched_moves) == (1, 2)
    assert [log_and_snapshot(clean_database, g)[2] for g in (game_a, game_b)] == [2, 2]


async def test_a_batched_moves_reply_is_made_while_its_statement_is_in_the_database(
    services: Services, clean_database: str
) -> None:
    """``Queued.sent`` is done while the batch's statement is in PostgreSQL, not before it is
    sent, so a move's reply is made then: here the statement is held on a row lock, and the
    replies are made meanwhile."""
    (_, game_a), (_, game_b) = await new_game(services, seed=12), await new_game(services, seed=13)
    seen: list[tuple[str, int]] = []
    with psycopg.connect(clean_database) as blocker, psycopg.connect(clean_database, autocommit=True) as watcher:
        blocker.execute("SELECT 1 FROM games WHERE id = %s FOR UPDATE", (game_b,))  # a transaction left open

        def reply(name: str) -> str:
            # the batch statement, running or waiting for the lock; the server marks a statement
            # active when its backend reads it, which another connection's query may overtake, so
            # look for a while (the loop is held here: only a statement already sent can show up)
            deadline = time.monotonic() + 5.0
            while True:
                rows = watcher.execute(
                    "SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE %s "
                    "AND pid <> pg_backend_pid()",
                    ("%json_to_recordset($1::json)%",),
                ).fetchall()
                if rows or time.monotonic() > deadline:
                    break
                time.sleep(0.005)
            seen.append((name, len(rows)))
            return f"reply {name}"

        batcher = AppendBatcher(services.store, max_wait=30.0)

        async def move(game_id: uuid.UUID, deciding: Deciding, name: str) -> str:
            queued = batcher.queue(drawn(services, clean_database, game_id), deciding)
            await queued.sent
            made = reply(name)
            await queued.written()
            return made

        a_deciding, b_deciding = Deciding(batcher), Deciding(batcher)
        a = asyncio.ensure_future(move(game_a, a_deciding, "a"))
        b = asyncio.ensure_future(move(game_b, b_deciding, "b"))
        for _ in range(200):
            await asyncio.sleep(0.01)
            if len(seen) == 2:
                break
        assert not a.done(), "a move was acknowledged before its statement could commit"
        assert not b.done()
        blocker.rollback()  # lets the statement through
        assert await asyncio.wait_for(asyncio.gather(a, b), 10) == ["reply a", "reply b"]
    await batcher.close()
    # each reply was made once, while the batch statement was in the database (sent, not yet done)
    assert seen == [("a", 1), ("b", 1)]
    assert (batcher.batches, batcher.batched_moves) == (1, 2)
    assert [log_and_snapshot(clean_database, g)[2] for g in (game_a, game_b)] == [2, 2]


async def test_a_replys_error_reaches_its_own_move_and_the_batch_still_commits(
    services: Services, clean_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move's reply is made by its own task while its batch is in flight: a reply that fails
    fails that move's request only, after its write, and the batch commits all of its moves."""
    (token_a, game_a), (token_b, game_b) = await new_game(services, seed=14), await new_game(services, seed=15)
    real_result = moves.move_result

    def result(game: Any, *rest: Any) -> Any:
        if game.id == game_a:
            raise RuntimeError("a bug in a view")
        return real_result(game, *rest)

    monkeypatch.setattr(moves, "move_result", result)
    results = await asyncio.wait_for(asyncio.gather(
        services.moves.play(game_a, token_a, DRAW), services.moves.play(game_b, token_b, DRAW),
        return_exceptions=True,
    ), 10)
    assert isinstance(results[0], RuntimeError)
    assert getattr(results[1], "version", None) == 2
    assert (services.batcher.batches, services.batcher.batched_moves) == (1, 2)
    assert [log_and_snapshot(clean_database, g)[2] for g in (game_a, game_b)] == [2, 2]


async def test_a_decided_move_waits_at_most_max_wait_for_the_others(services: Services, clean_database: str) -> None:
    (_, game_a) = await new_game(services, seed=10)
    batcher = AppendBatcher(services.store, max_wait=0.05)
    a_deciding, stuck = Deciding(batcher), Deciding(batcher)  # ``stuck`` never ends (a slow load, say)
    await asyncio.wait_for(batcher.append(drawn(services, clean_database, game_a), a_deciding), 10)
    assert log_and_snapshot(clean_database, game_a)[2] == 2
    assert batcher.deciding == 1
    stuck.end()
    await batcher.close()


async def test_moves_decided_one_at_a_time_are_each_written_at_once(services: Services, clean_database: str) -> None:
    """With nothing else being decided, a move does not wait: the one-move statement, no batch."""
    (token, game_id) = await new_game(services, seed=11)
    for _ in range(3):
        await services.moves.play(game_id, token, DRAW)
    assert services.batcher.batches == 0
    assert services.batcher.deciding == 0
    assert log_and_snapshot(clean_database, game_id)[2] == 4


async def test_a_batch_that_fails_is_written_move_by_move(
    services: Services, clean_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch statement that fails for a reason of its own (say, a deadlock with another server
    process) must not fail its moves: each is written alone, with its own checks."""
    players = [await new_game(services, seed=seed) for seed in range(30, 40)]

    async def deadlocked(moves: list[Append]) -> set[uuid.UUID]:
        raise psycopg.errors.DeadlockDetected("deadlock detected")

    monkeypatch.setattr(services.store, "append_many", deadlocked)
    played = await asyncio.gather(*(services.moves.play(game_id, token, DRAW) for token, game_id in players))
    assert [p.version for p in played] == [2] * len(players)
    assert services.batcher.batches > 0  # the failing path was taken
    for _, game_id in players:
        rows, _, version = log_and_snapshot(clean_database, game_id)
        assert version == 2
        assert [r[:2] for r in rows] == [(1, "GameDealt"), (2, "StockDrawn")]


async def test_move_batch_max_1_writes_every_move_alone(clean_database: str) -> None:
    async with server_process(clean_database, 8, move_batch_max=1) as services:
        players = [await new_game(services, seed=seed) for seed in range(40, 52)]
        for _ in range(3):
            await asyncio.gather(*(services.moves.play(game_id, token, DRAW) for token, game_id in players))
        assert services.batcher.batches == 0
        for _, game_id in players:
            assert log_and_snapshot(clean_database, game_id)[2] == 4


async def test_a_batch_held_up_by_one_locked_game_writes_the_others(clean_database: str) -> None:
    """One game's row locked past the statement timeout cancels the batch statement; its moves
    are then written alone: the others land, the locked game's move fails alone (a 503 over HTTP)."""
    async with server_process(clean_database, 4, statement_timeout_ms=300) as services:
        players = [await new_game(services, seed=s) for s in (60, 61, 62)]
        locked = players[1][1]
        with psycopg.connect(clean_database) as locker:
            locker.execute("SELECT 1 FROM games WHERE id = %s FOR UPDATE", (locked,))  # held until rollback
            results = await asyncio.wait_for(
                asyncio.gather(*(services.moves.play(g, t, DRAW) for t, g in players), return_exceptions=True), 10
            )
            locker.rollback()
        assert services.batcher.batches == 1  # the two moves queued behind the first were tried together
    assert [getattr(r, "version", None) for r in results] == [2, None, 2]
    assert isinstance(results[1], psycopg.errors.QueryCanceled)
    assert [log_and_snapshot(clean_database, g)[2] for _, g in players] == [2, 1, 2]


async def test_closing_writes_waiting_moves_alone_and_never_leaves_one_hanging(
    services: Services, clean_database: str
) -> None:
    (_, game_a), (_, game_b), (_, game_c) = [await new_game(services, seed=s) for s in (70, 71, 72)]
    first, a, b = (drawn(services, clean_database, g) for g in (game_c, game_a, game_b))
    batcher = AppendBatcher(services.store)
    results = await asyncio.wait_for(
        asyncio.gather(
            batcher.append(first), batcher.append(a), batcher.append(b), batcher.close(), return_exceptions=True
        ),
        10,
    )
    assert results[:3] == [None, None, None]  # the one in flight finished; the waiting ones were written alone
    assert batcher.batches == 0, "nothing was written as a batch after close()"
    assert [log_and_snapshot(clean_database, g)[2] for g in (game_c, game_a, game_b)] == [2, 2, 2]
    await asyncio.wait_for(batcher.append(drawn(services, clean_database, game_a)), 5)  # later moves too
    assert log_and_snapshot(clean_database, game_a)[2] == 3
