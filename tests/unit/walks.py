"""Random walks through games, undo runs included: the commands, and every state along them with
the events so far (tests of the undo window and of restoring a stored game)."""

from __future__ import annotations

import random

from domain import (
    Command,
    Event,
    GameState,
    Resign,
    Undo,
    apply,
    deal,
    get_ruleset,
    initial_state,
    legal_moves,
    shuffled_deck,
)


def new_game(ruleset: str, seed: int) -> tuple[GameState, list[Event]]:
    first = deal(get_ruleset(ruleset), shuffled_deck(seed), {"source": "seed", "seed": seed})
    return initial_state(first), [first]


def commands(ruleset: str, seed: int, count: int) -> list[Command]:
    """A random walk: moves, then long runs of undos (up to 12 in a row), never resigning."""
    rng = random.Random(seed)
    state, events = new_game(ruleset, seed)
    chosen: list[Command] = []
    undo_run = 0
    while len(chosen) < count and state.playing:
        moves = [m for m in legal_moves(state) if not isinstance(m, Resign)]
        if undo_run == 0 and Undo() in moves and rng.random() < 0.15:
            undo_run = rng.randint(1, 12)
        if undo_run and Undo() in moves:
            command: Command = Undo()
            undo_run -= 1
        else:
            undo_run = 0
            command = rng.choice([m for m in moves if not isinstance(m, Undo)])
        chosen.append(command)
        state, new_events = apply(state, command, events)
        events += new_events
    return chosen


def play(ruleset: str, seed: int, chosen: list[Command]) -> list[tuple[GameState, list[Event]]]:
    """Every state along ``chosen`` (an undo below the window refilled from the events so far)."""
    state, events = new_game(ruleset, seed)
    states = [(state, list(events))]
    for command in chosen:
        state, new_events = apply(state, command, events)
        events = events + new_events
        states.append((state, events))
    return states
