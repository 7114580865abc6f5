"""The undo window: a state keeps the last ``undo_stack.WINDOW`` moves that can be taken back, the
older ones are read back from the events, and undo depth stays unlimited.

Most tests shrink the window to a few moves, so that long runs of undos reach below it often, and
compare every step with the same game played with a window larger than the game."""

from __future__ import annotations

import pytest

from domain import (
    Draw,
    Undo,
    UndoHistoryNeeded,
    apply,
    decide,
    legal_moves,
    replay,
    undo_stack,
    with_undo_history,
)
from domain.codec import snapshot_to_state, state_to_snapshot

from .tables import RULESETS
from .walks import commands, new_game, play


@pytest.fixture
def small_window(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(undo_stack, "WINDOW", 3)
    return 3


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_small_window_plays_exactly_like_a_whole_stack(
    ruleset: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(undo_stack, "WINDOW", 10**9)
    chosen = commands(ruleset, seed, 400)
    whole = play(ruleset, seed, chosen)
    monkeypatch.setattr(undo_stack, "WINDOW", 3)
    windowed = play(ruleset, seed, chosen)
    refills = 0
    for (big, big_events), (small, small_events) in zip(whole, windowed, strict=True):
        assert small_events == big_events
        assert small._replace(undo="") == big._replace(undo=""), f"the game differs at version {small.version}"
        assert big.undo.endswith(small.undo)
        assert undo_stack.depth(small.undo) <= 3
        assert big.undo_depth == undo_stack.depth(big.undo)
        refills += small.undo_depth > 0 and not small.undo
    assert refills > 0, "no undo reached below the window: the walk does not test what it should"


@pytest.mark.parametrize("ruleset", RULESETS)
def test_replay_rebuilds_every_state_window_included(ruleset: str, small_window: int) -> None:
    chosen = commands(ruleset, 7, 300)
    for state, events in play(ruleset, 7, chosen):
        assert replay(events) == state
        assert snapshot_to_state(state_to_snapshot(state)) == state


def test_an_undo_below_the_window_asks_for_the_events(small_window: int) -> None:
    state, events = new_game("open-runs", 5)
    for _ in range(5):
        state, new_events = apply(state, Draw())
        events += new_events
    assert state.undo_depth == 5
    assert undo_stack.depth(state.undo) == 3
    for _ in range(3):
        state, new_events = apply(state, Undo())
        events += new_events
    assert state.undo == ""
    assert state.undo_depth == 2
    assert Undo() in legal_moves(state)
    with pytest.raises(UndoHistoryNeeded):
        decide(state, Undo())
    with pytest.raises(UndoHistoryNeeded):
        apply(state, Undo())
    refilled = with_undo_history(state, events)
    assert refilled._replace(undo="") == state
    assert undo_stack.depth(refilled.undo) == 2
    for _ in range(2):
        state, new_events = apply(state, Undo(), events)
        events += new_events
    first, _ = new_game("open-runs", 5)
    assert (state.stock, state.waste, state.undo_depth, state.undo) == (first.stock, first.waste, 0, "")


def test_the_wrong_events_are_refused(small_window: int) -> None:
    state, events = new_game("classic", 8)
    other, other_events = new_game("classic", 9)
    for _ in range(4):
        state, new_events = apply(state, Draw())
        events += new_events
        other, new_events = apply(other, Draw())
        other_events += new_events
    with pytest.raises(ValueError, match=r"^these events do not lead to "):
        with_undo_history(state, events[:-1])  # one short
    with pytest.raises(ValueError, match=r"^these events do not lead to "):
        with_undo_history(state, other_events)  # another game's


def test_a_long_games_state_stays_small() -> None:
    state, events = new_game("open-runs", 3)
    while state.version < 10_000:
        state, new_events = apply(state, Draw() if state.stock else legal_moves(state)[0])
        events += new_events
    assert state.undo_depth == state.move_count
    assert undo_stack.depth(state.undo) == undo_stack.WINDOW
    assert len(state.undo) < 40 * undo_stack.WINDOW
    assert replay(events) == state


def test_a_format_1_snapshot_keeps_the_top_of_its_whole_stack_as_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    state, _ = new_game("draw-one", 4)
    for _ in range(5):
        state, _ = apply(state, Draw())
    old = state_to_snapshot(state)  # the window holds all 5 moves
    old["format"] = 1
    del old["undoDepth"]
    monkeypatch.setattr(undo_stack, "WINDOW", 3)
    read = snapshot_to_state(old)
    assert read.undo_depth == 5
    assert read.undo == ";".join(state.undo.split(";")[-3:])
    assert read._replace(undo=state.undo) == state
