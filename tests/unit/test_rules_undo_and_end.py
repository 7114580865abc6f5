import pytest

from domain import (
    Draw,
    GameOver,
    IllegalMove,
    Recycle,
    Resign,
    Status,
    Undo,
    apply,
    decide,
    legal_moves,
    replay,
)
from domain.events import GameResigned, MoveUndone
from tests.support import move

from .tables import RULESETS, table


def comparable(state):  # everything but the history counters that undo itself advances
    return (state.reserve, state.stock, state.waste, state.foundations, state.tableau, state.progress, state.undo,
            state.undo_depth)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_undo_takes_back_a_move_and_its_reserve_refill(ruleset: str) -> None:
    state = table(ruleset, tableau=[["9S"], ["TD"], ["3D"], ["QC"]], reserve=["4H", "KD"])
    moved, move_events = apply(state, move("9S", "tableau-2"))
    undone, events = apply(moved, Undo())
    assert events == [MoveUndone(tuple(move_events))]
    assert comparable(undone) == comparable(state)
    assert undone.version == state.version + 3  # history grows: nothing is deleted
    assert undone.undo_count == 1
    assert undone.move_count == 2


@pytest.mark.parametrize("ruleset", RULESETS)
def test_undo_goes_back_move_by_move_to_the_deal(ruleset: str) -> None:
    start = table(
        ruleset,
        tableau=[["9S"], ["TD"], ["3D"], ["QC"]],
        reserve=["KD"],
        stock=["8H", "2C", "7S", "4D"],
        rest_to="reserve",
    )
    states = [start]
    state = start
    for command in (Draw(), Draw(), Draw()) if ruleset == "draw-one" else (Draw(), Draw()):
        state, _ = apply(state, command)
        states.append(state)
    for earlier in reversed(states[:-1]):
        state, _ = apply(state, Undo())
        assert comparable(state) == comparable(earlier)
    with pytest.raises(IllegalMove, match="there is no move to undo"):
        decide(state, Undo())
    assert Undo() not in legal_moves(state)


def test_undo_of_a_recycle_restores_the_waste_and_the_draw_one_pass() -> None:
    state = table(
        "draw-one", tableau=[["9S"], ["TD"], ["3D"], ["QC"]], reserve=["KD"], stock=["8H", "7C"], rest_to="reserve"
    )
    state, _ = apply(state, Draw())
    state, _ = apply(state, move("8H", "tableau-1"))
    state, _ = apply(state, Draw())
    before = state
    state, _ = apply(state, Recycle())
    assert state.progress is False
    state, _ = apply(state, Undo())
    assert comparable(state) == comparable(before)
    assert state.progress is True


def test_undo_of_a_foundation_return_in_classic() -> None:
    state = table("classic", base="A", foundations={"H": 3}, tableau=[["4S"], ["9D"], ["JH"], ["5C"]], reserve=["KD"])
    moved, _ = apply(state, move("3H", "tableau-1"))
    undone, _ = apply(moved, Undo())
    assert comparable(undone) == comparable(state)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_resign_ends_the_game(ruleset: str) -> None:
    state = table(ruleset, tableau=[["9S"], ["TD"], ["3D"], ["QC"]], reserve=["KD"])
    after, events = apply(state, Resign())
    assert events == [GameResigned()]
    assert after.status is Status.RESIGNED
    assert legal_moves(after) == []
    for command in (Undo(), Draw(), Resign()):
        with pytest.raises(GameOver, match="the game is over \\(resigned\\)"):
            decide(after, command)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_finished_game_cannot_be_undone(ruleset: str) -> None:
    state = table(ruleset, base="A", foundations={"S": 13, "H": 13, "D": 13, "C": 12}, tableau=[["KC"], [], [], []])
    won, _ = apply(state, move("KC", "foundation"))
    with pytest.raises(GameOver, match="won"):
        decide(won, Undo())


@pytest.mark.parametrize("ruleset", RULESETS)
def test_replay_rebuilds_a_game_with_undos(ruleset: str) -> None:
    from domain import deal, get_ruleset, initial_state, shuffled_deck

    first = deal(get_ruleset(ruleset), shuffled_deck(99), {"source": "seed", "seed": 99})
    state = initial_state(first)
    events = [first]
    for command in (Draw(), Draw(), Undo(), Draw(), Undo(), Undo()):
        state, new = apply(state, command)
        events += new
    assert replay(events) == state
    assert state.version == len(events)
