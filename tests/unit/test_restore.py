"""A stored game is a snapshot written now and then plus the events after it
(``domain.codec.restore``); which moves write the snapshot is ``event_store.snapshot_due``."""

from __future__ import annotations

import random

import pytest

from domain import (
    Event,
    GameState,
    Resign,
    Undo,
    apply,
    deal,
    event_data,
    event_type,
    get_ruleset,
    initial_state,
    legal_moves,
    replay,
    shuffled_deck,
    undo_stack,
)
from domain.codec import restore, state_to_snapshot
from service.store.event_store import SNAPSHOT_EVERY, NewEvent, snapshot_due


def played(seed: int, moves: int, undo_every: int = 0) -> tuple[list[Event], list[GameState]]:
    """A random game's events and the state after each of them (index = version - 1)."""
    rng = random.Random(seed)
    dealt = deal(get_ruleset("classic"), shuffled_deck(seed), {"source": "seed", "seed": seed})
    state = initial_state(dealt)
    events, states = [dealt], [state]
    for number in range(moves):
        if not state.playing:
            break
        options = [m for m in legal_moves(state) if not isinstance(m, Undo | Resign)]
        if undo_every and number % undo_every == undo_every - 1 and state.undo_depth:
            command = Undo()
        elif options:
            command = rng.choice(options)
        else:
            break
        state, new = apply(state, command, history=events)
        events += new
        states += [replay(events[: len(states) + i + 1]) for i in range(len(new))]
    return events, states


@pytest.mark.parametrize(("seed", "undo_every"), [(1, 0), (2, 0), (3, 0), (4, 4), (5, 3)])
def test_a_snapshot_and_the_events_after_it_restore_every_later_state(seed: int, undo_every: int) -> None:
    events, states = played(seed, 60, undo_every)
    assert not undo_every or states[-1].undo_count > 5
    for at in range(0, len(states), 7):
        snapshot = state_to_snapshot(states[at])
        for end in range(at, min(len(states), at + SNAPSHOT_EVERY + 3)):
            tail = [(event_type(e), event_data(e)) for e in events[at + 1 : end + 1]]
            assert restore(snapshot, tail, end + 1) == states[end]


def test_a_tail_that_does_not_reach_the_version_is_refused() -> None:
    events, states = played(4, 10)
    snapshot = state_to_snapshot(states[2])
    tail = [(event_type(e), event_data(e)) for e in events[3:6]]
    assert restore(snapshot, tail, 6) == states[5]
    with pytest.raises(ValueError, match="lead to version 6, not 7"):
        restore(snapshot, tail, 7)


def test_an_undo_that_needs_the_older_moves_cannot_be_folded_from_a_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(undo_stack, "WINDOW", 2)
    events, states = played(5, 12)
    assert states[-1].undo_depth > 2
    state = states[-1]
    for _ in range(3):  # the third undo finds the window empty
        state, new = apply(state, Undo(), history=events)
        events += new
    snapshot = state_to_snapshot(states[-1])
    tail = [(event_type(e), event_data(e)) for e in events[len(states):]]
    with pytest.raises(ValueError, match="need the older moves"):
        restore(snapshot, tail, len(events))


def test_the_move_that_crosses_a_multiple_and_every_undo_write_the_snapshot() -> None:
    def move(start: int, *types: str) -> list[NewEvent]:
        return [NewEvent(start + 1 + i, kind, {}) for i, kind in enumerate(types)]

    every = SNAPSHOT_EVERY
    assert not snapshot_due(1, move(1, "StockDrawn"))
    assert snapshot_due(every - 1, move(every - 1, "StockDrawn"))  # reaches version 16
    assert not snapshot_due(every, move(every, "StockDrawn"))
    assert snapshot_due(every - 1, move(every - 1, "CardsMoved", "ReserveRefilled"))  # 16 inside the move
    assert snapshot_due(every - 2, move(every - 2, "CardsMoved", "ReserveRefilled"))  # ends on 16
    assert not snapshot_due(every - 3, move(every - 3, "CardsMoved", "ReserveRefilled"))
    assert snapshot_due(3, move(3, "MoveUndone"))
