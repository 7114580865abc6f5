"""Re-deciding a stored log (domain.verify.redecide): the check behind leaderboard and race
places. It must accept every log the rules made, deep undos included, and refuse any other."""

from __future__ import annotations

import pytest

from domain import (
    ALL_RULESETS,
    Draw,
    Recycle,
    Resign,
    Undo,
    apply,
    deal,
    event_data,
    event_type,
    initial_state,
    shuffled_deck,
)
from domain.verify import Unverified, redecide


def log_of(events: list) -> list[tuple[str, dict]]:
    return [(event_type(e), event_data(e)) for e in events]


def played(ruleset_index: int, moves: list) -> tuple[list, object]:
    first = deal(ALL_RULESETS[ruleset_index], shuffled_deck(41), {"source": "seed", "seed": 41})
    state, events = initial_state(first), [first]
    for planned in moves:
        command = planned if planned is not Draw or state.stock else Recycle
        state, new = apply(state, command() if isinstance(command, type) else command, events)
        events += new
    return events, state


def test_a_log_the_rules_made_redecides_to_the_same_state_undos_below_the_window_included() -> None:
    events, state = played(2, [Draw] * 90 + [Undo()] * 90 + [Draw] * 3 + [Resign()])
    assert redecide(log_of(events)) == state


@pytest.mark.parametrize("index", [2, 41, 120])
def test_a_hand_edited_event_is_refused_with_where(index: int) -> None:
    """The event is swapped for the one before it, of the same type: a draw that turned up other
    cards, an undo that claims to revert another move."""
    events, _ = played(2, [Draw] * 90 + [Undo()] * 60)
    log = log_of(events)
    assert log[index][0] == log[index - 1][0]
    assert log[index][1] != log[index - 1][1]
    tampered = list(log)
    tampered[index] = log[index - 1]
    with pytest.raises(Unverified, match=f"event {index + 1} is not what the rules make"):
        redecide(tampered)


def test_a_game_won_in_place_of_a_resignation_is_refused() -> None:
    events, _ = played(2, [Draw] * 5 + [Resign()])
    log = log_of(events)
    with pytest.raises(Unverified):
        redecide([*log[:-1], ("GameWon", {})])


def test_a_log_must_start_with_its_deal() -> None:
    events, _ = played(0, [Draw] * 3)
    with pytest.raises(Unverified):
        redecide(log_of(events)[1:])
    with pytest.raises(Unverified):
        redecide([])
