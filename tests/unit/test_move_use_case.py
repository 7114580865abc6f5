"""The move use case (service.games.moves) on an in-memory store: the cache, If-Match, idempotency,
conflicts and retries, each branch in milliseconds. The same code runs against PostgreSQL in
tests/integration and tests/api."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from typing import Any

import msgspec
import pytest

from domain import (
    Draw,
    GameOver,
    IllegalMove,
    MoveCard,
    Recycle,
    Resign,
    Undo,
    apply,
    event_data,
    event_type,
    legal_moves,
)
from domain.codec import state_to_snapshot
from service.errors import (
    Forbidden,
    IdempotencyKeyReused,
    NotFound,
    Unauthorized,
    Unavailable,
    VersionConflict,
)
from service.games.batching import AppendBatcher
from service.games.moves import Game, GameRepository, Idempotent, Moves
from service.games.wire import MoveResult
from service.players.tokens import TokenCache
from service.store.event_store import ConcurrencyConflict
from service.store.game_records import GameRow, NewEvent
from service.store.players import token_hash

from .fake_store import T0, FakeStore

ANN, BOB = "ann-token", "bob-token"


class World:
    def __init__(self, retries: int = 12) -> None:
        self.store = FakeStore()
        self.ann = self.store.add_player(ANN)
        self.bob = self.store.add_player(BOB)
        self.ended: list[uuid.UUID] = []
        repository = GameRepository(
            self.store, AppendBatcher(self.store), TokenCache(100, lambda: T0), 100, retries  # type: ignore[arg-type]
        )
        self.moves = Moves(repository, lambda: T0, self)

    async def game_ended(self, race_id: uuid.UUID, game_id: uuid.UUID) -> None:
        self.ended.append(game_id)

    def rival_plays(self, game_id: uuid.UUID, command: Any) -> None:
        """Another server process moves the game on (straight into the store)."""
        row = self.store.games[game_id]
        state, events = apply(self.store.state(game_id), command)
        new = [NewEvent(row.version + i + 1, event_type(e), event_data(e)) for i, e in enumerate(events)]
        self.store.events[game_id] += new
        self.store.games[game_id] = GameRow(row.id, row.player_id, row.deal, state.version, state_to_snapshot(state),
                                            row.started_at, None if state.playing else T0)

    def version(self, game_id: uuid.UUID) -> int:
        return self.store.games[game_id].version


def brief(played: MoveResult) -> dict[str, Any]:
    """The parts of a move's reply these tests look at."""
    reply = msgspec.to_builtins(played)
    return {
        "game": {"version": reply["game"]["version"], "status": reply["game"]["status"]},
        "events": [{"version": event["version"], "type": event["type"]} for event in reply["events"]],
    }


async def test_the_first_move_loads_the_game_and_the_next_uses_this_process_copy() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=1)
    played = await world.moves.play(game, ANN, Draw())
    assert played.version == 2
    assert not played.replayed
    assert brief(played.reply) == {
        "game": {"version": 2, "status": "playing"},
        "events": [{"version": 2, "type": "StockDrawn"}],
    }
    assert world.store.calls == ["load", "append"]
    world.store.calls.clear()
    assert (await world.moves.play(game, ANN, Draw())).version == 3
    assert world.store.calls == ["append"], "one round trip: decided on the cached copy"


async def test_a_stale_copy_that_conflicts_is_decided_again_on_the_stored_game() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=2)
    await world.moves.play(game, ANN, Draw())
    world.rival_plays(game, Draw())  # the cached copy (version 2) is behind now
    world.store.calls.clear()
    played = await world.moves.play(game, ANN, Draw())
    assert played.version == 4 == world.version(game)
    assert world.store.calls == ["append", "load", "append"]


async def test_if_match_on_a_stale_copy_asks_the_store_before_refusing() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=3)
    await world.moves.play(game, ANN, Draw())
    world.rival_plays(game, Draw())
    played = await world.moves.play(game, ANN, Draw(), if_match=3)  # right for the stored game
    assert played.version == 4
    with pytest.raises(VersionConflict, match="at version 4, not 3"):
        await world.moves.play(game, ANN, Draw(), if_match=3)
    assert world.version(game) == 4


