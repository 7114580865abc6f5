"""Property tests over random legal games, under every hosted ruleset.

A game is drawn as (ruleset, seed, choices). Each choice picks the next move from
``legal_moves(state)``: about half the time a plain index into the moves (undo and
resign left out), about half the time the top hint (so games get deep: an empty
reserve, empty columns, wins), sometimes undo and, rarely, resign.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from domain import (
    ALL_RULESETS,
    CODES,
    DomainError,
    Draw,
    Event,
    GameOver,
    GameState,
    IllegalMove,
    MoveCard,
    Recycle,
    Resign,
    Ruleset,
    Undo,
    apply,
    codec,
    deal,
    decide,
    event_type,
    hints,
    is_legal,
    legal_moves,
    replay,
    shuffled_deck,
    view,
)
from domain.cards import is_red
from domain.piles import TARGETS

SEEDS = st.integers(min_value=0, max_value=2**53 - 1)
# A choice c: c % 1000 below HINT plays move number c // 1000 (mod the count) of the plain
# moves (undo and resign left out), HINT..UNDO-1 the top hint, UNDO..998 undo (when there
# is one), 999 resign. Hypothesis shrinks towards 0: the first plain move, usually a draw.
HINT, UNDO, RESIGN = 450, 930, 999
GREEDY = 500  # a choice that always plays the top hint
CHOICE = st.integers(min_value=0, max_value=2**20)
CHOICES = st.integers(min_value=0, max_value=200).flatmap(lambda n: st.lists(CHOICE, min_size=n, max_size=n))

CANDIDATES: tuple[Any, ...] = (
    *(MoveCard(card, target) for card in range(52) for target in TARGETS),
    Draw(),
    Recycle(),
    Undo(),
    Resign(),
)


@dataclass(frozen=True)
class Game:
    ruleset: Ruleset
    seed: int
    choices: tuple[int, ...]
    resign_at_end: bool

    def __repr__(self) -> str:  # short enough to read in a falsifying example
        return (
            f"Game({self.ruleset.key!r}, seed={self.seed}, choices={list(self.choices)}, "
            f"resign_at_end={self.resign_at_end})"
        )


games = st.builds(
    Game,
    ruleset=st.sampled_from(ALL_RULESETS),
    seed=SEEDS,
    choices=CHOICES.map(tuple),
    resign_at_end=st.booleans(),
)


# Seeds the top-hint player wins under each ruleset (found by search), so every ruleset
# always gets a won game, and one mixed game with undos that ends in resignation.
WON_BY_HINTS = {"classic": 55, "draw-one": 1, "open-runs": 15}


def won_games(test: Any) -> Any:
    """Pin a game won by hints under each ruleset."""
    for ruleset in ALL_RULESETS:
        test = example(Game(ruleset, WON_BY_HINTS[ruleset.id], (GREEDY,) * 200, False))(test)
    return test


def every_ruleset(test: Any) -> Any:
    """Pin a won game and a mixed game with undos that ends in resignation, per ruleset."""
    for ruleset in ALL_RULESETS:
        test = example(Game(ruleset, 7, tuple(range(0, 97 * 1000 * 120, 97 * 1000 + 13)), True))(test)
    return won_games(test)


@dataclass
class Step:
    state: GameState
    events: list[Event]  # every event so far, GameDealt first
    new: list[Event]  # the events this step appended (the deal: GameDealt)
    exposed: set[int]  # every card that has been face up at some point so far
    undone_to: GameState | None = None  # after an undo: the state before the move it took back


def face_up(state: GameState) -> set[int]:
    """The cards a player can see now: reserve top, the whole (face-up) waste, tableau and foundations."""
    cards: set[int] = {card for column in state.tableau for card in column}
    for suit in range(4):
        cards.update(state.foundation_cards(suit))
    if state.reserve:
        cards.add(state.reserve[-1])
    cards.update(state.waste)
    return cards


def choose(state: GameState, choice: int) -> Any:
    moves = legal_moves(state)
    plain = [move for move in moves if not isinstance(move, Undo | Resign)]
    mode = choice % 1000
    if mode == RESIGN or not plain:
        return Resign()
    if mode >= UNDO and Undo() in moves:
        return Undo()
    if HINT <= mode < UNDO:
        ranked = hints(state)
        if ranked:
            return ranked[0].move
    return plain[(choice // 1000) % len(plain)]


def play(game: Game) -> Iterator[Step]:
    """Yield the dealt position and the position after every move of the game."""
    first = deal(game.ruleset, shuffled_deck(game.seed), {"source": "seed", "seed": game.seed})
    state = replay([first])
    step = Step(state, [first], [first], face_up(state))
    yield step
    choices = list(game.choices)
    if game.resign_at_end:
        choices.append(RESIGN)
    before_moves: list[GameState] = []  # the state before each move that undo could take back
    for choice in choices:
        if not state.playing:
            return
        command = choose(state, choice)
        assert command in legal_moves(state)
        undone_to = before_moves.pop() if isinstance(command, Undo) else None
        if not isinstance(command, Undo | Resign):
            before_moves.append(state)
        state, new_events = apply(state, command, step.events)  # the events serve undos below the window
        assert new_events, f"{command} produced no event"
        step = Step(state, step.events + new_events, new_events, step.exposed | face_up(state), undone_to)
        yield step


def card_codes(data: Any) -> set[str]:
    """Every string anywhere in a JSON-like value that is a card code."""
    found: set[str] = set()
    if isinstance(data, str):
        if data in CODES:
            found.add(data)
    elif isinstance(data, dict):
        for key, value in data.items():
            found |= card_codes(key) | card_codes(value)
    elif isinstance(data, list | tuple):
        for item in data:
            found |= card_codes(item)
    return found


def names(cards: set[int]) -> set[str]:
    return {CODES[card] for card in cards}


PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def over_games(test: Any) -> Any:
    """A property of random games (``games``) and of each ruleset's pinned ones (``every_ruleset``)."""
    return PROPERTY_SETTINGS(every_ruleset(given(games)(test)))


