"""Ranked hints are computed from what the player can see: shuffling the face-down cards (the
stock and the covered reserve, and the deck the state keeps for the end of the game) changes no
hint, on random positions of every ruleset. So a hint on a shared deal (a daily, a race) tells a
player nothing the table does not show them."""

from __future__ import annotations

import random

import pytest

from domain import GameState, Resign, apply, hints, legal_moves

from .walks import new_game


def _hidden_shuffled(state: GameState, rng: random.Random) -> GameState:
    """The same table with its face-down cards dealt among the face-down places in another order."""
    hidden = list(state.stock) + list(state.reserve[:-1])
    rng.shuffle(hidden)
    stock, covered = tuple(hidden[: len(state.stock)]), tuple(hidden[len(state.stock):])
    deck = list(state.deck)
    rng.shuffle(deck)
    return state._replace(stock=stock, reserve=covered + state.reserve[-1:], deck=tuple(deck))


def _positions(ruleset: str, seed: int, count: int) -> list[GameState]:
    rng = random.Random(seed)
    state, _ = new_game(ruleset, seed)
    found = [state]
    while len(found) < count and state.playing:
        moves = [move for move in legal_moves(state) if not isinstance(move, Resign)]
        state, _ = apply(state, moves[rng.randrange(len(moves))])
        found.append(state)
    return found


@pytest.mark.parametrize("ruleset", ["classic", "draw-one", "open-runs"])
def test_shuffling_the_face_down_cards_changes_no_hint(ruleset: str) -> None:
    rng = random.Random(7)
    checked = 0
    for seed in range(1, 9):
        for state in _positions(ruleset, seed, 80):
            if len(state.stock) + len(state.reserve) < 3:
                continue
            seen = [(hint.move, hint.reason, hint.score) for hint in hints(state)]
            for _ in range(3):
                other = _hidden_shuffled(state, rng)
                assert [(hint.move, hint.reason, hint.score) for hint in hints(other)] == seen
            checked += 1
    assert checked > 200, "the walks should reach many positions with face-down cards"
