"""A stored game is a snapshot written now and then plus the events after it
(``domain.codec.restore``); which moves write the snapshot is ``snapshots.snapshot_due``."""

from __future__ import annotations

import pytest

from domain import Event, Undo, event_data, event_type, undo_stack
from domain.codec import restore, state_to_snapshot
from service.store.game_records import NewEvent
from service.store.snapshots import SNAPSHOT_EVERY, snapshot_due

from .tables import RULESETS
from .walks import commands, play


def tail_of(events: list[Event], after: int) -> list[tuple[str, dict]]:
    """The stored form of the events after the first ``after``."""
    return [(event_type(e), event_data(e)) for e in events[after:]]


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("seed", [1, 2])
def test_a_snapshot_and_the_events_after_it_restore_every_later_state(ruleset: str, seed: int) -> None:
    chosen = commands(ruleset, seed, 80)  # undo runs included; the window (64) never empties in 80 moves
    assert any(isinstance(command, Undo) for command in chosen)
    steps = play(ruleset, seed, chosen)
    for at in range(0, len(steps), 7):
        taken, taken_events = steps[at]
        snapshot = state_to_snapshot(taken)
        for state, events in steps[at : at + SNAPSHOT_EVERY + 3]:
            assert restore(snapshot, tail_of(events, len(taken_events)), state.version) == state


def test_a_tail_that_does_not_reach_the_version_is_refused() -> None:
    steps = play(RULESETS[0], 4, commands(RULESETS[0], 4, 10))
    (taken, taken_events), (state, events) = steps[2], steps[5]
    tail = tail_of(events, len(taken_events))
    assert restore(state_to_snapshot(taken), tail, state.version) == state
    with pytest.raises(ValueError, match=f"lead to version {state.version}, not {state.version + 1}"):
        restore(state_to_snapshot(taken), tail, state.version + 1)


def test_an_undo_that_needs_the_older_moves_cannot_be_folded_from_a_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(undo_stack, "WINDOW", 3)
    steps = play(RULESETS[0], 5, commands(RULESETS[0], 5, 300))
    refills = [i for i in range(1, len(steps)) if steps[i - 1][0].undo_depth and not steps[i - 1][0].undo
               and steps[i][0].undo_count > steps[i - 1][0].undo_count]
    assert refills, "no undo reached below the window"
    (taken, taken_events), (state, events) = steps[refills[0] - 1], steps[refills[0]]
    with pytest.raises(ValueError, match="need the older moves"):
        restore(state_to_snapshot(taken), tail_of(events, len(taken_events)), state.version)


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