@over_games
def test_every_position_holds_the_52_cards_once(game: Game) -> None:
    for step in play(game):
        state = step.state
        cards = list(state.reserve) + list(state.stock) + list(state.waste)
        for suit in range(4):
            cards += state.foundation_cards(suit)
        for column in state.tableau:
            cards += column
        assert len(cards) == 52
        assert sorted(cards) == list(range(52))
        assert state.version == len(step.events)
        if state.reserve:
            assert all(state.tableau), "a column is empty while the reserve has cards"
        for column in state.tableau:
            for lower, upper in pairwise(column):
                assert upper % 13 == (lower % 13 + 12) % 13, f"{column} is not built down by rank"
                assert is_red(upper) != is_red(lower), f"{column} does not alternate colours"


@over_games
def test_undo_puts_back_the_table_before_the_move(game: Game) -> None:
    table_fields = ("reserve", "stock", "waste", "foundations", "tableau", "progress", "undo_depth", "status")
    undos = 0
    for step in play(game):
        if step.undone_to is None:
            continue
        undos += 1
        before, after = step.undone_to, step.state
        for name in table_fields:
            assert getattr(after, name) == getattr(before, name), f"undo did not restore {name}"
        assert before.undo.endswith(after.undo), "the undo window is not the top of the same stack"
        assert after.undo_count == undos
        assert after.version == len(step.events)


@over_games
def test_replay_snapshots_and_stored_events_give_back_the_same_game(game: Game) -> None:
    for step in play(game):
        state = step.state
        assert replay(step.events) == state
        snapshot = codec.state_to_snapshot(state)
        assert codec.snapshot_to_state(snapshot) == state
        assert codec.snapshot_to_state(json.loads(json.dumps(snapshot))) == state
        for event in step.new:
            data = view.event_data(event)
            assert codec.event_from_data(event_type(event), data) == event
            assert codec.event_from_data(event_type(event), json.loads(json.dumps(data))) == event


@settings(PROPERTY_SETTINGS, max_examples=10)
@won_games
@given(games)
def test_decide_accepts_exactly_the_listed_legal_moves(game: Game) -> None:
    for step in play(game):
        state = step.state
        legal = legal_moves(state)
        assert len(set(legal)) == len(legal), "a legal move is listed twice"
        assert set(legal) <= set(CANDIDATES)
        before = codec.state_to_snapshot(state)
        for command in CANDIDATES:
            listed = command in legal
            assert is_legal(state, command) == listed, command
            if listed:
                assert decide(state, command)
            else:
                expected = IllegalMove if state.playing else GameOver
                with pytest.raises(expected) as refused:
                    decide(state, command)
                assert isinstance(refused.value, DomainError)
                assert refused.value.reason
        assert codec.state_to_snapshot(state) == before
        assert replay(step.events) == state


@over_games
def test_nothing_face_down_is_ever_shown_while_playing(game: Game) -> None:
    # Each event is checked when it is appended, against the cards exposed up to then:
    # that is stricter than re-checking every event later, as the exposed set only grows.
    for step in play(game):
        state = step.state
        if not state.playing:
            break
        visible = names(face_up(state))
        shown = card_codes(view.game_view(state))
        assert shown <= visible, f"the view shows face-down {sorted(shown - visible)}"
        assert shown == visible, f"the view misses face-up {sorted(visible - shown)}"
        allowed = names(step.exposed)
        for event in step.new:
            in_event = card_codes(view.public_event_data(event, reveal=False))
            assert in_event <= allowed, f"{event_type(event)} shows never-exposed {sorted(in_event - allowed)}"


@over_games
def test_an_ended_game_reveals_its_deck_in_the_first_event(game: Game) -> None:
    last = list(play(game))[-1]
    state = last.state
    if state.playing:
        return
    assert legal_moves(state) == []
    data = view.public_event_data(last.events[0], reveal=True)
    assert data["deck"] == [CODES[card] for card in shuffled_deck(game.seed)]
    assert len(set(data["deck"])) == 52
    assert view.event_data(last.events[0])["deck"] == data["deck"]
