"""Seed 000's four lessons in the rules engine: each deck, each goal, reached by a scripted line and
not before; the LessonCompleted event is decided once, replays, and survives an undo."""

from __future__ import annotations

import json

import pytest

from domain import (
    CODES,
    Draw,
    GameState,
    Recycle,
    Undo,
    apply,
    decide,
    event_type,
    initial_state,
    legal_moves,
    replay,
    shuffled_deck,
)
from domain.codec import event_from_data, snapshot_to_state, state_to_snapshot
from domain.errors import IllegalMove
from domain.events import Event, LessonCompleted
from domain.lessons import BY_ID, LESSONS, lesson_deal
from domain.rules import deal
from domain.rulesets import get_ruleset
from domain.view import event_data
from tests.support import LESSON_SCRIPTS, cards, move

from .tables import play


def start(lesson_id: str) -> GameState:
    return initial_state(lesson_deal(BY_ID[lesson_id]))


def test_there_are_the_four_lessons_of_seed_000_all_under_classic() -> None:
    assert [lesson.id for lesson in LESSONS] == ["base-rank", "wrapping", "reserve-refill", "draw-three-stock"]
    for lesson in LESSONS:
        assert lesson.ruleset == get_ruleset("classic")
        assert lesson.title
        assert lesson.teaches
        assert lesson.goal


@pytest.mark.parametrize("lesson_id", list(BY_ID))
def test_each_lesson_deck_holds_the_52_cards_once(lesson_id: str) -> None:
    assert sorted(BY_ID[lesson_id].deck) == list(range(52))


def test_the_lesson_decks_place_the_cards_their_point_needs() -> None:
    codes = {lesson.id: [CODES[c] for c in lesson.deck] for lesson in LESSONS}
    assert codes["base-rank"][13] == "QS"
    assert codes["base-rank"][14:18] == ["KS", "5H", "AS", "9C"]
    assert codes["wrapping"][13] == "KH"
    assert codes["wrapping"][14:18] == ["AC", "KD", "AH", "7S"]
    assert codes["reserve-refill"][12:15] == ["6S", "5S", "7S"]  # reserve top, base, tableau-1
    assert codes["draw-three-stock"][13] == "4C"
    assert codes["draw-three-stock"][20] == "5C"


@pytest.mark.parametrize("lesson_id", list(LESSON_SCRIPTS))
def test_the_scripted_line_reaches_the_goal_on_its_last_move_and_not_before(lesson_id: str) -> None:
    state = start(lesson_id)
    assert state.lesson == lesson_id
    assert not state.lesson_done
    script = LESSON_SCRIPTS[lesson_id]
    for index, command in enumerate(script):
        state, events = apply(state, command)
        last = index == len(script) - 1
        completed = [e for e in events if isinstance(e, LessonCompleted)]
        assert state.lesson_done is last, (index, command)
        assert completed == ([LessonCompleted(lesson_id)] if last else [])
    assert state.playing  # a lesson's goal does not end the game: play on


def test_base_rank_starts_every_foundation_at_the_dealt_rank() -> None:
    state = start("base-rank")
    with pytest.raises(IllegalMove, match="it takes KS next"):
        decide(state, move("AS", "foundation"))  # the ace waits for the king
    state, _ = apply(state, move("QH", "foundation"))  # the reserve top: hearts start at the queen too
    assert state.foundations[1] == 1
    assert not state.lesson_done
    state, _ = play(state, LESSON_SCRIPTS["base-rank"])
    assert state.lesson_done
    assert state.foundation_cards(0) == cards("QS", "KS", "AS")


def test_wrapping_needs_both_the_king_on_the_ace_and_the_ace_on_the_king() -> None:
    state = start("wrapping")
    state, _ = apply(state, move("AH", "foundation"))  # the foundation half first
    assert not state.lesson_done
    state, events = apply(state, move("KD", "tableau-1"))  # then the tableau half
    assert state.lesson_done
    assert isinstance(events[-1], LessonCompleted)


def test_reserve_refill_is_not_reached_by_playing_the_reserve_top_elsewhere() -> None:
    state = start("reserve-refill")
    state, events = apply(state, move("6S", "foundation"))
    assert [event_type(e) for e in events] == ["CardsMoved"]
    assert not state.lesson_done
    state, events = apply(state, move("7S", "foundation"))
    assert [event_type(e) for e in events] == ["CardsMoved", "ReserveRefilled", "LessonCompleted"]


def test_the_stock_lesson_needs_a_played_waste_card_before_the_recycle() -> None:
    state = start("draw-three-stock")
    state, _ = play(state, [Draw()] * 12)
    assert not state.stock
    state, events = apply(state, Recycle())  # a whole pass with nothing played from it
    assert [event_type(e) for e in events] == ["WasteRecycled"]
    assert not state.lesson_done
    state, _ = apply(state, Draw())
    assert CODES[state.waste[-1]] == "5C"  # the same order as the last pass: no shuffle
    state, _ = play(state, [move("5C", "foundation"), *[Draw()] * 11])
    assert not state.lesson_done
    state, events = apply(state, Recycle())
    assert state.lesson_done
    assert [event_type(e) for e in events] == ["WasteRecycled", "LessonCompleted"]


@pytest.mark.parametrize("lesson_id", list(LESSON_SCRIPTS))
def test_replay_and_the_snapshot_rebuild_the_lesson_and_its_completion(lesson_id: str) -> None:
    first = lesson_deal(BY_ID[lesson_id])
    state = initial_state(first)
    events: list[Event] = [first]
    for command in LESSON_SCRIPTS[lesson_id]:
        state, new = apply(state, command)
        events += new
    stored = [(event_type(e), json.loads(json.dumps(event_data(e)))) for e in events]
    replayed = replay(event_from_data(kind, data) for kind, data in stored)
    assert replayed == state
    assert replayed.lesson_done
    assert snapshot_to_state(json.loads(json.dumps(state_to_snapshot(state)))) == state


def test_the_goal_is_recorded_once_and_an_undo_does_not_take_it_back() -> None:
    state, _ = play(start("reserve-refill"), LESSON_SCRIPTS["reserve-refill"])
    version = state.version
    state, events = apply(state, Undo())
    assert [event_type(e) for e in events] == ["MoveUndone"]
    assert state.lesson_done
    assert state.version == version + 1
    state, events = apply(state, move("7S", "foundation"))  # the goal again: no second event
    assert not any(isinstance(e, LessonCompleted) for e in events)


def test_other_games_never_complete_a_lesson() -> None:
    state = initial_state(deal(get_ruleset("classic"), BY_ID["reserve-refill"].deck, {"source": "deck"}))
    assert state.lesson == ""
    _, events = play(state, LESSON_SCRIPTS["reserve-refill"])
    assert not any(isinstance(e, LessonCompleted) for e in events)
    assert "lesson" not in state_to_snapshot(state)  # other snapshots are unchanged
    seeded = initial_state(deal(get_ruleset("classic"), shuffled_deck(5), {"source": "seed", "seed": 5}))
    for command in legal_moves(seeded):
        assert not any(isinstance(e, LessonCompleted) for e in decide(seeded, command))
