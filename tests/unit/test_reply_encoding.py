"""A move's reply, as the use case makes it (a dict), encodes to the same JSON as its typed
``MoveResult``: the move route (service.http.move_route) sends the dict's encoding, OpenAPI
documents the Struct, and clients must be able to trust the document. Random games of every
ruleset, undos, lesson games, ended games with their cards shown and a won game are checked."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from litestar.serialization import encode_json

from domain import GameState, Resign, Undo, apply, event_data, event_type, get_ruleset, initial_state, legal_moves
from domain.lessons import LESSONS, lesson_deal
from service.deals.deal_pools import decode_line, load_deal_pool, start_state
from service.games.views import public_event, view_of
from service.http.schemas import MoveResult
from service.store.players import player_reference

NOW = datetime(2026, 12, 1, 21, 0, tzinfo=UTC)
GAME, PLAYER = uuid.UUID(int=1), uuid.UUID(int=2)


def _jsonb_order(source: dict[str, Any]) -> dict[str, Any]:
    """The deal source as PostgreSQL's jsonb gives it back: shorter keys first, then bytewise."""
    return {key: source[key] for key in sorted(source, key=lambda key: (len(key), key))}


def _reply(state: GameState, events: list[Any], version: int, source: dict[str, Any]) -> dict[str, Any]:
    """What ``views.move_reply`` makes of a move, the stored deal source read back from jsonb."""
    source = _jsonb_order(source)
    reveal = not state.playing
    shown = [public_event(version + i + 1, event_type(e), event_data(e), NOW, reveal) for i, e in enumerate(events)]
    ann = player_reference(PLAYER, "Ann", False)
    view = view_of(GAME, ann, source, NOW, None if state.playing else NOW, state, withhold=False)
    return {"game": view, "events": shown}


def _same_json(body: dict[str, Any]) -> None:
    as_dict = encode_json(body)
    as_struct = encode_json(msgspec.convert(body, MoveResult))
    assert as_dict == as_struct


def _play(state: GameState, commands: list[Any], source: dict[str, Any]) -> int:
    checked = 0
    for command in commands:
        version = state.version
        state, events = apply(state, command)
        _same_json(_reply(state, list(events), version, source))
        checked += 1
    return checked


@pytest.mark.parametrize("ruleset_id", ["classic", "draw-one", "open-runs"])
def test_random_games_with_undos_encode_the_same_either_way(ruleset_id: str) -> None:
    rng = random.Random(ruleset_id)
    checked = 0
    for seed in range(1, 9):
        state = start_state(get_ruleset(ruleset_id), seed)
        source = {"source": "seed", "seed": seed}
        for _ in range(150):
            if not state.playing:
                break
            moves = [m for m in legal_moves(state) if not isinstance(m, Resign)]
            command = Undo() if state.undo_depth and rng.random() < 0.15 else rng.choice(moves) if moves else Resign()
            version = state.version
            state, events = apply(state, command)
            _same_json(_reply(state, list(events), version, source))
            checked += 1
        if state.playing:  # an ended game shows every card
            checked += _play(state, [Resign()], source)
    assert checked > 500


def test_lesson_games_encode_the_same_either_way() -> None:
    for lesson in LESSONS:
        dealt = lesson_deal(lesson)
        state = initial_state(dealt)
        source = dict(dealt.source)
        rng = random.Random(lesson.id)
        commands = []
        probe = state
        for _ in range(40):
            moves = [m for m in legal_moves(probe) if not isinstance(m, Resign)]
            if not moves:
                break
            commands.append(rng.choice(moves))
            probe, _ = apply(probe, commands[-1])
        assert _play(state, commands, source) == len(commands)


@pytest.mark.parametrize(
    "source",
    [
        {"source": "daily", "daily": "2026-11-30", "practice": False},
        {"source": "race", "race": str(uuid.UUID(int=3))},
        {"source": "deck"},
        {"source": "pool", "pool": 17},
    ],
)
def test_every_deal_source_encodes_the_same_either_way(source: dict[str, Any]) -> None:
    state = start_state(get_ruleset("classic"), 5)
    assert _play(state, [legal_moves(state)[0], Undo(), Resign()], source) == 3


def test_a_won_game_encodes_the_same_either_way() -> None:
    pool = load_deal_pool("open-runs")
    assert pool is not None
    deal = pool.deals[0]
    state = start_state(get_ruleset("open-runs"), deal.seed)
    commands = decode_line(deal.line)
    _play(state, commands, {"source": "pool", "pool": deal.number})
    final = state
    for command in commands:
        final, _ = apply(final, command)
    assert final.status.value == "won"
