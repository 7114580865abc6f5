"""The event store against real PostgreSQL: append, conflicts, retries, idempotency, snapshots."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import msgspec
import psycopg
import pytest

from domain import Draw, Recycle, Undo, parse_command, replay
from domain.codec import event_from_data, snapshot_to_state
from service.bootstrap import Services
from service.store.event_store import ConcurrencyConflict
from service.store.game_records import Append, Figures, NewEvent
from service.store.outbox import GAME_ENDED, AccountEvent
from service.store.snapshots import SNAPSHOT_EVERY
from service.store.unit_of_work import Statement
from tests.live import stored

from .conftest import new_game, register, server_process

DRAW, RECYCLE, UNDO = Draw(), Recycle(), Undo()


def stored_events(url: str, game_id: uuid.UUID) -> list[tuple[int, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT version, type FROM events WHERE game_id = %s ORDER BY version", (game_id,)
        ).fetchall()
    return [(r[0], r[1]) for r in rows]


async def test_a_move_appends_events_at_the_next_versions(services: Services, clean_database: str) -> None:
    token, game_id = await new_game(services)
    played = await services.moves.play(game_id, token, DRAW)
    assert played.version == 2
    assert stored_events(clean_database, game_id) == [(1, "GameDealt"), (2, "StockDrawn")]


async def test_the_snapshot_equals_the_replay_of_the_events(services: Services, clean_database: str) -> None:
    token, game_id = await new_game(services, seed=5, ruleset="classic")
    for _ in range(25):
        hints = (await services.hints.hints(game_id)).hints
        await services.moves.play(game_id, token, parse_command(msgspec.to_builtins(hints[0].move)))
    await services.moves.play(game_id, token, UNDO)
    log = stored(clean_database, [str(game_id)])[str(game_id)]
    replayed = replay(event_from_data(t, d) for _, t, d in log.events)
    assert log.snapshot_version == log.version, "the undo wrote the snapshot"
    assert snapshot_to_state(log.snapshot) == replayed
    undone_at = log.version
    for _ in range(SNAPSHOT_EVERY + 2):  # moves that write no snapshot until a multiple of SNAPSHOT_EVERY
        hints = (await services.hints.hints(game_id)).hints
        await services.moves.play(game_id, token, parse_command(msgspec.to_builtins(hints[0].move)))
        log = stored(clean_database, [str(game_id)])[str(game_id)]
        if log.version // SNAPSHOT_EVERY == undone_at // SNAPSHOT_EVERY:
            assert log.snapshot_version == undone_at, "no snapshot written since the undo"
        else:
            assert log.version - SNAPSHOT_EVERY < log.snapshot_version <= log.version
        assert log.state() == replay(event_from_data(t, d) for _, t, d in log.events)


async def test_a_stale_append_is_a_conflict_and_writes_nothing(services: Services, clean_database: str) -> None:
    token, game_id = await new_game(services)
    game = await services.store.load_game(game_id)
    assert game is not None
    await services.moves.play(game_id, token, DRAW)
    with pytest.raises(ConcurrencyConflict):
        await services.store.append(Append(
            game.id, game.version, [NewEvent(2, "GameResigned", {})], Figures("resigned", 0, 0, False),
            game.snapshot, game.started_at,
        ))
    assert stored_events(clean_database, game_id) == [(1, "GameDealt"), (2, "StockDrawn")]


async def test_a_duplicate_version_is_a_conflict_even_if_the_row_check_passes(
    services: Services, clean_database: str
) -> None:
    _, game_id = await new_game(services)
    game = await services.store.load_game(game_id)
    assert game is not None
    with psycopg.connect(clean_database, autocommit=True) as conn:  # an event written behind the row's back
        conn.execute(
            "INSERT INTO events (game_id, version, type, data) VALUES (%s, 2, 'GameResigned', '{}')", (game_id,)
        )
    with pytest.raises(ConcurrencyConflict):
        await services.store.append(Append(
            game.id, game.version, [NewEvent(2, "StockDrawn", {})], Figures("playing", 1, 0, False),
            game.snapshot, game.started_at,
        ))
    with psycopg.connect(clean_database) as conn:
        assert conn.execute("SELECT version FROM games WHERE id = %s", (game_id,)).fetchone()[0] == 1


def _player(url: str, player_id: uuid.UUID) -> tuple[str, list[str]]:
    """The player's name and the types of their account events, in order."""
    with psycopg.connect(url) as conn:
        name = conn.execute("SELECT name FROM players WHERE id = %s", (player_id,)).fetchone()
        rows = conn.execute("SELECT type FROM account_events WHERE player_id = %s ORDER BY seq", (player_id,))
        return name[0], [row[0] for row in rows.fetchall()]