async def test_if_match_is_never_retried_after_a_conflict_at_the_write() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=4)
    world.store.before_append.append(lambda: world.rival_plays(game, Draw()))
    with pytest.raises(VersionConflict, match="moved on from version 1"):
        await world.moves.play(game, ANN, Draw(), if_match=1)
    assert world.version(game) == 2, "only the rival's move"


async def test_an_idempotency_key_replays_the_first_reply_and_refuses_another_move() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=5)
    first = await world.moves.play(game, ANN, Draw(), idempotency_key="k1")
    again = await world.moves.play(game, ANN, Draw(), idempotency_key="k1")
    assert again.replayed
    assert again.reply == first.reply
    assert again.version == first.version == 2
    assert world.version(game) == 2
    assert world.store.calls.count("append-with-key") == 1
    with pytest.raises(IdempotencyKeyReused, match="already used for a different move"):
        await world.moves.play(game, ANN, Resign(), idempotency_key="k1")
    assert world.version(game) == 2


async def test_a_key_stored_first_by_a_racing_request_returns_that_reply() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=6)
    elsewhere = World()  # the reply the racing request stored: the same move of the same deal
    raced = msgspec.to_builtins((await elsewhere.moves.play(elsewhere.store.add_game(elsewhere.ann, seed=6), ANN,
                                                            Draw())).reply)

    def racing_request() -> None:
        world.rival_plays(game, Draw())
        world.store.keys[(game, "k")] = (Idempotent.of("k", Draw()).request_hash, raced)  # type: ignore[union-attr]

    world.store.before_append.append(racing_request)
    played = await world.moves.play(game, ANN, Draw(), idempotency_key="k")
    assert played.replayed
    assert msgspec.to_builtins(played.reply) == raced
    assert brief(played.reply) == {"game": {"version": 2, "status": "playing"},
                                   "events": [{"version": 2, "type": "StockDrawn"}]}
    assert world.version(game) == 2, "applied once"


async def test_a_refusal_on_a_stale_copy_is_decided_again_and_a_real_one_stands() -> None:
    world = World()
    # a seed whose first draw turns up a card that can move: illegal on the copy without that draw
    for seed in range(1, 200):
        game = world.store.add_game(world.ann, seed=seed)
        drawn, _ = apply(world.store.state(game), Draw())
        card_moves = [m for m in legal_moves(drawn) if isinstance(m, MoveCard) and m.card == drawn.waste[-1]]
        if card_moves:
            break
    else:
        pytest.fail("no seed with a playable first waste card")
    repository = world.moves.games
    repository.remember(Game.of(world.store.games[game]))  # this process's copy: before the draw
    world.rival_plays(game, Draw())
    played = await world.moves.play(game, ANN, card_moves[0])
    assert played.version == 3
    with pytest.raises(IllegalMove):
        await world.moves.play(game, ANN, card_moves[0])  # decided on the stored game: refused for real
    assert world.version(game) == 3


async def test_a_game_ended_elsewhere_is_game_over_after_the_check() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=7)
    await world.moves.play(game, ANN, Draw())
    world.rival_plays(game, Resign())
    with pytest.raises(GameOver):
        await world.moves.play(game, ANN, Draw())
    assert world.ended == [], "this process did not end it"


async def test_retries_run_out_as_a_503_when_every_write_conflicts() -> None:
    world = World(retries=3)

    async def always_behind(*args: Any, **kwargs: Any) -> None:
        world.store.calls.append("append")
        raise ConcurrencyConflict()

    world.store.append = always_behind  # type: ignore[method-assign]
    game = world.store.add_game(world.ann, seed=8)
    with pytest.raises(Unavailable):
        await world.moves.play(game, ANN, Draw())
    assert world.store.calls.count("append") == 3


