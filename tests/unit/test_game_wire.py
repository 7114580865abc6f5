"""What service.games.views builds is what its wire Structs (service.games.wire) say it is.

msgspec does not check a Struct's fields when one is made in code, only when one is decoded, so a
view made by hand could hold a value of the wrong kind (a string where the schema has a UUID or a
date, a code the card pattern refuses) that encodes into JSON the OpenAPI document does not allow,
while clients must be able to trust the document. Each move's reply here is encoded, decoded again
as its type (every constraint checked) and compared with what was built: random games of every
ruleset, undos, lesson games, ended games with their cards shown, a won game, every deal source;
and a reply kept under an Idempotency-Key (its JSON) replays as the same bytes."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest

from domain import (
    GameState,
    Resign,
    Undo,
    UseSolverHint,
    apply,
    command_to_api,
    event_data,
    event_type,
    get_ruleset,
    initial_state,
    legal_moves,
)
from domain.lessons import LESSONS, lesson_deal
from service.deals.deal_pools import decode_line, load_deal_pool, start_state
from service.games.moves import Game
from service.games.views import move_result
from service.games.wire import LegalMoves, MoveResult, move_request
from service.store.game_records import NewEvent

NOW = datetime(2026, 12, 1, 21, 0, tzinfo=UTC)
GAME, PLAYER = uuid.UUID(int=1), uuid.UUID(int=2)


def _jsonb_order(source: dict[str, Any]) -> dict[str, Any]:
    """The deal source as PostgreSQL's jsonb gives it back: shorter keys first, then bytewise."""
    return {key: source[key] for key in sorted(source, key=lambda key: (len(key), key))}


def _checked(state: GameState, events: list[Any], version: int, source: dict[str, Any]) -> None:
    """A move's reply as built, against the same reply decoded (and so checked) as a ``MoveResult``."""
    new = [NewEvent(version + i + 1, event_type(e), event_data(e)) for i, e in enumerate(events)]
    game = Game(GAME, PLAYER, _jsonb_order(source), NOW, None if state.playing else NOW, state, True, "Ann", False)
    built = move_result(game, new, NOW)
    encoded = msgspec.json.encode(built)
    assert msgspec.json.decode(encoded, type=MoveResult) == built
    stored = msgspec.json.decode(encoded)  # as an Idempotency-Key keeps it, and replays it
    assert msgspec.json.encode(msgspec.convert(stored, MoveResult)) == encoded


def _play(state: GameState, commands: list[Any], source: dict[str, Any]) -> int:
    checked = 0
    for command in commands:
        version = state.version
        state, events = apply(state, command)
        _checked(state, list(events), version, source)
        checked += 1
    return checked


@pytest.mark.parametrize("ruleset_id", ["classic", "draw-one", "open-runs"])
def test_random_games_with_undos_are_what_their_schema_says(ruleset_id: str) -> None:
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
            _checked(state, list(events), version, source)
            checked += 1
        if state.playing:  # an ended game shows every card
            checked += _play(state, [Resign()], source)
    assert checked > 500


def test_lesson_games_are_what_their_schema_says() -> None:
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
        {"source": "daily", "date": "2026-06-01", "pool": 12},  # a daily game from before daily deals
        {"source": "race", "race": str(uuid.UUID(int=3))},
        {"source": "tournament", "tournament": str(uuid.UUID(int=4)), "deal": 2},
        {"source": "deck"},
        {"source": "pool", "pool": 17},
    ],
)
def test_every_deal_source_is_what_its_schema_says(source: dict[str, Any]) -> None:
    state = start_state(get_ruleset("classic"), 5)
    assert _play(state, [legal_moves(state)[0], Undo(), Resign()], source) == 3


def test_a_won_game_is_what_its_schema_says() -> None:
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


@pytest.mark.parametrize("ruleset_id", ["classic", "draw-one", "open-runs"])
def test_every_listed_move_is_its_schema_and_the_form_a_client_sends(ruleset_id: str) -> None:
    """Legal moves and hints list moves as ``MoveRequest`` Structs (``move_request``): each passes
    the union's own validation and encodes as the domain's API form of the command, and a command
    no client sends is refused rather than listed."""
    rng = random.Random(7)
    state = start_state(get_ruleset(ruleset_id), rng.randrange(1000))
    listed = 0
    for _ in range(60):
        moves = legal_moves(state)
        if not moves:
            break
        shown = LegalMoves(version=state.version, moves=[move_request(m) for m in moves])
        encoded = msgspec.json.encode(shown)
        assert msgspec.json.decode(encoded, type=LegalMoves) == shown
        assert msgspec.json.decode(encoded)["moves"] == [command_to_api(m) for m in moves]
        listed += len(moves)
        state, _ = apply(state, rng.choice([m for m in moves if not isinstance(m, Resign)] or moves))
    assert listed > 60
    with pytest.raises(ValueError, match="UseSolverHint"):
        move_request(UseSolverHint())