async def test_a_unit_of_work_writes_its_move_statements_and_account_events_or_nothing(
    services: Services, clean_database: str
) -> None:
    _, game_id = await new_game(services)
    game = await services.store.load_game(game_id)
    assert game is not None
    resign = Append(game.id, game.version, [NewEvent(2, "GameResigned", {})], Figures("resigned", 0, 0, False),
                    game.snapshot, game.started_at, finished_at=game.started_at)
    marked = Statement("UPDATE players SET name = name || ' (ended)' WHERE id = %s", (game.player_id,))
    told = AccountEvent(game.player_id, GAME_ENDED, {"game": str(game.id)})

    failing = services.store.unit_of_work()
    failing.append(resign)
    failing.add(marked, Statement("SELECT 1 / 0", ()))  # the second statement fails: nothing stays
    failing.tell(told)
    with pytest.raises(psycopg.errors.DivisionByZero):
        await failing.commit()
    assert stored_events(clean_database, game_id) == [(1, "GameDealt")]
    assert _player(clean_database, game.player_id) == ("tester", [])

    work = services.store.unit_of_work()
    work.append(resign)
    work.add(marked, None)  # a projection with nothing to count adds None: left out
    work.tell(told)
    await work.commit()
    assert stored_events(clean_database, game_id) == [(1, "GameDealt"), (2, "GameResigned")]
    assert _player(clean_database, game.player_id) == ("tester (ended)", [GAME_ENDED])

    stale = services.store.unit_of_work()  # decided on version 1 again: the game is at 2
    stale.append(resign)
    stale.add(marked)
    stale.tell(told)
    with pytest.raises(ConcurrencyConflict):
        await stale.commit()
    assert _player(clean_database, game.player_id) == ("tester (ended)", [GAME_ENDED]), "a conflict writes nothing"


async def test_concurrent_moves_without_if_match_are_retried_and_all_land(
    services: Services, clean_database: str
) -> None:
    token, game_id = await new_game(services, ruleset="classic")
    results = await asyncio.gather(*(services.moves.play(game_id, token, DRAW) for _ in range(8)))
    assert sorted(r.version for r in results) == list(range(2, 10))
    assert [v for v, _ in stored_events(clean_database, game_id)] == list(range(1, 10))


async def test_concurrent_conditional_moves_let_exactly_one_win(services: Services, clean_database: str) -> None:
    from service.errors import VersionConflict

    token, game_id = await new_game(services, ruleset="classic")
    outcomes = await asyncio.gather(
        *(services.moves.play(game_id, token, DRAW, if_match=1) for _ in range(6)), return_exceptions=True
    )
    assert sum(1 for o in outcomes if not isinstance(o, Exception)) == 1
    assert all(isinstance(o, VersionConflict) for o in outcomes if isinstance(o, Exception))
    assert len(stored_events(clean_database, game_id)) == 2


async def test_an_idempotency_key_survives_another_server_process(services: Services, clean_database: str) -> None:
    token, game_id = await new_game(services)
    first = await services.moves.play(game_id, token, DRAW, idempotency_key="abc")
    async with server_process(clean_database, 2) as other:
        again = await other.moves.play(game_id, token, DRAW, idempotency_key="abc")
    assert again.replayed
    assert msgspec.json.encode(again.reply) == msgspec.json.encode(first.reply)  # the same bytes on the wire
    assert len(stored_events(clean_database, game_id)) == 2


async def test_concurrent_retries_with_one_key_apply_once(services: Services, clean_database: str) -> None:
    token, game_id = await new_game(services, ruleset="classic")
    results = await asyncio.gather(
        *(services.moves.play(game_id, token, DRAW, idempotency_key="same") for _ in range(6))
    )
    assert len({r.version for r in results}) == 1
    assert sum(1 for r in results if not r.replayed) == 1
    assert len(stored_events(clean_database, game_id)) == 2


@pytest.fixture
async def other_process(clean_database: str) -> AsyncIterator[Services]:
    async with server_process(clean_database, 4) as services:
        yield services


async def test_a_stale_cached_game_in_another_process_is_reloaded_not_trusted(
    services: Services, other_process: Services, clean_database: str
) -> None:
    token, game_id = await new_game(services, ruleset="classic", seed=3)
    await other_process.moves.play(game_id, token, DRAW)  # the other process now caches version 2
    for _ in range(11):
        await services.moves.play(game_id, token, DRAW)  # version 13: the stock is empty
    # Stale in the other process: it still thinks the stock has cards, but a recycle is legal now.
    recycled = await other_process.moves.play(game_id, token, RECYCLE)
    assert recycled.version == 14
    # If-Match with the true version succeeds even though the other process's copy is behind.
    await services.moves.play(game_id, token, DRAW)
    drawn = await other_process.moves.play(game_id, token, DRAW, if_match=15)
    assert drawn.version == 16
    assert [v for v, _ in stored_events(clean_database, game_id)] == list(range(1, 17))


async def test_a_player_reference_names_the_player_and_says_bot(services: Services, clean_database: str) -> None:
    person = await register(services, "Ann")
    robot = await register(services, "Robo", bot=True)
    unknown = uuid.uuid4()
    found = await services.accounts.store.references([person["id"], robot["id"], unknown])
    assert found == {
        person["id"]: {"id": str(person["id"]), "name": "Ann", "bot": False},
        robot["id"]: {"id": str(robot["id"]), "name": "Robo", "bot": True},
    }