async def test_who_may_move() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=9)
    with pytest.raises(Unauthorized):
        await world.moves.play(game, None, Draw())
    with pytest.raises(Unauthorized, match="not valid"):
        await world.moves.play(game, "nobody", Draw())
    with pytest.raises(NotFound):
        await world.moves.play(uuid.uuid4(), ANN, Draw())
    with pytest.raises(Forbidden):
        await world.moves.play(game, BOB, Draw())  # from the store
    await world.moves.play(game, ANN, Draw())
    await world.moves.play(world.store.add_game(world.bob, seed=1), BOB, Draw())  # the process knows Bob now
    with pytest.raises(Forbidden):
        await world.moves.play(game, BOB, Draw())  # from the cache
    assert world.version(game) == 2
    assert world.moves.games.batcher.deciding == 0, "a refused move is no longer counted as being decided"


async def test_an_undo_below_the_undo_window_reads_the_log() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=10, ruleset="open-runs")
    for _ in range(80):  # more than the snapshot's undo window
        stock = world.store.state(game).stock
        await world.moves.play(game, ANN, Draw() if stock else Recycle())
    world.store.calls.clear()
    for _ in range(80):
        await world.moves.play(game, ANN, Undo())
    assert "read_events_upto" in world.store.calls
    state = world.store.state(game)
    assert state.stock
    assert not state.waste
    assert state.undo_count == 80
    with pytest.raises(IllegalMove):
        await world.moves.play(game, ANN, Undo())  # back at the deal


async def test_ending_a_race_game_is_reported_once_after_the_write() -> None:
    world = World()
    game, other = world.store.add_game(world.ann, seed=11), world.store.add_game(world.ann, seed=12)
    race = {"source": "race", "race": str(uuid.uuid4())}
    world.store.games[game] = dataclasses.replace(world.store.games[game], deal=race)
    played = await world.moves.play(game, ANN, Resign())
    assert played.reply.game.status == "resigned"
    assert world.ended == [game]
    assert world.store.games[game].finished_at == T0
    await world.moves.play(other, ANN, Resign())
    assert world.ended == [game], "a game of no race concerns no race"


async def test_the_move_that_ends_a_game_commits_its_stats_and_account_event_with_it() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=13)
    await world.moves.play(game, ANN, Draw())
    assert world.store.committed == [], "a move that does not end its game is its one statement"
    await world.moves.play(game, ANN, Resign())
    [work] = world.store.committed
    assert work.write is not None
    assert work.write.finished_at == T0
    assert work.write.expected_version == 2
    [stats] = work.statements
    assert "INSERT INTO player_stats" in stats.sql
    assert stats.params["player"] == world.ann
    assert stats.params["won"] == 0
    [told] = work.told
    assert (told.player_id, told.type) == (world.ann, "gameEnded")
    assert told.data["game"] == str(game)
    assert told.data["status"] == "resigned"


async def test_moves_of_other_games_ready_together_share_one_write() -> None:
    world = World()
    games = [world.store.add_game(world.ann, seed=seed) for seed in range(20, 26)]
    played = await asyncio.gather(*(world.moves.play(g, ANN, Draw()) for g in games))
    assert [p.version for p in played] == [2] * 6
    assert "append_many" in world.store.calls, "the moves that waited for the first write went together"
    assert all(world.version(g) == 2 for g in games)


async def test_moves_of_one_game_take_turns() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=30)
    played = await asyncio.gather(*(world.moves.play(game, ANN, Draw()) for _ in range(5)))
    assert sorted(p.version for p in played) == [2, 3, 4, 5, 6]
    assert world.store.calls.count("load") == 1, "no conflicts: each move waited for the one before"


async def test_a_move_with_a_token_revoked_since_it_was_cached_is_refused() -> None:
    world = World()
    game = world.store.add_game(world.ann, seed=12)
    await world.moves.play(game, ANN, Draw())  # the token and the game are cached now
    world.store.revoked.add(world.store.players[token_hash(ANN)].id)  # revoked in another process
    world.store.calls.clear()
    with pytest.raises(Unauthorized, match="revoked"):
        await world.moves.play(game, ANN, Draw())
    assert world.version(game) == 2, "the write refused the revoked token"
    assert world.store.calls == ["append", "load"]
    with pytest.raises(Unauthorized):
        await world.moves.play(game, ANN, Draw(), if_match=2)
    assert world.version(game) == 2
